// The raster canvas: exact pixels of rectangles, lines, discs and text, clipping, the 5×7 font, and PNG
// files checked by their header and by decoding them again with stb_image.
#include "viz/png_canvas.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <set>

#include "test_util.h"
#include "png_test_util.h"

// The one definition of stb_image in train_tests (png_test_util.h declares read_png for the plot tests too).
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wunused-function"
#include <stb/stb_image.h>
#pragma GCC diagnostic pop

namespace rematch::test {

PngImage read_png(const std::string& path) {
  int w = 0, h = 0, channels = 0;
  unsigned char* data = stbi_load(path.c_str(), &w, &h, &channels, 3);
  PngImage image;
  if (data == nullptr) return image;
  image.width = w;
  image.height = h;
  image.rgb.assign(data, data + static_cast<size_t>(w) * h * 3);
  stbi_image_free(data);
  return image;
}

}  // namespace rematch::test

namespace rematch::run {
namespace {

uint32_t be32(const std::string& s, size_t at) {
  return (uint32_t(uint8_t(s[at])) << 24) | (uint32_t(uint8_t(s[at + 1])) << 16) | (uint32_t(uint8_t(s[at + 2])) << 8) |
         uint32_t(uint8_t(s[at + 3]));
}

// The lit pixels (those not of the background colour) as (x, y).
std::set<std::pair<int, int>> lit(const Canvas& c, Rgb background = colors::kWhite) {
  std::set<std::pair<int, int>> out;
  for (int y = 0; y < c.height(); ++y)
    for (int x = 0; x < c.width(); ++x)
      if (c.pixel(x, y) != background) out.insert({x, y});
  return out;
}

std::set<std::pair<int, int>> box(int x0, int y0, int x1, int y1) {
  std::set<std::pair<int, int>> out;
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) out.insert({x, y});
  return out;
}

class PngCanvasTest : public test::TempDirTest {};

TEST_F(PngCanvasTest, PngHeaderHoldsSignatureAndSize) {
  const Canvas c(37, 21, {1, 2, 3});
  const std::string png = c.encode_png();
  ASSERT_GT(png.size(), 33u);
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_EQ(be32(png, 8), 13u);  // IHDR length
  EXPECT_EQ(png.substr(12, 4), "IHDR");
  EXPECT_EQ(be32(png, 16), 37u);
  EXPECT_EQ(be32(png, 20), 21u);
  EXPECT_EQ(png[24], 8);  // bit depth
  EXPECT_EQ(png[25], 2);  // colour type: RGB
}

TEST_F(PngCanvasTest, SavedFilesDecodeToTheSamePixels) {
  Canvas c(64, 48);
  c.fill_rect(10, 5, 20, 8, colors::kRed);
  c.draw_line(0, 40, 63, 30, {0, 128, 0}, 3);
  c.draw_text(2, 20, "Hi!", colors::kBlack, 2);
  c.save_png(path("c.png"));
  const test::PngImage img = test::read_png(path("c.png"));
  ASSERT_EQ(img.width, 64);
  ASSERT_EQ(img.height, 48);
  for (int y = 0; y < 48; ++y)
    for (int x = 0; x < 64; ++x) ASSERT_EQ(img.at(x, y), c.pixel(x, y)) << x << "," << y;
  EXPECT_EQ(img.at(10, 5), colors::kRed);
  EXPECT_EQ(img.at(19, 7), colors::kRed);
  EXPECT_EQ(img.at(20, 7), colors::kWhite);
  EXPECT_EQ(img.at(9, 5), colors::kWhite);
  EXPECT_EQ(test::entries_of(dir_), (std::vector<std::string>{"c.png"}));  // no temporary file left
}

TEST_F(PngCanvasTest, SavingIntoAMissingFolderNamesThePath) {
  const Canvas c(4, 4);
  EXPECT_THROWS_WITH(c.save_png(path("no/such/x.png")), "save_png", path("no/such/x.png"));
}

TEST_F(PngCanvasTest, RectanglesAreHalfOpenAndOutlinesInside) {
  Canvas c(30, 20);
  c.fill_rect(2, 3, 5, 6, colors::kBlack);
  EXPECT_EQ(lit(c), box(2, 3, 5, 6));
  Canvas d(30, 20);
  d.draw_rect(10, 5, 20, 15, colors::kBlack, 2);
  auto want = box(10, 5, 20, 15);
  for (const auto& p : box(12, 7, 18, 13)) want.erase(p);
  EXPECT_EQ(lit(d), want);
}

TEST_F(PngCanvasTest, LinesHaveTheirThicknessAndNoGaps) {
  Canvas c(40, 30);
  c.draw_line(5, 10, 30, 10, colors::kBlack);
  EXPECT_EQ(lit(c), box(5, 10, 31, 11));
  Canvas t(40, 30);
  t.draw_line(5, 10, 30, 10, colors::kBlack, 3);
  // Round caps of radius 1.5: one pixel past each end, rows 9..11 (distance sqrt(2) <= 1.5), not two.
  EXPECT_EQ(lit(t), box(4, 9, 32, 12));
  // A steep line lights at least one pixel in every row it crosses, and a shallow one in every column.
  Canvas s(40, 30);
  s.draw_line(3, 2, 11, 27, colors::kBlack);
  s.draw_line(13, 5, 39, 14, colors::kBlack);
  for (int y = 2; y <= 27; ++y) {
    bool any = false;
    for (int x = 0; x < 12; ++x) any |= s.pixel(x, y) != colors::kWhite;
    EXPECT_TRUE(any) << "row " << y;
  }
  for (int x = 13; x <= 39; ++x) {
    bool any = false;
    for (int y = 0; y < 30; ++y) any |= s.pixel(x, y) != colors::kWhite;
    EXPECT_TRUE(any) << "column " << x;
  }
}

TEST_F(PngCanvasTest, DiscsCoverTheirRadius) {
  Canvas c(20, 20);
  c.fill_circle(10, 10, 2, colors::kBlack);
  const auto got = lit(c);
  EXPECT_EQ(got.size(), 13u);  // the pixel centres within distance 2
  EXPECT_TRUE(got.count({12, 10}) && got.count({10, 8}) && got.count({11, 11}));
  EXPECT_FALSE(got.count({12, 11}));
}

TEST_F(PngCanvasTest, DrawingClipsAndIgnoresNonFiniteCoordinates) {
  Canvas c(10, 10);
  c.fill_rect(-100, -100, 100, 3, colors::kBlack);
  EXPECT_EQ(lit(c), box(0, 0, 10, 3));
  Canvas d(10, 10);
  d.draw_line(NAN, 0, 5, 5, colors::kBlack, 2);
  d.draw_line(0, 0, INFINITY, 5, colors::kBlack, 2);
  d.fill_circle(5, 5, NAN, colors::kBlack);
  d.draw_line(-1e300, 5, 1e300, 5, colors::kBlack);
  EXPECT_EQ(lit(d), box(0, 5, 10, 6));
  d.set_clip(2, 0, 4, 10);
  d.fill_rect(0, 0, 10, 10, colors::kRed);
  EXPECT_EQ(lit(d, colors::kWhite).size(), 20u + 8u);  // the clipped strip plus the rest of the line
  d.reset_clip();
  d.set_pixel(9, 9, colors::kRed);
  EXPECT_EQ(d.pixel(9, 9), colors::kRed);
  EXPECT_THROWS_WITH(d.pixel(10, 0), "(10, 0) is outside the 10x10 canvas");
  EXPECT_THROWS_WITH(Canvas(0, 5), "size 0x5");
}

TEST_F(PngCanvasTest, TextUsesTheFiveBySevenFont) {
  EXPECT_EQ(Canvas::text_width("abc"), 17);
  EXPECT_EQ(Canvas::text_width("abc", 2), 34);
  EXPECT_EQ(Canvas::text_width(""), 0);
  EXPECT_EQ(Canvas::text_height(3), 21);
  Canvas c(20, 20);
  c.draw_text(3, 4, "-", colors::kBlack);  // the minus sign is row 3 of the cell, all five columns
  EXPECT_EQ(lit(c), box(3, 7, 8, 8));
  Canvas s(20, 20);
  s.draw_text(3, 4, "-", colors::kBlack, 2);
  EXPECT_EQ(lit(s), box(3, 10, 13, 12));
  Canvas two(20, 20);
  two.draw_text(0, 0, "||", colors::kBlack);  // characters advance by 6
  EXPECT_EQ(lit(two), []{ auto b = box(2, 0, 3, 7); for (int y = 0; y < 7; ++y) b.insert({8, y}); return b; }());
  Canvas up(20, 20);
  up.draw_text_up(4, 2, "-", colors::kBlack);  // turned: a vertical bar at x + 3, covering the text width
  EXPECT_EQ(lit(up), box(7, 2, 8, 7));
}

TEST_F(PngCanvasTest, EveryPrintableCharacterHasItsOwnGlyph) {
  std::set<std::set<std::pair<int, int>>> seen;
  for (int ch = 32; ch <= 126; ++ch) {
    Canvas c(5, 7);
    c.draw_text(0, 0, std::string(1, static_cast<char>(ch)), colors::kBlack);
    const auto pixels = lit(c);
    if (ch == ' ') {
      EXPECT_TRUE(pixels.empty());
    } else {
      EXPECT_FALSE(pixels.empty()) << "'" << static_cast<char>(ch) << "'";
    }
    EXPECT_TRUE(seen.insert(pixels).second) << "'" << static_cast<char>(ch) << "' looks like another glyph";
  }
  Canvas q(5, 7), other(5, 7);
  q.draw_text(0, 0, "?", colors::kBlack);
  other.draw_text(0, 0, "\x01", colors::kBlack);
  EXPECT_EQ(lit(other), lit(q));  // bytes outside 32–126 draw as '?'
}

}  // namespace
}  // namespace rematch::run
