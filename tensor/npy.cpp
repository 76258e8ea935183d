// .npy reading and writing (format spec: numpy/lib/format.py). A file is: the magic "\x93NUMPY", a version
// byte pair, the header length (2 bytes little-endian in v1.0, 4 bytes in v2.0/v3.0), a Python dict literal
// {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), } padded with spaces to a 64-byte boundary, then
// the raw data.
#include "tensor/npy.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tensor/creation.h"
#include "tensor/file_io.h"
#include "tensor/kernels.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, ".npy I/O copies little-endian data as is");

namespace rematch {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
constexpr size_t kAlign = 64;  // numpy pads the header so the data starts 64-byte aligned

[[noreturn]] void load_fail(const std::string& path, const std::string& what) {
  REMATCH_FAIL("load_npy '", path, "': ", what);
}

const char* npy_descr(DType t) {
  switch (t) {
    case DType::Float32: return "<f4";
    case DType::Float64: return "<f8";
    case DType::Int32: return "<i4";
    case DType::Int64: return "<i8";
    case DType::Bool: return "|b1";
    case DType::UInt8: return "|u1";
  }
  return "?";
}

constexpr char kHalfDescr[] = "<f2";  // IEEE binary16: widened to float32 on load (there is no float16 DType)

DType dtype_from_descr(const std::string& descr, const std::string& path) {
  for (DType t : {DType::Float32, DType::Float64, DType::Int32, DType::Int64, DType::Bool, DType::UInt8})
    if (descr == npy_descr(t)) return t;
  if (descr == kHalfDescr) return DType::Float32;
  if (descr.size() > 2 && descr[0] == '>')
    load_fail(path, "big-endian data ('" + descr + "') is not supported; re-save it little-endian, e.g. with "
                    "arr.astype('<" + descr.substr(1) + "')");
  load_fail(path, "unsupported dtype '" + descr + "' (supported: <f2 <f4 <f8 <i4 <i8 |b1 |u1)");
}

struct NpyHeader {
  DType dtype = DType::Float32;  // of the tensor returned (float32 for <f2 data)
  Shape shape;
  std::string descr;
  bool fortran_order = false;
  size_t file_itemsize() const { return descr == kHalfDescr ? 2 : dtype_size(dtype); }
};

// Column-major strides: the first index varies fastest.
Shape fortran_strides(const Shape& sizes) {
  Shape strides(sizes.size());
  int64_t step = 1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    strides[i] = step;
    step *= std::max<int64_t>(sizes[i], 1);
  }
  return strides;
}

// IEEE 754 binary16 to binary32, exactly (every half value is a float value).
float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h >> 15) << 31, exponent = (h >> 10) & 0x1F, mantissa = h & 0x3FF;
  uint32_t bits;
  if (exponent == 0x1F) {
    bits = sign | 0x7F800000u | (mantissa << 13);  // inf, nan
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);  // rebias 15 -> 127
  } else if (mantissa == 0) {
    bits = sign;  // +-0
  } else {  // subnormal half: normalise
    int shift = 0;
    uint32_t m = mantissa;
    while (!(m & 0x400)) {
      m <<= 1;
      ++shift;
    }
    bits = sign | (uint32_t(113 - shift) << 23) | ((m & 0x3FF) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

// A parser for exactly the dict literal numpy writes: string keys, and values that are strings,
// True/False, or tuples of non-negative integers. Anything else is reported with the header text.
class HeaderParser {
 public:
  HeaderParser(std::string text, const std::string& path) : s_(std::move(text)), path_(path) {}

  NpyHeader parse() {
    bool have_descr = false, have_order = false, have_shape = false;
    std::string descr;
    bool fortran = false;
    NpyHeader h;
    expect('{');
    while (!peek('}')) {
      const std::string key = parse_string();
      expect(':');
      if (key == "descr" && !have_descr) {
        if (!peek('\'') && !peek('"'))
          fail("'descr' is not a plain dtype string (structured dtypes are not supported)");
        descr = parse_string();
        have_descr = true;
      } else if (key == "fortran_order" && !have_order) {
        fortran = parse_bool();
        have_order = true;
      } else if (key == "shape" && !have_shape) {
        h.shape = parse_shape();
        have_shape = true;
      } else {
        fail("unexpected or repeated key '" + key + "'");
      }
      if (!peek('}')) expect(',');
    }
    expect('}');
    skip_ws();
    if (pos_ != s_.size()) fail("text after the closing '}'");
    if (!have_descr || !have_order || !have_shape)
      fail("the header lacks one of the keys 'descr', 'fortran_order', 'shape'");
    h.fortran_order = fortran;
    h.descr = descr;
    h.dtype = dtype_from_descr(descr, path_);
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    const std::string shown = s_.size() > 200 ? s_.substr(0, 200) + "..." : s_;
    load_fail(path_, "garbled header (" + what + " at character " + std::to_string(pos_) + "): " + shown);
  }
  void skip_ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }
  bool peek(char c) {
    skip_ws();
    return pos_ < s_.size() && s_[pos_] == c;
  }
  void expect(char c) {
    if (!peek(c)) fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  std::string parse_string() {
    skip_ws();
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) fail("expected a quoted string");
    const char quote = s_[pos_++];
    const size_t end = s_.find(quote, pos_);
    if (end == std::string::npos) fail("unterminated string");
    std::string out = s_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return out;
  }
  bool parse_bool() {
    skip_ws();
    for (const char* word : {"True", "False"}) {
      const size_t n = std::strlen(word);
      if (s_.compare(pos_, n, word) == 0) {
        pos_ += n;
        return word[0] == 'T';
      }
    }
    fail("expected True or False");
  }
  Shape parse_shape() {
    Shape shape;
    expect('(');
    while (!peek(')')) {
      if (pos_ >= s_.size() || s_[pos_] < '0' || s_[pos_] > '9') fail("expected a non-negative integer dimension");
      int64_t d = 0;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
        if (d > (std::numeric_limits<int64_t>::max() - 9) / 10) fail("dimension too large");
        d = d * 10 + (s_[pos_++] - '0');
      }
      if (pos_ < s_.size() && s_[pos_] == 'L') ++pos_;  // Python 2 long literal, written by old numpy
      shape.push_back(d);
      if (!peek(')')) expect(',');
    }
    expect(')');
    return shape;
  }

  std::string s_;
  const std::string& path_;
  size_t pos_ = 0;
};

uint32_t little_endian(const unsigned char* p, size_t n) {
  uint32_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return v;
}

// Data read into memory (not mapped) may hold arbitrary bytes; a bool must be 0 or 1 to be a valid C++ bool.
void check_bool_bytes(const void* data, int64_t n, const std::string& path) {
  const unsigned char* b = static_cast<const unsigned char*>(data);
  for (int64_t i = 0; i < n; ++i)
    if (b[i] > 1)
      load_fail(path, "bool data holds byte value " + std::to_string(b[i]) + " at element " + std::to_string(i) +
                          " (expected 0 or 1)");
}

// The validated header of an open file and where its data starts.
struct NpyLayout {
  NpyHeader header;
  size_t data_start = 0, numel = 0, nbytes = 0;  // nbytes as stored in the file
};

NpyLayout read_layout(const io::ReadFile& file, const std::string& path) {
  const size_t file_size = static_cast<size_t>(file.size());
  unsigned char prefix[12] = {};
  const size_t got = file.read_at(prefix, sizeof(prefix), 0);
  if (file_size == 0) load_fail(path, "truncated header: the file is empty");
  if (std::memcmp(prefix, kMagic, std::min(got, kMagicLen)) != 0)
    load_fail(path, "not an .npy file (it does not start with the magic string \\x93NUMPY)");
  if (got < kMagicLen + 2) load_fail(path, "truncated header: the file ends inside the magic string and version");
  const int major = prefix[kMagicLen], minor = prefix[kMagicLen + 1];
  if (major < 1 || major > 3 || minor != 0)
    load_fail(path, "unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                        " (supported: 1.0, 2.0, 3.0)");
  const size_t len_bytes = major == 1 ? 2 : 4;
  const size_t header_start = kMagicLen + 2 + len_bytes;
  if (got < header_start) load_fail(path, "truncated header: the file ends inside the header length field");
  const size_t header_len = little_endian(prefix + kMagicLen + 2, len_bytes);
  if (header_start + header_len > file_size)
    load_fail(path, "truncated header: the header should hold " + std::to_string(header_len) +
                        " bytes but the file ends after " + std::to_string(file_size - header_start));
  std::string text(header_len, '\0');
  file.read_at(text.data(), header_len, header_start);
  NpyLayout l;
  l.header = HeaderParser(std::move(text), path).parse();
  const NpyHeader& h = l.header;

  // Checked with the returned dtype's size (float32 for <f2), which is at least the stored one: the tensor
  // built must fit too.
  const size_t itemsize = dtype_size(h.dtype);
  // The product of the non-zero dimensions must fit: with a 0 the tensor is empty, but its strides are still
  // products of the other dimensions (and int64).
  size_t extent = 1;
  bool empty_shape = false;
  for (int64_t d : h.shape) {
    if (d == 0) {
      empty_shape = true;
    } else if (extent > static_cast<size_t>(std::numeric_limits<int64_t>::max()) / itemsize / static_cast<size_t>(d)) {
      load_fail(path, "shape " + shape_str(h.shape) + " is too large");
    } else {
      extent *= static_cast<size_t>(d);
    }
  }
  l.numel = empty_shape ? 0 : extent;
  l.nbytes = l.numel * h.file_itemsize();
  l.data_start = header_start + header_len;
  if (file_size - l.data_start < l.nbytes)
    load_fail(path, "truncated data: shape " + shape_str(h.shape) + " of " + h.descr + " needs " +
                        std::to_string(l.nbytes) + " bytes but the file holds " +
                        std::to_string(file_size - l.data_start) + " after the header");
  return l;
}

// The stored element order as strides: C order, or column-major for fortran_order (a strided view, as numpy
// itself loads such a file; kernels::contiguous makes it row-major when a caller needs that).
Shape file_strides(const NpyHeader& h) {
  return h.fortran_order ? fortran_strides(h.shape) : contiguous_strides(h.shape);
}

}  // namespace

NpyHeaderInfo read_npy_header(const std::string& path) {
  const io::ReadFile file(path, "load_npy");
  const NpyHeader h = read_layout(file, path).header;
  return {h.descr, h.fortran_order, h.shape};
}

Tensor load_npy(const std::string& path, int64_t mmap_min_bytes) {
  const io::ReadFile file(path, "load_npy");
  const NpyLayout l = read_layout(file, path);
  const NpyHeader& h = l.header;
  const size_t nbytes = l.nbytes, numel = l.numel, data_start = l.data_start;

  if (h.descr == kHalfDescr) {  // widened element by element into a new float32 buffer
    std::vector<uint16_t> halves(numel);
    if (file.read_at(halves.data(), nbytes, data_start) != nbytes)
      load_fail(path, "truncated data: the file shrank while it was being read");
    Tensor t = empty({static_cast<int64_t>(numel)}, DType::Float32, Device::cpu());
    float* out = static_cast<float*>(t.raw_data());
    for (size_t i = 0; i < numel; ++i) out[i] = half_to_float(halves[i]);
    return make_tensor(t.storage(), h.shape, file_strides(h), 0, DType::Float32);
  }
  const size_t itemsize = dtype_size(h.dtype);
  const bool map = mmap_min_bytes >= 0 && nbytes > 0 && nbytes >= static_cast<size_t>(mmap_min_bytes) &&
                   data_start % itemsize == 0;  // a misaligned start would give misaligned elements
  if (map) {
    // MAP_PRIVATE with write permission: a tensor may be modified in place, and those writes must stay in
    // this process's copy-on-write pages instead of reaching the file.
    const size_t map_len = data_start + nbytes;
    void* base = ::mmap(nullptr, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE, file.fd(), 0);
    if (base == MAP_FAILED) load_fail(path, std::string("mmap failed: ") + std::strerror(errno));
    void* data = static_cast<char*>(base) + data_start;
    auto storage = std::make_shared<Storage>(data, nbytes, Device::cpu(),
                                             [base, map_len](void*) { ::munmap(base, map_len); });
    if (h.dtype == DType::Bool) check_bool_bytes(data, static_cast<int64_t>(numel), path);
    return make_tensor(std::move(storage), h.shape, file_strides(h), 0, h.dtype);
  }
  Tensor t = empty({static_cast<int64_t>(numel)}, h.dtype, Device::cpu());
  if (file.read_at(t.raw_data(), nbytes, data_start) != nbytes)
    load_fail(path, "truncated data: the file shrank while it was being read");
  if (h.dtype == DType::Bool) check_bool_bytes(t.raw_data(), static_cast<int64_t>(numel), path);
  return make_tensor(t.storage(), h.shape, file_strides(h), 0, h.dtype);
}

namespace {

// numpy's repr of a shape tuple: (), (3,), (3, 4).
std::string shape_tuple(const Shape& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

// Magic, version, length field and header padded with spaces and a final newline to a multiple of kAlign,
// as numpy writes it; v1.0 unless the header does not fit its 16-bit length.
std::string header_bytes(const Tensor& t) {
  const std::string dict = std::string("{'descr': '") + npy_descr(t.dtype()) +
                           "', 'fortran_order': False, 'shape': " + shape_tuple(t.sizes()) + ", }";
  for (int major : {1, 2}) {
    const size_t len_bytes = major == 1 ? 2 : 4;
    const size_t unpadded = kMagicLen + 2 + len_bytes + dict.size() + 1;
    // numpy's own padding rule (a full 64 spaces when already aligned), so files match np.save byte for byte.
    const size_t header_len = dict.size() + 1 + (kAlign - unpadded % kAlign);
    if (major == 1 && header_len > 0xFFFF) continue;
    std::string out(kMagic, kMagicLen);
    out += static_cast<char>(major);
    out += '\0';
    for (size_t i = 0; i < len_bytes; ++i) out += static_cast<char>((header_len >> (8 * i)) & 0xFF);
    out += dict;
    out.append(header_len - dict.size() - 1, ' ');
    return out + '\n';
  }
  return {};
}

}  // namespace

void save_npy(const std::string& path, const Tensor& t) {
  REMATCH_CHECK(t.defined(), "save_npy '", path, "': undefined tensor");
  const Tensor host = kernels::contiguous(kernels::to_device(t, Device::cpu()));
  const std::string header = header_bytes(host);

  io::AtomicFileWriter out(path, "save_npy");
  out.write(header);
  out.write(host.raw_data(), static_cast<size_t>(host.numel()) * dtype_size(host.dtype()));
  out.commit();
}

}  // namespace rematch
