#include "viz/epoch_splits.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tensor/error.h"
#include "tensor/file_io.h"
#include "tensor/npy.h"
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

std::vector<EpochSplit> read_epoch_splits(const std::string& run_dir) {
  std::vector<EpochSplit> out;
  const fs::path dir = fs::path(run_dir) / "splits";
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() != ".json") continue;
    const std::string meta_path = e.path().string();
    nlohmann::json meta;
    try {
      std::ifstream in(meta_path);
      meta = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& x) {
      REMATCH_FAIL("epoch split '", meta_path, "' is not valid JSON: ", x.what());
    }
    EpochSplit s;
    try {
      s.epoch = meta.at("epoch").get<int64_t>();
      s.method = meta.at("method").get<std::string>();
      s.kind = parse_kind(meta.at("kind").get<std::string>(), meta_path);
    } catch (const nlohmann::json::exception& x) {
      REMATCH_FAIL("epoch split '", meta_path, "': ", x.what());
    }
    const std::string npy = e.path().parent_path().string() + "/" + e.path().stem().string() + ".npy";
    const Tensor t = load_npy(npy, -1);
    REMATCH_CHECK(t.dim() == 1, "epoch split '", npy, "' has shape ", t.shape_str(), "; expected one value per pair");
    if (s.kind == SplitKind::label) {
      for (int64_t v : kernels::cast(t, DType::Int64).to_vector<int64_t>()) s.values.push_back(static_cast<double>(v));
    } else {
      for (int64_t v : kernels::cast(t, DType::Int64).to_vector<int64_t>())
        s.values.push_back(s.kind == SplitKind::kept ? static_cast<double>(v) : static_cast<double>(v) / 255.0);
    }
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](const EpochSplit& a, const EpochSplit& b) { return a.epoch < b.epoch; });
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
