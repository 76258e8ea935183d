#include "train/run/interrupt.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "tensor/error.h"

namespace rematch::run {
namespace {

std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs a lock-free flag");
std::atomic<bool> g_guard_alive{false};

// The notice lives in static storage so the handler reads it without allocating.
constexpr size_t kMaxNotice = 512;
char g_notice[kMaxNotice];
size_t g_notice_len = 0;

extern "C" void on_interrupt(int sig) {
  const int saved_errno = errno;
  int expected = 0;
  g_signal.compare_exchange_strong(expected, sig);  // the first signal wins
  if (g_notice_len > 0) {
    const ssize_t written = ::write(STDERR_FILENO, g_notice, g_notice_len);
    static_cast<void>(written);  // nothing useful to do about a failed write inside a handler
  }
  errno = saved_errno;
}

void install(int sig, struct sigaction* previous) {
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  sigaddset(&action.sa_mask, SIGINT);
  sigaddset(&action.sa_mask, SIGTERM);
  // SA_RESETHAND: the handler runs once, then the default action is back, so a second signal force-quits.
  action.sa_flags = SA_RESETHAND | SA_RESTART;
  REMATCH_CHECK(::sigaction(sig, &action, previous) == 0, "InterruptGuard: cannot install the handler for ",
                strsignal(sig), ": ", std::strerror(errno));
}

}  // namespace

bool interrupted() { return g_signal.load() != 0; }

int interrupt_signal() { return g_signal.load(); }

bool interrupt_guard_active() { return g_guard_alive.load(); }

InterruptGuard::InterruptGuard(const std::string& notice) {
  REMATCH_CHECK(notice.size() < kMaxNotice, "InterruptGuard: the notice is ", notice.size(),
                " bytes, at most ", kMaxNotice - 1, " are allowed");
  REMATCH_CHECK(!g_guard_alive.exchange(true), "InterruptGuard: another guard is already installed");
  std::memcpy(g_notice, notice.data(), notice.size());
  g_notice_len = notice.size();
  g_signal.store(0);
  try {
    install(SIGINT, &previous_int_);
  } catch (...) {
    g_guard_alive.store(false);
    throw;
  }
  try {
    install(SIGTERM, &previous_term_);
  } catch (...) {
    ::sigaction(SIGINT, &previous_int_, nullptr);
    g_guard_alive.store(false);
    throw;
  }
}

InterruptGuard::~InterruptGuard() {
  ::sigaction(SIGINT, &previous_int_, nullptr);
  ::sigaction(SIGTERM, &previous_term_, nullptr);
  g_notice_len = 0;
  g_guard_alive.store(false);
}

}  // namespace rematch::run
