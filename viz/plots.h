// The run's PNG plots, drawn on a Canvas: axes with "nice" ticks (1, 2 or 5 times a power of ten) and
// numeric labels, a title, axis labels and a legend. Every function writes its file atomically and checks
// its input (sizes, bins, cell indices), naming the plot's path in the error.
// Non-finite data never crashes a plot or bends its axes: line and histogram plots skip NaN/±Inf values
// (a line breaks at a skipped point), heatmaps clamp ±Inf to the colour scale and draw NaN cells grey, and
// each says how many values it skipped or clamped in a red note under the title.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "viz/png_canvas.h"

namespace rematch::run {

// The colour of the i-th series when it names none (the ten colours of matplotlib's "tab10", cycled).
Rgb palette_color(size_t i);

// One curve: points (xs[i], ys[i]) joined in order; xs and ys must have the same length. Curves of up to
// 60 points also mark each point with a dot.
struct Series {
  std::string name;  // its legend entry (none when empty)
  std::vector<double> xs, ys;
  std::optional<Rgb> color;  // palette_color(index) when unset
};

// A vertical dashed line at x (e.g. the clean/noisy split threshold), with a legend entry.
struct VerticalMarker {
  std::string name;
  double x = 0;
  std::optional<Rgb> color;  // black when unset
};

// Loss curves, validation rSum per epoch, ...: both axes span the finite points of all series.
void line_plot(const std::string& path, const std::string& title, const std::string& x_label,
               const std::string& y_label, const std::vector<Series>& series);

// A histogram of `values` in `bins` equal bins over their finite range, scaled as a density (count /
// (n · bin width)) so that probability densities drawn as `overlays` (e.g. the fitted mixture's weighted
// component densities) share its y axis; overlay points outside the x range are clipped. The x axis also
// takes in the markers.
void histogram_plot(const std::string& path, const std::string& title, const std::string& x_label,
                    const std::vector<double>& values, int bins, const std::vector<Series>& overlays = {},
                    const std::vector<VerticalMarker>& markers = {});

// The colour scale of a heatmap; min < max.
struct ColorRange {
  double min = 0, max = 1;
};

struct MatrixCell {
  int64_t row = 0, col = 0;
};

// A rows × cols matrix (row-major `values`) as coloured cells, row 0 at the top, with a colour bar
// (viridis) over `range` (the finite values' range when unset); values outside it take its end colours.
// `highlighted` cells (e.g. the diagonal: the given pairs) get a red outline.
void heatmap_plot(const std::string& path, const std::string& title, const std::string& x_label,
                  const std::string& y_label, const std::vector<double>& values, int64_t rows, int64_t cols,
                  std::optional<ColorRange> range = std::nullopt, const std::vector<MatrixCell>& highlighted = {});

// A k × k confusion matrix (row-major `counts` >= 0; row = true class, column = predicted class). Cells are
// shaded by their share of the row (white to dark blue); with k <= 20 each cell shows its count and the
// axes show `labels` (k names, or empty for the class indices). The note gives the accuracy and total.
void confusion_matrix_plot(const std::string& path, const std::string& title, const std::vector<int64_t>& counts,
                           int64_t k, const std::vector<std::string>& labels = {});

// The most classes a confusion matrix is drawn with: about one pixel per cell of the 760-pixel canvas's grid.
constexpr int64_t kMaxConfusionClasses = 512;

// The counts of a confusion matrix of `truth` against `predicted` (class ids in 0..num_classes-1), never larger
// than it can be drawn: all num_classes classes when there are at most kMaxConfusionClasses, else only the
// classes that occur in either list, named by their ids in `labels` (sparse class ids make num_classes far
// larger than the classes in use: a num_classes² matrix of 100,001 classes did not fit in memory). drawable is
// false, and counts empty, when even the classes in use are too many.
struct ConfusionCounts {
  bool drawable = false;
  int64_t k = 0;
  std::vector<int64_t> counts;     // k × k, row = true class
  std::vector<std::string> labels;  // empty (the indices 0..k-1) or the k class ids shown
};
ConfusionCounts confusion_counts(const std::vector<int64_t>& truth, const std::vector<int64_t>& predicted,
                                 int64_t num_classes);

}  // namespace rematch::run
