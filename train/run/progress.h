// Progress of a long run on one output stream (normally stderr):
//   - bar:   one line rewritten in place with '\r' on a terminal,
//              epoch 3/10  step 120/884  loss 0.4312  1520 pairs/s  ETA 02:14
//            redrawn at most every `redraw_seconds` (and always on an epoch's last step);
//   - plain: the same line as a log line every `log_every` steps, for files and pipes;
//   - none:  no step or epoch lines;
//   - auto:  bar when the stream is a terminal, plain otherwise.
// Every style except none ends an epoch with a summary line
//     epoch 3/10 done  884 steps  loss 0.4312  1520 pairs/s  time 09:41  <caller's summary>
// Loss, speed and ETA in the step line come from a moving window of the last `window` steps: loss is their
// mean, speed their pairs over their seconds, and ETA = (steps left in this epoch + steps_in_epoch × epochs
// left) × (window seconds / window steps). The window spans epoch boundaries; the time between epochs
// (evaluation, checkpoints) is not counted, since a step's time runs from the previous step() or
// start_epoch(). The summary's loss and speed cover the whole epoch.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace rematch::run {

enum class ProgressStyle { Auto, Bar, Plain, None };

// "auto", "bar", "plain", "none" (the values of --progress).
const std::vector<std::string>& progress_style_names();
ProgressStyle parse_progress_style(const std::string& name);  // error names the value and the choices
std::string to_string(ProgressStyle style);

// isatty(fd), for ProgressOptions::is_tty (e.g. is_terminal(STDERR_FILENO)).
bool is_terminal(int fd);

// "mm:ss" below an hour, "h:mm:ss" from one hour on, "--:--" for a negative or non-finite value.
std::string format_duration(double seconds);

struct ProgressOptions {
  ProgressStyle style = ProgressStyle::Auto;
  bool is_tty = false;          // whether the stream is a terminal: decides auto
  int64_t log_every = 50;       // plain: a line every this many steps (> 0)
  int64_t window = 20;          // steps in the moving window (> 0)
  double redraw_seconds = 0.1;  // bar: the least time between redraws
  std::function<double()> clock;  // seconds on a monotonic clock; empty: std::chrono::steady_clock
};

class ProgressReporter {
 public:
  // num_epochs > 0; the options are checked (log_every, window > 0; redraw_seconds >= 0).
  ProgressReporter(std::ostream& out, int64_t num_epochs, ProgressOptions options = {});

  // The style in use: auto resolved against is_tty.
  ProgressStyle style() const { return style_; }

  // Epochs count from 1 to num_epochs; steps_in_epoch > 0.
  void start_epoch(int64_t epoch, int64_t steps_in_epoch);
  // Step `step` (1..steps_in_epoch; a resumed epoch may start past 1) is done, with its loss and the pairs
  // it trained on. A non-finite loss is left out of the means; while the latest loss is not finite the step
  // line shows "loss nan".
  void step(int64_t step, double loss, int64_t pairs);
  // Ends the epoch: finishes the bar line and prints the summary line with `summary` appended.
  void end_epoch(const std::string& summary = "");
  // A line of its own (a checkpoint saved, an evaluation result) in every style, none included; the bar is
  // cleared first and redrawn after.
  void message(const std::string& line);

  // The window's numbers: mean finite loss (NaN when none), pairs per second and ETA in seconds (NaN until
  // a step has taken measurable time).
  double window_loss() const;
  double pairs_per_second() const;
  double eta_seconds() const;
  // The step line as it would be printed now.
  std::string status_line() const;

 private:
  struct Sample {
    double seconds;
    double loss;  // NaN when the step's loss was not finite
    int64_t pairs;
  };
  double now() const;
  void draw_bar();
  void write_over_bar(const std::string& line);  // '\r' + line + blanks over what the bar had left

  std::ostream& out_;
  ProgressOptions options_;
  ProgressStyle style_;
  int64_t num_epochs_;
  int64_t epoch_ = 0, steps_in_epoch_ = 0, step_ = 0;
  bool in_epoch_ = false;
  double last_mark_ = 0;   // when the last step ended (or the epoch started)
  double last_draw_ = 0;   // bar: when it was last drawn
  size_t bar_width_ = 0;   // bar: characters on the line now (0: no bar showing)
  std::deque<Sample> window_;  // the last `window` steps, oldest first
  double epoch_seconds_ = 0, epoch_loss_sum_ = 0;
  int64_t epoch_steps_ = 0, epoch_pairs_ = 0, epoch_loss_count_ = 0;
};

}  // namespace rematch::run
