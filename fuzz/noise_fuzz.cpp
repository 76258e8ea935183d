// Noise index files of the image–caption data (train/data/noise.cpp): load_noise_file reads an .npy of image
// rows, per image or per caption, for a data set of 4 images with 1 or 5 captions each and of 20 images with 1.
#include "fuzz/fuzz_util.h"
#include "train/data/noise.h"

using namespace rematch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fuzz::write_file("noise_index.npy", fuzz::bytes(data, size));
  const std::pair<int64_t, int64_t> sets[] = {{4, 1}, {4, 5}, {20, 1}};
  for (const auto& set : sets) {
    const int64_t images = set.first, im_div = set.second;
    data::Correspondence c;
    if (!fuzz::reads_or_names(path, [&] { c = data::load_noise_file(path, images, im_div); })) continue;
    if (c.num_captions() != images * im_div || static_cast<int64_t>(c.clean.size()) != images * im_div)
      fuzz::fail("the correspondence does not have one entry per caption");
    for (int64_t row : c.caption_to_row)
      if (row < 0 || row >= images) fuzz::fail("a caption maps to image row " + std::to_string(row));
  }
  return 0;
}
