#include "viz/plot_drawing.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "tensor/error.h"

namespace rematch::run::plot_detail {
namespace {

constexpr int kTitleScale = 2;
constexpr Rgb kGridColor{236, 236, 236};
constexpr int kMaxDottedPoints = 60;

// Integer ticks 0, step, 2·step, ... below n, with step 1, 2 or 5 times a power of ten.
std::vector<int64_t> index_ticks(int64_t n, int target) {
  const int64_t step = n <= target ? 1 : static_cast<int64_t>(std::llround(nice_step(static_cast<double>(n), target)));
  std::vector<int64_t> ticks;
  for (int64_t i = 0; i < n; i += std::max<int64_t>(step, 1)) ticks.push_back(i);
  return ticks;
}

}  // namespace

// ---- numbers on axes -------------------------------------------------------------------------------------

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

// ---- the parts of a plot ---------------------------------------------------------------------------------

void text_centered(Canvas& c, int cx, int y, const std::string& text, Rgb color, int scale) {
  c.draw_text(cx - Canvas::text_width(text, scale) / 2, y, text, color, scale);
}

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

// ---- cell grids ------------------------------------------------------------------------------------------

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

int cell_edge(int p0, int p1, int64_t i, int64_t n) { return p0 + static_cast<int>(i * (p1 - p0) / n); }

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

}  // namespace rematch::run::plot_detail
