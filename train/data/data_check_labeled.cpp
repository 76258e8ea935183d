// The checks of the class-labelled layouts of UOT-RCL (docs/data.md §5.2): the .npy folder file by file (header,
// size, shape), then the whole set through its loader (labels, row counts; these files are small next to the
// region features), then the label-noise files.
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "tensor/error.h"
#include "tensor/file_io.h"
#include "train/data/data_check.h"
#include "train/data/labeled_dataset.h"

namespace rematch::data::check_detail {
namespace {

namespace fs = std::filesystem;

CheckItem problem(CheckItem it, Severity s, const std::string& status, const std::string& text) {
  it.severity = s;
  it.status = status;
  it.problem = text;
  return it;
}

// One .npy of the folder layout: present, readable, as long as its header says, of the right rank.
bool check_npy_file(const std::string& path, const std::string& role, size_t rank, DataCheckReport& report) {
  CheckItem it;
  it.role = role;
  it.path = path;
  it.status = "ok";
  const NpyFacts f = inspect_npy(path);
  if (!f.exists) {
    it.source = kLabeledSource;
    report.items.push_back(problem(it, Severity::error, "missing", "'" + path + "' does not exist"));
    return false;
  }
  if (!f.error.empty()) {
    report.items.push_back(problem(it, Severity::error, "unreadable", f.error));
    return false;
  }
  it.content = f.dtype_name() + " " + f.shape_str();
  if (f.truncated()) {
    report.items.push_back(problem(it, Severity::error, "truncated",
                                   "'" + path + "' is truncated: it holds " + count_str(f.file_bytes) +
                                       " bytes, its header " + f.shape_str() + " needs " + count_str(f.needed_bytes)));
    return false;
  }
  if (f.shape.size() != rank) {
    report.items.push_back(problem(it, Severity::error, "wrong shape",
                                   "'" + path + "' has shape " + f.shape_str() + "; expected " +
                                       (rank == 2 ? "[N, dim] features" : "[N] labels")));
    return false;
  }
  report.items.push_back(it);
  return true;
}

void split_item(const std::string& source, const std::string& name, const LabeledSplit& s, int64_t official,
                const LabeledRelease* release, DataCheckReport& report) {
  CheckItem it;
  it.role = name + " split";
  it.path = source;
  it.status = "ok";
  it.content = count_str(s.size()) + " pairs, images " + s.images.shape_str() + ", texts " + s.texts.shape_str();
  it.numbers = {{"pairs", double(s.size())}, {"image_dim", double(s.images.size(1))},
                {"text_dim", double(s.texts.size(1))}};
  if (release) {
    it.expected = count_str(official) + " pairs";
    if (s.size() != official)
    {
      it = problem(it, Severity::error, "wrong count",
                   "the " + name + " split of '" + source + "' has " + count_str(s.size()) + " pairs; the official " +
                       release->title + " split has " + count_str(official));
      it.against_release = true;
    }
    else if (s.images.size(1) != release->image_dim || s.texts.size(1) != release->text_dim)
      it = problem(it, Severity::note, "ok",
                   "'" + source + "' has " + std::to_string(s.images.size(1)) + "-d images and " +
                       std::to_string(s.texts.size(1)) + "-d texts; the papers' features are " +
                       std::to_string(release->image_dim) + "-d (VGG-19) and " + std::to_string(release->text_dim) +
                       "-d (Doc2Vec): the networks take the file's sizes");
  }
  report.items.push_back(it);
}

// Every labelled method validates and tests on non-empty splits (train/methods/mrl/mrl_method.cpp and the
// others refuse at their start): an empty one is an error here, so the check does not say "ready to train".
void empty_split_items(const std::string& source, const LabeledDataset& d, int64_t valid_len, DataCheckReport& report) {
  for (const auto& [name, s] : {std::pair<std::string, const LabeledSplit*>{"valid", &d.valid}, {"test", &d.test}}) {
    if (s->size() > 0) continue;
    CheckItem it;
    it.role = name + " split";
    it.path = source;
    const std::string advice =
        name == "valid"
            ? "give the valid split rows or, without a valid split in the files, give --valid_len N (now " +
                  std::to_string(valid_len) + ") to validate on the first N test rows"
            : "give the test split rows" + (valid_len > 0 ? " (without a valid split in the files, --valid_len " +
                                                                std::to_string(valid_len) + " takes the first " +
                                                                std::to_string(valid_len) + " test rows for validation)"
                                                          : std::string());
    report.items.push_back(problem(it, Severity::error, "empty",
                                   "the " + name + " split of '" + source + "' is empty; every labelled method "
                                   "validates and tests on non-empty splits: " + advice));
  }
}

CheckItem check_label_noise(const std::string& path, const LabeledSplit& train, int64_t classes) {
  CheckItem it;
  it.role = "label noise file";
  it.path = path;
  it.status = "ok";
  NoisyLabels n;
  try {
    n = load_label_noise_file(path, train, classes, LabelNoise::mrl);
  } catch (const Error& e) {
    if (!fs::exists(path)) it.source = kLabelNoiseSource;
    return problem(it, Severity::error, fs::exists(path) ? "not valid" : "missing", e.what());
  }
  const int64_t N = train.size();
  int64_t changed_img = 0, changed_txt = 0;
  for (int64_t i = 0; i < N; ++i) {
    changed_img += n.image_labels[i] != train.image_labels[i];
    changed_txt += n.text_labels[i] != train.text_labels[i];
  }
  const int64_t changed = std::max(changed_img, changed_txt);
  const double share = N ? static_cast<double>(changed) / static_cast<double>(N) : 0.0;
  it.numbers = {{"changed", double(changed)}, {"realised_ratio", share}};
  it.content = "labels of " + count_str(N) + " pairs, changes " + percent_str(share) + " of them";
  const double named = ratio_in_name(path);
  it.numbers["named_ratio"] = named;
  if (named < 0) return it;
  // ⌊r·N⌋ samples are relabelled, uniformly over K (symmetric) or K + 1 (MRL) labels, so the true one comes
  // back with probability 1/K or 1/(K + 1): between n·(K−1)/(K+1) and n change, give or take sampling noise.
  const double n_drawn = std::floor(named * static_cast<double>(N));
  const double low = n_drawn * static_cast<double>(classes - 1) / static_cast<double>(classes + 1) -
                     3 * std::sqrt(n_drawn) - 2;
  it.expected = "named " + std::to_string(named).substr(0, 4) + ": at most " + count_str(int64_t(n_drawn)) +
                " relabelled";
  if (static_cast<double>(changed) > n_drawn || static_cast<double>(changed) < low)
    return problem(it, Severity::error, "ratio differs",
                   "label noise file '" + path + "' is named for ratio " + std::to_string(named).substr(0, 4) +
                       " but changes " + percent_str(share) + " of the training labels: a run given it trains at "
                       "another noise level than its name says");
  return it;
}

}  // namespace

void check_labeled(const DataCheckOptions& o, DataCheckReport& report) {
  const LabeledRelease* release = find_labeled_release(o.data_name, o.data_path);
  report.folder = o.data_path;
  if (release) report.release = release->title;
  std::error_code ec;
  const bool folder = fs::is_directory(o.data_path, ec);
  if (!folder && !fs::is_regular_file(o.data_path, ec)) {
    CheckItem it;
    it.role = "labelled data";
    it.path = o.data_path;
    it.source = kLabeledSource;
    struct stat st {};
    const bool there = ::stat(o.data_path.c_str(), &st) == 0;  // a FIFO, socket or device: named as what it is
    report.items.push_back(problem(it, Severity::error, there ? "unreadable" : "missing",
                                   "'" + o.data_path + "' " +
                                       (there ? "is " + io::file_kind(st.st_mode) +
                                                    ", not an HDF5 file or a folder: give the path of one"
                                              : std::string("does not exist"))));
    return;
  }
  bool readable = true;
  if (folder) {
    std::vector<std::string> splits = {"train", "test"};
    const std::string partial = partial_npy_valid_split(o.data_path);
    if (!partial.empty()) {
      CheckItem it;
      it.role = "valid split";
      it.path = (fs::path(o.data_path) / "valid_*.npy").string();
      report.items.push_back(problem(it, Severity::error, "incomplete", partial));
      readable = false;
    } else if (fs::exists(fs::path(o.data_path) / "valid_imgs.npy", ec)) {
      splits.insert(splits.begin() + 1, "valid");
    }
    for (const std::string& split : splits)
      for (const auto& [part, rank] : {std::pair<std::string, size_t>{"imgs", 2}, {"texts", 2}, {"labels", 1}})
        readable &= check_npy_file((fs::path(o.data_path) / (split + "_" + part + ".npy")).string(),
                                   split + " " + part, rank, report);
  }
  if (!readable) return;
  const int64_t valid_len = o.valid_len >= 0 ? o.valid_len : (release ? release->valid_len : 0);
  LabeledDataset d;
  try {
    d = load_labeled(o.data_path, valid_len);
  } catch (const Error& e) {
    CheckItem it;
    it.role = folder ? "labelled data (.npy folder)" : "labelled data (HDF5)";
    it.path = o.data_path;
    report.items.push_back(problem(it, Severity::error, "unreadable", e.what()));
    return;
  }
  split_item(o.data_path, "train", d.train, release ? release->train : 0, release, report);
  split_item(o.data_path, "valid", d.valid, release ? release->valid : 0, release, report);
  split_item(o.data_path, "test", d.test, release ? release->test : 0, release, report);
  empty_split_items(o.data_path, d, valid_len, report);
  CheckItem classes;
  classes.role = "classes";
  classes.path = o.data_path;
  classes.status = "ok";
  classes.content = std::to_string(d.num_classes) + " classes";
  classes.numbers["classes"] = static_cast<double>(d.num_classes);
  if (release) {
    classes.expected = std::to_string(release->classes) + " classes";
    if (d.num_classes != release->classes)
    {
      classes = problem(classes, Severity::error, "wrong count",
                        "'" + o.data_path + "' has " + std::to_string(d.num_classes) + " classes; the official " +
                            release->title + " has " + std::to_string(release->classes));
      classes.against_release = true;
    }
  }
  const int64_t used = distinct_classes(d.train);
  classes.numbers["used_classes"] = static_cast<double>(used);
  if (classes.severity == Severity::ok && 2 * used < d.num_classes)
    classes = problem(classes, Severity::warning, "sparse ids",
                      "the training labels of '" + o.data_path + "' use " + count_str(used) + " of their " +
                          count_str(d.num_classes) + " class ids (ids are shifted by the smallest label, not "
                          "renumbered: docs/methods/uotrcl.md §4.1): the empty classes still get prototypes and "
                          "noisy labels drawn over them; number the classes 0..K-1 without gaps");
  report.items.push_back(classes);

  // MRL's noise files sit beside the data (<root>/<ds>/noise_labels_<r>_sym.json).
  const fs::path dir = folder ? fs::path(o.data_path) : fs::path(o.data_path).parent_path();
  std::vector<std::string> files;
  if (fs::is_directory(dir.empty() ? fs::path(".") : dir, ec))
    for (const auto& e : fs::directory_iterator(dir.empty() ? fs::path(".") : dir, ec)) {
      const std::string f = e.path().filename().string();
      if (f.rfind("noise_labels_", 0) == 0 && e.path().extension() == ".json") files.push_back(e.path().string());
    }
  std::sort(files.begin(), files.end());
  for (const std::string& f : o.noise_files)
    if (std::find(files.begin(), files.end(), f) == files.end()) files.push_back(f);
  for (const std::string& f : files) report.items.push_back(check_label_noise(f, d.train, d.num_classes));
}

}  // namespace rematch::data::check_detail
