// The labelled image–text data of UOT-RCL (docs/methods/uotrcl.md §4.1), which follows MRL: per split, image features
// [N, d_img], text features [N, d_txt] and a class label per image and per text.
//
// Two layouts are read:
//   HDF5 (MRL's `*.h5py` files): datasets `<split>_imgs_deep`, `<split>_imgs_labels`, `<split>_text` or
//     `<split>_texts`, `<split>_texts_labels` for split train and test, and valid when `valid_text(s)` exists;
//     otherwise validation = the first `valid_len` test rows and test = the rest (MRL: Wikipedia 231, NUS-WIDE
//     5000, XMediaNet 4000).
//   .npy (a folder, our choice of names): `<split>_imgs.npy` [N, d_img], `<split>_texts.npy` [N, d_txt] (float32
//     or float64) and `<split>_labels.npy` [N] (int32/int64, one label per pair) for train and test, and valid
//     when `valid_imgs.npy` exists (else the valid_len rule above).
// Labels are shifted by the smallest label of the whole file, so classes are 0..K-1 with K = 1 + the largest
// training label. (MRL subtracts each array's own minimum, which equals this whenever every array contains the
// smallest class — true of the public files — and misaligns classes otherwise.) A missing file or dataset,
// row counts that disagree, non-integral labels, or valid/test labels ≥ K are an Error naming the file. So are
// (docs/data.md §5.2): a valid split with some of its files or datasets but not all; features of width 0, or of
// another width than the training split's; float64 features beyond float32's range; training labels of a single
// class; and more classes K than training pairs (sparse ids: they are shifted, not renumbered).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace rematch::data {

struct LabeledSplit {
  Tensor images;  // [N, d_img] float32
  Tensor texts;   // [N, d_txt] float32
  std::vector<int64_t> image_labels, text_labels;
  int64_t size() const { return static_cast<int64_t>(image_labels.size()); }
};

struct LabeledDataset {
  LabeledSplit train, valid, test;
  int64_t num_classes = 0;
  std::string source;  // the file or folder read
};

LabeledDataset load_labeled_h5(const std::string& path, int64_t valid_len);
LabeledDataset load_labeled_npy(const std::string& dir, int64_t valid_len);
// A folder is read as the .npy layout, a file as HDF5.
LabeledDataset load_labeled(const std::string& path, int64_t valid_len);
// The number of distinct labels among a split's image and text labels.
int64_t distinct_classes(const LabeledSplit& s);
// For a folder holding some of valid_imgs.npy, valid_texts.npy, valid_labels.npy but not all: the error naming the
// missing file(s) (load_labeled_npy throws it); "" when all three or none are there.
std::string partial_npy_valid_split(const std::string& dir);
// Writes the MRL HDF5 layout (with valid_* datasets when d.valid is not empty), e.g. for synthetic benchmarks.
void save_labeled_h5(const std::string& path, const LabeledDataset& d);

// Training-label noise. symmetric (the default): ⌊r·N⌋ random pairs get one new label, uniform over 0..K-1 (the
// true class may be redrawn), shared by both modalities — UOT-RCL has one label per pair. mrl: MRL's draw, kept
// to reproduce it: each modality independently gets ⌊r·N⌋ random samples relabelled with Python's inclusive
// randint(0, K), so the out-of-range label K can occur.
enum class LabelNoise { symmetric, mrl };
LabelNoise parse_label_noise(const std::string& name);  // "symmetric" | "mrl"

struct NoisyLabels {
  std::vector<int64_t> image_labels, text_labels;
  std::vector<uint8_t> image_clean, text_clean;  // noisy label == true label
  std::string source;
};

NoisyLabels inject_label_noise(const LabeledSplit& train, int64_t num_classes, double ratio, LabelNoise mode,
                               uint64_t seed);
// MRL's `noise_labels_<r>_sym.json` (a list of one label list per modality) or an .npy of [N] (one label per pair)
// or [2, N] labels. Labels must lie in 0..K-1 (0..K in mrl mode); an Error names the file and numbers otherwise.
NoisyLabels load_label_noise_file(const std::string& path, const LabeledSplit& train, int64_t num_classes,
                                  LabelNoise mode);
// Writes `<run_dir>/noisy_labels.npy` (int64 [2, N]: image labels, text labels) and returns its path.
std::string save_label_noise(const NoisyLabels& labels, const std::string& run_dir);

}  // namespace rematch::data
