// Thumbnails of a user's pictures (viz/thumbnails.cpp): write_thumbnail reads any file in a data set's images
// folder with stb_image v2.30 (JPEG and PNG; third_party/stb/), refuses one whose header says more than
// kMaxThumbnailSourcePixels, shrinks it to at most 32 pixels a side and encodes it. Its first findings, on
// Debian's v2.27: a JPEG Huffman table of more than 256 codes written past its arrays (regressions/thumbnail/),
// and a negative int shifted left in stb_image_write's JPEG encoder (CMakeLists.txt). The first byte of the input picks
// the file's extension (.jpg, .png, .bmp: the thumbnail is a PNG for .png, a JPEG otherwise); the rest is the file.
// A thumbnail written must decode again, no larger than 32 pixels a side.
#include <filesystem>

#include "fuzz/fuzz_util.h"
#include "viz/thumbnails.h"

#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include <stb/stb_image.h>
#pragma GCC diagnostic pop

using namespace rematch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const char* extensions[] = {".jpg", ".png", ".bmp"};
  const std::string path =
      fuzz::write_file(std::string("picture") + extensions[data[0] % 3], fuzz::bytes(data + 1, size - 1));
  const std::string stem = fuzz::temp_dir() + "/thumb";
  std::string written;
  if (!fuzz::reads_or_names(path, [&] { written = viz::write_thumbnail(path, stem, 32); })) return 0;
  int w = 0, h = 0, channels = 0;
  stbi_uc* pixels = stbi_load(written.c_str(), &w, &h, &channels, 3);
  if (!pixels) fuzz::fail("the thumbnail " + written + " does not decode: " + stbi_failure_reason());
  stbi_image_free(pixels);
  if (w < 1 || h < 1 || w > 32 || h > 32)
    fuzz::fail("the thumbnail is " + std::to_string(w) + " x " + std::to_string(h) + " pixels, not at most 32");
  std::filesystem::remove(written);
  return 0;
}
