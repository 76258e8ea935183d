#include "tensor/file_io.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <filesystem>
#include <functional>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>

#include "disk_faults.h"
#include "test_util.h"
#include "with_deadline.h"

namespace rematch {
namespace {

namespace fs = std::filesystem;

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class FileIoTest : public test::TempDirTest {
 protected:
  int64_t entries() const { return entries_in(dir_.string()); }
  static int64_t entries_in(const std::string& dir) {
    return std::distance(fs::directory_iterator(dir), fs::directory_iterator());
  }
};

// The WriteError `f` throws; fails the test when it throws nothing or something else.
io::WriteError write_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const io::WriteError& e) {
    return e;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw another error: " << e.what();
    return io::WriteError("", "", 0);
  }
  ADD_FAILURE() << "threw nothing";
  return io::WriteError("", "", 0);
}

TEST_F(FileIoTest, ReadFileReadsAtOffsetsAndStopsAtEndOfFile) {
  io::write_file_atomically(path("a.bin"), "0123456789", "test_op");
  io::ReadFile f(path("a.bin"), "test_op");
  EXPECT_EQ(f.size(), 10u);
  std::string buf(20, '\0');
  EXPECT_EQ(f.read_at(buf.data(), 3, 2), 3u);
  EXPECT_EQ(buf.substr(0, 3), "234");
  EXPECT_EQ(f.read_at(buf.data(), 20, 4), 6u);  // short only at end of file
  EXPECT_EQ(buf.substr(0, 6), "456789");
  EXPECT_EQ(f.read_at(buf.data(), 5, 10), 0u);
  EXPECT_EQ(f.read_at(buf.data(), 5, 100), 0u);

  io::ReadFile moved(std::move(f));
  EXPECT_EQ(moved.path(), path("a.bin"));
  EXPECT_EQ(moved.read_at(buf.data(), 1, 9), 1u);
  EXPECT_EQ(buf[0], '9');
}

TEST_F(FileIoTest, ReadFileErrorsNameOpAndFile) {
  const std::string missing = path("missing.bin");
  EXPECT_THROWS_WITH(io::ReadFile(missing, "load_thing"), "load_thing '" + missing + "': cannot open: ",
                     "No such file");
  EXPECT_THROWS_WITH(io::ReadFile(dir_.string(), "load_thing"),
                     "load_thing '" + dir_.string() + "': is a folder, not a regular file");
}

// A FIFO where a file is read: opening it for reading would wait for a writer forever. It is refused by name at
// once, as are other kinds that are no file (a character device here).
TEST_F(FileIoTest, ReadFileRefusesAFifoWithoutWaiting) {
  const std::string fifo = path("fifo.npy");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  const test::ChildOutcome o = test::run_with_deadline([&] { io::ReadFile(fifo, "load_npy"); }, 10);
  ASSERT_TRUE(o.finished) << "opening a FIFO blocked";
  EXPECT_TRUE(o.threw);
  EXPECT_EQ(o.message, "load_npy '" + fifo + "': is a FIFO (named pipe), not a regular file: give the path of a file");
  EXPECT_THROWS_WITH(io::ReadFile("/dev/null", "load_npy"), "'/dev/null': is a character device, not a regular file");
  EXPECT_THROWS_WITH(io::require_regular_file(fifo, "--image_list"), "--image_list '" + fifo + "': is a FIFO");
  EXPECT_THROWS_WITH(io::read_text_file(fifo, "run config"), "run config '" + fifo + "': is a FIFO");
}

TEST_F(FileIoTest, ReadTextFileReadsTheWholeFile) {
  io::write_file_atomically(path("a.txt"), std::string("line 1\n\0line 2", 14), "test_op");
  EXPECT_EQ(io::read_text_file(path("a.txt"), "test_op"), std::string("line 1\n\0line 2", 14));
  EXPECT_NO_THROW(io::require_regular_file(path("a.txt"), "test_op"));
  EXPECT_THROWS_WITH(io::read_text_file(path("none.txt"), "test_op"), "test_op '" + path("none.txt") + "': cannot open");
}

TEST_F(FileIoTest, AtomicWriterReplacesOnlyOnCommit) {
  const std::string target = path("out.txt");
  io::write_file_atomically(target, "old", "save_thing");
  {
    io::AtomicFileWriter w(target, "save_thing");
    EXPECT_EQ(fs::path(w.temp_path()).parent_path(), dir_);
    EXPECT_NE(w.temp_path(), target);
    EXPECT_TRUE(fs::exists(w.temp_path()));
    w.write("new ");
    w.write("content", 7);
    EXPECT_EQ(read_bytes(target), "old");
    w.commit();
    EXPECT_FALSE(fs::exists(w.temp_path()));
    EXPECT_THROWS_WITH(w.write("more"), "save_thing '" + target + "'", "after the file was committed");
  }
  EXPECT_EQ(read_bytes(target), "new content");
  EXPECT_EQ(entries(), 1);
}

// Renaming over what is not a regular file would replace it: a FIFO a reader waits on, a folder, a device node
// (as root, `--out /dev/null` replaced /dev/null itself). Each is refused by name and left as it was.
TEST_F(FileIoTest, AtomicWriterRefusesToReplaceWhatIsNotARegularFile) {
  const std::string fifo = path("fifo.npy");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  EXPECT_THROWS_WITH(io::write_file_atomically(fifo, "x", "save_npy"),
                     "save_npy '" + fifo + "': is a FIFO (named pipe), not a regular file: writing here would "
                     "replace it with one; give the path of a file");
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  fs::create_directories(path("folder"));
  EXPECT_THROWS_WITH(io::write_file_atomically(path("folder"), "x", "save_npy"), "': is a folder, not a regular file");
  EXPECT_TRUE(fs::is_directory(path("folder")));
  // A device node of our own (a copy of /dev/null's numbers), so that a failure here replaces only the copy.
  const std::string device = path("null");
  if (::mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0) {
    EXPECT_THROWS_WITH(io::write_file_atomically(device, "x", "ot --out"), "is a character device, not a regular file");
    ASSERT_EQ(::lstat(device.c_str(), &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode));
  }
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), ::lstat(device.c_str(), &st) == 0 ? 3 : 2)
      << "a temporary file was left behind";
}

// A symbolic link is followed: the file it names gets the new content and the link stays a link; a link to
// nothing is refused.
TEST_F(FileIoTest, AtomicWriterWritesThroughASymbolicLink) {
  fs::create_directories(path("elsewhere"));
  const std::string target = path("elsewhere/plan.npy"), link = path("plan.npy");
  io::write_file_atomically(target, "old", "save_npy");
  fs::create_symlink(target, link);
  io::write_file_atomically(link, "new", "save_npy");
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(io::read_text_file(target, "test"), "new");
  const std::string dangling = path("dangling.npy");
  fs::create_symlink(path("no/such/file.npy"), dangling);
  EXPECT_THROWS_WITH(io::write_file_atomically(dangling, "x", "save_npy"),
                     "save_npy '" + dangling + "': is a symbolic link to nothing that can be written");
  EXPECT_TRUE(fs::is_symlink(dangling));
}

TEST_F(FileIoTest, AtomicWriterRemovesTheTemporaryWithoutCommit) {
  const std::string target = path("out.txt");
  io::write_file_atomically(target, "old", "save_thing");
  std::string tmp;
  try {
    io::AtomicFileWriter w(target, "save_thing");
    tmp = w.temp_path();
    w.write("half a fi");
    throw std::runtime_error("interrupted");
  } catch (const std::runtime_error&) {
  }
  EXPECT_FALSE(tmp.empty());
  EXPECT_FALSE(fs::exists(tmp));
  EXPECT_EQ(read_bytes(target), "old");
  EXPECT_EQ(entries(), 1);
}

TEST_F(FileIoTest, AtomicWriterTemporaryNamesAreUnique) {
  io::AtomicFileWriter a(path("x"), "save_thing"), b(path("x"), "save_thing");
  EXPECT_NE(a.temp_path(), b.temp_path());
  a.write("a", 1);
  b.write("b", 1);
  a.commit();
  b.commit();
  EXPECT_EQ(read_bytes(path("x")), "b");
  EXPECT_EQ(entries(), 1);
}

TEST_F(FileIoTest, AtomicWriterErrorsNameOpTargetAndCause) {
  const std::string missing = path("no_such_folder/out.txt");
  EXPECT_THROWS_WITH(io::AtomicFileWriter(missing, "save_thing"),
                     "save_thing '" + missing + "': cannot create temporary file '" + missing + ".tmp.",
                     "No such file");
  // A non-empty folder that appears in the way after the writer started (one there before is refused at once):
  // the rename fails, and the temporary file is gone.
  const std::string blocked = path("blocked");
  EXPECT_THROWS_WITH(
      {
        io::AtomicFileWriter out(blocked, "save_thing");
        out.write("data");
        fs::create_directory(blocked);
        io::write_file_atomically(path("blocked/inside"), "x", "save_thing");
        out.commit();
      },
      "save_thing '" + blocked + "': cannot rename the temporary file into place: ");
  EXPECT_EQ(entries(), 1);
  EXPECT_TRUE(fs::is_directory(blocked));
}

// A disk that takes part of the file: the write fails naming the target, the cause and what to do, the old
// file stays whole, and the temporary file is gone at once (the space it held is needed back).
TEST_F(FileIoTest, AWriteThatDoesNotFitLeavesTheOldFile) {
  const std::string target = path("out.bin");
  io::write_file_atomically(target, "old", "save_thing");
  const std::string big(20000, 'x');
  io::WriteError e("", "", 0);
  {
    test::FileSizeLimit limit(8192);
    ASSERT_TRUE(limit.ok());
    e = write_error_of([&] { io::write_file_atomically(target, big, "save_thing"); });
  }
  EXPECT_EQ(e.error_number(), EFBIG);
  EXPECT_EQ(e.path(), target);
  const std::string m = e.what();
  EXPECT_NE(m.find("save_thing '" + target + "': write failed: File too large (the file outgrew"), std::string::npos)
      << m;
  EXPECT_NE(m.find("write somewhere else"), std::string::npos) << m;
  EXPECT_EQ(read_bytes(target), "old");
  EXPECT_EQ(entries(), 1);
}

TEST_F(FileIoTest, AFullTmpfsLeavesTheOldFileAndGetsItsSpaceBack) {
  const std::string disk = path("disk");
  fs::create_directory(disk);
  test::SmallTmpfs tmpfs(disk, 64 * 1024);
  if (!tmpfs.available()) GTEST_SKIP() << tmpfs.skip_reason();
  const std::string target = disk + "/out.bin";
  io::write_file_atomically(target, "old", "save_thing");
  const io::WriteError e =
      write_error_of([&] { io::write_file_atomically(target, std::string(200 * 1024, 'x'), "save_thing"); });
  EXPECT_EQ(e.error_number(), ENOSPC);
  EXPECT_NE(std::string(e.what()).find("save_thing '" + target + "': write failed: No space left on device (the "
                                       "file system is full: free space on it or write somewhere else)"),
            std::string::npos)
      << e.what();
  EXPECT_EQ(read_bytes(target), "old");
  EXPECT_EQ(entries_in(disk), 1);
  io::write_file_atomically(target, std::string(32 * 1024, 'y'), "save_thing");  // the space came back
  EXPECT_EQ(read_bytes(target).size(), 32u * 1024);
}

TEST_F(FileIoTest, AReadOnlyTmpfsRefusesTheTemporaryFile) {
  const std::string disk = path("disk");
  fs::create_directory(disk);
  test::SmallTmpfs tmpfs(disk, 64 * 1024);
  if (!tmpfs.available()) GTEST_SKIP() << tmpfs.skip_reason();
  const std::string target = disk + "/out.bin";
  io::write_file_atomically(target, "old", "save_thing");
  ASSERT_TRUE(tmpfs.set_read_only(true));
  const io::WriteError e = write_error_of([&] { io::write_file_atomically(target, "new", "save_thing"); });
  ASSERT_TRUE(tmpfs.set_read_only(false));
  EXPECT_EQ(e.error_number(), EROFS);
  EXPECT_NE(std::string(e.what()).find("save_thing '" + target + "': cannot create temporary file '" + target +
                                       ".tmp."),
            std::string::npos)
      << e.what();
  EXPECT_NE(std::string(e.what()).find(": Read-only file system (the file system is mounted read-only: write "
                                       "somewhere else)"),
            std::string::npos)
      << e.what();
  EXPECT_EQ(read_bytes(target), "old");
}

// Root writes through chmod; without that override a 0555 folder refuses the temporary file.
TEST_F(FileIoTest, AFolderWithoutWritePermissionRefusesTheTemporaryFile) {
  const std::string locked = path("locked");
  fs::create_directory(locked);
  const std::string target = locked + "/out.bin";
  io::write_file_atomically(target, "old", "save_thing");
  ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);
  ASSERT_EQ(::chmod(locked.c_str(), 0555), 0);
  io::WriteError e("", "", 0);
  {
    test::NoPermissionOverride as_nobody;
    if (!as_nobody.ok()) GTEST_SKIP() << as_nobody.skip_reason();
    e = write_error_of([&] { io::write_file_atomically(target, "new", "save_thing"); });
  }
  ASSERT_EQ(::chmod(locked.c_str(), 0755), 0);
  EXPECT_EQ(e.error_number(), EACCES);
  EXPECT_NE(std::string(e.what()).find(": Permission denied (no permission to write there: make the folder "
                                       "writable or write somewhere else)"),
            std::string::npos)
      << e.what();
  EXPECT_EQ(read_bytes(target), "old");
}

TEST_F(FileIoTest, AFailedRenameIsAWriteError) {
  const std::string blocked = path("blocked");
  const io::WriteError e = write_error_of([&] {
    io::AtomicFileWriter out(blocked, "save_thing");
    fs::create_directory(blocked);  // in the way only after the writer checked the path
    io::write_file_atomically(path("blocked/inside"), "x", "save_thing");
    out.commit();
  });
  EXPECT_TRUE(e.error_number() == EISDIR || e.error_number() == ENOTEMPTY || e.error_number() == EEXIST)
      << e.error_number();
  EXPECT_EQ(e.path(), blocked);
}

}  // namespace
}  // namespace rematch
