// safetensors: round trips of every dtype, the byte layout the format prescribes, atomic writes, and one
// error per kind of malformed file (each naming the file and the problem).
#include "nn/safetensors.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "test_util.h"

namespace rematch::nn {
namespace {

namespace fs = std::filesystem;
using test::all_close;

class Safetensors : public test::TempDirTest {
 protected:
  // A file made of the 8-byte length, the given header text and data bytes.
  std::string raw_file(const std::string& header, const std::string& data, uint64_t len_field = ~uint64_t{0}) {
    const std::string p = path("raw.safetensors");
    const uint64_t n = len_field == ~uint64_t{0} ? header.size() : len_field;
    std::ofstream out(p, std::ios::binary);
    for (int i = 0; i < 8; ++i) out.put(static_cast<char>((n >> (8 * i)) & 0xFF));
    out << header << data;
    return p;
  }
  std::string read_bytes(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
};

NamedTensors sample_tensors() {
  return {{"weight", from_vector<float>({1.5f, -2, 3, 4, 5, 6}, {2, 3})},
          {"scale", scalar_tensor(1.0 / 3, DType::Float64)},
          {"ids", from_vector<int32_t>({-7, 0, 7, 2147483647})},
          {"counts", from_vector<int64_t>({int64_t{1} << 40, -1, 0, 3}, {2, 2})},
          {"mask", from_vector<bool>({true, false, true, true, false})},
          {"bytes", from_vector<uint8_t>({0, 128, 255})},
          {"empty", zeros({0, 4}, DType::Float32)}};
}

TEST_F(Safetensors, RoundTripsEveryDtypeNamesOrderAndMetadata) {
  const NamedTensors tensors = sample_tensors();
  const SafetensorsMetadata meta{{"note", "héllo"}, {"config", R"({"lr": 0.0002})"}};
  save_safetensors(path("a.safetensors"), tensors, meta);
  const SafetensorsFile f = load_safetensors(path("a.safetensors"));
  EXPECT_EQ(f.metadata, meta);
  ASSERT_EQ(f.tensors.size(), tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    EXPECT_EQ(f.tensors[i].first, tensors[i].first);
    EXPECT_EQ(f.tensors[i].second.dtype(), tensors[i].second.dtype()) << tensors[i].first;
    EXPECT_TRUE(all_close(f.tensors[i].second, tensors[i].second, 0, 0)) << tensors[i].first;
  }
  EXPECT_EQ(read_safetensors_metadata(path("a.safetensors")), meta);
}

TEST_F(Safetensors, WritesNonContiguousViewsByValue) {
  const Tensor t = kernels::transpose(from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3}), 0, 1);
  save_safetensors(path("t.safetensors"), {{"t", t}});
  EXPECT_TRUE(all_close(load_safetensors(path("t.safetensors")).tensors[0].second, t, 0, 0));
}

// The layout the format prescribes: length, JSON header padded to 8 bytes, buffers packed without gaps and
// each aligned for its dtype.
TEST_F(Safetensors, LayoutIsPackedAlignedAndLittleEndian) {
  save_safetensors(path("a.safetensors"), sample_tensors(), {{"k", "v"}});
  const std::string bytes = read_bytes(path("a.safetensors"));
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= uint64_t(static_cast<unsigned char>(bytes[i])) << (8 * i);
  EXPECT_EQ((8 + n) % 8, 0u);
  const auto header = nlohmann::json::parse(bytes.substr(8, n));
  EXPECT_EQ(header["__metadata__"]["k"], "v");
  uint64_t total = 0;
  for (const auto& [name, info] : header.items()) {
    if (name == "__metadata__") continue;
    const uint64_t begin = info["data_offsets"][0], end = info["data_offsets"][1];
    const std::string dtype = info["dtype"];
    const uint64_t size = dtype == "F64" || dtype == "I64" ? 8 : dtype == "F32" || dtype == "I32" ? 4 : 1;
    EXPECT_EQ(begin % size, 0u) << name;
    total += end - begin;
  }
  EXPECT_EQ(bytes.size(), 8 + n + total);
  const uint64_t w0 = header["weight"]["data_offsets"][0];
  float first;
  std::memcpy(&first, bytes.data() + 8 + n + w0, 4);
  EXPECT_EQ(first, 1.5f);
}

TEST_F(Safetensors, SaveReplacesAtomicallyAndLeavesNoTemporaryFiles) {
  save_safetensors(path("a.safetensors"), {{"x", zeros({3})}});
  save_safetensors(path("a.safetensors"), {{"y", ones({2})}});
  const SafetensorsFile f = load_safetensors(path("a.safetensors"));
  ASSERT_EQ(f.tensors.size(), 1u);
  EXPECT_EQ(f.tensors[0].first, "y");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator{}), 1);
  EXPECT_THROWS_WITH(save_safetensors(path("missing/a.safetensors"), {{"x", zeros({1})}}), "missing/a.safetensors",
                     "cannot create temporary file");
}

TEST_F(Safetensors, SaveRejectsBadNames) {
  EXPECT_THROWS_WITH(save_safetensors(path("a"), {{"x", zeros({1})}, {"x", zeros({1})}}), "'x' appears twice");
  EXPECT_THROWS_WITH(save_safetensors(path("a"), {{"", zeros({1})}}), "invalid tensor name ''");
  EXPECT_THROWS_WITH(save_safetensors(path("a"), {{"__metadata__", zeros({1})}}), "invalid tensor name");
  EXPECT_THROWS_WITH(save_safetensors(path("a"), {{"u", Tensor()}}), "tensor 'u' is undefined");
  EXPECT_FALSE(fs::exists(path("a")));
}

TEST_F(Safetensors, MalformedFilesGiveErrorsNamingFileAndProblem) {
  const std::string f4x3 = std::string(12, '\0');
  struct Case {
    std::string header, data, problem;
  };
  const Case cases[] = {
      {"{\"a\": ", "", "not valid JSON"},
      {"[1, 2]", "", "not a JSON object"},
      {R"({"a": {"dtype": "F16", "shape": [3], "data_offsets": [0, 6]}})", f4x3, "unsupported dtype \"F16\""},
      {R"({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 16]}})", f4x3, "run past the end of the data"},
      {R"({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}})", f4x3,
       "span 8 bytes, but shape [3] of F32 needs 12"},
      {R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
           "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})", f4x3, "'a' [0, 8] and 'b' [4, 12] overlap"},
      {R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [8, 4]}})", f4x3, "end before they begin"},
      {R"({"a": {"dtype": "F32", "shape": [-3], "data_offsets": [0, 12]}})", f4x3, "non-negative integers"},
      {R"({"a": {"dtype": "F32", "shape": [3]}})", f4x3, "needs the fields dtype, shape and data_offsets"},
      {R"({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 12], "x": 1}})", f4x3, "unknown field 'x'"},
      {R"({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 12]},
           "a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 12]}})", f4x3, "repeats the key 'a'"},
      {R"({"__metadata__": {"k": 1}})", "", "__metadata__ entry 'k' is not a string"},
      {R"({"m": {"dtype": "BOOL", "shape": [2], "data_offsets": [0, 2]}})", std::string("\x01\x02", 2),
       "bool data holds byte value 2 at element 1"},
      // Found by fuzz/npy_fuzz in the .npy reader, and the same here: with a 0 in the shape the other
      // dimensions went unchecked and the empty tensor's strides overflowed int64.
      {R"({"a": {"dtype": "F32", "shape": [0, 4611686018427387904, 4], "data_offsets": [0, 0]}})", "",
       "shape [0,4611686018427387904,4] is too large"},
      // Found by fuzz/safetensors_fuzz: loaded, but save_safetensors refuses the name.
      {R"({"": {"dtype": "F32", "shape": [3], "data_offsets": [0, 12]}})", f4x3, "a tensor has an empty name"},
  };
  for (const Case& c : cases) {
    const std::string p = raw_file(c.header, c.data);
    EXPECT_THROWS_WITH(load_safetensors(p), "load_safetensors '" + p + "'", c.problem);
  }
}

TEST_F(Safetensors, TruncatedFilesAreDetected) {
  save_safetensors(path("a.safetensors"), sample_tensors());
  const std::string bytes = read_bytes(path("a.safetensors"));
  const std::string p = path("cut.safetensors");
  for (size_t keep : {size_t{0}, size_t{5}, size_t{40}, bytes.size() - 1}) {
    std::ofstream(p, std::ios::binary) << bytes.substr(0, keep);
    const std::string problem = keep < 8 ? "fewer than the 8-byte header length"
                                : keep == bytes.size() - 1 ? "the file is truncated or the offsets are wrong"
                                                           : "runs past the end of the file";
    EXPECT_THROWS_WITH(load_safetensors(p), p, problem) << "kept " << keep << " bytes";
  }
  EXPECT_THROWS_WITH(load_safetensors(raw_file("{}", "", 1000)), "header length 1000 runs past the end of the file");
  EXPECT_THROWS_WITH(load_safetensors(path("nope.safetensors")), "nope.safetensors", "cannot open");
}

// a PyTorch checkpoint given where a safetensors file belongs is named for what it is, with the
// command that converts it, rather than "the header length ... runs past the end of the file".
TEST_F(Safetensors, PytorchCheckpointsAreNamedWithTheConvertCommand) {
  const std::string convert = "convert it first with: /usr/bin/python3 tools/convert_pth.py ";
  const std::string zip = path("model_best.pth.tar");  // torch >= 1.6: a zip archive
  std::ofstream(zip, std::ios::binary) << std::string("PK\x03\x04\x14\x00\x00\x00\x08\x00archive/data.pkl", 26);
  EXPECT_THROWS_WITH(load_safetensors(zip), "this is a PyTorch checkpoint (a zip archive",
                     convert + zip + " OUT.safetensors");
  EXPECT_THROWS_WITH(read_safetensors_metadata(zip), "PyTorch checkpoint", convert + zip);
  for (char protocol : {'\x02', '\x04', '\x05'}) {  // the legacy pickle format: PROTO opcode, protocol
    const std::string pickle = path("legacy.pth");
    std::ofstream(pickle, std::ios::binary) << std::string("\x80") + protocol + "}q(X" "\x05" "epochq";
    EXPECT_THROWS_WITH(load_safetensors(pickle), "a pickle as the legacy torch.save writes it", convert + pickle);
  }
  // A real safetensors file whose 640-byte header length also begins with the bytes 0x80 0x02 still loads.
  const std::string padded = "{\"__metadata__\":{\"pad\":\"" + std::string(640 - 27, 'x') + "\"}}";
  ASSERT_EQ(padded.size(), 640u);
  EXPECT_EQ(load_safetensors(raw_file(padded, "")).metadata.at("pad").size(), 613u);
}

}  // namespace
}  // namespace rematch::nn
