// Disk faults for the tests of code that writes files, made on an ordinary machine. CI runs as root in a
// container, where chmod alone stops nothing and mounting may be refused, so each fault has a form that needs
// no privilege beyond what the test already has:
//   FileSizeLimit       RLIMIT_FSIZE of this process: a write past the limit fails with EFBIG (SIGXFSZ
//                       ignored), as a full disk fails with ENOSPC. Works for any user, anywhere.
//   SmallTmpfs          a real tmpfs of a given size mounted on a folder, remounted read-only or resized at will:
//                       ENOSPC and EROFS from the kernel. Needs CAP_SYS_ADMIN; where mount is refused, available() is
//                       false and skip_reason() says why, for GTEST_SKIP.
//   NoPermissionOverride  the effective uid and gid of this process (all its threads) set to nobody's while it
//                       lives, so that a folder chmod'ed 0555 is read-only for root too (EACCES). A no-op for a
//                       user who is not root, to whom chmod already applies.
// Each restores what it changed when it goes out of scope.
#pragma once

#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

namespace rematch::test {

class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t max_bytes) {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    ::sigaction(SIGXFSZ, &ignore, &previous_signal_);
    ::getrlimit(RLIMIT_FSIZE, &previous_);
    struct rlimit lowered = previous_;
    lowered.rlim_cur = max_bytes;  // the soft limit only: lowering it needs no privilege, nor does raising it back
    ok_ = ::setrlimit(RLIMIT_FSIZE, &lowered) == 0;
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &previous_);
    ::sigaction(SIGXFSZ, &previous_signal_, nullptr);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

  bool ok() const { return ok_; }

 private:
  struct rlimit previous_ {};
  struct sigaction previous_signal_ {};
  bool ok_ = false;
};

class SmallTmpfs {
 public:
  SmallTmpfs(std::string folder, size_t bytes) : folder_(std::move(folder)) {
    const std::string options = "size=" + std::to_string(bytes);
    if (::mount("tmpfs", folder_.c_str(), "tmpfs", 0, options.c_str()) == 0) {
      mounted_ = true;
    } else {
      skip_reason_ = "mount -t tmpfs on " + folder_ + " was refused (" + std::strerror(errno) +
                     "): this variant needs root with CAP_SYS_ADMIN, e.g. a privileged container";
    }
  }
  ~SmallTmpfs() {
    // MNT_DETACH: a file some failed check left open must not keep the mount alive after the test.
    if (mounted_) ::umount2(folder_.c_str(), MNT_DETACH);
  }
  SmallTmpfs(const SmallTmpfs&) = delete;
  SmallTmpfs& operator=(const SmallTmpfs&) = delete;

  bool available() const { return mounted_; }
  const std::string& skip_reason() const { return skip_reason_; }

  // Remounts it read-only (true) or writable again (false); returns whether the kernel agreed.
  bool set_read_only(bool read_only) {
    return ::mount("tmpfs", folder_.c_str(), "tmpfs", MS_REMOUNT | (read_only ? MS_RDONLY : 0), nullptr) == 0;
  }
  // Remounts it writable with room for `bytes` (rounded up to pages); false when the kernel refuses, e.g.
  // because its files take more.
  bool resize(size_t bytes) {
    const std::string options = "size=" + std::to_string(bytes);
    return ::mount("tmpfs", folder_.c_str(), "tmpfs", MS_REMOUNT, options.c_str()) == 0;
  }
  // Bytes its files take now, in whole pages as tmpfs counts them.
  size_t used_bytes() const {
    struct statvfs st {};
    if (::statvfs(folder_.c_str(), &st) != 0) return 0;
    return static_cast<size_t>(st.f_blocks - st.f_bfree) * st.f_frsize;
  }

 private:
  std::string folder_;
  bool mounted_ = false;
  std::string skip_reason_;
};

class NoPermissionOverride {
 public:
  NoPermissionOverride() {
    if (::geteuid() != 0) return;
    // The group first: once the uid is nobody's, changing the gid needs a privilege it no longer has.
    if (::setegid(kNobody) == 0 && ::seteuid(kNobody) == 0) {
      changed_ = true;
      return;
    }
    ok_ = false;
    skip_reason_ = std::string("cannot take the uid and gid of nobody (") + std::strerror(errno) + ")";
    restore();
  }
  ~NoPermissionOverride() {
    if (changed_) restore();
  }
  NoPermissionOverride(const NoPermissionOverride&) = delete;
  NoPermissionOverride& operator=(const NoPermissionOverride&) = delete;

  bool ok() const { return ok_; }
  const std::string& skip_reason() const { return skip_reason_; }

 private:
  static constexpr uid_t kNobody = 65534;
  static void restore() {
    if (::seteuid(0) != 0 || ::setegid(0) != 0) std::abort();  // the rest of the test binary would run as nobody
  }

  bool ok_ = true, changed_ = false;
  std::string skip_reason_;
};

}  // namespace rematch::test
