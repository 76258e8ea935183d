// SIGINT/SIGTERM under an InterruptGuard: the flag, the force-quit on a second signal, the notice, and the
// handlers restored afterwards.
#include "train/run/interrupt.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>

#include "test_util.h"

namespace rematch::run {
namespace {

void (*handler_of(int sig))(int) {
  struct sigaction current {};
  sigaction(sig, nullptr, &current);
  return current.sa_handler;
}

volatile std::sig_atomic_t g_custom_calls = 0;
extern "C" void custom_handler(int) { g_custom_calls = g_custom_calls + 1; }

TEST(InterruptTest, SigintSetsTheFlag) {
  InterruptGuard guard;
  EXPECT_FALSE(interrupted());
  EXPECT_EQ(interrupt_signal(), 0);
  std::raise(SIGINT);
  EXPECT_TRUE(interrupted());
  EXPECT_EQ(interrupt_signal(), SIGINT);
}

TEST(InterruptTest, SigtermSetsTheFlagAndTheFirstSignalWins) {
  InterruptGuard guard;
  std::raise(SIGTERM);
  EXPECT_TRUE(interrupted());
  EXPECT_EQ(interrupt_signal(), SIGTERM);
  std::raise(SIGINT);  // SIGINT's own first delivery: still handled, the flag keeps SIGTERM
  EXPECT_EQ(interrupt_signal(), SIGTERM);
}

TEST(InterruptTest, ANewGuardClearsTheFlag) {
  {
    InterruptGuard guard;
    std::raise(SIGINT);
  }
  EXPECT_TRUE(interrupted());  // still visible after the guard is gone
  InterruptGuard guard;
  EXPECT_FALSE(interrupted());
}

TEST(InterruptTest, TheFirstSignalPutsTheDefaultActionBack) {
  InterruptGuard guard;
  EXPECT_NE(handler_of(SIGINT), SIG_DFL);
  std::raise(SIGINT);
  EXPECT_EQ(handler_of(SIGINT), SIG_DFL);  // a second Ctrl-C would now end the process
  EXPECT_NE(handler_of(SIGTERM), SIG_DFL);
}

TEST(InterruptDeathTest, ASecondCtrlCForceQuits) {
  EXPECT_EXIT(
      {
        InterruptGuard guard;
        std::raise(SIGINT);
        if (!interrupted()) std::_Exit(3);
        std::raise(SIGINT);
        std::_Exit(0);
      },
      ::testing::KilledBySignal(SIGINT), "");
}

TEST(InterruptTest, TheGuardRestoresThePreviousHandlers) {
  struct sigaction custom {}, saved_int {}, saved_term {};
  g_custom_calls = 0;
  custom.sa_handler = custom_handler;
  sigemptyset(&custom.sa_mask);
  ASSERT_EQ(sigaction(SIGINT, &custom, &saved_int), 0);
  ASSERT_EQ(sigaction(SIGTERM, &custom, &saved_term), 0);
  {
    InterruptGuard guard;
    EXPECT_NE(handler_of(SIGINT), custom_handler);
    std::raise(SIGINT);
  }
  EXPECT_EQ(handler_of(SIGINT), custom_handler);
  EXPECT_EQ(handler_of(SIGTERM), custom_handler);
  EXPECT_EQ(g_custom_calls, 0);
  std::raise(SIGTERM);
  EXPECT_EQ(g_custom_calls, 1);
  sigaction(SIGINT, &saved_int, nullptr);
  sigaction(SIGTERM, &saved_term, nullptr);
}

TEST(InterruptTest, TheHandlerWritesTheNotice) {
  ::testing::internal::CaptureStderr();
  {
    InterruptGuard guard("interrupted: saving a checkpoint\n");
    std::raise(SIGINT);
  }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "interrupted: saving a checkpoint\n");
}

TEST(InterruptTest, OneGuardAtATime) {
  InterruptGuard guard;
  EXPECT_THROWS_WITH(InterruptGuard second, "another guard is already installed");
  EXPECT_THROWS_WITH(InterruptGuard(std::string(600, 'x')), "the notice is 600 bytes");
}

}  // namespace
}  // namespace rematch::run
