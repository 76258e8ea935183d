#include "viz/png_canvas.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "tensor/error.h"
#include "tensor/file_io.h"
#include "viz/written_by_rematch.h"

#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STBIW_ASSERT(x) static_cast<void>(0)  // inputs are checked here; no assert() inside a library
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wunused-function"
#include <stb_image_write.h>
#pragma GCC diagnostic pop

namespace rematch::run {
namespace {

// The 5×7 font, one glyph per line: its seven rows from top to bottom, '#' a lit pixel, '.' a dark one.
struct Glyph {
  char ch;
  const char* rows[kGlyphHeight];
};

constexpr Glyph kFont[] = {
    {' ', {".....", ".....", ".....", ".....", ".....", ".....", "....."}},
    {'!', {"..#..", "..#..", "..#..", "..#..", "..#..", ".....", "..#.."}},
    {'"', {".#.#.", ".#.#.", ".#.#.", ".....", ".....", ".....", "....."}},
    {'#', {".#.#.", ".#.#.", "#####", ".#.#.", "#####", ".#.#.", ".#.#."}},
    {'$', {"..#..", ".####", "#.#..", ".###.", "..#.#", "####.", "..#.."}},
    {'%', {"##...", "##..#", "...#.", "..#..", ".#...", "#..##", "...##"}},
    {'&', {".##..", "#..#.", "#.#..", ".#...", "#.#.#", "#..#.", ".##.#"}},
    {'\'', {"..#..", "..#..", ".#...", ".....", ".....", ".....", "....."}},
    {'(', {"...#.", "..#..", ".#...", ".#...", ".#...", "..#..", "...#."}},
    {')', {".#...", "..#..", "...#.", "...#.", "...#.", "..#..", ".#..."}},
    {'*', {".....", "..#..", "#.#.#", ".###.", "#.#.#", "..#..", "....."}},
    {'+', {".....", "..#..", "..#..", "#####", "..#..", "..#..", "....."}},
    {',', {".....", ".....", ".....", ".....", ".##..", "..#..", ".#..."}},
    {'-', {".....", ".....", ".....", "#####", ".....", ".....", "....."}},
    {'.', {".....", ".....", ".....", ".....", ".....", ".##..", ".##.."}},
    {'/', {".....", "....#", "...#.", "..#..", ".#...", "#....", "....."}},
    {'0', {".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."}},
    {'1', {"..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."}},
    {'2', {".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####"}},
    {'3', {"#####", "...#.", "..#..", "...#.", "....#", "#...#", ".###."}},
    {'4', {"...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."}},
    {'5', {"#####", "#....", "####.", "....#", "....#", "#...#", ".###."}},
    {'6', {"..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###."}},
    {'7', {"#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."}},
    {'8', {".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."}},
    {'9', {".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##.."}},
    {':', {".....", ".##..", ".##..", ".....", ".##..", ".##..", "....."}},
    {';', {".....", ".##..", ".##..", ".....", ".##..", "..#..", ".#..."}},
    {'<', {"...#.", "..#..", ".#...", "#....", ".#...", "..#..", "...#."}},
    {'=', {".....", ".....", "#####", ".....", "#####", ".....", "....."}},
    {'>', {".#...", "..#..", "...#.", "....#", "...#.", "..#..", ".#..."}},
    {'?', {".###.", "#...#", "....#", "...#.", "..#..", ".....", "..#.."}},
    {'@', {".###.", "#...#", "....#", ".##.#", "#.#.#", "#.#.#", ".###."}},
    {'A', {".###.", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"}},
    {'B', {"####.", "#...#", "#...#", "####.", "#...#", "#...#", "####."}},
    {'C', {".###.", "#...#", "#....", "#....", "#....", "#...#", ".###."}},
    {'D', {"###..", "#..#.", "#...#", "#...#", "#...#", "#..#.", "###.."}},
    {'E', {"#####", "#....", "#....", "####.", "#....", "#....", "#####"}},
    {'F', {"#####", "#....", "#....", "####.", "#....", "#....", "#...."}},
    {'G', {".###.", "#...#", "#....", "#.###", "#...#", "#...#", ".####"}},
    {'H', {"#...#", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"}},
    {'I', {".###.", "..#..", "..#..", "..#..", "..#..", "..#..", ".###."}},
    {'J', {"..###", "...#.", "...#.", "...#.", "...#.", "#..#.", ".##.."}},
    {'K', {"#...#", "#..#.", "#.#..", "##...", "#.#..", "#..#.", "#...#"}},
    {'L', {"#....", "#....", "#....", "#....", "#....", "#....", "#####"}},
    {'M', {"#...#", "##.##", "#.#.#", "#.#.#", "#...#", "#...#", "#...#"}},
    {'N', {"#...#", "#...#", "##..#", "#.#.#", "#..##", "#...#", "#...#"}},
    {'O', {".###.", "#...#", "#...#", "#...#", "#...#", "#...#", ".###."}},
    {'P', {"####.", "#...#", "#...#", "####.", "#....", "#....", "#...."}},
    {'Q', {".###.", "#...#", "#...#", "#...#", "#.#.#", "#..#.", ".##.#"}},
    {'R', {"####.", "#...#", "#...#", "####.", "#.#..", "#..#.", "#...#"}},
    {'S', {".####", "#....", "#....", ".###.", "....#", "....#", "####."}},
    {'T', {"#####", "..#..", "..#..", "..#..", "..#..", "..#..", "..#.."}},
    {'U', {"#...#", "#...#", "#...#", "#...#", "#...#", "#...#", ".###."}},
    {'V', {"#...#", "#...#", "#...#", "#...#", "#...#", ".#.#.", "..#.."}},
    {'W', {"#...#", "#...#", "#...#", "#.#.#", "#.#.#", "#.#.#", ".#.#."}},
    {'X', {"#...#", "#...#", ".#.#.", "..#..", ".#.#.", "#...#", "#...#"}},
    {'Y', {"#...#", "#...#", ".#.#.", "..#..", "..#..", "..#..", "..#.."}},
    {'Z', {"#####", "....#", "...#.", "..#..", ".#...", "#....", "#####"}},
    {'[', {".###.", ".#...", ".#...", ".#...", ".#...", ".#...", ".###."}},
    {'\\', {".....", "#....", ".#...", "..#..", "...#.", "....#", "....."}},
    {']', {".###.", "...#.", "...#.", "...#.", "...#.", "...#.", ".###."}},
    {'^', {"..#..", ".#.#.", "#...#", ".....", ".....", ".....", "....."}},
    {'_', {".....", ".....", ".....", ".....", ".....", ".....", "#####"}},
    {'`', {".#...", "..#..", "...#.", ".....", ".....", ".....", "....."}},
    {'a', {".....", ".....", ".###.", "....#", ".####", "#...#", ".####"}},
    {'b', {"#....", "#....", "#.##.", "##..#", "#...#", "#...#", "####."}},
    {'c', {".....", ".....", ".###.", "#....", "#....", "#...#", ".###."}},
    {'d', {"....#", "....#", ".##.#", "#..##", "#...#", "#...#", ".####"}},
    {'e', {".....", ".....", ".###.", "#...#", "#####", "#....", ".###."}},
    {'f', {"..##.", ".#..#", ".#...", "###..", ".#...", ".#...", ".#..."}},
    {'g', {".....", ".####", "#...#", "#...#", ".####", "....#", ".###."}},
    {'h', {"#....", "#....", "#.##.", "##..#", "#...#", "#...#", "#...#"}},
    {'i', {"..#..", ".....", ".##..", "..#..", "..#..", "..#..", ".###."}},
    {'j', {"...#.", ".....", "..##.", "...#.", "...#.", "#..#.", ".##.."}},
    {'k', {"#....", "#....", "#..#.", "#.#..", "##...", "#.#..", "#..#."}},
    {'l', {".##..", "..#..", "..#..", "..#..", "..#..", "..#..", ".###."}},
    {'m', {".....", ".....", "##.#.", "#.#.#", "#.#.#", "#...#", "#...#"}},
    {'n', {".....", ".....", "#.##.", "##..#", "#...#", "#...#", "#...#"}},
    {'o', {".....", ".....", ".###.", "#...#", "#...#", "#...#", ".###."}},
    {'p', {".....", ".....", "####.", "#...#", "####.", "#....", "#...."}},
    {'q', {".....", ".....", ".##.#", "#..##", ".####", "....#", "....#"}},
    {'r', {".....", ".....", "#.##.", "##..#", "#....", "#....", "#...."}},
    {'s', {".....", ".....", ".###.", "#....", ".###.", "....#", "####."}},
    {'t', {".#...", ".#...", "###..", ".#...", ".#...", ".#..#", "..##."}},
    {'u', {".....", ".....", "#...#", "#...#", "#...#", "#..##", ".##.#"}},
    {'v', {".....", ".....", "#...#", "#...#", "#...#", ".#.#.", "..#.."}},
    {'w', {".....", ".....", "#...#", "#...#", "#.#.#", "#.#.#", ".#.#."}},
    {'x', {".....", ".....", "#...#", ".#.#.", "..#..", ".#.#.", "#...#"}},
    {'y', {".....", ".....", "#...#", "#...#", ".####", "....#", ".###."}},
    {'z', {".....", ".....", "#####", "...#.", "..#..", ".#...", "#####"}},
    {'{', {"...#.", "..#..", "..#..", ".#...", "..#..", "..#..", "...#."}},
    {'|', {"..#..", "..#..", "..#..", "..#..", "..#..", "..#..", "..#.."}},
    {'}', {".#...", "..#..", "..#..", "...#.", "..#..", "..#..", ".#..."}},
    {'~', {".....", ".....", ".#...", "#.#.#", "...#.", ".....", "....."}},
};

constexpr int kFirstChar = 32, kLastChar = 126;

constexpr bool font_is_well_formed() {
  if (sizeof(kFont) / sizeof(kFont[0]) != kLastChar - kFirstChar + 1) return false;
  for (int i = 0; i <= kLastChar - kFirstChar; ++i) {
    if (kFont[i].ch != static_cast<char>(kFirstChar + i)) return false;
    for (const char* row : kFont[i].rows) {
      for (int c = 0; c < kGlyphWidth; ++c)
        if (row[c] != '#' && row[c] != '.') return false;
      if (row[kGlyphWidth] != '\0') return false;
    }
  }
  return true;
}
static_assert(font_is_well_formed(), "kFont must list ASCII 32..126 in order, 7 rows of 5 '#' or '.' each");

bool lit(char c, int row, int col) {
  const int code = static_cast<unsigned char>(c);
  const Glyph& g = kFont[(code < kFirstChar || code > kLastChar ? '?' : code) - kFirstChar];
  return g.rows[row][col] == '#';
}

// Cuts the segment to the square [-kFar, kFar]², so that the distance arithmetic of draw_line only sees
// coordinates near the canvas. long double keeps differences of huge coordinates from overflowing, and the
// slope form keeps horizontal and vertical lines exact however far their ends are. False: nothing is left.
constexpr long double kFar = 1 << 20;

bool cut_along(long double& a0, long double& b0, long double& a1, long double& b1) {
  // Cuts on the a coordinate; b follows the line.
  if (a0 > a1) {
    std::swap(a0, a1);
    std::swap(b0, b1);
  }
  if (a1 < -kFar || a0 > kFar) return false;
  if (a0 < -kFar || a1 > kFar) {
    const long double slope = (b1 - b0) / (a1 - a0);
    if (a0 < -kFar) {
      b0 += (-kFar - a0) * slope;
      a0 = -kFar;
    }
    if (a1 > kFar) {
      b1 -= (a1 - kFar) * slope;
      a1 = kFar;
    }
  }
  return true;
}

bool cut_to_near(double& x0, double& y0, double& x1, double& y1) {
  long double ax0 = x0, ay0 = y0, ax1 = x1, ay1 = y1;
  if (!cut_along(ax0, ay0, ax1, ay1) || !cut_along(ay0, ax0, ay1, ax1)) return false;
  x0 = static_cast<double>(ax0);
  y0 = static_cast<double>(ay0);
  x1 = static_cast<double>(ax1);
  y1 = static_cast<double>(ay1);
  return true;
}

constexpr int kAdvance = kGlyphWidth + 1;  // one blank column between characters

void append_bytes(void* context, void* data, int size) {
  static_cast<std::string*>(context)->append(static_cast<const char*>(data), static_cast<size_t>(size));
}

}  // namespace

Canvas::Canvas(int width, int height, Rgb background) : width_(width), height_(height) {
  REMATCH_CHECK(width >= 1 && width <= 16384 && height >= 1 && height <= 16384, "Canvas: size ", width, "x",
                height, " is outside 1..16384");
  clip_x1_ = width_;
  clip_y1_ = height_;
  rgb_.resize(static_cast<size_t>(width_) * height_ * 3);
  for (size_t i = 0; i < rgb_.size(); i += 3) {
    rgb_[i] = background.r;
    rgb_[i + 1] = background.g;
    rgb_[i + 2] = background.b;
  }
}

Rgb Canvas::pixel(int x, int y) const {
  REMATCH_CHECK(x >= 0 && x < width_ && y >= 0 && y < height_, "Canvas::pixel: (", x, ", ", y,
                ") is outside the ", width_, "x", height_, " canvas");
  const size_t i = (static_cast<size_t>(y) * width_ + x) * 3;
  return {rgb_[i], rgb_[i + 1], rgb_[i + 2]};
}

void Canvas::set_clip(int x0, int y0, int x1, int y1) {
  clip_x0_ = std::clamp(x0, 0, width_);
  clip_y0_ = std::clamp(y0, 0, height_);
  clip_x1_ = std::clamp(x1, clip_x0_, width_);
  clip_y1_ = std::clamp(y1, clip_y0_, height_);
}

void Canvas::reset_clip() { set_clip(0, 0, width_, height_); }

void Canvas::set_pixel(int x, int y, Rgb color) {
  if (x < clip_x0_ || x >= clip_x1_ || y < clip_y0_ || y >= clip_y1_) return;
  const size_t i = (static_cast<size_t>(y) * width_ + x) * 3;
  rgb_[i] = color.r;
  rgb_[i + 1] = color.g;
  rgb_[i + 2] = color.b;
}

void Canvas::fill_rect(int x0, int y0, int x1, int y1, Rgb color) {
  for (int y = std::max(y0, clip_y0_); y < std::min(y1, clip_y1_); ++y)
    for (int x = std::max(x0, clip_x0_); x < std::min(x1, clip_x1_); ++x) set_pixel(x, y, color);
}

void Canvas::draw_rect(int x0, int y0, int x1, int y1, Rgb color, int thickness) {
  const int t = std::max(1, thickness);
  fill_rect(x0, y0, x1, std::min(y1, y0 + t), color);
  fill_rect(x0, std::max(y0, y1 - t), x1, y1, color);
  fill_rect(x0, y0, std::min(x1, x0 + t), y1, color);
  fill_rect(std::max(x0, x1 - t), y0, x1, y1, color);
}

void Canvas::draw_line(double x0, double y0, double x1, double y1, Rgb color, double thickness) {
  if (!std::isfinite(x0) || !std::isfinite(y0) || !std::isfinite(x1) || !std::isfinite(y1) ||
      !std::isfinite(thickness))
    return;
  if (!cut_to_near(x0, y0, x1, y1)) return;
  const double r = std::max(thickness, 1.0) / 2 + 1e-9;  // the epsilon keeps pixels exactly at r
  // Only the pixels of the segment's bounding box (grown by r) inside the clip can be lit.
  const double bx0 = std::max(std::min(x0, x1) - r, static_cast<double>(clip_x0_));
  const double bx1 = std::min(std::max(x0, x1) + r, static_cast<double>(clip_x1_ - 1));
  const double by0 = std::max(std::min(y0, y1) - r, static_cast<double>(clip_y0_));
  const double by1 = std::min(std::max(y0, y1) + r, static_cast<double>(clip_y1_ - 1));
  if (bx0 > bx1 || by0 > by1) return;
  const double dx = x1 - x0, dy = y1 - y0, len2 = dx * dx + dy * dy;
  for (int y = static_cast<int>(std::ceil(by0)); y <= static_cast<int>(std::floor(by1)); ++y) {
    for (int x = static_cast<int>(std::ceil(bx0)); x <= static_cast<int>(std::floor(bx1)); ++x) {
      // Distance from the pixel centre to the closest point of the segment.
      const double t = len2 > 0 ? std::clamp(((x - x0) * dx + (y - y0) * dy) / len2, 0.0, 1.0) : 0.0;
      const double ex = x - (x0 + t * dx), ey = y - (y0 + t * dy);
      if (ex * ex + ey * ey <= r * r) set_pixel(x, y, color);
    }
  }
}

void Canvas::fill_circle(double cx, double cy, double radius, Rgb color) {
  if (!std::isfinite(cx) || !std::isfinite(cy) || !std::isfinite(radius) || radius < 0) return;
  draw_line(cx, cy, cx, cy, color, 2 * radius);
}

void Canvas::draw_text(int x, int y, const std::string& text, Rgb color, int scale) {
  REMATCH_CHECK(scale >= 1, "Canvas::draw_text: scale must be >= 1, got ", scale);
  for (size_t i = 0; i < text.size(); ++i) {
    const int left = x + static_cast<int>(i) * kAdvance * scale;
    if (left >= clip_x1_) break;
    for (int row = 0; row < kGlyphHeight; ++row)
      for (int col = 0; col < kGlyphWidth; ++col)
        if (lit(text[i], row, col))
          fill_rect(left + col * scale, y + row * scale, left + (col + 1) * scale, y + (row + 1) * scale, color);
  }
}

void Canvas::draw_text_up(int x, int y, const std::string& text, Rgb color, int scale) {
  REMATCH_CHECK(scale >= 1, "Canvas::draw_text_up: scale must be >= 1, got ", scale);
  // Turned counter-clockwise: the glyph's rows run left to right, its columns bottom to top.
  const int bottom = y + text_width(text, scale);
  for (size_t i = 0; i < text.size(); ++i) {
    const int base = bottom - static_cast<int>(i) * kAdvance * scale;
    if (base <= clip_y0_) break;
    for (int row = 0; row < kGlyphHeight; ++row)
      for (int col = 0; col < kGlyphWidth; ++col)
        if (lit(text[i], row, col))
          fill_rect(x + row * scale, base - (col + 1) * scale, x + (row + 1) * scale, base - col * scale, color);
  }
}

int Canvas::text_width(const std::string& text, int scale) {
  return text.empty() ? 0 : (static_cast<int>(text.size()) * kAdvance - 1) * scale;
}

std::string Canvas::encode_png() const {
  std::string png;
  const int ok = stbi_write_png_to_func(append_bytes, &png, width_, height_, 3, rgb_.data(), width_ * 3);
  REMATCH_CHECK(ok != 0, "Canvas::encode_png: stb_image_write could not encode the ", width_, "x", height_,
                " image");
  return viz::with_rematch_png_marker(png);  // how --overwrite tells rematch's plots from a user's own
}

void Canvas::save_png(const std::string& path) const { io::write_file_atomically(path, encode_png(), "save_png"); }

}  // namespace rematch::run
