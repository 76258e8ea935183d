#include "train/run/progress.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <utility>

#include "tensor/error.h"

namespace rematch::run {
namespace {

std::string fixed(double value, int decimals) {
  if (!std::isfinite(value)) return std::isnan(value) ? "nan" : (value > 0 ? "inf" : "-inf");
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

std::string speed_text(double pairs_per_second) {
  if (!std::isfinite(pairs_per_second)) return "-- pairs/s";
  return fixed(pairs_per_second, pairs_per_second >= 100 ? 0 : 1) + " pairs/s";
}

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

const std::vector<std::string>& progress_style_names() {
  static const std::vector<std::string> names = {"auto", "bar", "plain", "none"};
  return names;
}

ProgressStyle parse_progress_style(const std::string& name) {
  if (name == "auto") return ProgressStyle::Auto;
  if (name == "bar") return ProgressStyle::Bar;
  if (name == "plain") return ProgressStyle::Plain;
  if (name == "none") return ProgressStyle::None;
  REMATCH_FAIL("progress style '", name, "' is not one of auto, bar, plain, none");
}

std::string to_string(ProgressStyle style) {
  switch (style) {
    case ProgressStyle::Auto: return "auto";
    case ProgressStyle::Bar: return "bar";
    case ProgressStyle::Plain: return "plain";
    case ProgressStyle::None: return "none";
  }
  REMATCH_FAIL("progress style ", static_cast<int>(style), " is not a ProgressStyle");
}

bool is_terminal(int fd) { return ::isatty(fd) == 1; }

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--:--";
  const long long total = std::llround(seconds);
  const long long h = total / 3600, m = total / 60 % 60, s = total % 60;
  char buf[48];
  if (h > 0) {
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", h, m, s);
  } else {
    std::snprintf(buf, sizeof buf, "%02lld:%02lld", m, s);
  }
  return buf;
}

ProgressReporter::ProgressReporter(std::ostream& out, int64_t num_epochs, ProgressOptions options)
    : out_(out), options_(std::move(options)), num_epochs_(num_epochs) {
  REMATCH_CHECK(num_epochs > 0, "ProgressReporter: num_epochs must be positive, got ", num_epochs);
  REMATCH_CHECK(options_.log_every > 0, "ProgressReporter: log_every must be positive, got ", options_.log_every);
  REMATCH_CHECK(options_.window > 0, "ProgressReporter: window must be positive, got ", options_.window);
  REMATCH_CHECK(options_.redraw_seconds >= 0, "ProgressReporter: redraw_seconds must be >= 0, got ",
                options_.redraw_seconds);
  style_ = options_.style;
  if (style_ == ProgressStyle::Auto) style_ = options_.is_tty ? ProgressStyle::Bar : ProgressStyle::Plain;
  if (!options_.clock) options_.clock = steady_seconds;
}

double ProgressReporter::now() const { return options_.clock(); }

void ProgressReporter::start_epoch(int64_t epoch, int64_t steps_in_epoch) {
  REMATCH_CHECK(epoch >= 1 && epoch <= num_epochs_, "ProgressReporter: epoch ", epoch, " is outside 1..",
                num_epochs_);
  REMATCH_CHECK(steps_in_epoch > 0, "ProgressReporter: steps_in_epoch must be positive, got ", steps_in_epoch);
  epoch_ = epoch;
  steps_in_epoch_ = steps_in_epoch;
  step_ = 0;
  in_epoch_ = true;
  epoch_seconds_ = epoch_loss_sum_ = 0;
  epoch_steps_ = epoch_pairs_ = epoch_loss_count_ = 0;
  last_mark_ = now();
}

void ProgressReporter::step(int64_t step, double loss, int64_t pairs) {
  REMATCH_CHECK(in_epoch_, "ProgressReporter: step() before start_epoch()");
  REMATCH_CHECK(step >= 1 && step <= steps_in_epoch_, "ProgressReporter: step ", step, " is outside 1..",
                steps_in_epoch_);
  REMATCH_CHECK(pairs >= 0, "ProgressReporter: pairs must be >= 0, got ", pairs);
  const double t = now();
  const double seconds = std::max(0.0, t - last_mark_);
  last_mark_ = t;
  step_ = step;
  const bool finite = std::isfinite(loss);
  window_.push_back({seconds, finite ? loss : NAN, pairs});
  while (static_cast<int64_t>(window_.size()) > options_.window) window_.pop_front();
  epoch_seconds_ += seconds;
  epoch_steps_ += 1;
  epoch_pairs_ += pairs;
  if (finite) {
    epoch_loss_sum_ += loss;
    epoch_loss_count_ += 1;
  }
  if (style_ == ProgressStyle::Bar) {
    if (bar_width_ == 0 || t - last_draw_ >= options_.redraw_seconds || step == steps_in_epoch_) {
      last_draw_ = t;
      draw_bar();
    }
  } else if (style_ == ProgressStyle::Plain && step % options_.log_every == 0) {
    out_ << status_line() << "\n" << std::flush;
  }
}

void ProgressReporter::end_epoch(const std::string& summary) {
  REMATCH_CHECK(in_epoch_, "ProgressReporter: end_epoch() before start_epoch()");
  in_epoch_ = false;
  if (style_ == ProgressStyle::None) return;
  std::string line = "epoch " + std::to_string(epoch_) + "/" + std::to_string(num_epochs_) + " done  " +
                     std::to_string(epoch_steps_) + " steps  loss " +
                     fixed(epoch_loss_count_ > 0 ? epoch_loss_sum_ / epoch_loss_count_ : NAN, 4) + "  " +
                     speed_text(epoch_seconds_ > 0 ? epoch_pairs_ / epoch_seconds_ : NAN) + "  time " +
                     format_duration(epoch_seconds_);
  if (!summary.empty()) line += "  " + summary;
  if (style_ == ProgressStyle::Bar) {
    write_over_bar(line);
  } else {
    out_ << line << "\n" << std::flush;
  }
}

void ProgressReporter::message(const std::string& line) {
  if (style_ != ProgressStyle::Bar || bar_width_ == 0) {
    out_ << line << "\n" << std::flush;
    return;
  }
  write_over_bar(line);
  if (in_epoch_ && step_ > 0) draw_bar();
}

double ProgressReporter::window_loss() const {
  double sum = 0;
  int64_t count = 0;
  for (const Sample& s : window_) {
    if (std::isnan(s.loss)) continue;
    sum += s.loss;
    count += 1;
  }
  return count > 0 ? sum / count : NAN;
}

double ProgressReporter::pairs_per_second() const {
  double seconds = 0;
  int64_t pairs = 0;
  for (const Sample& s : window_) {
    seconds += s.seconds;
    pairs += s.pairs;
  }
  return seconds > 0 ? pairs / seconds : NAN;
}

double ProgressReporter::eta_seconds() const {
  double seconds = 0;
  for (const Sample& s : window_) seconds += s.seconds;
  if (!(seconds > 0)) return NAN;
  const int64_t steps_left = (steps_in_epoch_ - step_) + steps_in_epoch_ * (num_epochs_ - epoch_);
  return static_cast<double>(steps_left) * seconds / static_cast<double>(window_.size());
}

std::string ProgressReporter::status_line() const {
  // A non-finite latest loss shows as "nan" rather than hiding in the mean, so divergence is seen at once.
  const double shown_loss = (!window_.empty() && std::isnan(window_.back().loss)) ? NAN : window_loss();
  return "epoch " + std::to_string(epoch_) + "/" + std::to_string(num_epochs_) + "  step " + std::to_string(step_) +
         "/" + std::to_string(steps_in_epoch_) + "  loss " + fixed(shown_loss, 4) + "  " +
         speed_text(pairs_per_second()) + "  ETA " + format_duration(eta_seconds());
}

void ProgressReporter::draw_bar() {
  const std::string line = status_line();
  out_ << '\r' << line;
  if (line.size() < bar_width_) out_ << std::string(bar_width_ - line.size(), ' ');
  out_ << std::flush;
  bar_width_ = line.size();
}

void ProgressReporter::write_over_bar(const std::string& line) {
  out_ << '\r' << line;
  if (line.size() < bar_width_) out_ << std::string(bar_width_ - line.size(), ' ');
  out_ << "\n" << std::flush;
  bar_width_ = 0;
}

}  // namespace rematch::run
