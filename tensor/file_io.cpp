#include "tensor/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "tensor/error.h"

namespace rematch::io {

void fail(const std::string& what, const std::string& path, const std::string& problem) {
  REMATCH_FAIL(what, " '", path, "': ", problem);
}

namespace {

// What a write errno means to the person at the keyboard, and what to do about it; empty when the error
// says it well enough on its own.
std::string write_advice(int error_number) {
  switch (error_number) {
    case ENOSPC:
      return "the file system is full: free space on it or write somewhere else";
    case EDQUOT:
      return "the disk quota is used up: free space or write somewhere else";
    case EFBIG:
      return "the file outgrew the largest file this file system or the file-size limit (ulimit -f) allows: "
             "raise the limit or write somewhere else";
    case EROFS:
      return "the file system is mounted read-only: write somewhere else";
    case EACCES:
    case EPERM:
      return "no permission to write there: make the folder writable or write somewhere else";
    case EIO:
      return "the storage device reported an error: check it, or write somewhere else";
    default:
      return "";
  }
}

}  // namespace

WriteError write_error(const std::string& what, const std::string& path, const std::string& problem,
                       int error_number) {
  std::string message = what + " '" + path + "': " + problem;
  if (error_number != 0) {
    message += std::string(": ") + std::strerror(error_number);
    const std::string advice = write_advice(error_number);
    if (!advice.empty()) message += " (" + advice + ")";
  }
  return WriteError(message, path, error_number);
}

std::string file_kind(unsigned mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "an unknown kind of file";
}

namespace {

OpenObserver& open_observer() {
  static OpenObserver observer;
  return observer;
}

}  // namespace

void set_open_observer(OpenObserver observer) { open_observer() = std::move(observer); }

ReadFile::ReadFile(std::string path, std::string what) : path_(std::move(path)), what_(std::move(what)) {
  if (open_observer()) open_observer()(path_);
  // O_NONBLOCK: opening a FIFO that no process writes blocks until one does, and a blocked open() cannot be
  // interrupted by the signals the program handles. On a regular file the flag changes nothing.
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd_ < 0) fail(std::string("cannot open: ") + std::strerror(errno));
  struct stat st;
  if (::fstat(fd_, &st) != 0) {
    const int why = errno;
    ::close(fd_);
    fd_ = -1;
    fail(std::string("cannot stat: ") + std::strerror(why));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    fail("is " + file_kind(st.st_mode) + ", not a regular file: give the path of a file");
  }
}

ReadFile::~ReadFile() {
  if (fd_ >= 0) ::close(fd_);
}

ReadFile::ReadFile(ReadFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)), what_(std::move(other.what_)) {}

ReadFile& ReadFile::operator=(ReadFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    what_ = std::move(other.what_);
  }
  return *this;
}

uint64_t ReadFile::size() const {
  struct stat st;
  if (::fstat(fd_, &st) != 0) fail(std::string("cannot stat: ") + std::strerror(errno));
  return static_cast<uint64_t>(st.st_size);
}

size_t ReadFile::read_at(void* buf, size_t n, uint64_t offset) const {
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::pread(fd_, static_cast<char*>(buf) + got, n - got, static_cast<off_t>(offset + got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) fail(std::string("read failed: ") + std::strerror(errno));
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  return got;
}

void ReadFile::fail(const std::string& problem) const { io::fail(what_, path_, problem); }

AtomicFileWriter::AtomicFileWriter(std::string path, std::string what)
    : path_(std::move(path)), what_(std::move(what)), target_(path_) {
  struct stat st {};
  if (::lstat(path_.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    char* real = ::realpath(path_.c_str(), nullptr);
    if (real == nullptr) {
      throw write_error(what_, path_, "is a symbolic link to nothing that can be written (give the path of a file)",
                        errno);
    }
    target_ = real;
    std::free(real);
  }
  if (::stat(target_.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    throw write_error(what_, path_,
                      "is " + file_kind(st.st_mode) +
                          ", not a regular file: writing here would replace it with one; give the path of a file",
                      0);
  }
  // pid + a process-wide counter: concurrent writers (other processes, other threads) never share a name,
  // and O_EXCL refuses to reuse a name some crashed run left behind. Next to the file that is replaced, so
  // that the rename stays within one file system.
  static std::atomic<uint64_t> counter{0};
  tmp_ = target_ + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd_ < 0) throw write_error(what_, path_, "cannot create temporary file '" + tmp_ + "'", errno);
}

AtomicFileWriter::~AtomicFileWriter() { discard(); }

void AtomicFileWriter::discard() noexcept {
  if (done_) return;
  done_ = true;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  ::unlink(tmp_.c_str());
}

void AtomicFileWriter::write(const void* data, size_t n) {
  if (done_) fail(what_, path_, "write after the file was committed or discarded");
  size_t written = 0;
  while (written < n) {
    const ssize_t w = ::write(fd_, static_cast<const char*>(data) + written, n - written);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      // A short write is retried; the retry reports why the disk took no more (ENOSPC, EFBIG, ...). A write
      // of 0 bytes sets no errno and would loop forever.
      const int why = w < 0 ? errno : 0;
      discard();
      throw write_error(what_, path_, w < 0 ? "write failed" : "write failed: the system took 0 of " +
                                                             std::to_string(n - written) + " bytes", why);
    }
    written += static_cast<size_t>(w);
  }
}

void AtomicFileWriter::commit() {
  if (done_) fail(what_, path_, "commit after the file was committed or discarded");
  // fsync before rename: otherwise a crash could leave the new name pointing at data not yet on disk.
  const int synced = ::fsync(fd_) == 0 ? 0 : errno;
  const int closed = ::close(fd_) == 0 ? 0 : errno;
  fd_ = -1;
  if (synced || closed) {
    discard();
    throw write_error(what_, path_, "could not flush the file", synced ? synced : closed);
  }
  if (::rename(tmp_.c_str(), target_.c_str()) != 0) {
    const int why = errno;
    discard();
    throw write_error(what_, path_, "cannot rename the temporary file into place", why);
  }
  done_ = true;
}

void write_file_atomically(const std::string& path, std::string_view bytes, const std::string& what) {
  AtomicFileWriter out(path, what);
  out.write(bytes);
  out.commit();
}

std::string read_text_file(const std::string& path, const std::string& what) {
  const ReadFile f(path, what);
  std::string text(f.size(), '\0');
  text.resize(f.read_at(text.data(), text.size(), 0));
  return text;
}

void require_regular_file(const std::string& path, const std::string& what) { const ReadFile f(path, what); }

}  // namespace rematch::io
