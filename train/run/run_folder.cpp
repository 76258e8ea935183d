#include "train/run/run_folder.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "tensor/error.h"
#include "tensor/file_io.h"
#include "tensor/json_depth.h"
#include "train/run/run_folder_contents.h"

namespace rematch::run {
namespace fs = std::filesystem;
using ordered_json = nlohmann::ordered_json;

namespace {

constexpr const char* kConfig = "config.json";
constexpr const char* kMetrics = "metrics.jsonl";
constexpr const char* kCheckpointLatest = "checkpoint_latest.safetensors";
constexpr const char* kCheckpointBest = "checkpoint_best.safetensors";
constexpr const char* kPlots = "plots";
constexpr const char* kResults = "results.md";
constexpr const char* kLock = "run.lock";
constexpr const char* kPickAnotherRunDir = "; no training has run yet: fix that, or pick another --run_dir";

std::string read_text(const std::string& path, const std::string& what) { return io::read_text_file(path, what); }

// Lines of a metrics file: `complete` lines end with '\n' (not included); `torn` is a last line without one.
struct Lines {
  std::vector<std::string> complete;
  std::vector<size_t> starts;  // byte offset of each complete line
  bool torn = false;
};

Lines split_lines(const std::string& text) {
  Lines lines;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) {
      lines.torn = true;
      break;
    }
    lines.complete.push_back(text.substr(pos, nl - pos));
    lines.starts.push_back(pos);
    pos = nl + 1;
  }
  return lines;
}

// The bytes of `text` up to and including its last '\n': the complete lines.
size_t complete_part(const std::string& text) {
  const size_t nl = text.rfind('\n');
  return nl == std::string::npos ? 0 : nl + 1;
}

bool is_blank(const std::string& line) { return line.find_first_not_of(" \t\r") == std::string::npos; }

MetricRecord parse_record(const std::string& line, const std::string& path, size_t line_number) {
  const std::string where = "metrics log '" + path + "' line " + std::to_string(line_number) + ": ";
  ordered_json j;
  io::require_shallow_json(line, where.substr(0, where.size() - 2));
  try {
    j = ordered_json::parse(line);
  } catch (const nlohmann::json::exception& e) {
    REMATCH_FAIL(where, "not JSON: ", e.what());
  }
  REMATCH_CHECK(j.is_object(), where, "not a JSON object");
  REMATCH_CHECK(j.contains("epoch") && j["epoch"].is_number_integer(), where, "\"epoch\" is missing or not an integer");
  REMATCH_CHECK(j.contains("step") && j["step"].is_number_integer(), where, "\"step\" is missing or not an integer");
  REMATCH_CHECK(j.contains("kind") && j["kind"].is_string(), where, "\"kind\" is missing or not a string");
  MetricRecord r;
  r.epoch = j["epoch"].get<int64_t>();
  r.step = j["step"].get<int64_t>();
  r.kind = j["kind"].get<std::string>();
  for (const auto& [key, value] : j.items()) {
    if (key == "epoch" || key == "step" || key == "kind") continue;
    REMATCH_CHECK(value.is_number() || value.is_null(), where, "\"", key, "\" is not a number or null");
    r.values.emplace_back(key, value.is_null() ? NAN : value.get<double>());
  }
  return r;
}

bool past(const MetricRecord& r, int64_t epoch, int64_t step) {
  return r.epoch > epoch || (r.epoch == epoch && r.step > step);
}

// This process's command line, arguments separated by spaces (for the lock file's "who holds it").
std::string own_command_line() {
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  while (!raw.empty() && raw.back() == '\0') raw.pop_back();
  for (char& c : raw)
    if (c == '\0' || c == '\n') c = ' ';
  return raw.empty() ? "(unknown)" : raw;
}

// The pid of a temporary file name "<name>.tmp.<pid>.<n>" (tensor/file_io.cpp, AtomicFileWriter), or 0.
long temporary_owner(const std::string& name) {
  const size_t at = name.rfind(".tmp.");
  if (at == std::string::npos || at == 0) return 0;
  const std::string rest = name.substr(at + 5);
  const size_t dot = rest.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == rest.size()) return 0;
  const std::string pid = rest.substr(0, dot), n = rest.substr(dot + 1);
  if (pid.find_first_not_of("0123456789") != std::string::npos || n.find_first_not_of("0123456789") != std::string::npos ||
      pid.size() > 9)
    return 0;
  return std::stol(pid);
}

bool process_alive(long pid) { return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM; }

}  // namespace

std::string default_run_dir(const std::string& method, std::time_t when) {
  REMATCH_CHECK(!method.empty() && method.find('/') == std::string::npos,
                "default_run_dir: the method name '", method, "' must be non-empty and hold no '/'");
  std::tm local{};
  REMATCH_CHECK(::localtime_r(&when, &local) != nullptr, "default_run_dir: cannot convert the time ", when);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &local);
  return (fs::path("runs") / (method + "-" + stamp)).string();
}

std::vector<std::string> remove_dead_temporaries(const std::string& folder) {
  std::vector<std::string> removed;
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const long pid = temporary_owner(it->path().filename().string());
    if (pid <= 0 || pid == static_cast<long>(::getpid()) || process_alive(pid)) continue;
    std::error_code kind_ec;
    if (!it->is_regular_file(kind_ec)) continue;
    std::error_code rm_ec;
    if (fs::remove(it->path(), rm_ec)) removed.push_back(it->path().string());
  }
  return removed;
}

RunFolder::~RunFolder() {
  if (lock_fd_ >= 0) ::close(lock_fd_);  // closing the only descriptor of the open file releases the flock
}

// Takes the folder's lock or refuses: another process (or another RunFolder of this one) is writing the run.
void RunFolder::lock(RunStart start) {
  const std::string path = lock_path();
  // Locked through a read-only descriptor: a file held open for writing would stop its file system from being
  // remounted read-only under a live run. (On a read-only file system the file can still be opened if it exists.)
  // O_NONBLOCK: a FIFO in the lock file's place would block the open forever (and a blocked open ignores the
  // SIGINT/SIGTERM handling that is already in place); O_NOFOLLOW: a symbolic link there is not followed, so the
  // holder's description below never truncates the file it points to.
  const int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW;
  lock_fd_ = ::open(path.c_str(), flags | O_CREAT, 0666);
  if (lock_fd_ < 0) lock_fd_ = ::open(path.c_str(), flags);
  const int open_errno = errno;
  struct stat st;
  const bool stat_ok = lock_fd_ >= 0 ? ::fstat(lock_fd_, &st) == 0 : ::lstat(path.c_str(), &st) == 0;
  if (stat_ok && !S_ISREG(st.st_mode)) {
    if (lock_fd_ >= 0) ::close(lock_fd_);
    lock_fd_ = -1;
    REMATCH_FAIL("run folder '", dir_, "': its lock file '", path, "' is ", io::file_kind(st.st_mode),
                 ", not a regular file; rematch keeps a plain file there: remove it, or use another --run_dir");
  }
  if (lock_fd_ < 0) {
    const io::WriteError e = io::write_error("run folder", path, "cannot create the lock file", open_errno);
    throw start == RunStart::Resume ? e : e.extended(kPickAnotherRunDir);
  }
  int rc;
  do rc = ::flock(lock_fd_, LOCK_EX | LOCK_NB);
  while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    const int why = errno;
    std::string holder, pid = "<pid>";
    if (why == EWOULDBLOCK) {
      holder = read_text(path, "run folder");
      while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
      for (char& c : holder)
        if (c == '\n') c = ';';
      if (holder.compare(0, 4, "pid ") == 0) pid = holder.substr(4, holder.find_first_not_of("0123456789", 4) - 4);
    }
    ::close(lock_fd_);
    lock_fd_ = -1;
    if (why != EWOULDBLOCK) throw io::write_error("run folder", path, "cannot lock the run folder", why);
    REMATCH_FAIL("run folder '", dir_, "': another process is writing this run (",
                 holder.empty() ? std::string("it has not said which yet") : holder,
                 "). Two writers would corrupt it: wait for that process to end, or stop it (kill ", pid,
                 "; a stopped run continues with --resume), or use another --run_dir");
  }
  // The holder's description: what the refusal of a second writer shows (a courtesy: the flock excludes).
  char stamp[32] = "";
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  if (::localtime_r(&now, &local) != nullptr) std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", &local);
  const std::string who = "pid " + std::to_string(::getpid()) + ", since " + stamp + ": " + own_command_line() + "\n";
  const int w = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
  if (w >= 0) {
    const ssize_t n = ::write(w, who.data(), who.size());
    static_cast<void>(n);
    ::close(w);
  }
}

// Why a start of `start` cannot use the folder as it is (or as it is not: a missing one), or "" when it can.
std::string RunFolder::refusal(RunStart start) const {
  const std::string where = "run folder '" + dir_ + "': ";
  std::error_code ec;
  const bool holds_run = fs::exists(config_path(), ec);
  switch (start) {
    case RunStart::Fresh: {
      if (holds_run)
        return where + "already holds a run (" + config_path() + "); pass --resume to continue it or --overwrite to "
               "replace it";
      // Without a config.json the files a run writes are someone else's: a fresh run would write over them.
      const std::vector<std::string> taken = run_entries_with_content(dir_);
      if (!taken.empty())
        return where + "holds " + list_names(taken) + " but no config.json, so it is not a rematch run; a run here "
               "would write over them: move them away, or pick another --run_dir";
      return "";
    }
    case RunStart::Resume:
      return holds_run ? "" : where + "holds no run to resume (no " + config_path() + ")";
    case RunStart::Overwrite: {
      const std::vector<std::string> taken = run_entries_with_content(dir_);
      if (!taken.empty() && !holds_rematch_config(dir_))
        return where + "is not a rematch run folder (" +
               (holds_run ? config_path() + " is not one rematch wrote: no \"method\"" : std::string("no config.json")) +
               ") but holds " + list_names(taken) +
               "; --overwrite deletes only a run's own files: move them away, or pick another --run_dir";
      const std::vector<std::string> foreign = foreign_entries(dir_);
      if (!foreign.empty())
        return where + "holds files rematch does not write in a run folder (" + list_names(foreign) +
               "); --overwrite would leave them mixed with a new run: move them away, or pick another --run_dir";
      return "";
    }
    case RunStart::Follower:
      return "";
  }
  return "";
}

RunFolder::RunFolder(std::string dir, RunStart start) : dir_(std::move(dir)) {
  REMATCH_CHECK(!dir_.empty(), "run folder: the path is empty");
  if (start == RunStart::Follower) return;
  const std::string where = "run folder '" + dir_ + "': ";
  // Before a fresh run nothing has been trained, so another folder is always a way out.
  auto cannot = [&](const std::string& path, const std::string& problem, const std::error_code& ec) {
    const io::WriteError e = io::write_error("run folder", path, problem, ec.value());
    throw start == RunStart::Resume ? e : e.extended(kPickAnotherRunDir);
  };
  std::error_code ec;
  if (start == RunStart::Overwrite) {
    const std::string guarded = protected_folder(dir_);
    REMATCH_CHECK(guarded.empty(), where, "is ", guarded, "; --overwrite deletes a run's files only in a folder of "
                  "its own: pick another --run_dir (e.g. runs/<name>)");
  }
  // Checked before anything is created (a refused start leaves no folder or lock file behind), and again under
  // the lock, where the answer holds. With a lock file there, the lock comes first: a writer holding it is what
  // to say then.
  if (!fs::exists(lock_path(), ec) && !fs::is_symlink(lock_path(), ec)) {
    const std::string early = refusal(start);
    REMATCH_CHECK(early.empty(), early);
  }
  fs::create_directories(dir_, ec);
  if (ec) cannot(dir_, "cannot create it", ec);
  REMATCH_CHECK(fs::is_directory(dir_, ec), where, "exists and is not a folder");
  lock(start);
  try {
    const std::string refused = refusal(start);
    REMATCH_CHECK(refused.empty(), refused);
    if (start == RunStart::Overwrite) {
      const std::string failed = remove_run_entries(dir_);
      if (!failed.empty())
        throw io::write_error("run folder", dir_, "cannot delete the earlier run's " + failed, 0)
            .extended(kPickAnotherRunDir);
    }
    fs::create_directories(plots_dir(), ec);
    if (ec) cannot(plots_dir(), "cannot create it", ec);
    removed_temporaries_ = remove_dead_temporaries(dir_);
    for (const std::string& p : remove_dead_temporaries(plots_dir())) removed_temporaries_.push_back(p);
  } catch (...) {
    ::close(lock_fd_);  // a refused start leaves the folder unlocked
    lock_fd_ = -1;
    throw;
  }
}

std::string RunFolder::file(const std::string& name) const { return (fs::path(dir_) / name).string(); }
std::string RunFolder::config_path() const { return file(kConfig); }
std::string RunFolder::metrics_path() const { return file(kMetrics); }
std::string RunFolder::checkpoint_latest_path() const { return file(kCheckpointLatest); }
std::string RunFolder::checkpoint_best_path() const { return file(kCheckpointBest); }
std::string RunFolder::plots_dir() const { return file(kPlots); }
std::string RunFolder::results_path() const { return file(kResults); }
std::string RunFolder::lock_path() const { return file(kLock); }

std::string RunFolder::plot_path(const std::string& file_name) const {
  REMATCH_CHECK(!file_name.empty() && file_name.find('/') == std::string::npos, "run folder '", dir_,
                "': plot file name '", file_name, "' must be non-empty and hold no '/'");
  return (fs::path(plots_dir()) / file_name).string();
}

void RunFolder::write_config(const std::string& json_text) const {
  nlohmann::json parsed;
  try {
    parsed = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& e) {
    io::fail("write_config", config_path(), std::string("the text is not JSON: ") + e.what());
  }
  if (!parsed.is_object()) io::fail("write_config", config_path(), "the text is not a JSON object");
  std::string text = json_text;
  if (text.empty() || text.back() != '\n') text += '\n';
  try {
    io::write_file_atomically(config_path(), text, "write_config");
  } catch (const io::WriteError& e) {
    throw e.extended(kPickAnotherRunDir);
  }
}

std::string RunFolder::read_config() const { return read_text(config_path(), "read_config"); }

void RunFolder::write_results(const std::string& markdown) const {
  io::write_file_atomically(results_path(), markdown, "write_results");
}

bool MetricRecord::has(const std::string& name) const {
  for (const auto& kv : values)
    if (kv.first == name) return true;
  return false;
}

double MetricRecord::get(const std::string& name) const {
  std::string names;
  for (const auto& kv : values) {
    if (kv.first == name) return kv.second;
    names += (names.empty() ? "" : ", ") + kv.first;
  }
  REMATCH_FAIL("metric record (epoch ", epoch, ", step ", step, ", kind '", kind, "') has no value '", name,
               "' (it has: ", names.empty() ? "none" : names, ")");
}

std::vector<MetricRecord> read_metrics(const std::string& path) {
  const Lines lines = split_lines(read_text(path, "read_metrics"));
  std::vector<MetricRecord> records;
  for (size_t i = 0; i < lines.complete.size(); ++i) {
    if (is_blank(lines.complete[i])) continue;
    records.push_back(parse_record(lines.complete[i], path, i + 1));
  }
  return records;
}

MetricsLog::MetricsLog(std::string path) : path_(std::move(path)) {
  std::error_code ec;
  if (fs::exists(path_, ec)) {
    const std::string text = read_text(path_, "metrics log");
    const Lines lines = split_lines(text);
    if (lines.torn) io::write_file_atomically(path_, std::string_view(text).substr(0, complete_part(text)), "metrics log");
  }
  open_for_append();
}

MetricsLog::~MetricsLog() { close(); }

MetricsLog::MetricsLog(MetricsLog&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)) {}

MetricsLog& MetricsLog::operator=(MetricsLog&& other) noexcept {
  if (this != &other) {
    close();
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

void MetricsLog::open_for_append() {
  // O_NONBLOCK: a FIFO there fails at once (no reader) instead of blocking; the kind is checked after.
  fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0666);
  if (fd_ < 0) throw io::write_error("metrics log", path_, "cannot open for appending", errno);
  struct stat st;
  if (::fstat(fd_, &st) == 0 && !S_ISREG(st.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    io::fail("metrics log", path_, "is " + io::file_kind(st.st_mode) + ", not a regular file: remove it");
  }
}

void MetricsLog::close() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void MetricsLog::append(const MetricRecord& record) {
  REMATCH_CHECK(fd_ >= 0, "metrics log '", path_, "': append on a moved-from log");
  ordered_json j;
  j["epoch"] = record.epoch;
  j["step"] = record.step;
  j["kind"] = record.kind;
  std::set<std::string> seen;
  for (const auto& [name, value] : record.values) {
    REMATCH_CHECK(name != "epoch" && name != "step" && name != "kind", "metrics log '", path_, "': the value name '",
                  name, "' is reserved");
    REMATCH_CHECK(seen.insert(name).second, "metrics log '", path_, "': the value name '", name, "' appears twice");
    if (std::isfinite(value)) {
      j[name] = value;
    } else {
      j[name] = nullptr;
    }
  }
  const std::string line = j.dump() + "\n";
  // Where the line starts, so that a line the disk took only part of can be cut off again.
  const off_t start = ::lseek(fd_, 0, SEEK_END);
  if (start < 0) throw io::write_error("metrics log", path_, "cannot find the end of the file", errno);
  size_t written = 0;
  while (written < line.size()) {
    const ssize_t w = ::write(fd_, line.data() + written, line.size() - written);
    if (w < 0 && errno == EINTR) continue;
    if (w > 0) {
      written += static_cast<size_t>(w);
      continue;
    }
    // A short write is retried and the retry says why the disk took no more (ENOSPC, EFBIG, ...); 0 bytes
    // sets no errno and would loop forever.
    const int why = w < 0 ? errno : 0;
    std::string problem = "cannot append a line";
    if (written > 0) {
      // Truncating frees space, so it works on a full disk too; should it fail, the torn line is still dropped
      // by the next MetricsLog opened on the file (a --resume) and ignored by read_metrics.
      const std::string part = std::to_string(written) + " of " + std::to_string(line.size()) + " bytes";
      problem += ::ftruncate(fd_, start) == 0
                     ? " (" + part + " were written and removed again)"
                     : " (" + part + " were written; removing them failed: " + std::strerror(errno) +
                           ", so a --resume drops the torn line)";
    } else if (w == 0) {
      problem += " (the system took 0 of " + std::to_string(line.size()) + " bytes)";
    }
    throw io::write_error("metrics log", path_, problem, why);
  }
}

int64_t MetricsLog::truncate_after(int64_t epoch, int64_t step) {
  const std::string text = read_text(path_, "metrics log");
  const Lines lines = split_lines(text);
  size_t keep_bytes = complete_part(text);  // a torn last line goes in any case
  int64_t dropped = 0;
  for (size_t i = 0; i < lines.complete.size(); ++i) {
    if (is_blank(lines.complete[i])) continue;
    // Lines after the cut are dropped unread: a damaged one among them is no reason to fail the resume.
    if (dropped > 0 || past(parse_record(lines.complete[i], path_, i + 1), epoch, step)) {
      if (dropped == 0) keep_bytes = lines.starts[i];
      ++dropped;
    }
  }
  if (keep_bytes == text.size()) return 0;
  close();
  io::write_file_atomically(path_, std::string_view(text).substr(0, keep_bytes), "metrics log");
  open_for_append();
  return dropped;
}

std::vector<MetricRecord> MetricsLog::records() const { return read_metrics(path_); }

}  // namespace rematch::run
