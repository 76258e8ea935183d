#include "viz/thumbnails.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <vector>

#include "tensor/error.h"
#include "tensor/file_io.h"
#include "viz/written_by_rematch.h"

// Every stb function static to this file: the tests define the stb_image implementation themselves.
#define STB_IMAGE_STATIC
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ASSERT(x) static_cast<void>(0)
#define STB_IMAGE_RESIZE_STATIC
#define STB_IMAGE_RESIZE_IMPLEMENTATION
#define STBIR_ASSERT(x) static_cast<void>(0)
#define STB_IMAGE_WRITE_STATIC
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STBIW_ASSERT(x) static_cast<void>(0)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wunused-but-set-variable"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wimplicit-fallthrough"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wdouble-promotion"
#pragma GCC diagnostic ignored "-Wtype-limits"
#define STBI_ONLY_JPEG
#define STBI_ONLY_PNG
#include "third_party/stb/stb_image.h"  // v2.30, not Debian's v2.27 (third_party/stb/README.md)
#include <stb_image_resize.h>
#include <stb_image_write.h>
#pragma GCC diagnostic pop

namespace rematch::viz {

namespace fs = std::filesystem;

namespace {

// Why `name` is not a plain relative name under the images folder, or "" when it is.
std::string unsafe_name(const std::string& name) {
  const fs::path p(name);
  if (p.is_absolute() || p.has_root_name() || p.has_root_directory()) return "it is an absolute path";
  for (const fs::path& part : p)
    if (part == "..") return "it climbs out of the images folder ('..')";
  return "";
}

// Whether `file` (which exists) lies inside `folder` once symbolic links are resolved.
bool resolves_inside(const fs::path& file, const fs::path& folder) {
  std::error_code ec1, ec2;
  const fs::path f = fs::canonical(file, ec1), d = fs::canonical(folder, ec2);
  if (ec1 || ec2) return false;
  const auto mismatch = std::mismatch(d.begin(), d.end(), f.begin(), f.end());
  return mismatch.first == d.end();
}

}  // namespace

std::string find_image_file(const std::string& images_dir, const std::string& name, std::string* refused) {
  if (refused) refused->clear();
  if (name.empty()) return "";
  const std::string unsafe = unsafe_name(name);
  if (!unsafe.empty()) {
    if (refused) *refused = "image id '" + name + "' is not read: " + unsafe + "; ids name files inside the images folder";
    return "";
  }
  std::vector<std::string> candidates = {name, name + ".jpg", name + ".jpeg", name + ".png"};
  if (std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; }) && name.size() <= 12) {
    char coco[32];
    const long long id = std::stoll(name);
    for (const char* pattern : {"COCO_val2014_%012lld.jpg", "COCO_train2014_%012lld.jpg", "%012lld.jpg"}) {
      std::snprintf(coco, sizeof coco, pattern, id);
      candidates.push_back(coco);
    }
  }
  std::error_code ec;
  for (const std::string& c : candidates) {
    const fs::path p = fs::path(images_dir) / c;
    if (!fs::is_regular_file(p, ec)) continue;
    if (!resolves_inside(p, images_dir)) {
      if (refused)
        *refused = "image '" + p.string() + "' is not read: it is a symbolic link to a file outside the images folder '" +
                   images_dir + "'";
      return "";
    }
    return p.string();
  }
  return "";
}

namespace {

void append_bytes(void* context, void* data, int size) {
  static_cast<std::string*>(context)->append(static_cast<const char*>(data), static_cast<size_t>(size));
}

}  // namespace

std::string write_thumbnail(const std::string& source, const std::string& target_stem, int max_side) {
  REMATCH_CHECK(max_side >= 1, "write_thumbnail: max_side must be positive, got ", max_side);
  io::require_regular_file(source, "write_thumbnail");  // stb_image's fopen would wait forever on a FIFO
  int w = 0, h = 0, channels = 0;
  // The header first: a few hundred kilobytes of PNG can say 30000 x 30000 pixels, which stb_image would decode
  // into 2.7 GB (a decompression bomb among a user's images). A page shows max_side pixels a side.
  REMATCH_CHECK(stbi_info(source.c_str(), &w, &h, &channels) == 1, "image '", source,
                "' cannot be decoded: ", stbi_failure_reason());
  REMATCH_CHECK(static_cast<int64_t>(w) * h <= kMaxThumbnailSourcePixels, "image '", source, "' is ", w, " x ", h,
                " pixels: thumbnails are made of pictures up to ", kMaxThumbnailSourcePixels >> 20,
                " megapixels (2^26 pixels); shrink it first");
  std::unique_ptr<unsigned char, void (*)(void*)> pixels(stbi_load(source.c_str(), &w, &h, &channels, 3),
                                                         stbi_image_free);
  REMATCH_CHECK(pixels != nullptr, "image '", source, "' cannot be decoded: ", stbi_failure_reason());
  const double scale = std::min(1.0, static_cast<double>(max_side) / std::max(w, h));
  const int tw = std::max(1, static_cast<int>(w * scale + 0.5)), th = std::max(1, static_cast<int>(h * scale + 0.5));
  std::vector<unsigned char> small(static_cast<size_t>(tw) * th * 3);
  if (tw == w && th == h) {
    std::copy(pixels.get(), pixels.get() + small.size(), small.begin());
  } else {
    REMATCH_CHECK(stbir_resize_uint8(pixels.get(), w, h, 0, small.data(), tw, th, 0, 3) == 1, "image '", source,
                  "' cannot be resized");
  }
  std::string ext = fs::path(source).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const bool png = ext == ".png";
  std::string bytes;
  const int ok = png ? stbi_write_png_to_func(append_bytes, &bytes, tw, th, 3, small.data(), tw * 3)
                     : stbi_write_jpg_to_func(append_bytes, &bytes, tw, th, 3, small.data(), 85);
  REMATCH_CHECK(ok != 0, "thumbnail of '", source, "' cannot be encoded");
  const std::string target = target_stem + (png ? ".png" : ".jpg");
  io::write_file_atomically(target, png ? with_rematch_png_marker(bytes) : bytes, "write_thumbnail");
  return target;
}

}  // namespace rematch::viz
