// Label-noise files of the labelled data (train/data/label_noise.cpp): MRL's JSON list of per-modality label
// lists, or an .npy of [N] or [2, N] labels. The reader tells them apart by the file's extension; here the
// input is named .npy when it starts with the .npy magic and .json otherwise. The labels are checked against a
// training split of 6 pairs in 3 classes, in both noise modes.
#include "fuzz/fuzz_util.h"
#include "train/data/labeled_dataset.h"

using namespace rematch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const data::LabeledSplit train = [] {
    data::LabeledSplit s;
    s.images = zeros({6, 2});
    s.texts = zeros({6, 2});
    s.image_labels = s.text_labels = {0, 1, 2, 0, 1, 2};
    return s;
  }();
  const std::string_view input = fuzz::bytes(data, size);
  const bool npy = input.substr(0, 6) == "\x93NUMPY";
  const std::string path = fuzz::write_file(npy ? "labels.npy" : "labels.json", input);
  for (data::LabelNoise mode : {data::LabelNoise::symmetric, data::LabelNoise::mrl}) {
    data::NoisyLabels labels;
    if (!fuzz::reads_or_names(path, [&] { labels = data::load_label_noise_file(path, train, 3, mode); })) continue;
    if (labels.image_labels.size() != 6 || labels.text_labels.size() != 6 || labels.image_clean.size() != 6)
      fuzz::fail("the noisy labels do not have one entry per training pair");
  }
  return 0;
}
