#include "train/synth/scene_pictures.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "tensor/error.h"
#include "tensor/file_io.h"

namespace rematch::synth {
namespace {

using run::Canvas;
using run::Rgb;

constexpr int kColumns = 3, kRows = 2;
constexpr double kRadius = 15;  // of an icon of normal size, in pixels
constexpr Rgb kBackground{247, 245, 240};
constexpr Rgb kOutline{45, 45, 45};
constexpr Rgb kText{40, 40, 40};

enum class Pattern { none, cracks, sparkle, grain, metal, stripes, highlight, speckles, drops, rounded };

struct Look {
  Rgb fill;
  double sx = 1, sy = 1;  // size along x and y
  Pattern pattern = Pattern::none;
};

constexpr Rgb kSlate{70, 110, 150};

// The look of each attribute, in the grammar's order (pairs_grammar.cpp: red ... wet).
const Look kLooks[] = {
    {{214, 39, 40}},                        // red
    {{31, 119, 180}},                       // blue
    {{44, 160, 44}},                        // green
    {{240, 200, 30}},                       // yellow
    {{30, 30, 30}},                         // black
    {{252, 252, 252}},                      // white
    {{255, 127, 14}},                       // orange
    {{140, 86, 55}},                        // brown
    {{240, 130, 190}},                      // pink
    {{148, 103, 189}},                      // purple
    {{127, 127, 127}},                      // gray
    {kSlate, 0.6, 0.6},                     // small
    {kSlate, 1.3, 1.3},                     // large
    {kSlate, 0.75, 1.35},                   // tall
    {{175, 155, 115}, 1, 1, Pattern::cracks},    // old
    {{0, 175, 170}, 1, 1, Pattern::sparkle},     // new
    {{165, 112, 60}, 1, 1, Pattern::grain},      // wooden
    {{165, 170, 182}, 1, 1, Pattern::metal},     // metal
    {kSlate, 1, 1, Pattern::stripes},            // striped
    {{80, 80, 200}, 1, 1, Pattern::highlight},   // shiny
    {{150, 140, 105}, 1, 1, Pattern::speckles},  // dirty
    {{120, 170, 90}, 1, 1, Pattern::rounded},    // round
    {kSlate, 0.42, 0.42},                   // tiny
    {{60, 120, 200}, 1, 1, Pattern::drops},      // wet
};
static_assert(sizeof(kLooks) / sizeof(kLooks[0]) == 24, "one look per attribute of the grammar");

Rgb scaled(Rgb c, double f) {
  auto ch = [f](uint8_t v) { return static_cast<uint8_t>(std::clamp(v * f, 0.0, 255.0)); };
  return {ch(c.r), ch(c.g), ch(c.b)};
}

Rgb mixed(Rgb a, Rgb b, double t) {
  auto ch = [t](uint8_t x, uint8_t y) { return static_cast<uint8_t>(std::lround(x + (y - x) * t)); };
  return {ch(a.r, b.r), ch(a.g, b.g), ch(a.b, b.b)};
}

bool dark(Rgb c) { return 0.299 * c.r + 0.587 * c.g + 0.114 * c.b < 140; }

uint32_t pixel_hash(int x, int y) {
  uint32_t h = static_cast<uint32_t>(x) * 73856093u ^ static_cast<uint32_t>(y) * 19349663u;
  h ^= h >> 13;
  return h * 0x5bd1e995u;
}

// Point (u, v) in the polygon (xs, ys), by the even-odd rule.
bool in_polygon(double u, double v, const double* xs, const double* ys, int n) {
  bool in = false;
  for (int i = 0, j = n - 1; i < n; j = i++)
    if ((ys[i] > v) != (ys[j] > v) && u < (xs[j] - xs[i]) * (v - ys[i]) / (ys[j] - ys[i]) + xs[i]) in = !in;
  return in;
}

// The eight shapes, in coordinates scaled to the icon's radius (u right, v down, both in [-1, 1]).
bool in_shape(int shape, double u, double v) {
  const double r2 = u * u + v * v;
  switch (shape) {
    case 0: return r2 <= 1;                                                     // disc
    case 1: return std::abs(u) <= 0.85 && std::abs(v) <= 0.85;                  // square
    case 2: return v <= 0.75 && std::abs(u) <= 0.95 * (v + 1) / 1.75;           // triangle
    case 3: return std::abs(u) + std::abs(v) <= 1;                              // diamond
    case 4: {                                                                   // star
      static double xs[10], ys[10];
      static const bool made = [] {
        for (int k = 0; k < 10; ++k) {
          const double a = -M_PI / 2 + k * M_PI / 5, r = k % 2 ? 0.45 : 1.0;
          xs[k] = r * std::cos(a), ys[k] = r * std::sin(a) + 0.08;
        }
        return true;
      }();
      (void)made;
      return in_polygon(u, v, xs, ys, 10);
    }
    case 5: return std::abs(v) <= 0.87 && 0.866 * std::abs(u) + 0.5 * std::abs(v) <= 0.87;  // hexagon
    case 6: return (std::abs(u) <= 0.33 && std::abs(v) <= 1) || (std::abs(v) <= 0.33 && std::abs(u) <= 1);  // plus
    default: return r2 <= 1 && r2 >= 0.3;                                       // ring
  }
}

// The six inner marks that tell apart the objects sharing a shape.
bool in_mark(int mark, double u, double v) {
  switch (mark) {
    case 1: return u * u + v * v <= 0.06;
    case 2: return std::abs(v) <= 0.12 && std::abs(u) <= 0.55;
    case 3: return std::abs(u) <= 0.12 && std::abs(v) <= 0.55;
    case 4: return std::max(std::abs(u), std::abs(v)) >= 0.2 && std::max(std::abs(u), std::abs(v)) <= 0.34;
    case 5: return std::abs(std::abs(u) - std::abs(v)) <= 0.13 && std::abs(u) <= 0.45;
    default: return false;
  }
}

Rgb patterned(const Look& look, int x, int y, double u, double v) {
  const Rgb c = look.fill;
  switch (look.pattern) {
    case Pattern::cracks: return std::abs(v - 0.3 * std::sin(u * 6)) < 0.07 ? scaled(c, 0.55) : c;
    case Pattern::sparkle:
      return (std::abs(u - 0.4) < 0.06 && std::abs(v + 0.4) < 0.25) || (std::abs(v + 0.4) < 0.06 && std::abs(u - 0.4) < 0.25)
                 ? Rgb{255, 255, 255}
                 : c;
    case Pattern::grain: return std::sin(y * 0.9 + 2 * std::sin(x * 0.35)) > 0.55 ? scaled(c, 0.7) : c;
    case Pattern::metal: return scaled(c, 1.25 - 0.35 * (v + 1) / 2);
    case Pattern::stripes: return ((x + y) / 3) % 2 == 0 ? mixed(c, {255, 255, 255}, 0.75) : c;
    case Pattern::highlight: return (u + 0.35) * (u + 0.35) + (v + 0.35) * (v + 0.35) < 0.07 ? Rgb{255, 255, 255} : c;
    case Pattern::speckles: return pixel_hash(x, y) % 6 == 0 ? Rgb{70, 55, 35} : c;
    case Pattern::drops: {
      const int gx = ((x + (y / 6) % 2 * 3) % 6), gy = y % 6;
      return (gx - 3) * (gx - 3) + (gy - 3) * (gy - 3) <= 1 ? Rgb{200, 230, 255} : c;
    }
    default: return c;
  }
}

void draw_icon(Canvas& c, const SceneObject& o, double cx, double cy) {
  const Look& look = kLooks[o.attribute % 24];
  const int shape = static_cast<int>(o.object % 8), mark = static_cast<int>(o.object / 8 % 6);
  const double rx = kRadius * look.sx, ry = kRadius * look.sy;
  auto inside = [&](int x, int y) {
    const double u = (x - cx) / rx, v = (y - cy) / ry;
    return in_shape(shape, u, v) && (look.pattern != Pattern::rounded || u * u + v * v <= 0.85);
  };
  const Rgb mark_color = dark(look.fill) ? Rgb{245, 245, 245} : Rgb{30, 30, 30};
  for (int y = static_cast<int>(cy - ry) - 1; y <= static_cast<int>(cy + ry) + 1; ++y)
    for (int x = static_cast<int>(cx - rx) - 1; x <= static_cast<int>(cx + rx) + 1; ++x) {
      if (!inside(x, y)) continue;
      const double u = (x - cx) / rx, v = (y - cy) / ry;
      const bool edge = !inside(x - 1, y) || !inside(x + 1, y) || !inside(x, y - 1) || !inside(x, y + 1);
      c.set_pixel(x, y, edge ? kOutline : in_mark(mark, u, v) ? mark_color : patterned(look, x, y, u, v));
    }
}

void text_centered(Canvas& c, int cx, int y, const std::string& s) {
  c.draw_text(cx - Canvas::text_width(s) / 2, y, s, kText);
}

// Through a temporary name and a rename, like every file of the data set, but without the fsync of
// io::write_file_atomically: thousands of pictures that a new `rematch synth` draws again are not worth a disk
// flush each (it made writing the default world's 2,750 pictures take 20 s instead of 2).
void write_picture(const Canvas& c, const std::string& path) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    const std::string png = c.encode_png();
    out.write(png.data(), static_cast<std::streamsize>(png.size()));
    REMATCH_CHECK(out.good(), "cannot write picture '", tmp, "'");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  REMATCH_CHECK(!ec, "cannot rename '", tmp, "' to '", path, "': ", ec.message());
}

}  // namespace

run::Canvas draw_scene(const Scene& scene, int64_t index) {
  Canvas c(kPictureWidth, kPictureHeight, kBackground);
  c.draw_rect(0, 0, kPictureWidth, kPictureHeight, {205, 200, 190});
  // The cells in an order drawn from the index (a small LCG: the picture must not depend on anything else).
  int cells[kColumns * kRows] = {0, 1, 2, 3, 4, 5};
  uint64_t s = static_cast<uint64_t>(index) * 6364136223846793005ull + 1442695040888963407ull;
  for (int i = kColumns * kRows - 1; i > 0; --i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    std::swap(cells[i], cells[(s >> 33) % static_cast<uint64_t>(i + 1)]);
  }
  const int cell_w = kPictureWidth / kColumns, cell_h = kPictureHeight / kRows;
  for (size_t k = 0; k < scene.objects.size() && k < static_cast<size_t>(kColumns * kRows); ++k) {
    const SceneObject& o = scene.objects[k];
    const int col = cells[k] % kColumns, row = cells[k] / kColumns;
    const int cx = col * cell_w + cell_w / 2 + 1, top = row * cell_h;
    draw_icon(c, o, cx, top + 22);
    text_centered(c, cx, top + 43, attribute_word(o.attribute));
    text_centered(c, cx, top + 51, object_word(o.object));
  }
  return c;
}

std::string scene_id(const std::string& split, int64_t index) { return split + "_" + std::to_string(index); }

std::string write_scene_pictures(const PairsWorld& world, const std::string& out_dir) {
  namespace fs = std::filesystem;
  const fs::path data_dir = fs::path(out_dir) / world.config.data_name;
  const fs::path images = data_dir / "images";
  std::error_code ec;
  fs::create_directories(images, ec);
  REMATCH_CHECK(!ec, "cannot create folder ", images.string(), ": ", ec.message());
  for (const PairsSplit& split : world.splits) {
    std::string ids;
    for (size_t i = 0; i < split.scenes.size(); ++i) {
      const std::string id = scene_id(split.name, static_cast<int64_t>(i));
      ids += id + "\n";
      write_picture(draw_scene(split.scenes[i], static_cast<int64_t>(i)), (images / (id + ".png")).string());
    }
    io::write_file_atomically((data_dir / (split.name + "_ids.txt")).string(), ids, "write_scene_pictures");
  }
  return images.string();
}

}  // namespace rematch::synth
