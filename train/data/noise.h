// Mismatched ("noisy") image–caption correspondences (docs/backbones.md §6.4, docs/methods/shared.md §0.2): which
// image row each training caption is paired with. Two published protocols, both generated here from an explicit
// seed with the Philox generator so a run can be reproduced:
//   image level (RCL/DECL): ⌊r·N_img⌋ random images are permuted among themselves and all captions of an image
//     move together;
//   caption level (NCR): ⌊r·N_cap⌋ random captions have their image rows shuffled among themselves.
// A noise file of either published format is accepted (an [N_img] image permutation, expanded ×im_div, or an
// [N_cap] caption → row map; the length tells them apart — the format does not tell the protocol, §6.4). The
// correspondence actually used is written to the run folder, and the clean/noisy truth is kept for diagnostics.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rematch::data {

struct Correspondence {
  std::vector<int64_t> caption_to_row;  // [N_cap]: the image row caption j is trained with
  std::vector<uint8_t> clean;           // [N_cap]: 1 iff caption_to_row[j] == j / im_div
  int64_t num_images = 0;
  int64_t im_div = 1;
  // How it was made, for config.json: "clean", "image-level ratio=0.2 seed=7", "file <path>", ...
  std::string source;

  int64_t num_captions() const { return static_cast<int64_t>(caption_to_row.size()); }
  int64_t num_noisy() const;
};

// Every caption with its own image: row j / im_div.
Correspondence clean_correspondence(int64_t num_images, int64_t im_div);
// RCL/DECL: perm = identity; S = the first ⌊ratio·N_img⌋ entries of a random permutation; perm[S] = a random
// permutation of S; caption j uses row perm[j / im_div]. Fixed points stay clean (not a derangement).
Correspondence image_level_noise(int64_t num_images, int64_t im_div, double ratio, uint64_t seed);
// NCR: t2i[j] = j / im_div; J = the first ⌊ratio·N_cap⌋ entries of a random permutation of captions; the rows
// t2i[J] are shuffled among the captions of J.
Correspondence caption_level_noise(int64_t num_images, int64_t im_div, double ratio, uint64_t seed);

// Reads an int32/int64 .npy of length N_img (image permutation) or N_cap = N_img·im_div (caption → row). Any
// other length or shape, or a row outside [0, N_img), is an Error naming the file and the numbers.
Correspondence load_noise_file(const std::string& path, int64_t num_images, int64_t im_div);

// What a run asks for: protocol none | image | caption, and optionally a file that overrides generation.
struct NoiseOptions {
  std::string protocol = "image";  // "none", "image" (RCL/DECL, the default of L2RM/RCL), "caption" (NCR)
  double ratio = 0;
  uint64_t seed = 0;
  std::string noise_file;  // when set it must exist; protocol, ratio and seed are then ignored
};
Correspondence make_correspondence(const NoiseOptions& options, int64_t num_images, int64_t im_div);

// Writes caption_to_row as `<run_dir>/noise_index.npy` (int64 [N_cap], loadable by load_noise_file and by the
// Python code as a noise file) and returns the path.
std::string save_noise(const Correspondence& c, const std::string& run_dir);

// Quality of a predicted clean/noisy split against the truth, per class. A ratio whose denominator is 0 is
// reported as 0 (scikit-learn's zero_division=0), so a run without noisy pairs never prints NaN.
struct SplitQuality {
  int64_t clean_kept = 0;     // predicted clean, truly clean
  int64_t noisy_kept = 0;     // predicted clean, truly noisy
  int64_t clean_dropped = 0;  // predicted noisy, truly clean
  int64_t noisy_dropped = 0;  // predicted noisy, truly noisy
  double clean_precision = 0, clean_recall = 0, noisy_precision = 0, noisy_recall = 0, accuracy = 0;
};
SplitQuality split_quality(const std::vector<uint8_t>& predicted_clean, const std::vector<uint8_t>& truly_clean);

}  // namespace rematch::data
