// Caption files (train/data/precomp_dataset.cpp), built twice: captions_txt_fuzz reads the input as
// train_caps.txt (one caption per line), captions_tsv_fuzz as train_caps.tsv (image_id<TAB>caption, csv
// quoting); REMATCH_CAPTIONS_EXTENSION says which. read_captions first; when it succeeds, a features file with
// one row per caption is written next to it and the whole PrecompDataset loads, tokenising every caption.
#include "fuzz/fuzz_util.h"
#include "train/data/precomp_dataset.h"

using namespace rematch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string folder = (fuzz::make_folder("data/precomp"), fuzz::temp_dir() + "/data");
  static const data::Vocabulary vocab = data::build_vocabulary({"a dog runs on the grass .", "two men ride bikes"}, 1);
  const std::string path = fuzz::write_file("data/precomp/train_caps" REMATCH_CAPTIONS_EXTENSION,
                                            fuzz::bytes(data, size));
  std::vector<std::string> captions;
  if (!fuzz::reads_or_names(path, [&] { captions = data::read_captions(path); })) return 0;
  save_npy(folder + "/precomp/train_ims.npy", zeros({static_cast<int64_t>(captions.size()), 1, 2}));
  fuzz::reads_or_names(path, [&] {
    data::PrecompOptions options;
    options.captions_per_image = 1;
    const data::PrecompDataset set(folder, "precomp", "train", vocab, options);
    if (set.num_captions() != static_cast<int64_t>(captions.size()))
      fuzz::fail("PrecompDataset holds another number of captions than read_captions read");
  });
  return 0;
}
