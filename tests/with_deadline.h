// Runs a piece of a test in a forked child with a deadline, for the inputs that could make a reader block
// forever (a FIFO where a file is read): a hang then fails the test after a few seconds instead of stopping
// the whole suite. The child's rematch::Error message comes back through a pipe.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <exception>
#include <functional>
#include <string>
#include <thread>

namespace rematch::test {

struct ChildOutcome {
  bool finished = false;  // false: still running at the deadline (then killed)
  bool threw = false;     // ended by an exception, whose what() is `message`
  std::string message;
};

inline ChildOutcome run_with_deadline(const std::function<void()>& body, double seconds = 20) {
  int fds[2];
  if (::pipe(fds) != 0) return {false, false, "pipe() failed"};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    std::string said = "ok";
    int code = 0;
    try {
      body();
    } catch (const std::exception& e) {
      said = e.what();
      code = 1;
    }
    const char* p = said.data();
    size_t left = said.size();
    while (left > 0) {
      const ssize_t w = ::write(fds[1], p, left);
      if (w <= 0) break;
      p += w;
      left -= static_cast<size_t>(w);
    }
    ::_exit(code);  // no atexit handlers, no gtest teardown in the child
  }
  ::close(fds[1]);
  ChildOutcome out;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  int status = 0;
  while (true) {
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      out.finished = true;
      break;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  char buf[4096];
  for (ssize_t r; (r = ::read(fds[0], buf, sizeof buf)) > 0;) out.message.append(buf, static_cast<size_t>(r));
  ::close(fds[0]);
  out.threw = out.finished && WIFEXITED(status) && WEXITSTATUS(status) == 1;
  if (!out.threw && out.message == "ok") out.message.clear();
  return out;
}

}  // namespace rematch::test
