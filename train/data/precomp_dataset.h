// The SCAN "precomp" image–caption data sets (docs/backbones.md §6): `<data_path>/<data_name>/<split>_ims.npy`
// (float32 [rows, R, D] region features, memory-mapped when large) and `<split>_caps.txt` (one caption per line)
// or `<split>_caps.tsv` (CC152K: `image_id<TAB>caption`). Caption j uses image row j / im_div, where im_div = 5
// when the file has fewer rows than captions and 1 when it has one row per caption (F30K dev/test replicate
// each image five times). Captions are tokenised once, at load time, as NCR/L2RM do.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "tensor/tensor.h"
#include "train/data/vocab.h"

namespace rematch::data {

// Which part of `dev` selects models (§6.3): sgraf = the first 5,000 captions (SGRAF/SCAN/RCL/DECL; all of
// them when fewer), ncr = the first 1,000 × im_div captions (NCR/L2RM; 200 images on F30K).
enum class ValSubset { sgraf, ncr };
ValSubset parse_val_subset(const std::string& name);  // "sgraf" | "ncr"

struct PrecompOptions {
  ValSubset val_subset = ValSubset::sgraf;  // applies to split "dev" only
  // Captions per distinct image for evaluation; 0 = detect (5 when im_div = 5; with one row per caption, 5 when
  // rows 0..4 hold the same image, as in F30K dev/test, else 1, as in CC152K).
  int64_t captions_per_image = 0;
  int64_t mmap_min_bytes = kNpyMmapMinBytes;  // see load_npy
  // Every feature checked for NaN and Inf at load (finite_features.h), naming the file and the first bad row.
  // It reads the whole file once (a mapped file's pages are loaded): about a second per gigabyte from disk. A
  // run's training split skips it: the training step stops at a non-finite loss and names the op.
  bool check_finite = true;
  // Where a conversion of the features on load is said (float64/float16 or Fortran order, float_npy.h);
  // nullptr: std::cerr.
  std::ostream* notes = nullptr;
};

class PrecompDataset {
 public:
  // Loads `<data_path>/<data_name>/<split>_*` (split: train, dev, test, testall, or meta: MSCN's clean meta set). A missing file, features that
  // are not float [rows, R, D] (float64 and float16 are converted to float32, float_npy.h), a NaN or Inf
  // feature (options.check_finite), an empty caption, or a row count that fits neither im_div rule is an
  // Error naming the file and the numbers.
  PrecompDataset(const std::string& data_path, const std::string& data_name, const std::string& split,
                 const Vocabulary& vocab, const PrecompOptions& options = {});

  int64_t num_captions() const { return num_captions_; }
  // Image rows in use: num_captions / im_div (fewer than the file has when a validation subset applies).
  int64_t num_images() const { return num_captions_ / im_div_; }
  int64_t im_div() const { return im_div_; }
  int64_t captions_per_image() const { return captions_per_image_; }
  int64_t num_regions() const { return features_.size(1); }
  int64_t feature_dim() const { return features_.size(2); }

  // [R, D] view of one image row (no copy; mapped pages load on first touch).
  Tensor image(int64_t row) const;
  // [B, R, D] contiguous copy of the given rows.
  Tensor images(const std::vector<int64_t>& rows) const;
  // The whole [rows, R, D] array as loaded (all rows of the file).
  const Tensor& features() const { return features_; }

  // Token ids of caption j: <start> ... <end>.
  const int64_t* caption_ids(int64_t j) const;
  int64_t caption_length(int64_t j) const;
  std::vector<int64_t> caption_vector(int64_t j) const;
  const std::string& caption_text(int64_t j) const;
  // The clean image row of caption j: j / im_div.
  int64_t image_index(int64_t j) const;

  const std::string& images_path() const { return images_path_; }
  const std::string& captions_path() const { return captions_path_; }

 private:
  void check_caption(int64_t j) const;

  std::string images_path_, captions_path_;
  Tensor features_;
  int64_t num_captions_ = 0, im_div_ = 1, captions_per_image_ = 1;
  std::vector<std::string> texts_;
  std::vector<int64_t> ids_;      // all captions' ids back to back
  std::vector<int64_t> offsets_;  // caption j is ids_[offsets_[j], offsets_[j + 1])
};

// The captions of a .txt (one per line) or .tsv (second tab-separated column, csv-style quoting) file, each
// stripped of surrounding whitespace. A missing file, a line without a caption column or an empty caption is an
// Error naming the file and the line.
std::vector<std::string> read_captions(const std::string& path);

// `<data_path>/<data_name>/<split>_caps.txt`, else `.tsv`; an Error naming both when neither exists.
std::string captions_file(const std::string& data_path, const std::string& data_name, const std::string& split);

// A vocabulary for a new data set: build_vocabulary over the train and dev captions (SCAN's build_vocab).
Vocabulary build_precomp_vocabulary(const std::string& data_path, const std::string& data_name,
                                    int64_t min_count = 4);

}  // namespace rematch::data
