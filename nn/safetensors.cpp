// safetensors reading and writing. The header is parsed with nlohmann::ordered_json so tensors come back in
// the order they were written; a parse callback catches repeated keys, which a JSON object would otherwise
// silently collapse.
#include "nn/safetensors.h"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "tensor/checksum.h"
#include "tensor/file_io.h"
#include "tensor/json_depth.h"
#include "tensor/kernels.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "safetensors I/O copies little-endian data as is");

namespace rematch::nn {
namespace {

using Json = nlohmann::ordered_json;
constexpr const char* kMetadataKey = "__metadata__";

struct DTypeName {
  DType dtype;
  const char* name;
};
constexpr DTypeName kDTypes[] = {{DType::Float32, "F32"}, {DType::Float64, "F64"}, {DType::Int32, "I32"},
                                 {DType::Int64, "I64"},   {DType::Bool, "BOOL"},   {DType::UInt8, "U8"}};

const char* safetensors_dtype(DType t) {
  for (const auto& d : kDTypes)
    if (d.dtype == t) return d.name;
  return nullptr;
}

constexpr const char* kLoadOp = "load_safetensors";
constexpr const char* kSaveOp = "save_safetensors";

[[noreturn]] void load_fail(const std::string& path, const std::string& what) { io::fail(kLoadOp, path, what); }
[[noreturn]] void save_fail(const std::string& path, const std::string& what) { io::fail(kSaveOp, path, what); }

struct Entry {
  std::string name;
  DType dtype;
  Shape shape;
  uint64_t begin, end;
};

std::string offsets_str(const Entry& e) {
  return "[" + std::to_string(e.begin) + ", " + std::to_string(e.end) + "]";
}

Entry parse_entry(const std::string& name, const Json& info, uint64_t data_size, const std::string& path) {
  const std::string what = "tensor '" + name + "': ";
  if (!info.is_object()) load_fail(path, what + "expected an object {dtype, shape, data_offsets}, got " + info.dump());
  for (const auto& [key, value] : info.items())
    if (key != "dtype" && key != "shape" && key != "data_offsets") load_fail(path, what + "unknown field '" + key + "'");
  if (!info.contains("dtype") || !info.contains("shape") || !info.contains("data_offsets"))
    load_fail(path, what + "needs the fields dtype, shape and data_offsets, got " + info.dump());
  Entry e{name, DType::Float32, {}, 0, 0};
  const Json& dtype = info["dtype"];
  if (!dtype.is_string()) load_fail(path, what + "dtype is not a string: " + dtype.dump());
  const char* found = nullptr;
  for (const auto& d : kDTypes)
    if (dtype.get<std::string>() == d.name) {
      e.dtype = d.dtype;
      found = d.name;
    }
  if (!found) load_fail(path, what + "unsupported dtype " + dtype.dump() + " (supported: F32 F64 I32 I64 BOOL U8)");
  const Json& shape = info["shape"];
  if (!shape.is_array()) load_fail(path, what + "shape is not an array: " + shape.dump());
  // The product of the non-zero dimensions must fit: with a 0 the tensor is empty, but its strides are still
  // products of the other dimensions (and int64).
  uint64_t extent = 1;
  bool empty_shape = false;
  for (const Json& d : shape) {
    if (!d.is_number_unsigned() || d.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
      load_fail(path, what + "shape " + shape.dump() + " holds something other than non-negative integers");
    const uint64_t v = d.get<uint64_t>();
    if (v != 0 && extent > uint64_t(std::numeric_limits<int64_t>::max()) / 8 / v)
      load_fail(path, what + "shape " + shape.dump() + " is too large");
    if (v == 0)
      empty_shape = true;
    else
      extent *= v;
    e.shape.push_back(static_cast<int64_t>(v));
  }
  const uint64_t numel = empty_shape ? 0 : extent;
  const Json& offsets = info["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
      !offsets[1].is_number_unsigned())
    load_fail(path, what + "data_offsets must be two non-negative integers [begin, end], got " + offsets.dump());
  e.begin = offsets[0].get<uint64_t>();
  e.end = offsets[1].get<uint64_t>();
  if (e.begin > e.end) load_fail(path, what + "data_offsets " + offsets_str(e) + " end before they begin");
  if (e.end > data_size)
    load_fail(path, what + "data_offsets " + offsets_str(e) + " run past the end of the data (" +
                        std::to_string(data_size) + " bytes): the file is truncated or the offsets are wrong");
  const uint64_t nbytes = numel * dtype_size(e.dtype);
  if (e.end - e.begin != nbytes)
    load_fail(path, what + "data_offsets " + offsets_str(e) + " span " + std::to_string(e.end - e.begin) +
                        " bytes, but shape " + shape_str(e.shape) + " of " + found + " needs " + std::to_string(nbytes));
  return e;
}

// Parses the header, reporting bad JSON and repeated keys (at any depth) with the file's name.
Json parse_header(const std::string& text, const std::string& path) {
  std::vector<std::set<std::string>> keys;
  std::string repeated;
  Json::parser_callback_t watch = [&](int, nlohmann::json::parse_event_t event, Json& parsed) {
    using E = nlohmann::json::parse_event_t;
    if (event == E::object_start) keys.emplace_back();
    if (event == E::object_end && !keys.empty()) keys.pop_back();
    if (event == E::key && !keys.empty() && !keys.back().insert(parsed.get<std::string>()).second && repeated.empty())
      repeated = parsed.get<std::string>();
    return true;
  };
  Json header;
  io::require_shallow_json(text, "load_safetensors", path);
  try {
    header = Json::parse(text, watch);
  } catch (const nlohmann::json::exception& e) {
    load_fail(path, std::string("the header is not valid JSON: ") + e.what());
  }
  if (!repeated.empty()) load_fail(path, "the header repeats the key '" + repeated + "'");
  if (!header.is_object()) load_fail(path, "the header is not a JSON object");
  return header;
}

void check_bool_bytes(const Tensor& t, const std::string& name, const std::string& path) {
  const unsigned char* b = static_cast<const unsigned char*>(t.raw_data());
  for (int64_t i = 0; i < t.numel(); ++i)
    if (b[i] > 1)
      load_fail(path, "tensor '" + name + "': bool data holds byte value " + std::to_string(b[i]) + " at element " +
                          std::to_string(i) + " (expected 0 or 1)");
}

// The validated header of an open file: metadata, entries in header order, where the data starts.
struct Header {
  SafetensorsMetadata metadata;
  std::vector<Entry> entries;
  uint64_t data_start = 0;
};

// What torch.save writes: a zip archive (torch >= 1.6, "PK\x03\x04") or, with the legacy format, a pickle
// stream opening with the PROTO opcode 0x80 and protocol 2..5. Read as a safetensors header length, either is
// far beyond the file, so such a file is named for what it is, with the command that converts it.
const char* pytorch_kind(const unsigned char* b, uint64_t n) {
  if (n >= 4 && b[0] == 'P' && b[1] == 'K' && b[2] == 3 && b[3] == 4) return "a zip archive as torch.save writes it";
  if (n >= 2 && b[0] == 0x80 && b[1] >= 2 && b[1] <= 5) return "a pickle as the legacy torch.save writes it";
  return nullptr;
}

Header read_header(const io::ReadFile& file) {
  const std::string& path = file.path();
  const uint64_t file_size = file.size();
  unsigned char len_bytes[8] = {};
  const uint64_t head = file_size < 8 ? 0 : file.read_at(len_bytes, 8, 0);
  uint64_t header_len = 0;
  for (int i = 0; i < 8; ++i) header_len |= uint64_t(len_bytes[i]) << (8 * i);
  // Only a header that cannot be one is looked at again: a 640-byte safetensors header also begins 0x80 0x02.
  const char* kind = head == 8 && header_len > file_size - 8 ? pytorch_kind(len_bytes, head) : nullptr;
  if (kind)
    load_fail(path, std::string("this is a PyTorch checkpoint (") + kind + "), not a safetensors file; convert it "
                    "first with: /usr/bin/python3 tools/convert_pth.py " + path + " OUT.safetensors" +
                    " (add --model A or --model B for an NCR checkpoint)");
  if (head != 8)
    load_fail(path, "truncated: the file holds " + std::to_string(file_size) +
                        " bytes, fewer than the 8-byte header length");
  if (header_len > file_size - 8)
    load_fail(path, "the header length " + std::to_string(header_len) + " runs past the end of the file (" +
                        std::to_string(file_size) + " bytes): the file is truncated or not a safetensors file");
  std::string text(header_len, '\0');
  if (file.read_at(text.data(), header_len, 8) != header_len)
    load_fail(path, "truncated: the file shrank while its header was being read");
  const Json json = parse_header(text, path);

  Header h;
  h.data_start = 8 + header_len;
  const uint64_t data_size = file_size - h.data_start;
  for (const auto& [name, info] : json.items()) {
    if (name == kMetadataKey) {
      if (!info.is_object()) load_fail(path, "__metadata__ is not an object of strings");
      for (const auto& [key, value] : info.items()) {
        if (!value.is_string()) load_fail(path, "__metadata__ entry '" + key + "' is not a string: " + value.dump());
        h.metadata[key] = value.get<std::string>();
      }
      continue;
    }
    // save_safetensors refuses an empty name too: what loads here saves again (and a state dict has none).
    if (name.empty()) load_fail(path, "a tensor has an empty name");
    h.entries.push_back(parse_entry(name, info, data_size, path));
  }
  std::vector<const Entry*> by_offset;
  for (const Entry& e : h.entries)
    if (e.end > e.begin) by_offset.push_back(&e);
  std::sort(by_offset.begin(), by_offset.end(), [](const Entry* a, const Entry* b) { return a->begin < b->begin; });
  for (size_t i = 1; i < by_offset.size(); ++i)
    if (by_offset[i]->begin < by_offset[i - 1]->end)
      load_fail(path, "tensors '" + by_offset[i - 1]->name + "' " + offsets_str(*by_offset[i - 1]) + " and '" +
                          by_offset[i]->name + "' " + offsets_str(*by_offset[i]) + " overlap");
  return h;
}

}  // namespace

std::string safetensors_checksum(const NamedTensors& tensors, const SafetensorsMetadata& metadata) {
  std::vector<size_t> order(tensors.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return tensors[a].first < tensors[b].first; });
  Xxh64 h;
  const char zero = '\0';
  for (size_t i : order) {
    const auto& [name, t] = tensors[i];
    const Tensor host = kernels::contiguous(kernels::to_device(t, Device::cpu()));
    std::string head = name + '\0' + dtype_name(host.dtype());
    for (int64_t d : host.sizes()) head += ' ' + std::to_string(d);
    h.update(head);
    h.update(&zero, 1);
    h.update(host.raw_data(), static_cast<size_t>(host.numel()) * dtype_size(host.dtype()));
  }
  for (const auto& [key, value] : metadata) {
    if (key == kChecksumKey) continue;
    h.update(key);
    h.update(&zero, 1);
    h.update(value);
    h.update(&zero, 1);
  }
  return "xxh64:" + h.hex();
}

SafetensorsMetadata read_safetensors_metadata(const std::string& path) {
  return read_header(io::ReadFile(path, kLoadOp)).metadata;
}

SafetensorsFile load_safetensors(const std::string& path) {
  const io::ReadFile file(path, kLoadOp);
  const Header h = read_header(file);
  SafetensorsFile out;
  out.metadata = h.metadata;
  for (const Entry& e : h.entries) {
    Tensor t = empty(e.shape, e.dtype, Device::cpu());
    const size_t nbytes = e.end - e.begin;
    if (file.read_at(t.raw_data(), nbytes, h.data_start + e.begin) != nbytes)
      load_fail(path, "truncated: the file shrank while tensor '" + e.name + "' was being read");
    if (e.dtype == DType::Bool) check_bool_bytes(t, e.name, path);
    out.tensors.emplace_back(e.name, t);
  }
  auto stored = out.metadata.find(kChecksumKey);
  if (stored != out.metadata.end()) {
    const std::string expected = stored->second;
    out.metadata.erase(stored);
    const std::string actual = safetensors_checksum(out.tensors, out.metadata);
    if (actual != expected)
      throw DamagedFile(std::string(kLoadOp) + " '" + path + "': the file is damaged: it was written with checksum " +
                        expected + " (metadata " + kChecksumKey + ") but its contents now give " + actual +
                        " (it changed after it was written: a disk or copy error, or an edit)");
    out.checksum_verified = true;
  }
  return out;
}

void save_safetensors(const std::string& path, const NamedTensors& tensors, const SafetensorsMetadata& metadata,
                      bool checksum) {
  std::set<std::string> names;
  std::vector<Tensor> host;
  for (const auto& [name, t] : tensors) {
    if (name.empty() || name == kMetadataKey) save_fail(path, "invalid tensor name '" + name + "'");
    if (!names.insert(name).second) save_fail(path, "tensor name '" + name + "' appears twice");
    if (!t.defined()) save_fail(path, "tensor '" + name + "' is undefined");
    if (!safetensors_dtype(t.dtype())) save_fail(path, "tensor '" + name + "' has unsupported dtype " + t.describe());
    host.push_back(kernels::contiguous(kernels::to_device(t, Device::cpu())));
  }
  // Larger elements first: with an 8-aligned data start every tensor is then aligned for its dtype.
  std::vector<size_t> order(tensors.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return dtype_size(host[a].dtype()) > dtype_size(host[b].dtype());
  });
  std::vector<uint64_t> begin(tensors.size());
  uint64_t offset = 0;
  for (size_t i : order) {
    begin[i] = offset;
    offset += static_cast<uint64_t>(host[i].numel()) * dtype_size(host[i].dtype());
  }
  Json header = Json::object();
  if (metadata.count(kChecksumKey)) save_fail(path, std::string("the metadata key '") + kChecksumKey + "' is reserved");
  if (!metadata.empty() || checksum) {
    Json meta = Json::object();
    for (const auto& [key, value] : metadata) meta[key] = value;
    if (checksum) {
      NamedTensors written;  // the host copies whose bytes are written below
      for (size_t i = 0; i < tensors.size(); ++i) written.emplace_back(tensors[i].first, host[i]);
      meta[kChecksumKey] = safetensors_checksum(written, metadata);
    }
    header[kMetadataKey] = meta;
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    const uint64_t end = begin[i] + static_cast<uint64_t>(host[i].numel()) * dtype_size(host[i].dtype());
    header[tensors[i].first] = {{"dtype", safetensors_dtype(host[i].dtype())},
                                {"shape", host[i].sizes()},
                                {"data_offsets", {begin[i], end}}};
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const nlohmann::json::exception& e) {
    save_fail(path, std::string("cannot encode the header (names and metadata must be UTF-8): ") + e.what());
  }
  text.append((8 - text.size() % 8) % 8, ' ');
  unsigned char len_bytes[8];
  for (int i = 0; i < 8; ++i) len_bytes[i] = static_cast<unsigned char>((uint64_t(text.size()) >> (8 * i)) & 0xFF);

  io::AtomicFileWriter out(path, kSaveOp);
  out.write(len_bytes, 8);
  out.write(text);
  for (size_t i : order)
    out.write(host[i].raw_data(), static_cast<size_t>(host[i].numel()) * dtype_size(host[i].dtype()));
  out.commit();
}

}  // namespace rematch::nn
