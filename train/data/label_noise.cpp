// Training-label noise of the labelled data sets (declared in labeled_dataset.h): generation from a seed with
// the Philox generator, MRL's JSON noise files, and the .npy record written to a run folder.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tensor/file_io.h"
#include "tensor/json_depth.h"
#include "train/data/labeled_dataset.h"

namespace rematch::data {

namespace {

void check_train(const LabeledSplit& train, int64_t num_classes, const char* what) {
  REMATCH_CHECK(num_classes > 0, what, ": num_classes must be positive, got ", num_classes);
  REMATCH_CHECK(train.image_labels.size() == train.text_labels.size(), what, ": ", train.image_labels.size(),
                " image labels but ", train.text_labels.size(), " text labels");
}

void fill_clean(NoisyLabels& n, const LabeledSplit& train) {
  n.image_clean.resize(n.image_labels.size());
  n.text_clean.resize(n.text_labels.size());
  for (size_t i = 0; i < n.image_labels.size(); ++i) {
    n.image_clean[i] = n.image_labels[i] == train.image_labels[i];
    n.text_clean[i] = n.text_labels[i] == train.text_labels[i];
  }
}

}  // namespace

LabelNoise parse_label_noise(const std::string& name) {
  if (name == "symmetric") return LabelNoise::symmetric;
  if (name == "mrl") return LabelNoise::mrl;
  REMATCH_FAIL("label noise must be 'symmetric' or 'mrl', got '", name, "'");
}

NoisyLabels inject_label_noise(const LabeledSplit& train, int64_t num_classes, double ratio, LabelNoise mode,
                               uint64_t seed) {
  check_train(train, num_classes, "inject_label_noise");
  REMATCH_CHECK(ratio >= 0 && ratio <= 1, "inject_label_noise: ratio must be in [0, 1], got ", ratio);
  const int64_t n = train.size();
  const int64_t n_noisy = static_cast<int64_t>(ratio * static_cast<double>(n));  // Python's int(r * n)
  Generator gen(seed);
  NoisyLabels out;
  out.image_labels = train.image_labels;
  out.text_labels = train.text_labels;
  // Draws ⌊r·N⌋ random positions and a label in [0, high) for each, applied to the given label vectors.
  auto relabel = [&](int64_t high, std::initializer_list<std::vector<int64_t>*> targets) {
    const std::vector<int64_t> order = randperm(n, Device::cpu(), &gen).to_vector<int64_t>();
    const std::vector<int64_t> labels =
        randint(0, high, {n_noisy}, DType::Int64, Device::cpu(), &gen).to_vector<int64_t>();
    for (int64_t k = 0; k < n_noisy; ++k)
      for (std::vector<int64_t>* t : targets) (*t)[order[k]] = labels[k];
  };
  std::ostringstream source;
  if (mode == LabelNoise::symmetric) {
    relabel(num_classes, {&out.image_labels, &out.text_labels});
    source << "symmetric";
  } else {
    // MRL: random.randint(0, K) is inclusive of K; each modality draws its own positions and labels.
    relabel(num_classes + 1, {&out.image_labels});
    relabel(num_classes + 1, {&out.text_labels});
    source << "mrl";
  }
  source << " ratio=" << ratio << " seed=" << seed;
  out.source = source.str();
  fill_clean(out, train);
  return out;
}

NoisyLabels load_label_noise_file(const std::string& path, const LabeledSplit& train, int64_t num_classes,
                                  LabelNoise mode) {
  check_train(train, num_classes, "load_label_noise_file");
  REMATCH_CHECK(std::filesystem::exists(path), "label noise file '", path, "' does not exist");
  io::require_regular_file(path, "label noise file");  // a FIFO is named, never waited on
  const int64_t n = train.size();
  std::vector<std::vector<int64_t>> views;
  if (path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0) {
    const std::string text = io::read_text_file(path, "label noise file");
    io::require_shallow_json(text, "label noise file", path);
    try {
      const nlohmann::json j = nlohmann::json::parse(text);
      REMATCH_CHECK(j.is_array(), "label noise file '", path, "' must hold a list of per-modality label lists");
      for (const auto& v : j) {
        // Checked before the conversion: nlohmann casts a float to an integer as is (undefined out of range), and
        // an unsigned integer past int64's range wraps (18446744073709551615 would be label -1).
        REMATCH_CHECK(v.is_array(), "label noise file '", path, "' is not a JSON list of integer lists: list ",
                      views.size(), " is ", v.dump().substr(0, 80));
        const auto bad = std::find_if(v.begin(), v.end(), [](const nlohmann::json& x) {
          return !x.is_number_integer() ||
                 (x.is_number_unsigned() && x.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX));
        });
        REMATCH_CHECK(bad == v.end(), "label noise file '", path, "' is not a JSON list of integer lists: list ",
                      views.size(), " entry ", bad - v.begin(), " is ", bad == v.end() ? "" : bad->dump().substr(0, 80),
                      bad != v.end() && bad->is_number_unsigned() ? " (past int64)" : "");
        views.push_back(v.get<std::vector<int64_t>>());
      }
    } catch (const nlohmann::json::exception& e) {
      REMATCH_FAIL("label noise file '", path, "' is not a JSON list of integer lists: ", e.what());
    }
  } else {
    const Tensor t = load_npy(path, -1);
    REMATCH_CHECK((t.dtype() == DType::Int64 || t.dtype() == DType::Int32) && (t.dim() == 1 || t.dim() == 2),
                  "label noise file '", path, "' holds ", t.describe(), "; expected int64 [N] or [2, N]");
    const std::vector<int64_t> flat = t.to_vector<int64_t>();
    const int64_t rows = t.dim() == 1 ? 1 : t.size(0), cols = t.size(-1);
    for (int64_t r = 0; r < rows; ++r) views.emplace_back(flat.begin() + r * cols, flat.begin() + (r + 1) * cols);
  }
  if (views.size() == 1) views.push_back(views[0]);  // one label per pair
  REMATCH_CHECK(views.size() == 2 && static_cast<int64_t>(views[0].size()) == n &&
                    static_cast<int64_t>(views[1].size()) == n,
                "label noise file '", path, "' has ", views.size(), " label list(s) of length ",
                views.empty() ? 0 : views[0].size(), "; expected 1 or 2 lists of ", n, " training labels");
  const int64_t highest = mode == LabelNoise::mrl ? num_classes : num_classes - 1;
  for (const auto& v : views)
    for (size_t i = 0; i < v.size(); ++i)
      REMATCH_CHECK(v[i] >= 0 && v[i] <= highest, "label noise file '", path, "': label ", i, " is ", v[i],
                    ", outside 0..", highest, " (", num_classes, " classes",
                    mode == LabelNoise::mrl ? ", plus MRL's out-of-range draw K)" : ")");
  NoisyLabels out;
  out.image_labels = std::move(views[0]);
  out.text_labels = std::move(views[1]);
  out.source = "file " + path;
  fill_clean(out, train);
  return out;
}

std::string save_label_noise(const NoisyLabels& labels, const std::string& run_dir) {
  REMATCH_CHECK(std::filesystem::is_directory(run_dir), "save_label_noise: run folder '", run_dir,
                "' does not exist");
  REMATCH_CHECK(labels.image_labels.size() == labels.text_labels.size(), "save_label_noise: ",
                labels.image_labels.size(), " image labels but ", labels.text_labels.size(), " text labels");
  std::vector<int64_t> both = labels.image_labels;
  both.insert(both.end(), labels.text_labels.begin(), labels.text_labels.end());
  const std::string path = run_dir + "/noisy_labels.npy";
  save_npy(path, from_vector(both, {2, static_cast<int64_t>(labels.image_labels.size())}));
  return path;
}

}  // namespace rematch::data
