#include "train/run/plots.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "tensor/error.h"

namespace rematch::run {
namespace {

constexpr int kTitleScale = 2;
constexpr int kTextHeight = kGlyphHeight;  // labels, ticks, legend and notes are drawn at scale 1
constexpr Rgb kGridColor{236, 236, 236};
constexpr Rgb kNanColor{160, 160, 160};
constexpr int kMaxDottedPoints = 60;

// ---- numbers on axes -------------------------------------------------------------------------------------

struct Span {
  double lo = 0, hi = 1;
};

// Grows an empty or one-point span so it can be drawn, and keeps a span too wide for a double finite.
Span drawable(Span s) {
  s.lo = std::max(s.lo, -1e300);
  s.hi = std::min(s.hi, 1e300);
  if (!(s.hi - s.lo > 1e-12 * std::max(std::abs(s.lo), std::abs(s.hi)))) {
    const double d = s.lo != 0 ? std::abs(s.lo) * 0.1 : 0.5;
    s.lo -= d;
    s.hi += d;
  }
  return s;
}

Span padded(Span s, double fraction) {
  const double pad = (s.hi - s.lo) * fraction;
  return {s.lo - pad, s.hi + pad};
}

// 1, 2 or 5 times a power of ten, near span / target.
double nice_step(double span, int target) {
  const double raw = span / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double frac = raw / mag;
  return (frac < 1.5 ? 1 : frac < 3 ? 2 : frac < 7 ? 5 : 10) * mag;
}

std::vector<double> ticks_in(Span s, double step) {
  std::vector<double> ticks;
  if (!(step > 0) || !std::isfinite(step)) return ticks;
  for (double k = std::ceil(s.lo / step); ticks.size() < 50; k += 1) {
    double v = k * step;
    if (v > s.hi + step * 1e-9) break;
    if (std::abs(v) < step * 1e-9) v = 0;
    ticks.push_back(v);
  }
  return ticks;
}

std::string tick_label(double v, double step) {
  char buf[64];
  if (v != 0 && (std::abs(v) >= 1e6 || step < 1e-4)) {
    std::snprintf(buf, sizeof buf, "%.3g", v);
  } else {
    const int decimals = std::max(0, static_cast<int>(-std::floor(std::log10(step) + 1e-9)));
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  }
  std::string s = buf;
  if (s.find_first_not_of("-0.") == std::string::npos && s[0] == '-') s.erase(0, 1);  // no "-0.00"
  return s;
}

// Integer ticks 0, step, 2·step, ... below n, with step 1, 2 or 5 times a power of ten.
std::vector<int64_t> index_ticks(int64_t n, int target) {
  const int64_t step = n <= target ? 1 : static_cast<int64_t>(std::llround(nice_step(static_cast<double>(n), target)));
  std::vector<int64_t> ticks;
  for (int64_t i = 0; i < n; i += std::max<int64_t>(step, 1)) ticks.push_back(i);
  return ticks;
}

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

void text_centered(Canvas& c, int cx, int y, const std::string& text, Rgb color, int scale = 1) {
  c.draw_text(cx - Canvas::text_width(text, scale) / 2, y, text, color, scale);
}

// The title and, when there are ones, a subtitle and a red note under it; returns the first free row below.
int draw_header(Canvas& c, const std::string& title, const std::string& subtitle, const std::string& note) {
  int y = 12;
  text_centered(c, c.width() / 2, y, title, colors::kBlack, kTitleScale);
  y += Canvas::text_height(kTitleScale) + 8;
  if (!subtitle.empty()) {
    text_centered(c, c.width() / 2, y, subtitle, colors::kBlack);
    y += kTextHeight + 8;
  }
  if (!note.empty()) {
    text_centered(c, c.width() / 2, y, note, colors::kRed);
    y += kTextHeight + 8;
  }
  return y + 6;
}

void dashed_line(Canvas& c, double x0, double y0, double x1, double y1, Rgb color, double thickness) {
  const double len = std::hypot(x1 - x0, y1 - y0);
  if (!std::isfinite(len)) return;
  constexpr double kDash = 7, kGap = 5;
  for (double t = 0; t < len; t += kDash + kGap) {
    const double a = t / std::max(len, 1e-12), b = std::min(t + kDash, len) / std::max(len, 1e-12);
    c.draw_line(x0 + a * (x1 - x0), y0 + a * (y1 - y0), x0 + b * (x1 - x0), y0 + b * (y1 - y0), color, thickness);
  }
}

struct LegendEntry {
  enum class Kind { Line, Box, Dashed };
  std::string name;
  Rgb color;
  Kind kind;
};

// A framed legend in the top-right corner of the plot area; entries without a name are left out.
void draw_legend(Canvas& c, const Rect& area, const std::vector<LegendEntry>& all) {
  std::vector<LegendEntry> entries;
  for (const LegendEntry& e : all)
    if (!e.name.empty()) entries.push_back(e);
  if (entries.empty()) return;
  constexpr int kRow = 14, kSwatch = 20, kPad = 6;
  int text_w = 0;
  for (const LegendEntry& e : entries) text_w = std::max(text_w, Canvas::text_width(e.name));
  const int w = kPad + kSwatch + kPad + text_w + kPad, h = kPad + static_cast<int>(entries.size()) * kRow + kPad - 4;
  const int x0 = area.x1 - 8 - w, y0 = area.y0 + 8;
  c.fill_rect(x0, y0, x0 + w, y0 + h, colors::kWhite);
  c.draw_rect(x0, y0, x0 + w, y0 + h, colors::kGrey);
  for (size_t i = 0; i < entries.size(); ++i) {
    const LegendEntry& e = entries[i];
    const int top = y0 + kPad + static_cast<int>(i) * kRow, mid = top + kTextHeight / 2;
    const int sx0 = x0 + kPad, sx1 = sx0 + kSwatch;
    switch (e.kind) {
      case LegendEntry::Kind::Line: c.draw_line(sx0, mid, sx1, mid, e.color, 2); break;
      case LegendEntry::Kind::Dashed:
        c.draw_line(sx0, mid, sx0 + 7, mid, e.color, 2);
        c.draw_line(sx1 - 7, mid, sx1, mid, e.color, 2);
        break;
      case LegendEntry::Kind::Box:
        c.fill_rect(sx0 + 3, top, sx1 - 3, top + kTextHeight, e.color);
        break;
    }
    c.draw_text(sx1 + kPad, top, e.name, colors::kBlack);
  }
}

// A plot area with a light grid at the ticks, tick labels, axis labels and a frame. Lays out the area from
// the canvas size and the widest y tick label, and returns it; xa and ya get their pixel ends.
Rect draw_xy_axes(Canvas& c, int top, const std::string& x_label, const std::string& y_label, Axis& xa, Axis& ya) {
  const double x_step = nice_step(xa.span.hi - xa.span.lo, 8), y_step = nice_step(ya.span.hi - ya.span.lo, 6);
  const std::vector<double> x_ticks = ticks_in(xa.span, x_step), y_ticks = ticks_in(ya.span, y_step);
  int label_w = 0;
  for (double v : y_ticks) label_w = std::max(label_w, Canvas::text_width(tick_label(v, y_step)));
  Rect r;
  r.x0 = 12 + kTextHeight + 10 + label_w + 8;
  r.x1 = c.width() - 24;
  r.y0 = top;
  r.y1 = c.height() - (8 + kTextHeight + 10 + kTextHeight + 12);
  xa.p0 = r.x0;
  xa.p1 = r.x1;
  ya.p0 = r.y1;  // y grows upwards
  ya.p1 = r.y0;
  for (double v : x_ticks) {
    const int x = static_cast<int>(std::lround(xa.px(v)));
    c.fill_rect(x, r.y0, x + 1, r.y1, kGridColor);
    c.fill_rect(x, r.y1, x + 1, r.y1 + 5, colors::kBlack);
    text_centered(c, x, r.y1 + 8, tick_label(v, x_step), colors::kBlack);
  }
  for (double v : y_ticks) {
    const int y = static_cast<int>(std::lround(ya.px(v)));
    c.fill_rect(r.x0, y, r.x1, y + 1, kGridColor);
    c.fill_rect(r.x0 - 5, y, r.x0, y + 1, colors::kBlack);
    const std::string label = tick_label(v, y_step);
    c.draw_text(r.x0 - 8 - Canvas::text_width(label), y - kTextHeight / 2, label, colors::kBlack);
  }
  c.draw_rect(r.x0, r.y0, r.x1 + 1, r.y1 + 1, colors::kBlack);
  text_centered(c, (r.x0 + r.x1) / 2, r.y1 + 8 + kTextHeight + 10, x_label, colors::kBlack);
  c.draw_text_up(12, (r.y0 + r.y1) / 2 - Canvas::text_width(y_label) / 2, y_label, colors::kBlack);
  return r;
}

void clip_to(Canvas& c, const Rect& r) { c.set_clip(r.x0 + 1, r.y0 + 1, r.x1, r.y1); }

std::string count_note(int64_t n, const std::string& what) {
  return n == 0 ? "" : what + ": " + std::to_string(n);
}

std::string join_notes(const std::vector<std::string>& notes) {
  std::string out;
  for (const std::string& n : notes)
    if (!n.empty()) out += (out.empty() ? "" : "; ") + n;
  return out;
}

void check_series(const std::string& op, const std::string& path, const std::vector<Series>& series) {
  for (size_t i = 0; i < series.size(); ++i)
    REMATCH_CHECK(series[i].xs.size() == series[i].ys.size(), op, " '", path, "': series ", i, " ('",
                  series[i].name, "') has ", series[i].xs.size(), " x values and ", series[i].ys.size(),
                  " y values");
}

// The finite points of the series joined into lines (a non-finite point breaks the line), with a dot on each
// point of a short series and on any point without a finite neighbour.
void draw_series(Canvas& c, const Axis& xa, const Axis& ya, const Series& s, Rgb color) {
  const size_t n = s.xs.size();
  auto finite = [&](size_t i) { return i < n && std::isfinite(s.xs[i]) && std::isfinite(s.ys[i]); };
  size_t finite_count = 0;
  for (size_t i = 0; i < n; ++i) finite_count += finite(i);
  for (size_t i = 0; i < n; ++i) {
    if (!finite(i)) continue;
    const double x = xa.px(s.xs[i]), y = ya.px(s.ys[i]);
    if (finite(i + 1)) c.draw_line(x, y, xa.px(s.xs[i + 1]), ya.px(s.ys[i + 1]), color, 2);
    const bool alone = !(i > 0 && finite(i - 1)) && !finite(i + 1);
    if (alone || finite_count <= kMaxDottedPoints) c.fill_circle(x, y, 2.5, color);
  }
}

// ---- colour scales ---------------------------------------------------------------------------------------

Rgb lerp(Rgb a, Rgb b, double t) {
  auto mix = [t](uint8_t u, uint8_t v) { return static_cast<uint8_t>(std::lround(u + (v - u) * t)); };
  return {mix(a.r, b.r), mix(a.g, b.g), mix(a.b, b.b)};
}

// Piecewise-linear colour map through evenly spaced stops; t is clamped to [0, 1].
template <size_t N> Rgb color_map(const Rgb (&stops)[N], double t) {
  const double u = std::clamp(t, 0.0, 1.0) * (N - 1);
  const size_t i = std::min(static_cast<size_t>(u), N - 2);
  return lerp(stops[i], stops[i + 1], u - static_cast<double>(i));
}

// matplotlib's viridis at nine evenly spaced points.
constexpr Rgb kViridis[] = {{68, 1, 84},    {71, 44, 122},  {59, 81, 139},  {44, 113, 142}, {33, 144, 141},
                            {39, 173, 129}, {92, 200, 99},  {170, 220, 50}, {253, 231, 37}};
// matplotlib's Blues, white to dark blue.
constexpr Rgb kBlues[] = {{247, 251, 255}, {198, 219, 239}, {107, 174, 214}, {33, 113, 181}, {8, 48, 107}};

// Lays out a rows × cols grid of cells in the space given: square cells of a whole number of pixels when
// every cell gets at least one, otherwise the whole space with several cells sharing a pixel.
Rect grid_area(int x0, int y0, int avail_w, int avail_h, int64_t rows, int64_t cols) {
  const int64_t cell = std::min(avail_w / cols, avail_h / rows);
  Rect r;
  r.x0 = x0;
  r.y0 = y0;
  const int64_t w = cell >= 1 ? cols * cell : std::min<int64_t>(avail_w, cols * std::max<int64_t>(1, avail_w / cols));
  const int64_t h = cell >= 1 ? rows * cell : std::min<int64_t>(avail_h, rows * std::max<int64_t>(1, avail_h / rows));
  r.x1 = x0 + static_cast<int>(w);
  r.y1 = y0 + static_cast<int>(h);
  return r;
}

// The pixel range [first, last) of cell i of n along [p0, p1).
int cell_edge(int p0, int p1, int64_t i, int64_t n) { return p0 + static_cast<int>(i * (p1 - p0) / n); }

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
void grid_ticks(Canvas& c, const Rect& area, int64_t rows, int64_t cols, const std::vector<std::string>& names) {
  const auto label = [&](int64_t i) { return names.empty() ? std::to_string(i) : names[static_cast<size_t>(i)]; };
  for (int64_t j : index_ticks(cols, names.empty() ? 10 : static_cast<int>(cols))) {
    const int x = (cell_edge(area.x0, area.x1, j, cols) + cell_edge(area.x0, area.x1, j + 1, cols)) / 2;
    c.fill_rect(x, area.y1, x + 1, area.y1 + 5, colors::kBlack);
    const std::string text = label(j);
    if (names.empty()) {
      text_centered(c, x, area.y1 + 8, text, colors::kBlack);
    } else {
      c.draw_text_up(x - kTextHeight / 2, area.y1 + 8, text, colors::kBlack);
    }
  }
  for (int64_t i : index_ticks(rows, names.empty() ? 10 : static_cast<int>(rows))) {
    const int y = (cell_edge(area.y0, area.y1, i, rows) + cell_edge(area.y0, area.y1, i + 1, rows)) / 2;
    c.fill_rect(area.x0 - 5, y, area.x0, y + 1, colors::kBlack);
    const std::string text = label(i);
    c.draw_text(area.x0 - 8 - Canvas::text_width(text), y - kTextHeight / 2, text, colors::kBlack);
  }
}

}  // namespace

Rgb palette_color(size_t i) {
  static constexpr Rgb kTab10[] = {{31, 119, 180}, {255, 127, 14}, {44, 160, 44},   {214, 39, 40},
                                   {148, 103, 189}, {140, 86, 75}, {227, 119, 194}, {127, 127, 127},
                                   {188, 189, 34},  {23, 190, 207}};
  return kTab10[i % 10];
}

void line_plot(const std::string& path, const std::string& title, const std::string& x_label,
               const std::string& y_label, const std::vector<Series>& series) {
  check_series("line_plot", path, series);
  Span xs{INFINITY, -INFINITY}, ys{INFINITY, -INFINITY};
  int64_t skipped = 0, finite = 0;
  for (const Series& s : series) {
    for (size_t i = 0; i < s.xs.size(); ++i) {
      if (!std::isfinite(s.xs[i]) || !std::isfinite(s.ys[i])) {
        ++skipped;
        continue;
      }
      ++finite;
      xs = {std::min(xs.lo, s.xs[i]), std::max(xs.hi, s.xs[i])};
      ys = {std::min(ys.lo, s.ys[i]), std::max(ys.hi, s.ys[i])};
    }
  }
  if (finite == 0) xs = ys = {0, 1};
  Canvas c(900, 560);
  const int top = draw_header(c, title, "", join_notes({finite == 0 ? "no finite data" : "",
                                                    count_note(skipped, "non-finite points skipped")}));
  Axis xa{padded(drawable(xs), 0.02)}, ya{padded(drawable(ys), 0.05)};
  const Rect area = draw_xy_axes(c, top, x_label, y_label, xa, ya);
  clip_to(c, area);
  std::vector<LegendEntry> legend;
  for (size_t i = 0; i < series.size(); ++i) {
    const Rgb color = series[i].color.value_or(palette_color(i));
    draw_series(c, xa, ya, series[i], color);
    legend.push_back({series[i].name, color, LegendEntry::Kind::Line});
  }
  c.reset_clip();
  draw_legend(c, area, legend);
  c.save_png(path);
}

void histogram_plot(const std::string& path, const std::string& title, const std::string& x_label,
                    const std::vector<double>& values, int bins, const std::vector<Series>& overlays,
                    const std::vector<VerticalMarker>& markers) {
  REMATCH_CHECK(bins >= 1 && bins <= 10000, "histogram_plot '", path, "': bins must be in 1..10000, got ", bins);
  check_series("histogram_plot", path, overlays);
  Span vs{INFINITY, -INFINITY};
  int64_t n = 0, skipped = 0;
  for (double v : values) {
    if (!std::isfinite(v)) {
      ++skipped;
      continue;
    }
    ++n;
    vs = {std::min(vs.lo, v), std::max(vs.hi, v)};
  }
  if (n == 0) vs = {0, 1};
  const Span bin_span = drawable(vs);
  const double width = (bin_span.hi - bin_span.lo) / bins;
  std::vector<double> density(static_cast<size_t>(bins), 0.0);
  for (double v : values) {
    if (!std::isfinite(v)) continue;
    const int b = std::clamp(static_cast<int>((v - bin_span.lo) / width), 0, bins - 1);
    density[static_cast<size_t>(b)] += 1.0 / (static_cast<double>(n) * width);
  }
  Span x = bin_span;
  int64_t skipped_markers = 0;
  for (const VerticalMarker& m : markers) {
    if (!std::isfinite(m.x)) {
      ++skipped_markers;
      continue;
    }
    x = {std::min(x.lo, m.x), std::max(x.hi, m.x)};
  }
  x = padded(x, 0.02);
  double y_max = *std::max_element(density.begin(), density.end());
  int64_t skipped_overlay = 0;
  for (const Series& s : overlays)
    for (size_t i = 0; i < s.xs.size(); ++i) {
      if (!std::isfinite(s.xs[i]) || !std::isfinite(s.ys[i])) {
        ++skipped_overlay;
      } else if (s.xs[i] >= x.lo && s.xs[i] <= x.hi) {
        y_max = std::max(y_max, s.ys[i]);
      }
    }
  if (!(y_max > 0)) y_max = 1;
  Canvas c(900, 560);
  const std::string note = join_notes({n == 0 ? "no finite values" : "", count_note(skipped, "non-finite values skipped"),
                                       count_note(skipped_overlay, "non-finite curve points skipped"),
                                       count_note(skipped_markers, "non-finite markers skipped")});
  const int top = draw_header(c, title, "", note);
  Axis xa{x}, ya{Span{0, y_max * 1.08}};
  const Rect area = draw_xy_axes(c, top, x_label, "density", xa, ya);
  clip_to(c, area);
  constexpr Rgb kBar{158, 202, 225}, kBarEdge{49, 130, 189};
  for (int b = 0; b < bins; ++b) {
    if (density[static_cast<size_t>(b)] <= 0) continue;
    const int x0 = static_cast<int>(std::lround(xa.px(bin_span.lo + b * width)));
    const int x1 = static_cast<int>(std::lround(xa.px(bin_span.lo + (b + 1) * width)));
    const int y0 = static_cast<int>(std::lround(ya.px(density[static_cast<size_t>(b)])));
    c.fill_rect(x0, y0, std::max(x1, x0 + 1), area.y1 + 1, kBar);
    if (x1 - x0 >= 4) c.draw_rect(x0, y0, x1 + 1, area.y1 + 1, kBarEdge);
  }
  std::vector<LegendEntry> legend = {{"values (n=" + std::to_string(n) + ")", kBar, LegendEntry::Kind::Box}};
  for (size_t i = 0; i < overlays.size(); ++i) {
    const Rgb color = overlays[i].color.value_or(palette_color(i + 1));
    draw_series(c, xa, ya, overlays[i], color);
    legend.push_back({overlays[i].name, color, LegendEntry::Kind::Line});
  }
  for (const VerticalMarker& m : markers) {
    if (!std::isfinite(m.x)) continue;
    const Rgb color = m.color.value_or(colors::kBlack);
    dashed_line(c, xa.px(m.x), area.y1, xa.px(m.x), area.y0, color, 2);
    legend.push_back({m.name, color, LegendEntry::Kind::Dashed});
  }
  c.reset_clip();
  draw_legend(c, area, legend);
  c.save_png(path);
}

void heatmap_plot(const std::string& path, const std::string& title, const std::string& x_label,
                  const std::string& y_label, const std::vector<double>& values, int64_t rows, int64_t cols,
                  std::optional<ColorRange> range, const std::vector<MatrixCell>& highlighted) {
  REMATCH_CHECK(rows >= 1 && cols >= 1, "heatmap_plot '", path, "': the matrix must have rows and columns, got ",
                rows, "x", cols);
  REMATCH_CHECK(static_cast<int64_t>(values.size()) == rows * cols, "heatmap_plot '", path, "': ", values.size(),
                " values for a ", rows, "x", cols, " matrix");
  for (const MatrixCell& m : highlighted)
    REMATCH_CHECK(m.row >= 0 && m.row < rows && m.col >= 0 && m.col < cols, "heatmap_plot '", path,
                  "': highlighted cell (", m.row, ", ", m.col, ") is outside the ", rows, "x", cols, " matrix");
  if (range)
    REMATCH_CHECK(std::isfinite(range->min) && std::isfinite(range->max) && range->min < range->max,
                  "heatmap_plot '", path, "': the colour range [", range->min, ", ", range->max,
                  "] must be finite with min < max");
  int64_t nans = 0, infs = 0;
  Span finite{INFINITY, -INFINITY};
  for (double v : values) {
    if (std::isnan(v)) {
      ++nans;
    } else if (std::isinf(v)) {
      ++infs;
    } else {
      finite = {std::min(finite.lo, v), std::max(finite.hi, v)};
    }
  }
  if (finite.lo > finite.hi) finite = {0, 1};
  const Span scale = range ? Span{range->min, range->max} : drawable(finite);
  auto color_of = [&](double v) {
    return std::isnan(v) ? kNanColor : color_map(kViridis, (v - scale.lo) / (scale.hi - scale.lo));
  };

  Canvas c(820, 720);
  const int top = draw_header(c, title, "", join_notes({count_note(nans, "NaN cells (grey)"),
                                                    count_note(infs, "infinite cells clamped to the scale")}));
  // Left: y label, row tick labels; right: colour bar with its labels; bottom: column ticks, x label.
  const int row_label_w = Canvas::text_width(std::to_string(rows - 1));
  const int left = 12 + kTextHeight + 10 + row_label_w + 8;
  const double bar_step = nice_step(scale.hi - scale.lo, 6);
  const std::vector<double> bar_ticks = ticks_in(scale, bar_step);
  int bar_label_w = 0;
  for (double v : bar_ticks) bar_label_w = std::max(bar_label_w, Canvas::text_width(tick_label(v, bar_step)));
  const int right = 20 + 16 + 8 + bar_label_w + 12;
  const int bottom = 8 + kTextHeight + 10 + kTextHeight + 12;
  const Rect area = grid_area(left, top, c.width() - left - right, c.height() - top - bottom, rows, cols);
  fill_grid(c, area, rows, cols, [&](int64_t i, int64_t j) { return color_of(values[i * cols + j]); });
  const int cell_px = static_cast<int>(std::min((area.x1 - area.x0) / cols, (area.y1 - area.y0) / rows));
  for (const MatrixCell& m : highlighted)
    c.draw_rect(cell_edge(area.x0, area.x1, m.col, cols), cell_edge(area.y0, area.y1, m.row, rows),
                std::max(cell_edge(area.x0, area.x1, m.col + 1, cols), cell_edge(area.x0, area.x1, m.col, cols) + 1),
                std::max(cell_edge(area.y0, area.y1, m.row + 1, rows), cell_edge(area.y0, area.y1, m.row, rows) + 1),
                colors::kRed, cell_px >= 8 ? 2 : 1);
  c.draw_rect(area.x0 - 1, area.y0 - 1, area.x1 + 1, area.y1 + 1, colors::kBlack);
  grid_ticks(c, area, rows, cols, {});
  text_centered(c, (area.x0 + area.x1) / 2, area.y1 + 8 + kTextHeight + 10, x_label, colors::kBlack);
  c.draw_text_up(12, (area.y0 + area.y1) / 2 - Canvas::text_width(y_label) / 2, y_label, colors::kBlack);

  // The colour bar: the scale from max at the top to min at the bottom.
  const int bx0 = area.x1 + 20, bx1 = bx0 + 16;
  Axis ba{scale, static_cast<double>(area.y1 - 1), static_cast<double>(area.y0)};
  for (int y = area.y0; y < area.y1; ++y)
    c.fill_rect(bx0, y, bx1, y + 1, color_map(kViridis, (area.y1 - 1 - y) / std::max(1.0, area.y1 - 1.0 - area.y0)));
  c.draw_rect(bx0 - 1, area.y0 - 1, bx1 + 1, area.y1 + 1, colors::kBlack);
  for (double v : bar_ticks) {
    const int y = static_cast<int>(std::lround(ba.px(v)));
    c.fill_rect(bx1, y, bx1 + 4, y + 1, colors::kBlack);
    c.draw_text(bx1 + 8, y - kTextHeight / 2, tick_label(v, bar_step), colors::kBlack);
  }
  c.save_png(path);
}

void confusion_matrix_plot(const std::string& path, const std::string& title, const std::vector<int64_t>& counts,
                           int64_t k, const std::vector<std::string>& labels) {
  REMATCH_CHECK(k >= 1, "confusion_matrix_plot '", path, "': k must be positive, got ", k);
  REMATCH_CHECK(static_cast<int64_t>(counts.size()) == k * k, "confusion_matrix_plot '", path, "': ", counts.size(),
                " counts for a ", k, "x", k, " matrix");
  REMATCH_CHECK(labels.empty() || static_cast<int64_t>(labels.size()) == k, "confusion_matrix_plot '", path, "': ",
                labels.size(), " labels for ", k, " classes");
  std::vector<int64_t> row_total(static_cast<size_t>(k), 0);
  int64_t total = 0, correct = 0;
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < k; ++j) {
      const int64_t n = counts[static_cast<size_t>(i * k + j)];
      REMATCH_CHECK(n >= 0, "confusion_matrix_plot '", path, "': count (", i, ", ", j, ") is negative: ", n);
      row_total[static_cast<size_t>(i)] += n;
      total += n;
      if (i == j) correct += n;
    }
  auto share = [&](int64_t i, int64_t j) {
    const int64_t t = row_total[static_cast<size_t>(i)];
    return t > 0 ? static_cast<double>(counts[static_cast<size_t>(i * k + j)]) / static_cast<double>(t) : 0.0;
  };

  const bool detailed = k <= 20;
  // Class names shown on the axes: the labels (cut to 16 characters) when detailed, else indices.
  std::vector<std::string> names;
  if (detailed)
    for (int64_t i = 0; i < k; ++i) names.push_back(labels.empty() ? std::to_string(i) : labels[i].substr(0, 16));
  int name_w = Canvas::text_width(std::to_string(k - 1));
  for (const std::string& s : names) name_w = std::max(name_w, Canvas::text_width(s));

  char accuracy[96];
  if (total > 0) {
    std::snprintf(accuracy, sizeof accuracy, "accuracy %.4f (%lld of %lld)", static_cast<double>(correct) / total,
                  static_cast<long long>(correct), static_cast<long long>(total));
  } else {
    std::snprintf(accuracy, sizeof accuracy, "no samples");
  }
  Canvas c(760, 760);
  const int top = draw_header(c, title, std::string(accuracy) + "; shade: share of the true class", "");
  const int left = 12 + kTextHeight + 10 + name_w + 8;
  const int bottom = 8 + (detailed ? name_w : kTextHeight) + 10 + kTextHeight + 12;
  const Rect area = grid_area(left, top, c.width() - left - 24, c.height() - top - bottom, k, k);
  fill_grid(c, area, k, k, [&](int64_t i, int64_t j) { return color_map(kBlues, share(i, j)); });
  if (detailed) {
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j < k; ++j) {
        const int x0 = cell_edge(area.x0, area.x1, j, k), x1 = cell_edge(area.x0, area.x1, j + 1, k);
        const int y0 = cell_edge(area.y0, area.y1, i, k), y1 = cell_edge(area.y0, area.y1, i + 1, k);
        const long long n = counts[static_cast<size_t>(i * k + j)];
        std::string text = std::to_string(n);
        if (Canvas::text_width(text) > x1 - x0 - 2) {  // too wide for the cell: three significant digits
          char buf[32];
          std::snprintf(buf, sizeof buf, n >= 1000000 ? "%.3gM" : "%.3gk", n >= 1000000 ? n / 1e6 : n / 1e3);
          text = buf;
        }
        if (Canvas::text_width(text) > x1 - x0 - 2) continue;
        const int scale = (Canvas::text_width(text, 2) <= x1 - x0 - 8 && y1 - y0 >= 28) ? 2 : 1;
        text_centered(c, (x0 + x1) / 2, (y0 + y1) / 2 - Canvas::text_height(scale) / 2, text,
                      share(i, j) > 0.55 ? colors::kWhite : colors::kBlack, scale);
      }
  }
  c.draw_rect(area.x0 - 1, area.y0 - 1, area.x1 + 1, area.y1 + 1, colors::kBlack);
  grid_ticks(c, area, k, k, names);
  text_centered(c, (area.x0 + area.x1) / 2, area.y1 + 8 + (detailed ? name_w : kTextHeight) + 10, "predicted",
                colors::kBlack);
  c.draw_text_up(12, (area.y0 + area.y1) / 2 - Canvas::text_width("true") / 2, "true", colors::kBlack);
  c.save_png(path);
}

}  // namespace rematch::run
