// `rematch data check` (docs/data.md §5): every file the loaders would read for a data set, found or missing,
// what it holds (shape, dtype, count, caption encoding, the vocabulary's coverage) against what the official
// release holds (train/data/official_releases.h), every noise file found (its length, whether it is a valid
// index, the share of pairs it really changes against the ratio in its name), and for a missing file where it
// comes from. Nothing is changed and no loader's behaviour depends on this: the checks read the files the way
// the loaders do (precomp_dataset.h, vocab.h, noise.h, labeled_dataset.h) and say in advance what would stop a
// run, or make it train on something else than the user thinks.
//
// Severities: an error is what makes a training run fail, or silently train or evaluate on other data (a
// truncated or mis-shaped file, captions that do not match the rows, counts or shapes other than the official
// release's, a vocabulary that leaves a quarter of the words unknown, a noise file whose real ratio is not the
// one in its name); a warning is what a researcher should know before comparing numbers (a rebuilt
// vocabulary, a noise file that is no permutation); a note is information (a float64 file converted on load).
// Region features are read whole only with whole_files (`rematch data check`), for their NaN and Inf values, as
// the loader checks them; the check at a run's start reads their header, the file size and at most five rows.
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "train/data/official_releases.h"

namespace rematch::data {

enum class Severity { ok, note, warning, error };
const char* severity_name(Severity s);  // "ok", "note", "warning", "error"

// One file (or one fact about the data set) checked.
struct CheckItem {
  std::string role;  // what it is: "train image features", "dev captions", "vocabulary", "noise file", ...
  std::string path;
  Severity severity = Severity::ok;
  std::string status;    // "ok", "missing", "truncated", "wrong shape", "wrong count", "ratio differs", ...
  std::string content;   // what it holds, e.g. "float32 [29000, 36, 2048]" ("" when missing)
  std::string expected;  // what the official release holds, when one is known
  std::string problem;   // for a note, warning or error: one sentence naming the file and what is wrong
  std::string source;    // for a missing file: where it comes from
  std::map<std::string, double> numbers;  // measured values for --json and tests (rows, captions, oov_share, ...)
  // The problem is a disagreement with the official release (a count, a feature size, the classes), not with the
  // folder's own files: a subset, or another data set under an official name, that a run can still train on.
  bool against_release = false;
};

enum class DataLayout { automatic, precomp, labeled };

struct DataCheckOptions {
  std::string data_path, data_name, vocab_path;
  std::vector<std::string> noise_files;  // given by the user; checked besides the ones found by name
  DataLayout layout = DataLayout::automatic;  // automatic: labelled when data_path is a file or holds train_imgs.npy
  std::string test_split;                     // precomp: a split a run tests on, checked even when not official
  int64_t valid_len = -1;                     // labelled HDF5 without a valid split: -1 = the release's, else 0
  // false: only what is cheap at the start of a training run (headers, sizes, counts, small files); the
  // vocabulary's coverage, which tokenises every caption, is left out.
  bool whole_files = true;
  // Holds the folder against this release instead of the one data_name names (tests use a small one).
  const PrecompRelease* release = nullptr;
  // false: only the noise files given in noise_files, none found by name (a run reads only its --noise_file).
  bool find_noise_files = true;
  // precomp: when not empty, only these splits (a run reads train, dev and its test split).
  std::vector<std::string> only_splits;
};

struct DataCheckReport {
  std::string data_path, data_name;
  std::string layout;   // "precomp" or "labeled"
  std::string folder;   // the folder (or HDF5 file) read
  std::string release;  // the official release held against ("" when none)
  std::vector<CheckItem> items;
  int64_t count(Severity s) const;
  bool ok() const { return count(Severity::error) == 0; }
};

DataCheckReport check_data(const DataCheckOptions& options);

// The terminal table (one line per file), then each problem with what to do, and a last line with the counts.
std::string format_report(const DataCheckReport& report);
// One JSON object: the fields above and every item with its numbers.
std::string report_json(const DataCheckReport& report);

// The hook for `rematch train`'s start (docs/data.md §5.3): check_data without whole-file reads, on the files the
// run reads (train, dev and the test split; the --noise_file only); warnings are written to `log`, and errors
// throw one rematch::Error listing each problem with its file. A disagreement with the official release
// (CheckItem::against_release: a subset, or another data set under an official name) is a warning here.
struct TrainingDataFiles {
  std::string data_path, data_name, vocab_path, noise_file, test_split = "test";
  bool labeled = false;  // UOT-RCL's class-labelled layout (data_path: an HDF5 file or a .npy folder)
  int64_t valid_len = -1;
  const PrecompRelease* release = nullptr;  // as DataCheckOptions::release (tests)
};
void check_for_training(const TrainingDataFiles& files, std::ostream& log);

// ---- pieces shared by the checks (data_check_*.cpp) --------------------------------------------------------

namespace check_detail {

// What an .npy file's header says and whether the file is as long as the header needs; never reads the data.
struct NpyFacts {
  bool exists = false;
  std::string error;  // a file that is no readable .npy: what is wrong ("" when the header reads)
  std::string descr;  // "<f4", "<i8", ...
  std::vector<int64_t> shape;
  int64_t item_bytes = 0, data_offset = 0, file_bytes = 0, needed_bytes = 0;
  std::string dtype_name() const;   // "float32", "int64", ...
  std::string shape_str() const;    // "[29000, 36, 2048]"
  bool truncated() const { return error.empty() && file_bytes < needed_bytes; }
};
NpyFacts inspect_npy(const std::string& path);

// "145,000" (thousands separated, as the docs write counts).
std::string count_str(int64_t n);
std::string percent_str(double share);  // "19.997%"

// The ratio a noise file's name carries (noise_inx_0.2.npy, f30k_precomp_0.2.npy, noise_labels_0.4_sym.json):
// the last decimal number of the name in [0, 1], a minus sign (noise_labels_-0.5_sym.json) taken as one; -1 when
// there is none.
double ratio_in_name(const std::string& path);

// The checks of one layout, appending to report.items.
void check_precomp(const DataCheckOptions& options, DataCheckReport& report);
void check_labeled(const DataCheckOptions& options, DataCheckReport& report);
// A noise file of the precomp layout, held against a training split of num_images images × im_div.
CheckItem check_noise_file(const std::string& path, int64_t num_images, int64_t im_div);

}  // namespace check_detail

}  // namespace rematch::data
