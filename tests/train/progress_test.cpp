// The progress line and log lines of a run: their format, the moving-window speed and ETA, the bar's
// in-place redraws, and the style option.
#include "train/run/progress.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "test_util.h"

namespace rematch::run {
namespace {

// A reporter on a string stream with a clock the test moves by hand.
struct Harness {
  explicit Harness(ProgressOptions options, int64_t epochs = 10) {
    options.clock = [this] { return now; };
    reporter = std::make_unique<ProgressReporter>(out, epochs, options);
  }
  // Steps first..last, each taking `seconds` and training `pairs` pairs.
  void steps(int64_t first, int64_t last, double seconds, double loss = 0.4312, int64_t pairs = 128) {
    for (int64_t s = first; s <= last; ++s) {
      now += seconds;
      reporter->step(s, loss, pairs);
    }
  }
  double now = 1000;
  std::ostringstream out;
  std::unique_ptr<ProgressReporter> reporter;
};

ProgressOptions plain(int64_t log_every = 20, int64_t window = 20) {
  ProgressOptions o;
  o.style = ProgressStyle::Plain;
  o.log_every = log_every;
  o.window = window;
  return o;
}

TEST(ProgressTest, FormatDuration) {
  EXPECT_EQ(format_duration(0), "00:00");
  EXPECT_EQ(format_duration(134), "02:14");
  EXPECT_EQ(format_duration(134.4), "02:14");
  EXPECT_EQ(format_duration(3599.4), "59:59");
  EXPECT_EQ(format_duration(3600), "1:00:00");
  EXPECT_EQ(format_duration(3723), "1:02:03");
  EXPECT_EQ(format_duration(100 * 3600.0), "100:00:00");
  EXPECT_EQ(format_duration(NAN), "--:--");
  EXPECT_EQ(format_duration(INFINITY), "--:--");
  EXPECT_EQ(format_duration(-1), "--:--");
}

TEST(ProgressTest, StyleNames) {
  for (const std::string& name : progress_style_names()) EXPECT_EQ(to_string(parse_progress_style(name)), name);
  EXPECT_EQ(parse_progress_style("bar"), ProgressStyle::Bar);
  EXPECT_THROWS_WITH(parse_progress_style("fancy"), "'fancy'", "auto, bar, plain, none");
}

TEST(ProgressTest, AutoPicksBarOnATerminalAndPlainOtherwise) {
  std::ostringstream out;
  ProgressOptions o;
  o.is_tty = true;
  EXPECT_EQ(ProgressReporter(out, 1, o).style(), ProgressStyle::Bar);
  o.is_tty = false;
  EXPECT_EQ(ProgressReporter(out, 1, o).style(), ProgressStyle::Plain);
  o.style = ProgressStyle::Bar;  // an explicit style wins
  EXPECT_EQ(ProgressReporter(out, 1, o).style(), ProgressStyle::Bar);
}

TEST(ProgressTest, PlainLineFormatAndEta) {
  Harness h(plain());
  h.reporter->start_epoch(3, 884);
  h.steps(101, 120, 0.5);  // a resumed epoch: steps start past 1
  // 128 pairs every 0.5 s; (884 - 120) + 884 · 7 steps left at 0.5 s each = 3476 s.
  EXPECT_EQ(h.out.str(), "epoch 3/10  step 120/884  loss 0.4312  256 pairs/s  ETA 57:56\n");
  EXPECT_DOUBLE_EQ(h.reporter->eta_seconds(), 3476);
  EXPECT_DOUBLE_EQ(h.reporter->pairs_per_second(), 256);
  EXPECT_DOUBLE_EQ(h.reporter->window_loss(), 0.4312);
}

TEST(ProgressTest, PlainLinesEveryNStepsAndAnEpochSummary) {
  Harness h(plain(4), 2);
  h.reporter->start_epoch(1, 10);
  h.steps(1, 10, 1.0, 2.0, 10);
  h.reporter->end_epoch("rsum 412.3");
  std::istringstream lines(h.out.str());
  std::vector<std::string> got;
  for (std::string line; std::getline(lines, line);) got.push_back(line);
  ASSERT_EQ(got.size(), 3u) << h.out.str();
  EXPECT_EQ(got[0], "epoch 1/2  step 4/10  loss 2.0000  10.0 pairs/s  ETA 00:16");
  EXPECT_EQ(got[1], "epoch 1/2  step 8/10  loss 2.0000  10.0 pairs/s  ETA 00:12");
  EXPECT_EQ(got[2], "epoch 1/2 done  10 steps  loss 2.0000  10.0 pairs/s  time 00:10  rsum 412.3");
  EXPECT_EQ(h.out.str().find('\r'), std::string::npos);
}

TEST(ProgressTest, EtaFollowsTheMovingWindow) {
  Harness h(plain(1000, 2), 1);
  h.reporter->start_epoch(1, 100);
  h.steps(1, 10, 1.0);
  EXPECT_DOUBLE_EQ(h.reporter->eta_seconds(), 90 * 1.0);
  h.steps(11, 11, 3.0);  // the window holds one 1 s step and one 3 s step
  EXPECT_DOUBLE_EQ(h.reporter->eta_seconds(), 89 * 2.0);
  EXPECT_DOUBLE_EQ(h.reporter->pairs_per_second(), 256 / 4.0);
  h.steps(12, 12, 3.0);  // now only 3 s steps
  EXPECT_DOUBLE_EQ(h.reporter->eta_seconds(), 88 * 3.0);
}

TEST(ProgressTest, TimeBetweenEpochsIsNotAStep) {
  Harness h(plain(1000, 5), 3);
  h.reporter->start_epoch(1, 4);
  h.steps(1, 4, 2.0);
  h.reporter->end_epoch();
  h.now += 500;  // evaluation and checkpointing
  h.reporter->start_epoch(2, 4);
  h.steps(1, 1, 2.0);
  // The window spans the epochs, every step 2 s; 3 steps left here + 4 in epoch 3.
  EXPECT_DOUBLE_EQ(h.reporter->eta_seconds(), 7 * 2.0);
}

TEST(ProgressTest, NoTimingYetShowsPlaceholders) {
  Harness h(plain());
  h.reporter->start_epoch(1, 10);
  h.steps(1, 1, 0.0);
  EXPECT_TRUE(std::isnan(h.reporter->eta_seconds()));
  EXPECT_EQ(h.reporter->status_line(), "epoch 1/10  step 1/10  loss 0.4312  -- pairs/s  ETA --:--");
}

TEST(ProgressTest, NonFiniteLossShowsAsNanAndStaysOutOfTheMeans) {
  Harness h(plain(1000, 3), 1);
  h.reporter->start_epoch(1, 10);
  h.steps(1, 1, 1.0, 1.0);
  h.steps(2, 2, 1.0, NAN);
  EXPECT_NE(h.reporter->status_line().find("loss nan"), std::string::npos) << h.reporter->status_line();
  EXPECT_DOUBLE_EQ(h.reporter->window_loss(), 1.0);
  h.steps(3, 3, 1.0, 3.0);
  EXPECT_DOUBLE_EQ(h.reporter->window_loss(), 2.0);
  h.reporter->end_epoch();
  EXPECT_NE(h.out.str().find("done  3 steps  loss 2.0000"), std::string::npos) << h.out.str();
}

TEST(ProgressTest, BarRewritesOneLine) {
  ProgressOptions o;
  o.is_tty = true;
  o.redraw_seconds = 1.0;
  Harness h(o, 1);
  h.reporter->start_epoch(1, 6);
  h.steps(1, 6, 0.5);
  const std::string bar = h.out.str();
  EXPECT_EQ(bar.find('\n'), std::string::npos) << bar;
  // Drawn at step 1, then once a second (steps 3 and 5), and always at the last step.
  EXPECT_EQ(std::count(bar.begin(), bar.end(), '\r'), 4) << bar;
  EXPECT_EQ(bar.substr(bar.rfind('\r')), "\repoch 1/1  step 6/6  loss 0.4312  256 pairs/s  ETA 00:00");
  h.reporter->end_epoch();
  EXPECT_EQ(h.out.str().substr(bar.size()), "\repoch 1/1 done  6 steps  loss 0.4312  256 pairs/s  time 00:03\n");
}

TEST(ProgressTest, BarMessagesClearTheLineAndRedrawIt) {
  ProgressOptions o;
  o.style = ProgressStyle::Bar;
  Harness h(o, 1);
  h.reporter->start_epoch(1, 10);
  h.steps(1, 1, 1.0);
  const std::string line = h.reporter->status_line();
  h.reporter->message("saved");
  EXPECT_EQ(h.out.str(), "\r" + line + "\rsaved" + std::string(line.size() - 5, ' ') + "\n\r" + line);
}

TEST(ProgressTest, NoneIsSilentExceptForMessages) {
  ProgressOptions o;
  o.style = ProgressStyle::None;
  Harness h(o, 1);
  h.reporter->start_epoch(1, 100);
  h.steps(1, 100, 0.1);
  h.reporter->end_epoch("rsum 1");
  EXPECT_EQ(h.out.str(), "");
  h.reporter->message("best checkpoint saved");
  EXPECT_EQ(h.out.str(), "best checkpoint saved\n");
}

TEST(ProgressTest, BadUseIsAnError) {
  std::ostringstream out;
  EXPECT_THROWS_WITH(ProgressReporter(out, 0), "num_epochs must be positive");
  ProgressOptions o;
  o.log_every = 0;
  EXPECT_THROWS_WITH(ProgressReporter(out, 1, o), "log_every must be positive");
  ProgressReporter r(out, 2, plain());
  EXPECT_THROWS_WITH(r.step(1, 0.0, 1), "before start_epoch");
  EXPECT_THROWS_WITH(r.start_epoch(3, 10), "epoch 3 is outside 1..2");
  r.start_epoch(1, 10);
  EXPECT_THROWS_WITH(r.step(11, 0.0, 1), "step 11 is outside 1..10");
  EXPECT_THROWS_WITH(r.step(1, 0.0, -1), "pairs must be >= 0");
}

}  // namespace
}  // namespace rematch::run
