// The reports of `rematch retrieve` and `rematch demo` (docs/viz.md): what goes into the pages of viz/ is read
// here from the data set (captions, image ids, pictures), a score matrix, and a run folder (config.json, the
// noise used, the per-epoch splits, metrics.jsonl).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "train/cli/eval_checkpoint.h"

namespace rematch::cli {

// Where the pictures of a data set's images are (docs/viz.md §2).
struct ImageSource {
  std::string images_dir;     // "" : <data_path>/<data_name>/images when it exists (the synthetic benchmark's)
  std::string image_list;     // a file of image file names, one per distinct image or per features row
  std::string karpathy_json;  // dataset_<name>.json of the Karpathy split: its images of the split, in order
};

// The name (id or file name) of each distinct image of a split, in row order ("" where none is known): from
// image_list, else the Karpathy JSON, else <split>_ids.txt. num_captions is the file's caption count.
std::vector<std::string> split_image_names(const std::string& data_path, const std::string& data_name,
                                           const std::string& split, int64_t num_images, const ImageSource& source);

// The thumbnail of image `name` (its file found in `images_dir`, viz/thumbnails.h) written as
// <target_stem>.png/.jpg; returns the written file's name, or "" when there is none: no images folder, no such
// file, a name that leads out of the folder, or a picture that cannot be decoded. A report shows the image's
// name in its place; the last two are said on `notes` (when given), naming the file.
std::string thumbnail_of(const std::string& images_dir, const std::string& name, const std::string& target_stem,
                         int side, std::ostream* notes);

struct RetrievalReportOptions {
  std::string out_dir;
  ImageSource images;
  int64_t top_k = 5;
  int64_t random_queries = 8;  // per direction, when none are chosen
  std::vector<int64_t> query_images, query_captions;
  uint64_t seed = 0;
  int thumbnail_side = 160;
  std::vector<std::pair<std::string, std::string>> links;  // (href, text) under the page's title
  std::ostream* notes = nullptr;  // where a picture that cannot be shown is said (thumbnail_of)
};

// <out_dir>/retrieval.html with <out_dir>/thumbs/; returns the page's path. `scored` is the matrix of the split
// `data` names (its captions are read again for their text).
std::string write_retrieval_report(const ScoredSplit& scored, const CheckpointScoringOptions& data,
                                   const RetrievalReportOptions& options);

struct CaughtReportOptions {
  std::string out_dir;
  ImageSource images;
  int64_t per_section = 12;  // cards per section
  uint64_t seed = 0;
  int thumbnail_side = 160;
  std::string page_name = "caught.html";
  std::vector<std::pair<std::string, std::string>> links;  // (href, text) under the page's title
};

// At most k of `v`, drawn with `seed` (the same draw for the same seed), in ascending order: the cards of a section.
std::vector<int64_t> seeded_sample(std::vector<int64_t> v, int64_t k, uint64_t seed);

// <out_dir>/<page_name> (and detection.png when the noise is known): the training pairs the run's method flagged
// in its last recorded split, and the detection per epoch. The split comes from <run_dir>/splits/
// (viz/epoch_splits.h); a run without it falls back on the split in checkpoint_latest (L2RM keeps it there) and
// on the clean-set statistics of metrics.jsonl. Returns the page's path.
std::string write_caught_report(const std::string& run_dir, const CaughtReportOptions& options, std::ostream& log);

// <out_dir>/<page_name> (and labels.png): for a run on class-labelled data (UOT-RCL), the labels its method
// corrected, per epoch against the clean training labels of its --data_path and the noisy ones it trained on
// (<run_dir>/noisy_labels.npy), from the label splits in <run_dir>/splits/ (viz/label_page.h). Returns its path.
std::string write_label_report(const std::string& run_dir, const CaughtReportOptions& options, std::ostream& log);

// A run folder's whole report in <out_dir>: index.html (what the run caught) linking retrieval.html (what
// checkpoint_best retrieves on the run's test split) when the run has a best checkpoint; returns index.html's path.
// A run on class-labelled data gets the page of the labels it corrected instead (write_label_report), alone: its
// samples are feature vectors, with no caption or picture to retrieve.
std::string write_run_report(const std::string& run_dir, const std::string& out_dir, const ImageSource& images,
                             std::ostream& log);

}  // namespace rematch::cli
