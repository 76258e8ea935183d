// A tiny RGB raster canvas for the run's plots: filled rectangles, lines with a thickness, filled discs,
// and text in a built-in 5×7 bitmap font (ASCII 32–126; any other byte draws as '?'), saved as PNG with
// stb_image_write through an atomic write (a run folder never holds half a PNG).
// Coordinates are pixels, x to the right and y down from the top-left corner; pixel (x, y) has its centre
// at (x, y). Every drawing call clips to the canvas and to the clip rectangle (set_clip); shapes with a
// non-finite coordinate are not drawn.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rematch::run {

struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
  bool operator==(const Rgb& o) const { return r == o.r && g == o.g && b == o.b; }
  bool operator!=(const Rgb& o) const { return !(*this == o); }
};

namespace colors {
constexpr Rgb kWhite{255, 255, 255};
constexpr Rgb kBlack{0, 0, 0};
constexpr Rgb kGrey{128, 128, 128};
constexpr Rgb kRed{214, 39, 40};
}  // namespace colors

// The glyph font: each character is 5 pixels wide and 7 high, text advances 6 pixels per character and
// lines are 8 apart, all times the scale.
constexpr int kGlyphWidth = 5;
constexpr int kGlyphHeight = 7;

class Canvas {
 public:
  // width, height in 1..16384; error otherwise.
  Canvas(int width, int height, Rgb background = colors::kWhite);

  int width() const { return width_; }
  int height() const { return height_; }
  // The colour at (x, y); an error outside the canvas.
  Rgb pixel(int x, int y) const;

  // Drawing is limited to x0 <= x < x1, y0 <= y < y1 (intersected with the canvas) until reset_clip().
  void set_clip(int x0, int y0, int x1, int y1);
  void reset_clip();

  void set_pixel(int x, int y, Rgb color);  // ignored outside the clip
  // The pixels x0 <= x < x1, y0 <= y < y1.
  void fill_rect(int x0, int y0, int x1, int y1, Rgb color);
  // The outline of the same pixels, `thickness` pixels wide, drawn inside them.
  void draw_rect(int x0, int y0, int x1, int y1, Rgb color, int thickness = 1);
  // Every pixel whose centre lies within thickness/2 (at least 1/2) of the segment: round caps, no gaps.
  void draw_line(double x0, double y0, double x1, double y1, Rgb color, double thickness = 1);
  // Every pixel whose centre lies within `radius` of (cx, cy).
  void fill_circle(double cx, double cy, double radius, Rgb color);
  // Text with its top-left corner at (x, y), each font pixel a scale × scale block (scale >= 1).
  void draw_text(int x, int y, const std::string& text, Rgb color, int scale = 1);
  // Text turned 90° counter-clockwise (reading upwards), its bounding box's top-left corner at (x, y).
  void draw_text_up(int x, int y, const std::string& text, Rgb color, int scale = 1);

  // Size of drawn text: width along the text, height across it.
  static int text_width(const std::string& text, int scale = 1);
  static int text_height(int scale = 1) { return kGlyphHeight * scale; }

  // The image as PNG bytes, carrying rematch's marker (viz/written_by_rematch.h).
  std::string encode_png() const;
  // Writes the PNG atomically; errors name the path.
  void save_png(const std::string& path) const;

 private:
  int width_, height_;
  int clip_x0_ = 0, clip_y0_ = 0, clip_x1_, clip_y1_;
  std::vector<uint8_t> rgb_;  // row-major, 3 bytes a pixel
};

}  // namespace rematch::run
