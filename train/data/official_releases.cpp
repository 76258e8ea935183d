#include "train/data/official_releases.h"

#include <algorithm>
#include <cctype>

#include "train/data/vocab.h"

namespace rematch::data {

// docs/data.md §4.
const char* const kPrecompSource =
    "the NCR/SCAN data bundle: NCR's archive NCR-data.tar (linked from the NCR and L2RM READMEs) or SCAN's "
    "precomputed features (linked from the SCAN and RCL READMEs); no code repository ships these files";
const char* const kVocabularySource =
    "SCAN's vocab.zip, also committed to the RCL repository (data/vocab/) and to SGRAF's (vocab/); use the shipped "
    "file: a rebuilt vocabulary numbers the words differently (docs/backbones.md §3.1)";
const char* const kNoiseIndexSource =
    "the RCL/L2RM noise index files: RCL's data/<data_name>/noise_inx_<r>.npy (one entry per image, F30K and COCO, "
    "r = 0.2 0.4 0.5 0.6 0.8) or L2RM's noise_index/<data_name>_<r>.npy (the same noise, one entry per caption); "
    "without a file rematch draws the noise from --seed, which is not the noise of the published numbers";
const char* const kLabeledSource =
    "MRL's HDF5 feature files (github.com/penghu-cs/MRL): only Wikipedia's was published; NUS-WIDE and XMediaNet "
    "features have to be extracted from the raw data (MRL issues #5, #8, #9)";
const char* const kLabelNoiseSource =
    "MRL writes noise_labels_<r>_sym.json beside the data on its first run; without one, rematch draws the label "
    "noise from --seed";

const std::vector<PrecompRelease>& precomp_releases() {
  // docs/backbones.md §6.2 and docs/data.md §2: F30K dev and test ship one (replicated) row per caption, COCO
  // testall either layout; the loader's im_div rule reads both, so a split's rows may be `images` or `captions`.
  static const std::vector<PrecompRelease> releases = {
      {"f30k_precomp",
       "Flickr30K",
       {{"train", 29000, 145000, true}, {"dev", 1014, 5070, true}, {"test", 1000, 5000, true}},
       36,
       2048,
       5,
       ".txt",
       8481,
       kPrecompSource},
      {"coco_precomp",
       "MS-COCO",
       {{"train", 113287, 566435, true},
        {"dev", 5000, 25000, true},
        {"test", 1000, 5000, false},
        {"testall", 5000, 25000, true}},
       36,
       2048,
       5,
       ".txt",
       11353,
       kPrecompSource},
      {"cc152k_precomp",
       "CC152K",
       {{"train", 150000, 150000, true}, {"dev", 1000, 1000, true}, {"test", 1000, 1000, true}},
       36,
       2048,
       1,
       ".tsv",
       12072,
       "NCR's data archive NCR-data.tar (linked from the NCR and L2RM READMEs; CC152K is NCR's subset of Conceptual "
       "Captions)"},
  };
  return releases;
}

const PrecompRelease* find_precomp_release(const std::string& data_name) {
  const std::string name = without_trailing_slashes(data_name);
  for (const PrecompRelease& r : precomp_releases())
    if (r.data_name == name) return &r;
  return nullptr;
}

namespace {

const std::vector<LabeledRelease>& labeled_releases() {
  // docs/methods/uotrcl.md §4.1 (MRL and UOT-RCL papers).
  static const std::vector<LabeledRelease> releases = {
      {"wiki", "Wikipedia", 2173, 231, 462, 10, 4096, 300, 231},
      {"nus", "NUS-WIDE (10 classes)", 42941, 5000, 23661, 10, 4096, 300, 5000},
      {"xmedianet", "XMediaNet (image and text)", 32000, 4000, 4000, 200, 4096, 300, 4000},
  };
  return releases;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

const LabeledRelease* find_labeled_release(const std::string& data_name, const std::string& data_path) {
  const std::string name = lower(without_trailing_slashes(data_name));
  for (const LabeledRelease& r : labeled_releases())
    if (name == r.name) return &r;
  if (!name.empty()) return nullptr;
  // MRL's file names: wiki_deep_doc2vec_data_corr_ae.h5py, nus_wide_deep_doc2vec_data_42941.h5py,
  // xmedianet_deep_doc2vec_data.h5py.
  const std::string path = lower(without_trailing_slashes(data_path));
  const size_t slash = path.find_last_of('/');
  const std::string file = slash == std::string::npos ? path : path.substr(slash + 1);
  if (file.find("wiki") != std::string::npos) return &labeled_releases()[0];
  if (file.find("nus") != std::string::npos) return &labeled_releases()[1];
  if (file.find("xmedianet") != std::string::npos) return &labeled_releases()[2];
  return nullptr;
}

}  // namespace rematch::data
