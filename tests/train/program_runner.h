// The `rematch` program as a child process, for tests that kill it (tests/train/run_chaos_test.cpp): started
// in a folder with its output to a log file and a given OMP_NUM_THREADS, watched while it runs (metrics.jsonl
// lines, files appearing in its run folder through inotify), signalled, and waited for with a deadline so
// that nothing hangs. REMATCH_PROGRAM is the program's path (tests/CMakeLists.txt).
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace rematch::test {

extern "C" char** environ;

class Program {
 public:
  // Starts `args` (without the program name) in `cwd`, stdout and stderr to `log`.
  // `env` adds or replaces variables ("NAME=value").
  Program(const std::vector<std::string>& args, const std::string& cwd, const std::string& log, int threads,
          const std::vector<std::string>& env = {})
      : log_(log) {
    std::vector<std::string> argv_s = {REMATCH_PROGRAM};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<std::string> env_s;
    std::vector<std::string> set = env;
    set.push_back("OMP_NUM_THREADS=" + std::to_string(threads));
    // Under AddressSanitizer (CI's sanitizer build) the program's own exit is not where leaks are looked for:
    // the in-process tests do that; a leak report would turn an exit code these tests check into 23.
    const char* asan = std::getenv("ASAN_OPTIONS");
    set.push_back(std::string("ASAN_OPTIONS=") + (asan && *asan ? std::string(asan) + ":" : "") + "detect_leaks=0");
    auto replaced = [&](const char* e) {
      if (std::strncmp(e, "OPENBLAS_NUM_THREADS=", 21) == 0) return true;
      for (const std::string& v : set)
        if (std::strncmp(e, v.c_str(), v.find('=') + 1) == 0) return true;
      return false;
    };
    for (char** e = environ; *e; ++e)
      if (!replaced(*e)) env_s.emplace_back(*e);
    env_s.insert(env_s.end(), set.begin(), set.end());
    std::vector<char*> argv, envp;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (auto& e : env_s) envp.push_back(e.data());
    envp.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {  // only async-signal-safe calls until execve
      if (::chdir(cwd.c_str()) != 0) ::_exit(125);
      const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd < 0) ::_exit(125);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::execve(argv[0], argv.data(), envp.data());
      ::_exit(127);
    }
  }
  ~Program() {
    if (pid_ > 0 && status_ < 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  pid_t pid() const { return pid_; }
  bool started() const { return pid_ > 0; }
  void signal(int sig) const { ::kill(pid_, sig); }

  // True once the process has ended (then exit_code() is set).
  bool ended() {
    if (status_ >= 0) return true;
    int st = 0;
    if (::waitpid(pid_, &st, WNOHANG) != pid_) return false;
    status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return true;
  }
  // Waits at most `seconds`, then kills it: the exit code, 128 + signal, or -1 on the deadline.
  int wait(double seconds = 120) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (!ended()) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
        status_ = 1000;
        return -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return status_;
  }
  int exit_code() const { return status_; }
  std::string log() const {
    std::ifstream f(log_);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
  }

 private:
  std::string log_;
  pid_t pid_ = -1;
  int status_ = -1;
};

// Polls `ready` every millisecond while `p` runs; true once it held (false when p ended first or after
// `seconds`).
inline bool wait_until(Program& p, const std::function<bool()>& ready, double seconds = 60) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (ready()) return true;
    if (p.ended()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

// Files created or renamed into one folder, as inotify reports them (the folder must exist).
class FolderWatch {
 public:
  explicit FolderWatch(const std::string& folder) {
    fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd_ >= 0) ::inotify_add_watch(fd_, folder.c_str(), IN_CREATE | IN_MOVED_TO);
  }
  ~FolderWatch() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool ok() const { return fd_ >= 0; }
  // Names that appeared since the last call.
  std::vector<std::string> names() {
    std::vector<std::string> out;
    alignas(struct inotify_event) char buf[8192];
    for (;;) {
      const ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n <= 0) break;
      for (ssize_t at = 0; at < n;) {
        const auto* e = reinterpret_cast<const struct inotify_event*>(buf + at);
        if (e->len > 0) out.emplace_back(e->name);
        at += static_cast<ssize_t>(sizeof(struct inotify_event) + e->len);
      }
    }
    return out;
  }

 private:
  int fd_ = -1;
};

}  // namespace rematch::test
