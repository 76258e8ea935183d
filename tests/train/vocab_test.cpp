// Vocabulary JSON files in the SCAN layout: loading, saving, encoding, the builder, and every malformed file.
#include "train/data/vocab.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "test_util.h"

namespace rematch::data {
namespace {

namespace fs = std::filesystem;

// A fresh folder per test, removed afterwards.
class VocabTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("rematch_vocab_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  fs::path dir_;
};

// Keys out of order and string ids, as json.dump writes a Python dict.
const char* kScanStyle =
    R"({"word2idx": {"<pad>": 0, "<start>": 1, "<end>": 2, "<unk>": 3, "dog": 5, "a": 4},
        "idx2word": {"5": "dog", "0": "<pad>", "1": "<start>", "2": "<end>", "3": "<unk>", "4": "a"}, "idx": 6})";

TEST_F(VocabTest, LoadsTheScanLayout) {
  const Vocabulary v = Vocabulary::load(write("v.json", kScanStyle));
  EXPECT_EQ(v.size(), 6);
  EXPECT_EQ(v.id("a"), 4);
  EXPECT_EQ(v.id("dog"), 5);
  EXPECT_EQ(v.id("cat"), Vocabulary::kUnk);
  EXPECT_EQ(v.word(5), "dog");
  EXPECT_TRUE(v.contains("<end>"));
  EXPECT_THROWS_WITH(v.word(6), "id 6", "[0, 6)");
}

TEST_F(VocabTest, SaveThenLoadIsTheSameVocabulary) {
  Vocabulary v;
  v.add_word("zebra");
  v.add_word("ünïcode");
  EXPECT_EQ(v.add_word("zebra"), 4);  // already there
  const std::string path = (dir_ / "out.json").string();
  v.save(path);
  const Vocabulary w = Vocabulary::load(path);
  ASSERT_EQ(w.size(), 6);
  for (int64_t i = 0; i < w.size(); ++i) EXPECT_EQ(w.word(i), v.word(i));
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_LT(text.find("\"word2idx\""), text.find("\"idx2word\""));
  EXPECT_LT(text.find("\"0\":\"<pad>\""), text.find("\"5\":"));
}

TEST_F(VocabTest, EncodeAndDecode) {
  const Vocabulary v = Vocabulary::load(write("v.json", kScanStyle));
  EXPECT_EQ(v.encode({"a", "dog", "barks"}), (std::vector<int64_t>{1, 4, 5, 3, 2}));
  EXPECT_EQ(v.decode({1, 4, 5, 3, 2, 0, 0}), (std::vector<std::string>{"a", "dog", "<unk>"}));
  EXPECT_EQ(v.decode({1, 4, 2}, true), (std::vector<std::string>{"<start>", "a", "<end>"}));
  EXPECT_THROWS_WITH(v.decode({1, 99}), "id 99");
}

TEST_F(VocabTest, BuilderKeepsWordsSeenFourTimesInFirstAppearanceOrder) {
  std::vector<std::string> captions = {"A zebra eats.", "The zebra sleeps.", "a Zebra, a dog.", "ZEBRA and a dog!"};
  const Vocabulary v = build_vocabulary(captions, 4);
  // Counts: a 4, zebra 4, . 3, dog 2, ...; tokens are lower-cased first.
  ASSERT_EQ(v.size(), 6);
  EXPECT_EQ(v.word(0), "<pad>");
  EXPECT_EQ(v.word(3), "<unk>");
  EXPECT_EQ(v.word(4), "a");
  EXPECT_EQ(v.word(5), "zebra");
  EXPECT_EQ(build_vocabulary(captions, 2).size(), 4 + 4);  // a zebra . dog
  EXPECT_THROWS_WITH(build_vocabulary(captions, 0), "min_count", "0");
}

TEST_F(VocabTest, PathFollowsTheRepositories) {
  EXPECT_EQ(vocabulary_path("data/vocab", "f30k_precomp"), "data/vocab/f30k_precomp_vocab.json");
}

// `--data_name f30k_precomp/` (as a shell completes it) must not look for f30k_precomp/_vocab.json.
TEST_F(VocabTest, TrailingSlashesAreDropped) {
  EXPECT_EQ(vocabulary_path("data/vocab/", "f30k_precomp//"), "data/vocab/f30k_precomp_vocab.json");
  EXPECT_EQ(without_trailing_slashes("f30k_precomp/"), "f30k_precomp");
  EXPECT_EQ(without_trailing_slashes("/"), "/");
  EXPECT_EQ(without_trailing_slashes(""), "");
}

// --vocab_path when given (and only there), else <data_path>/vocab, else ./vocab as the official
// scripts read it; the error names every place tried and the flag.
TEST_F(VocabTest, LookupOrderIsFlagThenDataPathThenWorkingDirectory) {
  const fs::path previous = fs::current_path();
  fs::create_directories(dir_ / "cwd/vocab");
  fs::create_directories(dir_ / "data/vocab");
  fs::create_directories(dir_ / "mine");
  fs::current_path(dir_ / "cwd");
  const std::string data = (dir_ / "data").string();
  EXPECT_THROWS_WITH(find_vocabulary_file("", data, "f30k_precomp/"), "no vocabulary file: neither '",
                     data + "/vocab/f30k_precomp_vocab.json' nor './vocab/f30k_precomp_vocab.json' exists",
                     "give --vocab_path");
  write("cwd/vocab/f30k_precomp_vocab.json", kScanStyle);
  EXPECT_EQ(find_vocabulary_file("", data, "f30k_precomp/"), "./vocab/f30k_precomp_vocab.json");
  write("data/vocab/f30k_precomp_vocab.json", kScanStyle);
  EXPECT_EQ(find_vocabulary_file("", data + "/", "f30k_precomp"), data + "/vocab/f30k_precomp_vocab.json");
  const std::string mine = (dir_ / "mine").string();
  EXPECT_THROWS_WITH(find_vocabulary_file(mine, data, "f30k_precomp"), "--vocab_path " + mine,
                     "no vocabulary file '" + mine + "/f30k_precomp_vocab.json'");
  write("mine/f30k_precomp_vocab.json", kScanStyle);
  EXPECT_EQ(find_vocabulary_file(mine, data, "f30k_precomp"), mine + "/f30k_precomp_vocab.json");
  fs::current_path(previous);
}

TEST_F(VocabTest, MissingFileNamesIt) {
  const std::string path = (dir_ / "nope.json").string();
  EXPECT_THROWS_WITH(Vocabulary::load(path), "vocabulary file '" + path + "': cannot open: No such file");
}

TEST_F(VocabTest, MalformedJsonNamesTheFile) {
  const std::string path = write("bad.json", "{\"word2idx\": {");
  EXPECT_THROWS_WITH(Vocabulary::load(path), path, "not valid JSON");
  EXPECT_THROWS_WITH(Vocabulary::load(write("arr.json", "[1, 2]")), "arr.json", "word2idx, idx2word and idx");
}

TEST_F(VocabTest, SpecialTokensMustBeTheFirstFourIds) {
  const std::string path = write("swapped.json",
                                 R"({"word2idx": {"<pad>": 0, "<unk>": 1, "<end>": 2, "<start>": 3},
                                     "idx2word": {"0": "<pad>", "1": "<unk>", "2": "<end>", "3": "<start>"},
                                     "idx": 4})");
  EXPECT_THROWS_WITH(Vocabulary::load(path), path, "special tokens", "id 1 is \"<unk>\"");
  const std::string none = write("none.json",
                                 R"({"word2idx": {"a": 0, "b": 1, "c": 2, "d": 3, "e": 4},
                                     "idx2word": {"0": "a", "1": "b", "2": "c", "3": "d", "4": "e"}, "idx": 5})");
  EXPECT_THROWS_WITH(Vocabulary::load(none), none, "<pad>=0 <start>=1 <end>=2 <unk>=3", "id 0 is \"a\"");
}

TEST_F(VocabTest, SizesAndIdsMustAgree) {
  const std::string count = write("count.json",
                                  R"({"word2idx": {"<pad>": 0, "<start>": 1, "<end>": 2, "<unk>": 3},
                                      "idx2word": {"0": "<pad>", "1": "<start>", "2": "<end>", "3": "<unk>"},
                                      "idx": 7})");
  EXPECT_THROWS_WITH(Vocabulary::load(count), count, "idx = 7", "idx2word has 4");
  const std::string gap = write("gap.json",
                                R"({"word2idx": {"<pad>": 0, "<start>": 1, "<end>": 2, "<unk>": 3, "x": 5},
                                    "idx2word": {"0": "<pad>", "1": "<start>", "2": "<end>", "3": "<unk>", "5": "x"},
                                    "idx": 5})");
  EXPECT_THROWS_WITH(Vocabulary::load(gap), gap, "id 5", "out of range");
  const std::string key = write("key.json",
                                R"({"word2idx": {"<pad>": 0, "<start>": 1, "<end>": 2, "<unk>": 3},
                                    "idx2word": {"0": "<pad>", "1": "<start>", "2": "<end>", "03": "<unk>"},
                                    "idx": 4})");
  EXPECT_THROWS_WITH(Vocabulary::load(key), key, "\"03\" is not a word id");
  const std::string mismatch = write("mismatch.json",
                                     R"({"word2idx": {"<pad>": 0, "<start>": 1, "<end>": 2, "<unk>": 3, "x": 3},
                                         "idx2word": {"0": "<pad>", "1": "<start>", "2": "<end>", "3": "<unk>",
                                                      "4": "y"}, "idx": 5})");
  EXPECT_THROWS_WITH(Vocabulary::load(mismatch), mismatch, "word2idx[\"x\"] = 3", "disagrees");
}

}  // namespace
}  // namespace rematch::data
