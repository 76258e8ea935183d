// The labelled data of UOT-RCL as a folder of .npy files (train/data/labeled_dataset.cpp): the input is split
// (fuzz::split_files) into train_imgs, train_texts, train_labels, test_imgs, test_texts, test_labels and, when
// there are more parts, valid_imgs, valid_texts, valid_labels; load_labeled_npy reads the folder.
#include <iterator>

#include "fuzz/fuzz_util.h"
#include "train/data/labeled_dataset.h"

using namespace rematch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const char* const kFiles[] = {"train_imgs",  "train_texts", "train_labels", "test_imgs",   "test_texts",
                                       "test_labels", "valid_imgs",  "valid_texts",  "valid_labels"};
  static const std::string folder = fuzz::make_folder("labeled");
  const std::vector<std::string_view> parts = fuzz::split_files(fuzz::bytes(data, size));
  for (size_t i = 0; i < std::size(kFiles); ++i) {
    const std::string name = std::string("labeled/") + kFiles[i] + ".npy";
    if (i < parts.size())
      fuzz::write_file(name, parts[i]);
    else
      fuzz::remove_file(name);
  }
  for (int64_t valid_len : {0, 1}) {
    data::LabeledDataset d;
    if (!fuzz::reads_or_names(folder, [&] { d = data::load_labeled_npy(folder, valid_len); })) continue;
    if (d.num_classes < 1 || d.train.size() < 1) fuzz::fail("a data set without classes or training pairs loaded");
  }
  return 0;
}
