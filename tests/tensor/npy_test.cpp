#include "tensor/npy.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>

#include "tensor/creation.h"
#include "tensor/kernels.h"
#include "test_util.h"

namespace rematch {
namespace {

namespace fs = std::filesystem;

std::string fixture(const std::string& name) { return std::string(REMATCH_FIXTURES) + "/npy/" + name; }

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// True when this process has `path` memory-mapped.
bool is_mapped(const std::string& path) {
  const std::string maps = read_bytes("/proc/self/maps");
  return maps.find(fs::canonical(path).string()) != std::string::npos;
}

class NpyTest : public test::TempDirTest {};

void expect_round_trip(const std::string& file, const Tensor& t) {
  save_npy(file, t);
  const Tensor back = load_npy(file);
  EXPECT_EQ(back.dtype(), t.dtype());
  EXPECT_EQ(back.sizes(), t.sizes());
  EXPECT_TRUE(back.is_contiguous());
  if (is_floating(t.dtype())) EXPECT_EQ(back.to_vector<double>(), t.to_vector<double>());
  else EXPECT_EQ(back.to_vector<int64_t>(), t.to_vector<int64_t>());
}

TEST_F(NpyTest, RoundTripsEveryDtype) {
  expect_round_trip(path("f4.npy"), test::random_tensor({3, 4}, DType::Float32, 1));
  expect_round_trip(path("f8.npy"), test::random_tensor({5}, DType::Float64, 2));
  expect_round_trip(path("i4.npy"), test::random_index({2, 3, 2}, 1000, 3, DType::Int32));
  expect_round_trip(path("i8.npy"), from_vector<int64_t>({std::numeric_limits<int64_t>::min(), -1, 0,
                                                          std::numeric_limits<int64_t>::max()}));
  expect_round_trip(path("b1.npy"), from_vector<bool>({true, false, false, true, true}));
  expect_round_trip(path("u1.npy"), kernels::cast(test::random_index({7}, 256, 4), DType::UInt8));
}

TEST_F(NpyTest, RoundTripsScalarAndEmptyShapes) {
  expect_round_trip(path("scalar.npy"), scalar_tensor(-3.5, DType::Float64));
  expect_round_trip(path("empty.npy"), zeros({0, 3}));
  expect_round_trip(path("empty3.npy"), zeros({2, 0, 5}, DType::Int64));
}

TEST_F(NpyTest, SavesNonContiguousViewsInLogicalOrder) {
  const Tensor x = test::random_tensor({3, 5}, DType::Float32, 9);
  const Tensor t = kernels::transpose(x, 0, 1);
  save_npy(path("t.npy"), t);
  EXPECT_TRUE(test::all_close(load_npy(path("t.npy")), kernels::contiguous(t), 0, 0));
}

// save_npy writes what np.save writes, byte for byte.
TEST_F(NpyTest, WritesTheBytesNumpyWrites) {
  for (const char* name : {"v1_f4.npy", "v1_f8.npy", "v1_i4.npy", "v1_i8.npy", "v1_b1.npy", "v1_u1.npy",
                           "v1_scalar.npy", "v1_empty.npy"}) {
    save_npy(path(name), load_npy(fixture(name)));
    EXPECT_EQ(read_bytes(path(name)), read_bytes(fixture(name))) << name;
  }
}

TEST_F(NpyTest, HugeHeaderSwitchesToVersion2) {
  const Shape many_ones(22000, 1);  // "1, " per dim: a header beyond v1.0's 65535 bytes
  const Tensor t = full(many_ones, 4.0);
  save_npy(path("wide.npy"), t);
  EXPECT_EQ(read_bytes(path("wide.npy"))[6], '\x02');
  const Tensor back = load_npy(path("wide.npy"));
  EXPECT_EQ(back.sizes(), many_ones);
  EXPECT_EQ(back.to_vector<float>(), std::vector<float>{4.0f});
}

TEST_F(NpyTest, SaveReplacesAtomicallyAndLeavesNoTemporaries) {
  save_npy(path("a.npy"), ones({4}));
  save_npy(path("a.npy"), zeros({2}, DType::Int32));
  EXPECT_EQ(load_npy(path("a.npy")).to_vector<int64_t>(), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
  const std::string missing = path("no_such_folder/a.npy");
  EXPECT_THROWS_WITH(save_npy(missing, ones({2})), "save_npy", missing, "cannot create temporary file");
  EXPECT_THROWS_WITH(save_npy(path("u.npy"), Tensor()), "save_npy", "u.npy", "undefined");
}

TEST(NpyFixtureTest, LoadsNumpyVersion1EveryDtype) {
  const Tensor f4 = load_npy(fixture("v1_f4.npy"));
  EXPECT_EQ(f4.dtype(), DType::Float32);
  EXPECT_EQ(f4.sizes(), (Shape{2, 3}));
  EXPECT_TRUE(test::values_equal(f4, {-1, -0.5, 0, 0.5, 1, 1.5}));
  EXPECT_EQ(load_npy(fixture("v1_f8.npy")).to_vector<double>(), (std::vector<double>{1.0 / 3, -2.5, 1e300}));
  const Tensor i4 = load_npy(fixture("v1_i4.npy"));
  EXPECT_EQ(i4.dtype(), DType::Int32);
  EXPECT_EQ(i4.to_vector<int64_t>(), (std::vector<int64_t>{-2147483648LL, -1, 0, 7, 2147483647LL}));
  const Tensor i8 = load_npy(fixture("v1_i8.npy"));
  EXPECT_EQ(i8.sizes(), (Shape{2, 2}));
  EXPECT_EQ(i8.to_vector<int64_t>(),
            (std::vector<int64_t>{std::numeric_limits<int64_t>::min(), int64_t{1} << 40, 3, -4}));
  const Tensor b1 = load_npy(fixture("v1_b1.npy"));
  EXPECT_EQ(b1.dtype(), DType::Bool);
  EXPECT_EQ(b1.to_vector<bool>(), (std::vector<bool>{true, false, true, true}));
  const Tensor u1 = load_npy(fixture("v1_u1.npy"));
  EXPECT_EQ(u1.dtype(), DType::UInt8);
  EXPECT_EQ(u1.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 128, 255}));
}

// files as they are found. np.save(p, sims.T) writes Fortran order; it loads as a column-major view
// holding the same logical values (numpy's own reading), whether read or memory-mapped.
TEST(NpyFixtureTest, LoadsFortranOrderAsAColumnMajorView) {
  for (int64_t mmap_min : {int64_t{-1}, int64_t{0}}) {
    const Tensor t = load_npy(fixture("fortran_f4.npy"), mmap_min);
    EXPECT_EQ(t.dtype(), DType::Float32);
    EXPECT_EQ(t.sizes(), (Shape{2, 3}));
    EXPECT_EQ(t.strides(), (Shape{1, 2}));
    EXPECT_EQ(kernels::contiguous(t).to_vector<float>(), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  }
  EXPECT_TRUE(read_npy_header(fixture("fortran_f4.npy")).fortran_order);
  EXPECT_FALSE(read_npy_header(fixture("v1_f4.npy")).fortran_order);
}

// float16 is widened to float32 exactly, every class of value included; the header says what was stored.
TEST(NpyFixtureTest, WidensFloat16ToFloat32) {
  const Tensor t = load_npy(fixture("v1_f2.npy"));
  EXPECT_EQ(t.dtype(), DType::Float32);
  EXPECT_EQ(t.sizes(), (Shape{2, 4}));
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> want = {1.5f, -2.0f, 65504.0f, 6.103515625e-05f, 5.9604644775390625e-08f, -0.0f, inf,
                                   -inf};
  const std::vector<float> got = t.to_vector<float>();
  EXPECT_EQ(got, want);
  EXPECT_TRUE(std::signbit(got[5]));
  EXPECT_EQ(read_npy_header(fixture("v1_f2.npy")).descr, "<f2");
  const Tensor f = kernels::contiguous(load_npy(fixture("fortran_f2_3d.npy")));
  EXPECT_EQ(f.sizes(), (Shape{2, 3, 4}));
  const std::vector<float> v = f.to_vector<float>();
  for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(v[i], (static_cast<float>(i) - 7) / 4) << i;
}

TEST(NpyFixtureTest, LoadsScalarAndEmptyArrays) {
  const Tensor s = load_npy(fixture("v1_scalar.npy"));
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.item<float>(), 2.5f);
  const Tensor e = load_npy(fixture("v1_empty.npy"));
  EXPECT_EQ(e.sizes(), (Shape{0, 3}));
  EXPECT_EQ(e.numel(), 0);
}

TEST(NpyFixtureTest, LoadsVersions2And3) {
  const Tensor v2 = load_npy(fixture("v2_f4.npy"));
  EXPECT_EQ(v2.sizes(), (Shape{2, 2}));
  EXPECT_TRUE(test::values_equal(v2, {0.25, -0.5, 8, 1024}));
  const Tensor v3 = load_npy(fixture("v3_i8.npy"));
  EXPECT_EQ(v3.dtype(), DType::Int64);
  EXPECT_EQ(v3.to_vector<int64_t>(), (std::vector<int64_t>{-2, -1, 0, 1, 2}));
}

TEST_F(NpyTest, LargeDataIsMemoryMappedCopyOnWrite) {
  const std::string file = path("big.npy");
  const Tensor x = test::random_tensor({300, 7}, DType::Float32, 5);
  save_npy(file, x);
  {
    const Tensor small_default = load_npy(file);  // far below the 64 MiB default threshold: read
    EXPECT_FALSE(is_mapped(file));
    Tensor mapped = load_npy(file, /*mmap_min_bytes=*/0);
    EXPECT_TRUE(is_mapped(file));
    EXPECT_TRUE(test::all_close(mapped, x, 0, 0));
    mapped.data<float>()[0] = 42.0f;  // lands in private pages, not in the file
    EXPECT_EQ(load_npy(file, -1).to_vector<float>()[0], x.to_vector<float>()[0]);
  }
  EXPECT_FALSE(is_mapped(file));  // the last view gone, the mapping is released
}

TEST_F(NpyTest, MisalignedDataIsCopiedNotMapped) {
  // A hand-made v1.0 header of 8 + 2 + 58 bytes: float64 data starting at offset 68, not 8-aligned.
  const std::string dict = "{'descr':'<f8','fortran_order':False,'shape':(2,)}";
  std::string header = std::string("\x93NUMPY\x01\x00", 8);
  const size_t len = dict.size() + 8;
  header += static_cast<char>(len);
  header += '\0';
  header += dict + "       \n";
  ASSERT_NE(header.size() % 8, 0u);
  const double values[2] = {1.25, -7.5};
  const std::string file = path("odd.npy");
  write_bytes(file, header + std::string(reinterpret_cast<const char*>(values), sizeof(values)));
  const Tensor t = load_npy(file, 0);
  EXPECT_FALSE(is_mapped(file));
  EXPECT_EQ(t.to_vector<double>(), (std::vector<double>{1.25, -7.5}));
}

// Each malformed input: an Error naming the file and what is wrong with it.
TEST_F(NpyTest, BadFilesAreErrorsNamingTheFileAndProblem) {
  const std::string missing = path("missing.npy");
  EXPECT_THROWS_WITH(load_npy(missing), missing, "cannot open", "No such file");
  EXPECT_THROWS_WITH(load_npy(fixture("big_endian_f4.npy")), "big_endian_f4.npy", "big-endian", "'>f4'");
  EXPECT_THROWS_WITH(load_npy(fixture("int8.npy")), "int8.npy", "unsupported dtype '|i1'");

  const std::string good = read_bytes(fixture("v1_f4.npy"));
  auto bad = [&](const std::string& name, const std::string& bytes) {
    write_bytes(path(name), bytes);
    return path(name);
  };
  EXPECT_THROWS_WITH(load_npy(bad("empty.npy", "")), "empty.npy", "truncated header", "empty");
  EXPECT_THROWS_WITH(load_npy(bad("magic.npy", "\x93NUM")), "magic.npy", "truncated header");
  EXPECT_THROWS_WITH(load_npy(bad("text.npy", "hello, world")), "text.npy", "not an .npy file");
  EXPECT_THROWS_WITH(load_npy(bad("cut_header.npy", good.substr(0, 40))), "cut_header.npy", "truncated header");
  EXPECT_THROWS_WITH(load_npy(bad("cut_data.npy", good.substr(0, good.size() - 4))), "cut_data.npy",
                     "truncated data", "needs 24 bytes", "holds 20");
  std::string version = good;
  version[6] = '\x09';
  EXPECT_THROWS_WITH(load_npy(bad("version.npy", version)), "version.npy", "unsupported .npy format version 9.0");

  auto with_header = [&](const std::string& from, const std::string& to) {
    std::string bytes = good;
    const size_t at = bytes.find(from);
    bytes.replace(at, from.size(), to + std::string(from.size() - to.size(), ' '));
    return bytes;
  };
  EXPECT_THROWS_WITH(load_npy(bad("key.npy", with_header("'shape'", "'shap'"))), "key.npy", "garbled header",
                     "unexpected or repeated key 'shap'");
  EXPECT_THROWS_WITH(load_npy(bad("tuple.npy", with_header("(2, 3)", "[2, 3]"))), "tuple.npy", "garbled header",
                     "expected '('");
  EXPECT_THROWS_WITH(load_npy(bad("dim.npy", with_header("(2, 3)", "(2,-3)"))), "dim.npy", "non-negative");
  EXPECT_THROWS_WITH(load_npy(bad("brace.npy", with_header("{", "["))), "brace.npy", "expected '{'");
  EXPECT_THROWS_WITH(load_npy(bad("order.npy", with_header("False", "Maybe"))), "order.npy", "True or False");
  EXPECT_THROWS_WITH(load_npy(bad("lacks.npy", with_header("'fortran_order': False, ", ""))), "lacks.npy",
                     "lacks one of the keys");
  // Found by fuzz/npy_fuzz: with a 0 in the shape the size check let the other dimensions through, and the
  // strides of the empty tensor overflowed int64 (UBSan: signed integer overflow in contiguous_strides).
  EXPECT_THROWS_WITH(load_npy(bad("huge_empty.npy", with_header("(2, 3), }" + std::string(30, ' '),
                                                                "(0, 4611686018427387904, 390), }"))),
                     "huge_empty.npy", "shape [0, 4611686018427387904, 390] is too large");

  std::string bools = read_bytes(fixture("v1_b1.npy"));
  bools[bools.size() - 2] = '\x02';
  EXPECT_THROWS_WITH(load_npy(bad("bool.npy", bools)), "bool.npy", "byte value 2 at element 2");
  EXPECT_THROWS_WITH(load_npy(dir_.string()), dir_.string(), "not a regular file");
}

}  // namespace
}  // namespace rematch
