#include "viz/plots.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "tensor/error.h"
#include "viz/plot_drawing.h"

namespace rematch::run {

using namespace plot_detail;

namespace {

constexpr Rgb kNanColor{160, 160, 160};

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
  const std::string note =
      join_notes({n == 0 ? "no finite values" : "", count_note(skipped, "non-finite values skipped"),
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
  REMATCH_CHECK(k >= 1 && k <= kMaxConfusionClasses, "confusion_matrix_plot '", path, "': k must lie in 1..",
                kMaxConfusionClasses, " (what the grid can draw), got ", k);
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

ConfusionCounts confusion_counts(const std::vector<int64_t>& truth, const std::vector<int64_t>& predicted,
                                 int64_t num_classes) {
  REMATCH_CHECK(truth.size() == predicted.size(), "confusion_counts: ", truth.size(), " true and ", predicted.size(),
                " predicted classes");
  std::vector<int64_t> shown;  // the class ids drawn, ascending
  if (num_classes <= kMaxConfusionClasses) {
    for (int64_t c = 0; c < num_classes; ++c) shown.push_back(c);
  } else {
    shown = truth;
    shown.insert(shown.end(), predicted.begin(), predicted.end());
    std::sort(shown.begin(), shown.end());
    shown.erase(std::unique(shown.begin(), shown.end()), shown.end());
  }
  ConfusionCounts out;
  out.k = static_cast<int64_t>(shown.size());
  if (out.k < 1 || out.k > kMaxConfusionClasses) return out;
  out.drawable = true;
  auto index = [&](int64_t c) {
    const auto it = std::lower_bound(shown.begin(), shown.end(), c);
    REMATCH_CHECK(it != shown.end() && *it == c, "confusion_counts: class ", c, " is outside 0..", num_classes - 1);
    return static_cast<size_t>(it - shown.begin());
  };
  out.counts.assign(static_cast<size_t>(out.k * out.k), 0);
  for (size_t i = 0; i < truth.size(); ++i)
    out.counts[index(truth[i]) * static_cast<size_t>(out.k) + index(predicted[i])] += 1;
  if (num_classes > kMaxConfusionClasses)
    for (int64_t c : shown) out.labels.push_back(std::to_string(c));
  return out;
}

}  // namespace rematch::run
