// What the official releases of the public data sets hold (docs/data.md §2, §3), for `rematch data check`
// (train/data/data_check.h) to hold a folder against: per split the distinct images and captions, the region
// features' shape, the shipped vocabulary's size, and, for each kind of file, where the official code's README
// says it comes from. A data set under another name (the synthetic benchmark, a new one) has no release here
// and is only checked for consistency.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rematch::data {

// Where the files of a kind come from (docs/data.md §4), for the message of a missing file.
extern const char* const kPrecompSource;        // <split>_ims.npy, <split>_caps.*, <split>_ids.txt
extern const char* const kVocabularySource;     // <data_name>_vocab.json
extern const char* const kNoiseIndexSource;     // noise_inx_<r>.npy, noise_index/<data_name>_<r>.npy
extern const char* const kLabeledSource;        // MRL's HDF5 files
extern const char* const kLabelNoiseSource;     // noise_labels_<r>_sym.json

struct PrecompSplitRelease {
  std::string split;     // train, dev, test, testall
  int64_t images = 0;    // distinct images
  int64_t captions = 0;  // rows of <split>_caps.*; the features hold `images` rows or one row per caption
  bool required = true;  // false: shipped but read by none of the methods (COCO's 1K `test`)
};

struct PrecompRelease {
  std::string data_name;  // f30k_precomp, coco_precomp, cc152k_precomp
  std::string title;      // "Flickr30K", ...
  std::vector<PrecompSplitRelease> splits;
  int64_t regions = 36, feature_dim = 2048;
  int64_t captions_per_image = 5;
  std::string caption_extension = ".txt";  // ".tsv" for CC152K
  int64_t vocabulary_size = 0;             // of the shipped <data_name>_vocab.json
  std::string source;                      // kPrecompSource, said of this data set
};

// The release of `data_name` (trailing slashes ignored); nullptr when none is known.
const PrecompRelease* find_precomp_release(const std::string& data_name);
const std::vector<PrecompRelease>& precomp_releases();

// The class-labelled sets of UOT-RCL (MRL's files, docs/methods/uotrcl.md §4.1).
struct LabeledRelease {
  std::string name;   // wiki, nus, xmedianet (the --preset names)
  std::string title;  // "Wikipedia", ...
  int64_t train = 0, valid = 0, test = 0, classes = 0;
  int64_t image_dim = 4096, text_dim = 300;
  int64_t valid_len = 0;  // the validation rows cut from test when the file has no valid split
};

// By --data_name, else by a known name inside the file or folder name (wiki, nus_wide, xmedianet); nullptr when
// neither says.
const LabeledRelease* find_labeled_release(const std::string& data_name, const std::string& data_path);

}  // namespace rematch::data
