#include "viz/epoch_splits.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "tensor/error.h"
#include "tensor/file_io.h"
#include "tensor/json_depth.h"
#include "tensor/npy.h"
#include "tensor/npy_integers.h"
#include "tensor/tensor.h"

namespace rematch::viz {

namespace fs = std::filesystem;

const char* split_kind_name(SplitKind k) {
  switch (k) {
    case SplitKind::kept: return "kept";
    case SplitKind::weight: return "weight";
    case SplitKind::label: return "label";
  }
  return "?";
}

namespace {

SplitKind parse_kind(const std::string& s, const std::string& path) {
  if (s == "kept") return SplitKind::kept;
  if (s == "weight") return SplitKind::weight;
  if (s == "label") return SplitKind::label;
  REMATCH_FAIL("epoch split '", path, "': kind must be kept, weight or label, got '", s, "'");
}

std::string stem(const std::string& run_dir, int64_t epoch) {
  return (fs::path(run_dir) / "splits" / ("epoch_" + std::to_string(epoch))).string();
}

}  // namespace

void write_epoch_split(const std::string& run_dir, const EpochSplit& s) {
  REMATCH_CHECK(s.epoch >= 0, "write_epoch_split: epoch must be >= 0, got ", s.epoch);
  const std::string base = stem(run_dir, s.epoch);
  const int64_t n = static_cast<int64_t>(s.values.size());
  Tensor t;
  if (s.kind == SplitKind::label) {
    std::vector<int32_t> v(s.values.size());
    for (size_t i = 0; i < v.size(); ++i) {
      REMATCH_CHECK(s.values[i] >= 0 && s.values[i] < 2147483648.0 && std::floor(s.values[i]) == s.values[i],
                    "epoch split '", base, ".npy': pair ", i, " has label ", s.values[i], "; labels are integers >= 0");
      v[i] = static_cast<int32_t>(s.values[i]);
    }
    t = from_vector(v, {n});
  } else {
    std::vector<uint8_t> v(s.values.size());
    for (size_t i = 0; i < v.size(); ++i) {
      const double x = s.values[i];
      if (s.kind == SplitKind::kept)
        REMATCH_CHECK(x == 0 || x == 1, "epoch split '", base, ".npy': pair ", i, " is ", x, "; kept flags are 0 or 1");
      else
        REMATCH_CHECK(x >= 0 && x <= 1, "epoch split '", base, ".npy': pair ", i, " has weight ", x,
                      "; weights lie in [0, 1]");
      v[i] = static_cast<uint8_t>(std::lround(s.kind == SplitKind::kept ? x : 255 * x));
    }
    t = from_vector(v, {n});
  }
  std::error_code ec;
  fs::create_directories(fs::path(run_dir) / "splits", ec);
  REMATCH_CHECK(!ec, "cannot create folder '", (fs::path(run_dir) / "splits").string(), "': ", ec.message());
  save_npy(base + ".npy", t);
  const nlohmann::json meta = {
      {"epoch", s.epoch}, {"method", s.method}, {"kind", split_kind_name(s.kind)}, {"pairs", n}};
  io::write_file_atomically(base + ".json", meta.dump() + "\n", "write_epoch_split");
}

namespace {

// The field `key` of a split's .json as the type its writer gives it, else an Error naming the file and the key.
const nlohmann::json& meta_field(const nlohmann::json& meta, const char* key, bool (nlohmann::json::*is)() const,
                                 const char* type, const std::string& path) {
  const auto it = meta.find(key);
  REMATCH_CHECK(it != meta.end(), "epoch split '", path, "' has no \"", key, "\" (", type, "); delete the file "
                "or write it again");
  REMATCH_CHECK(((*it).*is)(), "epoch split '", path, "': \"", key, "\" is ", it->dump().substr(0, 40), ", not ", type,
                "; delete the file or write it again");
  return *it;
}

EpochSplit read_one_split(const fs::path& meta_file) {
  const std::string meta_path = meta_file.string();
  nlohmann::json meta;
  const std::string meta_text = io::read_text_file(meta_path, "epoch split");
  io::require_shallow_json(meta_text, "epoch split", meta_path);
  try {
    meta = nlohmann::json::parse(meta_text);
  } catch (const nlohmann::json::exception& x) {
    REMATCH_FAIL("epoch split '", meta_path, "' is not valid JSON: ", x.what());
  }
  REMATCH_CHECK(meta.is_object(), "epoch split '", meta_path, "' is not a JSON object; delete the file or write it again");
  EpochSplit s;
  s.epoch = meta_field(meta, "epoch", &nlohmann::json::is_number_integer, "an integer", meta_path).get<int64_t>();
  REMATCH_CHECK(s.epoch >= 0, "epoch split '", meta_path, "': \"epoch\" is ", s.epoch, "; epochs count from 0");
  s.method = meta_field(meta, "method", &nlohmann::json::is_string, "a string", meta_path).get<std::string>();
  s.kind = parse_kind(meta_field(meta, "kind", &nlohmann::json::is_string, "a string", meta_path).get<std::string>(),
                      meta_path);
  const std::string npy = (meta_file.parent_path() / (meta_file.stem().string() + ".npy")).string();
  const IntegerNpy values = load_integer_npy(npy, "epoch split");
  REMATCH_CHECK(values.shape.size() == 1, "epoch split '", npy, "' has ", values.shape.size(),
                " dimensions; expected one value per pair");
  const auto pairs = meta.find("pairs");
  REMATCH_CHECK(pairs == meta.end() || (pairs->is_number_integer() && pairs->get<int64_t>() == values.shape[0]),
                "epoch split '", meta_path, "' says \"pairs\": ", pairs == meta.end() ? "" : pairs->dump(), " but '",
                npy, "' holds ", values.shape[0], " values");
  switch (s.kind) {
    case SplitKind::kept:
      check_integer_range(values, "epoch split", 0, 2, "kept flags are 0 or 1");
      break;
    case SplitKind::weight:
      check_integer_range(values, "epoch split", 0, 256, "weights are stored as round(255 * w)");
      break;
    case SplitKind::label:
      check_integer_range(values, "epoch split", 0, int64_t{1} << 31, "labels are integers >= 0");
      break;
  }
  for (int64_t v : values.values)
    s.values.push_back(s.kind == SplitKind::weight ? static_cast<double>(v) / 255.0 : static_cast<double>(v));
  return s;
}

}  // namespace

std::vector<EpochSplit> read_epoch_splits(const std::string& run_dir) {
  std::vector<EpochSplit> out;
  const fs::path dir = fs::path(run_dir) / "splits";
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  std::vector<fs::path> metas;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".json") metas.push_back(it->path());
  REMATCH_CHECK(!ec, "cannot list folder '", dir.string(), "': ", ec.message());
  for (const fs::path& m : metas) out.push_back(read_one_split(m));
  std::sort(out.begin(), out.end(), [](const EpochSplit& a, const EpochSplit& b) { return a.epoch < b.epoch; });
  for (size_t i = 1; i < out.size(); ++i)
    REMATCH_CHECK(out[i].epoch != out[i - 1].epoch, "folder '", dir.string(), "' holds two splits of epoch ",
                  out[i].epoch, "; delete the one that does not belong to this run");
  return out;
}

std::vector<uint8_t> flagged_pairs(const EpochSplit& s) {
  std::vector<uint8_t> f(s.values.size(), 0);
  if (s.kind == SplitKind::label) return f;
  for (size_t i = 0; i < f.size(); ++i) f[i] = s.kind == SplitKind::kept ? s.values[i] == 0 : s.values[i] < 0.5;
  return f;
}

Detection detection_quality(int64_t epoch, const std::vector<uint8_t>& flagged, const std::vector<uint8_t>& truly_clean) {
  REMATCH_CHECK(flagged.size() == truly_clean.size(), "detection_quality: ", flagged.size(), " decisions for ",
                truly_clean.size(), " pairs");
  Detection d;
  d.epoch = epoch;
  d.pairs = static_cast<int64_t>(flagged.size());
  for (size_t i = 0; i < flagged.size(); ++i) {
    d.flagged += flagged[i] != 0;
    d.truly_mismatched += truly_clean[i] == 0;
    d.caught += flagged[i] != 0 && truly_clean[i] == 0;
  }
  d.precision = d.flagged ? static_cast<double>(d.caught) / static_cast<double>(d.flagged) : 0.0;
  d.recall = d.truly_mismatched ? static_cast<double>(d.caught) / static_cast<double>(d.truly_mismatched) : 0.0;
  return d;
}

}  // namespace rematch::viz
