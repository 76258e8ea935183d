// The run's plots: each writes a PNG of the expected size, draws its data where it should, says in a red
// note what non-finite input it skipped or clamped, and refuses bad input without writing a file.
#include "viz/plots.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "png_test_util.h"
#include "test_util.h"

namespace rematch::run {
namespace {
namespace fs = std::filesystem;

int64_t count_color(const test::PngImage& img, Rgb color, int y0 = 0, int y1 = -1) {
  int64_t n = 0;
  for (int y = y0; y < (y1 < 0 ? img.height : y1); ++y)
    for (int x = 0; x < img.width; ++x) n += img.at(x, y) == color;
  return n;
}

// The red note sits under the title: rows 34..40 (with no note the plot area starts at row 40).
bool has_note(const test::PngImage& img) { return count_color(img, colors::kRed, 0, 40) > 0; }

Series ramp(const std::string& name, int n, double slope) {
  Series s{name, {}, {}, {}};
  for (int i = 0; i < n; ++i) {
    s.xs.push_back(i);
    s.ys.push_back(slope * i);
  }
  return s;
}

class PlotsTest : public test::TempDirTest {};

TEST_F(PlotsTest, LinePlotDrawsEachSeriesInItsColour) {
  Series a = ramp("train loss", 100, -0.01), b = ramp("val rsum", 10, 0.05);
  b.color = Rgb{0, 200, 0};
  line_plot(path("loss.png"), "Loss", "step", "loss", {a, b});
  const test::PngImage img = test::read_png(path("loss.png"));
  ASSERT_EQ(img.width, 900);
  ASSERT_EQ(img.height, 560);
  EXPECT_GT(count_color(img, palette_color(0)), 300);  // the 100-point ramp as a 2-pixel line
  EXPECT_GT(count_color(img, Rgb{0, 200, 0}), 100);
  EXPECT_FALSE(has_note(img));
  EXPECT_EQ(test::entries_of(dir_), (std::vector<std::string>{"loss.png"}));
}

TEST_F(PlotsTest, LinePlotSkipsNonFiniteValuesAndSaysSo) {
  Series s = ramp("loss", 50, 1.0);
  s.ys[10] = NAN;
  s.ys[20] = INFINITY;
  s.xs[30] = -INFINITY;
  line_plot(path("nan.png"), "Loss", "step", "loss", {s});
  const test::PngImage img = test::read_png(path("nan.png"));
  ASSERT_EQ(img.width, 900);
  EXPECT_TRUE(has_note(img));
  EXPECT_GT(count_color(img, palette_color(0)), 100);
  // Only non-finite data, no series at all, or one point: still a plot.
  line_plot(path("all_nan.png"), "Loss", "step", "loss", {{"x", {NAN, 1.0}, {1.0, NAN}, {}}});
  EXPECT_TRUE(has_note(test::read_png(path("all_nan.png"))));
  line_plot(path("empty.png"), "Nothing", "x", "y", {});
  line_plot(path("one.png"), "One point", "x", "y", {{"p", {3.0}, {7.0}, {}}});
  EXPECT_GT(count_color(test::read_png(path("one.png")), palette_color(0)), 10);
  line_plot(path("huge.png"), "Huge", "x", "y", {{"p", {0, 1, 2}, {-1e308, 0, 1e308}, {}}});
  EXPECT_EQ(test::read_png(path("huge.png")).width, 900);
}

TEST_F(PlotsTest, LinePlotChecksSeriesLengths) {
  EXPECT_THROWS_WITH(line_plot(path("bad.png"), "t", "x", "y", {{"val", {1, 2, 3}, {1, 2}, {}}}), path("bad.png"),
                     "series 0 ('val') has 3 x values and 2 y values");
  EXPECT_FALSE(fs::exists(path("bad.png")));
}

TEST_F(PlotsTest, HistogramWithOverlaysAndMarker) {
  std::vector<double> losses;
  for (int i = 0; i < 900; ++i) losses.push_back(0.1 + 0.2 * (i % 100) / 100.0);
  for (int i = 0; i < 100; ++i) losses.push_back(1.0 + 0.5 * (i % 10) / 10.0);
  Series clean{"clean", {}, {}, Rgb{255, 0, 255}};
  for (int i = 0; i <= 100; ++i) {
    clean.xs.push_back(1.6 * i / 100);
    clean.ys.push_back(4.5 * std::exp(-std::pow((clean.xs.back() - 0.2) / 0.1, 2)));
  }
  const Rgb marker_color{0, 0, 255};
  histogram_plot(path("hist.png"), "Per-sample loss", "loss", losses, 40, {clean},
                 {{"threshold", 0.6, marker_color}});
  const test::PngImage img = test::read_png(path("hist.png"));
  ASSERT_EQ(img.width, 900);
  ASSERT_EQ(img.height, 560);
  EXPECT_GT(count_color(img, Rgb{158, 202, 225}), 5000);  // the bars
  EXPECT_GT(count_color(img, Rgb{255, 0, 255}), 100);     // the overlay curve
  // The dashed marker: a column of the marker colour, broken by gaps.
  int best_column = 0;
  int64_t best = 0;
  for (int x = 0; x < img.width; ++x) {
    int64_t n = 0;
    for (int y = 60; y < img.height; ++y) n += img.at(x, y) == marker_color;
    if (n > best) best = n, best_column = x;
  }
  EXPECT_GT(best, 200) << "column " << best_column;
  EXPECT_LT(best, 480);
  EXPECT_FALSE(has_note(img));
}

TEST_F(PlotsTest, HistogramSkipsNonFiniteInput) {
  histogram_plot(path("h.png"), "Loss", "loss", {0.1, NAN, 0.2, INFINITY, 0.3}, 5, {{"c", {0, NAN}, {1, 1}, {}}},
                 {{"t", NAN, {}}});
  EXPECT_TRUE(has_note(test::read_png(path("h.png"))));
  histogram_plot(path("all_nan.png"), "Loss", "loss", {NAN, NAN}, 10);
  EXPECT_TRUE(has_note(test::read_png(path("all_nan.png"))));
  histogram_plot(path("constant.png"), "Loss", "loss", {2.0, 2.0, 2.0}, 10);
  EXPECT_EQ(test::read_png(path("constant.png")).width, 900);
  histogram_plot(path("empty.png"), "Loss", "loss", {}, 10);
  EXPECT_TRUE(fs::exists(path("empty.png")));
}

TEST_F(PlotsTest, HistogramChecksItsInput) {
  EXPECT_THROWS_WITH(histogram_plot(path("h.png"), "t", "x", {1.0}, 0), path("h.png"), "bins must be in 1..10000");
  EXPECT_THROWS_WITH(histogram_plot(path("h.png"), "t", "x", {1.0}, 4, {{"c", {1}, {}, {}}}), "series 0 ('c')");
  EXPECT_FALSE(fs::exists(path("h.png")));
}

TEST_F(PlotsTest, HeatmapColoursCellsAndOutlinesTheHighlighted) {
  const int64_t n = 8;
  std::vector<double> plan(n * n, 0.0);
  std::vector<MatrixCell> diagonal;
  for (int64_t i = 0; i < n; ++i) {
    plan[i * n + i] = 1.0 / n;
    diagonal.push_back({i, i});
  }
  heatmap_plot(path("plan.png"), "Transport plan", "text", "image", plan, n, n, ColorRange{0, 1.0 / n}, diagonal);
  const test::PngImage img = test::read_png(path("plan.png"));
  ASSERT_EQ(img.width, 820);
  ASSERT_EQ(img.height, 720);
  EXPECT_GT(count_color(img, Rgb{68, 1, 84}), 100000);      // zeros: the low end of viridis
  EXPECT_GT(count_color(img, Rgb{253, 231, 37}), 8 * 1000);  // the diagonal: the high end
  EXPECT_GT(count_color(img, colors::kRed), 8 * 100);        // outlines
  EXPECT_FALSE(has_note(img));
}

TEST_F(PlotsTest, HeatmapClampsInfinitiesAndGreysNans) {
  heatmap_plot(path("h.png"), "Plan", "j", "i", {0.0, 0.5, INFINITY, NAN, -INFINITY, 1.0}, 2, 3);
  const test::PngImage img = test::read_png(path("h.png"));
  EXPECT_TRUE(has_note(img));
  EXPECT_GT(count_color(img, Rgb{160, 160, 160}), 1000);  // the NaN cell
  // A big matrix shares pixels between cells; only NaN: the default scale.
  heatmap_plot(path("big.png"), "Big", "j", "i", std::vector<double>(1000 * 700, 0.5), 1000, 700);
  EXPECT_EQ(test::read_png(path("big.png")).width, 820);
  heatmap_plot(path("nan.png"), "NaN", "j", "i", {NAN, NAN}, 1, 2);
  EXPECT_TRUE(has_note(test::read_png(path("nan.png"))));
}

TEST_F(PlotsTest, HeatmapChecksItsInput) {
  EXPECT_THROWS_WITH(heatmap_plot(path("h.png"), "t", "x", "y", {1, 2, 3}, 2, 2), path("h.png"),
                     "3 values for a 2x2 matrix");
  EXPECT_THROWS_WITH(heatmap_plot(path("h.png"), "t", "x", "y", {1}, 0, 1), "must have rows and columns");
  EXPECT_THROWS_WITH(heatmap_plot(path("h.png"), "t", "x", "y", {1, 2}, 1, 2, std::nullopt, {{1, 0}}),
                     "highlighted cell (1, 0) is outside the 1x2 matrix");
  EXPECT_THROWS_WITH(heatmap_plot(path("h.png"), "t", "x", "y", {1, 2}, 1, 2, ColorRange{1, 1}),
                     "colour range [1, 1]");
  EXPECT_FALSE(fs::exists(path("h.png")));
}

TEST_F(PlotsTest, ConfusionMatrixShadesByRowShare) {
  // Class 0 always right, class 1 always taken for class 2, class 2 half right.
  const std::vector<int64_t> counts = {10, 0, 0, 0, 0, 7, 0, 3, 3};
  confusion_matrix_plot(path("cm.png"), "Confusion", counts, 3, {"cat", "dog", "bird"});
  const test::PngImage img = test::read_png(path("cm.png"));
  ASSERT_EQ(img.width, 760);
  ASSERT_EQ(img.height, 760);
  const Rgb full{8, 48, 107}, empty{247, 251, 255};
  EXPECT_GT(count_color(img, full), 2 * 10000);  // cells (0, 0) and (1, 2)
  EXPECT_GT(count_color(img, empty), 4 * 10000);
  // Many classes: shading only, index labels.
  std::vector<int64_t> many(50 * 50, 1);
  confusion_matrix_plot(path("cm50.png"), "Confusion", many, 50);
  EXPECT_EQ(test::read_png(path("cm50.png")).width, 760);
  confusion_matrix_plot(path("zero.png"), "Confusion", std::vector<int64_t>(4, 0), 2);
  EXPECT_TRUE(fs::exists(path("zero.png")));
}

TEST_F(PlotsTest, ConfusionMatrixChecksItsInput) {
  EXPECT_THROWS_WITH(confusion_matrix_plot(path("c.png"), "t", {1, 2, 3}, 2), path("c.png"), "3 counts for a 2x2");
  EXPECT_THROWS_WITH(confusion_matrix_plot(path("c.png"), "t", {1, 2, 3, -4}, 2), "count (1, 1) is negative");
  EXPECT_THROWS_WITH(confusion_matrix_plot(path("c.png"), "t", {1, 2, 3, 4}, 2, {"a"}), "1 labels for 2 classes");
  EXPECT_FALSE(fs::exists(path("c.png")));
}

TEST_F(PlotsTest, PaletteCycles) {
  EXPECT_EQ(palette_color(0), palette_color(10));
  EXPECT_NE(palette_color(0), palette_color(1));
}

}  // namespace
}  // namespace rematch::run
