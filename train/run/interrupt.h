// Graceful interruption of a long run: while an InterruptGuard lives, SIGINT and SIGTERM only set a flag
// that the training loop polls (interrupted()) between steps, so it can finish the step, save a checkpoint
// and exit cleanly. The handler is installed with SA_RESETHAND: the first signal of a kind sets the flag
// and puts that signal back to its default action, so a second Ctrl-C (or a second SIGTERM) force-quits
// at once. Destroying the guard restores the handlers that were there before it.
#pragma once

#include <csignal>
#include <string>

namespace rematch::run {

// True once SIGINT or SIGTERM arrived under the current (or the last) guard.
bool interrupted();

// The signal that set the flag (SIGINT or SIGTERM), or 0.
int interrupt_signal();

// True while an InterruptGuard lives.
bool interrupt_guard_active();

// Installs the handlers and clears the flag; at most one guard may live at a time (a second one is an
// error). `notice`, when not empty, is written to stderr by the handler itself (with write(2), which is
// async-signal-safe) the moment the first signal arrives, e.g. "interrupted: finishing the step and saving
// a checkpoint; press Ctrl-C again to quit now".
class InterruptGuard {
 public:
  explicit InterruptGuard(const std::string& notice = "");
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  struct sigaction previous_int_ {};
  struct sigaction previous_term_ {};
};

}  // namespace rematch::run
