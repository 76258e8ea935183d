// Low-level POSIX file helpers shared by every file format reader and writer (npy, safetensors, vocab,
// synthetic data, HDF5): a read-only file handle with positioned reads, and an atomic writer (a unique
// temporary file in the target folder, fsync, rename into place). The lowest layer: needs only tensor/error.h.
// Every failure is a rematch::Error of the form "<what> '<path>': <problem>: <strerror>", where `what` is the
// caller's op name ("load_npy", "save_safetensors", ...) and `path` the file the caller asked for. A failed
// write is a WriteError, whose message also says what the cause means for the user (a full disk, a read-only
// file system, ...), so a caller such as the trainer can add what it knows: which earlier file is intact.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>

#include "tensor/error.h"

namespace rematch::io {

// "<what> '<path>': <problem>" as a rematch::Error.
[[noreturn]] void fail(const std::string& what, const std::string& path, const std::string& problem);

// A file could not be created, written, flushed or renamed into place.
class WriteError : public Error {
 public:
  WriteError(const std::string& message, std::string path, int error_number)
      : Error(message), path_(std::move(path)), error_number_(error_number) {}
  const std::string& path() const { return path_; }
  int error_number() const { return error_number_; }  // the errno of the failed call; 0 when there was none
  // The same error with `more` appended to the message: a caller's own advice.
  WriteError extended(const std::string& more) const { return WriteError(what() + more, path_, error_number_); }

 private:
  std::string path_;
  int error_number_;
};

// WriteError "<what> '<path>': <problem>: <strerror(error_number)> (<what it means and what to do>)", e.g.
// "... write failed: No space left on device (the file system is full: free space on it or write somewhere
// else)". With error_number 0: "<what> '<path>': <problem>".
WriteError write_error(const std::string& what, const std::string& path, const std::string& problem,
                       int error_number);

// What kind of file system entry a stat mode is, for messages: "a regular file", "a folder", "a FIFO (named
// pipe)", "a socket", "a character device", "a block device", "a symbolic link", or "an unknown kind of file".
std::string file_kind(unsigned mode);

// Called with the path of every ReadFile opened in this process while set (none by default): how a test counts
// the reads of a file (tests/train/score_command_test.cpp). Not thread-safe to set while files are being opened.
using OpenObserver = std::function<void(const std::string& path)>;
void set_open_observer(OpenObserver observer);

// A file opened read-only; the descriptor is closed on destruction. Movable, not copyable.
class ReadFile {
 public:
  // Opens `path` without blocking (O_NONBLOCK: a FIFO with no writer would otherwise wait forever) and checks
  // that it is a regular file. Failures: "<what> '<path>': cannot open: <strerror>", or "<what> '<path>': is a
  // FIFO (named pipe), not a regular file: give the path of a file" (a folder, socket or device likewise).
  ReadFile(std::string path, std::string what);
  ~ReadFile();
  ReadFile(ReadFile&& other) noexcept;
  ReadFile& operator=(ReadFile&& other) noexcept;
  ReadFile(const ReadFile&) = delete;
  ReadFile& operator=(const ReadFile&) = delete;

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  const std::string& what() const { return what_; }

  // The size in bytes; fails with "cannot stat: ...".
  uint64_t size() const;

  // Reads up to n bytes at `offset`, retrying short reads and EINTR; fewer than n come back only at end of
  // file. Failure: "<what> '<path>': read failed: <strerror>".
  size_t read_at(void* buf, size_t n, uint64_t offset) const;

  // fail(what(), path(), problem).
  [[noreturn]] void fail(const std::string& problem) const;

 private:
  int fd_ = -1;
  std::string path_, what_;
};

// Writes a file so that `path` holds either its old content or the complete new content, never half a file:
// the data goes to a temporary file with a unique name in the same folder (rename is atomic only within one
// file system), and commit() flushes it to disk and renames it over `path`. If commit() never runs (an
// exception, an early return), the destructor removes the temporary file. Not copyable or movable.
// Only a new name or a regular file is replaced: a symbolic link is followed (the file it names is replaced, the
// link stays), and a folder, FIFO, socket or device is refused by name before anything is written (renaming over
// /dev/null would have replaced the device with a file, as root).
class AtomicFileWriter {
 public:
  // Creates the temporary file; failure: "<what> '<path>': cannot create temporary file '<tmp>': <strerror>",
  // or "<what> '<path>': is a character device, not a regular file: ..." (a FIFO, folder, ... likewise), or
  // "... is a symbolic link to nothing: ...". Every failure of this class is a WriteError (write_error) that
  // leaves `path` as it was.
  AtomicFileWriter(std::string path, std::string what);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  // Appends n bytes, retrying short writes and EINTR; failure: "<what> '<path>': write failed: <strerror>"
  // (and the temporary file is removed at once, so a full disk gets its space back before the error).
  void write(const void* data, size_t n);
  void write(std::string_view bytes) { write(bytes.data(), bytes.size()); }

  // fsync, close, rename over path(). Failures: "could not flush the file: ..." or "cannot rename the
  // temporary file into place: ..."; the temporary file is removed either way.
  void commit();

  const std::string& path() const { return path_; }
  // The temporary file, for a library that must open the file by name itself (HDF5): it may write there
  // (closing its own handle before commit()) instead of calling write().
  const std::string& temp_path() const { return tmp_; }

 private:
  void discard() noexcept;  // closes and removes the temporary file, once

  int fd_ = -1;
  bool done_ = false;  // committed or discarded
  std::string path_, what_, tmp_;
  std::string target_;  // what commit() renames over: path_, or the file a symbolic link at path_ names
};

// An AtomicFileWriter holding exactly `bytes`, committed.
void write_file_atomically(const std::string& path, std::string_view bytes, const std::string& what);

// The whole content of the regular file `path`, read through ReadFile (so a FIFO, socket, device or folder is
// refused by name instead of blocking the reader).
std::string read_text_file(const std::string& path, const std::string& what);

// Fails as ReadFile does unless `path` opens and is a regular file; for readers that open the file by name
// themselves afterwards (std::ifstream over a large file, a library's own open).
void require_regular_file(const std::string& path, const std::string& what);

}  // namespace rematch::io
