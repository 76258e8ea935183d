#include "tensor/file_io.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>

#include "test_util.h"

namespace rematch {
namespace {

namespace fs = std::filesystem;

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class FileIoTest : public test::TempDirTest {
 protected:
  int64_t entries() const { return std::distance(fs::directory_iterator(dir_), fs::directory_iterator()); }
};

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
  io::ReadFile folder(dir_.string(), "load_thing");  // a folder opens read-only, but has no size
  EXPECT_THROWS_WITH(folder.size(), "load_thing '" + dir_.string() + "': not a regular file");
  char c;
  EXPECT_THROWS_WITH(folder.read_at(&c, 1, 0), "load_thing '" + dir_.string() + "': read failed: ");
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
  // A non-empty folder in the way: the rename fails, and the temporary file is gone.
  const std::string blocked = path("blocked");
  fs::create_directory(blocked);
  io::write_file_atomically(path("blocked/inside"), "x", "save_thing");
  EXPECT_THROWS_WITH(io::write_file_atomically(blocked, "data", "save_thing"),
                     "save_thing '" + blocked + "': cannot rename the temporary file into place: ");
  EXPECT_EQ(entries(), 1);
  EXPECT_TRUE(fs::is_directory(blocked));
}

}  // namespace
}  // namespace rematch
