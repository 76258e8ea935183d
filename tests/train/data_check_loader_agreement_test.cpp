// `rematch data check` finds every problem the loader would: for each damaged data folder below, either the
// checker reports an error naming the file (and the loader indeed refuses the folder), or the checker passes and
// the loader (PrecompDataset, every split) loads it. Cases: an empty caption file, captions that are neither one
// nor five per row, a header dimension that overflows, a header shape whose byte count overflows, NaN and Inf
// features, blank captions, features of the wrong rank.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>

#include <sys/stat.h>

#include "program_runner.h"
#include "tensor/npy.h"
#include "test_util.h"
#include "train/data/data_check.h"
#include "train/data/precomp_dataset.h"
#include "train/data/vocab.h"

namespace rematch::data {
namespace {

namespace fs = std::filesystem;

// An .npy file with a hand-written header (the shape as text), as a damaged or hostile file may hold.
void raw_npy(const std::string& path, const std::string& shape, size_t data_bytes) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
  bytes += static_cast<char>(header.size() & 0xff);
  bytes += static_cast<char>(header.size() >> 8);
  bytes += header + std::string(data_bytes, '\0');
  std::ofstream(path, std::ios::binary) << bytes;
}

class DataCheckLoaderAgreementTest : public test::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    make_folder();
  }
  // The intact folder, anew.
  void make_folder() {
    fs::remove_all(dir_ / "toy_precomp");
    fs::remove_all(dir_ / "vocab");
    fs::create_directories(dir_ / "toy_precomp");
    fs::create_directories(dir_ / "vocab");
    images("train", 20);
    captions("train", 100);
    images("dev", 4);
    captions("dev", 20);
    images("test", 4);
    captions("test", 20);
    Vocabulary v;
    for (const char* w : {"a", "dog", "."}) v.add_word(w);
    v.save(path("vocab/toy_precomp_vocab.json"));
  }
  std::string file(const std::string& name) const { return path("toy_precomp/" + name); }
  void images(const std::string& split, int64_t rows, float poison = 0, int64_t poisoned_row = -1) {
    std::vector<float> v;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < 12; ++k) v.push_back(r == poisoned_row && k == 7 ? poison : static_cast<float>(r * 100 + k));
    save_npy(file(split + "_ims.npy"), from_vector(v, {rows, 3, 4}));
  }
  void captions(const std::string& split, int64_t n, const std::string& caption = "A dog.") {
    std::ofstream f(file(split + "_caps.txt"), std::ios::binary);
    for (int64_t i = 0; i < n; ++i) f << caption << "\n";
  }
  DataCheckReport check() const {
    DataCheckOptions o;
    o.data_path = dir_.string();
    o.data_name = "toy_precomp";
    return check_data(o);
  }
  // The loader on every split: "" when all load, else the first error.
  std::string load_all() const {
    try {
      const Vocabulary v = Vocabulary::load(path("vocab/toy_precomp_vocab.json"));
      for (const char* split : {"train", "dev", "test"}) PrecompDataset(dir_.string(), "toy_precomp", split, v);
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  }
  // The checker's errors, one per line.
  static std::string errors(const DataCheckReport& r) {
    std::string out;
    for (const CheckItem& i : r.items)
      if (i.severity == Severity::error) out += i.path + " (" + i.status + "): " + i.problem + "\n";
    return out;
  }
};

TEST_F(DataCheckLoaderAgreementTest, AnIntactFolderPassesBothAndEachDamageIsFoundByTheChecker) {
  ASSERT_TRUE(check().ok()) << errors(check());
  ASSERT_EQ(load_all(), "");
  struct Case {
    std::string name, file, said;  // the file the checker must name, and a part of its problem
    std::function<void()> damage;
  };
  const std::vector<Case> cases = {
      {"empty caption file", file("train_caps.txt"), "holds no caption", [&] { captions("train", 0); }},
      {"captions neither 1x nor 5x the rows", file("test_caps.txt"), "the loader needs 4 (one row per caption) or 20",
       [&] { captions("test", 7); }},
      {"overflowing header dimension", file("dev_ims.npy"), "is not a non-negative integer of at most 18 digits",
       [&] { raw_npy(file("dev_ims.npy"), "(99999999999999999999, 3, 4)", 48); }},
      {"header shape whose byte count overflows", file("dev_ims.npy"), "overflows 64 bits",
       [&] { raw_npy(file("dev_ims.npy"), "(4000000000000, 4000000000000, 4)", 48); }},
      {"NaN feature", file("dev_ims.npy"), "row 2 holds nan (element [2, 1, 3])", [&] { images("dev", 4, NAN, 2); }},
      {"Inf feature", file("test_ims.npy"), "row 3 holds inf", [&] { images("test", 4, INFINITY, 3); }},
      {"blank caption", file("dev_caps.txt"), "empty caption", [&] { captions("dev", 20, "   "); }},
      {"features of the wrong rank", file("test_ims.npy"), "has shape [4, 12]",
       [&] { save_npy(file("test_ims.npy"), zeros({4, 12})); }},
  };
  for (const Case& c : cases) {
    make_folder();
    c.damage();
    const DataCheckReport r = check();
    const std::string loaded = load_all();
    if (r.ok()) {
      EXPECT_EQ(loaded, "") << c.name << ": the checker passed a folder the loader refuses";
      ADD_FAILURE() << c.name << ": the checker found nothing";
      continue;
    }
    EXPECT_NE(loaded, "") << c.name << ": the checker refused a folder the loader reads";
    const std::string said = errors(r);
    EXPECT_NE(said.find(c.file), std::string::npos) << c.name << ":\n" << said;
    EXPECT_NE(said.find(c.said), std::string::npos) << c.name << ":\n" << said;
    EXPECT_EQ(said.find("stoll"), std::string::npos) << c.name << ":\n" << said;
  }
}

// A FIFO in the place of a data file: the checker names it at once (its readers never wait on it), as the
// loader does.
TEST_F(DataCheckLoaderAgreementTest, FifosAreNamedNotWaitedOn) {
  for (const char* name : {"train_caps.txt", "dev_ims.npy"}) {
    make_folder();
    fs::remove(file(name));
    ASSERT_EQ(::mkfifo(file(name).c_str(), 0644), 0);
    rematch::test::Program p({"data", "check", "--data_path", dir_.string(), "--data_name", "toy_precomp"}, dir_.string(),
                             path("log.txt"), 1);
    EXPECT_EQ(p.wait(30), 1) << name << ": the data check waited on a FIFO";
    EXPECT_NE(p.log().find("'" + file(name) + "': is a FIFO (named pipe), not a regular file"), std::string::npos)
        << p.log();
    EXPECT_NE(load_all().find("is a FIFO (named pipe)"), std::string::npos) << name;
  }
}

}  // namespace
}  // namespace rematch::data
