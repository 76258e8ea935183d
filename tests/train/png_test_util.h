// Helpers of the PNG canvas and plot tests: a decoded PNG (stb_image, defined once in png_canvas_test.cpp)
// and a folder listing.
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "viz/png_canvas.h"

namespace rematch::test {

struct PngImage {
  int width = 0, height = 0;  // 0 × 0 when the file could not be decoded
  std::vector<uint8_t> rgb;
  run::Rgb at(int x, int y) const {
    const size_t i = (static_cast<size_t>(y) * width + x) * 3;
    return {rgb[i], rgb[i + 1], rgb[i + 2]};
  }
};

// The file decoded as 8-bit RGB.
PngImage read_png(const std::string& path);

// The names in a folder, sorted.
inline std::vector<std::string> entries_of(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace rematch::test
