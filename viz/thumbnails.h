// Pictures of a data set's images for the reports (docs/viz.md §2): the file of an image found in an images
// folder by the name its data set gives it, and a small copy of it (stb_image v2.30 of third_party/stb/ to read
// JPEG and PNG, stb_image_resize to shrink, stb_image_write to save), so a report folder stays small and
// self-contained.
#pragma once

#include <cstdint>
#include <string>

namespace rematch::viz {

// The file of image `name` in `images_dir`: the name itself, the name with .jpg/.jpeg/.png, and for a bare
// number the COCO spellings (COCO_val2014_%012d.jpg, COCO_train2014_%012d.jpg, %012d.jpg); "" when none exists.
// A name is a path relative to the folder (subfolders are fine): an absolute path, a '..' part, or a file that
// is a symbolic link leading out of the folder is never read; then "" comes back and `refused`, when given,
// says why (it is cleared otherwise).
std::string find_image_file(const std::string& images_dir, const std::string& name, std::string* refused = nullptr);

// Reads `source`, shrinks it (keeping its aspect) so that neither side exceeds max_side (never enlarges), and
// writes `target_stem` + ".png" (a PNG source: drawn pictures stay sharp) or + ".jpg" (photographs, quality 85).
// Returns the file written; an Error naming `source` when it cannot be decoded or when its header says more than
// kMaxThumbnailSourcePixels (before a byte of it is decoded).
constexpr int64_t kMaxThumbnailSourcePixels = int64_t{1} << 26;
std::string write_thumbnail(const std::string& source, const std::string& target_stem, int max_side);

}  // namespace rematch::viz
