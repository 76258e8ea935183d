// Internal to viz/: the drawing pieces the plots of plots.h are made of — numbers on axes ("nice"
// ticks and their labels), a plot's header, legend, x/y axes and curves, colour maps, and the cell grids of
// the heatmap and the confusion matrix. Coordinates are Canvas pixels.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "viz/plots.h"
#include "viz/png_canvas.h"

namespace rematch::run::plot_detail {

constexpr int kTextHeight = kGlyphHeight;  // labels, ticks, legend and notes are drawn at scale 1

// ---- numbers on axes -------------------------------------------------------------------------------------

struct Span {
  double lo = 0, hi = 1;
};

// Grows an empty or one-point span so it can be drawn, and keeps a span too wide for a double finite.
Span drawable(Span s);
Span padded(Span s, double fraction);
// 1, 2 or 5 times a power of ten, near span / target.
double nice_step(double span, int target);
std::vector<double> ticks_in(Span s, double step);
std::string tick_label(double v, double step);

// Data to pixels on one axis.
struct Axis {
  Span span;
  double p0 = 0, p1 = 1;  // pixels of span.lo and span.hi
  double px(double v) const { return p0 + (v - span.lo) / (span.hi - span.lo) * (p1 - p0); }
};

// ---- the parts of a plot ---------------------------------------------------------------------------------

struct Rect {
  int x0 = 0, y0 = 0, x1 = 0, y1 = 0;  // pixels x0 <= x <= x1, y0 <= y <= y1
};

void text_centered(Canvas& c, int cx, int y, const std::string& text, Rgb color, int scale = 1);

// The title and, when there are ones, a subtitle and a red note under it; returns the first free row below.
int draw_header(Canvas& c, const std::string& title, const std::string& subtitle, const std::string& note);

void dashed_line(Canvas& c, double x0, double y0, double x1, double y1, Rgb color, double thickness);

struct LegendEntry {
  enum class Kind { Line, Box, Dashed };
  std::string name;
  Rgb color;
  Kind kind;
};

// A framed legend in the top-right corner of the plot area; entries without a name are left out.
void draw_legend(Canvas& c, const Rect& area, const std::vector<LegendEntry>& all);

// A plot area with a light grid at the ticks, tick labels, axis labels and a frame. Lays out the area from
// the canvas size and the widest y tick label, and returns it; xa and ya get their pixel ends.
Rect draw_xy_axes(Canvas& c, int top, const std::string& x_label, const std::string& y_label, Axis& xa, Axis& ya);

void clip_to(Canvas& c, const Rect& r);

std::string count_note(int64_t n, const std::string& what);
std::string join_notes(const std::vector<std::string>& notes);

void check_series(const std::string& op, const std::string& path, const std::vector<Series>& series);

// The finite points of the series joined into lines (a non-finite point breaks the line), with a dot on each
// point of a short series and on any point without a finite neighbour.
void draw_series(Canvas& c, const Axis& xa, const Axis& ya, const Series& s, Rgb color);

// ---- colour scales ---------------------------------------------------------------------------------------

Rgb lerp(Rgb a, Rgb b, double t);

// Piecewise-linear colour map through evenly spaced stops; t is clamped to [0, 1].
template <size_t N> Rgb color_map(const Rgb (&stops)[N], double t) {
  const double u = std::clamp(t, 0.0, 1.0) * (N - 1);
  const size_t i = std::min(static_cast<size_t>(u), N - 2);
  return lerp(stops[i], stops[i + 1], u - static_cast<double>(i));
}

// matplotlib's viridis at nine evenly spaced points.
inline constexpr Rgb kViridis[] = {{68, 1, 84},    {71, 44, 122},  {59, 81, 139},  {44, 113, 142}, {33, 144, 141},
                                   {39, 173, 129}, {92, 200, 99},  {170, 220, 50}, {253, 231, 37}};
// matplotlib's Blues, white to dark blue.
inline constexpr Rgb kBlues[] = {{247, 251, 255}, {198, 219, 239}, {107, 174, 214}, {33, 113, 181}, {8, 48, 107}};

// ---- cell grids ------------------------------------------------------------------------------------------

// Lays out a rows × cols grid of cells in the space given: square cells of a whole number of pixels when
// every cell gets at least one, otherwise the whole space with several cells sharing a pixel.
Rect grid_area(int x0, int y0, int avail_w, int avail_h, int64_t rows, int64_t cols);

// The pixel range [first, last) of cell i of n along [p0, p1).
int cell_edge(int p0, int p1, int64_t i, int64_t n);

// Fills the grid area pixel by pixel with the colour of the cell each pixel falls in.
template <typename CellColor>
void fill_grid(Canvas& c, const Rect& area, int64_t rows, int64_t cols, CellColor cell_color) {
  const int64_t w = area.x1 - area.x0, h = area.y1 - area.y0;
  for (int64_t py = 0; py < h; ++py) {
    const int64_t row = py * rows / h;
    for (int64_t px = 0; px < w; ++px)
      c.set_pixel(area.x0 + static_cast<int>(px), area.y0 + static_cast<int>(py), cell_color(row, px * cols / w));
  }
}

// Index ticks (or the given names) along the grid's top-left-based axes.
void grid_ticks(Canvas& c, const Rect& area, int64_t rows, int64_t cols, const std::vector<std::string>& names);

}  // namespace rematch::run::plot_detail
