// --word_vectors (train/methods/rcsl/word_vectors.h): GloVe text parsing, the official word-hit retry
// (encoders.py: drop '-', '.', '\'', keep the part before '/'), words holding spaces, and the errors.
#include <fstream>

#include "test_util.h"
#include "train/methods/rcsl/word_vectors.h"

namespace rematch {
namespace {

class RcslWordVectors : public test::TempDirTest {
 protected:
  std::string write(const std::string& text) {
    const std::string p = path("vectors.txt");
    std::ofstream(p) << text;
    return p;
  }
};

TEST_F(RcslWordVectors, ExactHitsThenTheOfficialRetry) {
  data::Vocabulary vocab;  // <pad> <start> <end> <unk> = 0..3
  const int64_t dog = vocab.add_word("dog");
  const int64_t well = vocab.add_word("well-known");
  const int64_t us = vocab.add_word("u.s.");
  const int64_t andor = vocab.add_word("and/or");
  const int64_t its = vocab.add_word("it's");
  const int64_t missing = vocab.add_word("zzz");
  const int64_t spaced = vocab.add_word("new york");
  const std::string file = write(
      "dog 1 2 3\n"
      "wellknown 4 5 6\n"
      "us 7 8 9\n"
      "and 10 11 12\n"
      "it's 13 14 15\n"
      "its -1 -1 -1\n"
      "new york 16 17 18\n"
      "dog 99 99 99\n");  // a repeated word: the first vector counts
  const Tensor emb = full({vocab.size(), 3}, 0.5);
  const train::rcsl::WordVectorStats s = train::rcsl::load_word_vectors(file, vocab, emb);
  EXPECT_EQ(s.found, 6);
  EXPECT_EQ(s.vocabulary, vocab.size());
  EXPECT_EQ(s.file_words, 8);
  EXPECT_TRUE(test::values_equal(select(emb, 0, dog), {1, 2, 3}));
  EXPECT_TRUE(test::values_equal(select(emb, 0, well), {4, 5, 6}));
  EXPECT_TRUE(test::values_equal(select(emb, 0, us), {7, 8, 9}));
  EXPECT_TRUE(test::values_equal(select(emb, 0, andor), {10, 11, 12}));
  EXPECT_TRUE(test::values_equal(select(emb, 0, its), {13, 14, 15}));  // the exact spelling wins over the retry
  EXPECT_TRUE(test::values_equal(select(emb, 0, spaced), {16, 17, 18}));
  EXPECT_TRUE(test::values_equal(select(emb, 0, missing), {0.5, 0.5, 0.5}));
  EXPECT_TRUE(test::values_equal(select(emb, 0, data::Vocabulary::kUnk), {0.5, 0.5, 0.5}));
}

TEST_F(RcslWordVectors, ErrorsNameTheFileAndLine) {
  data::Vocabulary vocab;
  vocab.add_word("dog");
  const Tensor emb = zeros({vocab.size(), 3});
  EXPECT_THROWS_WITH(train::rcsl::load_word_vectors(write("dog 1 2 3\ncat 1 2\n"), vocab, emb), "vectors.txt", "line 2",
                     "3 fields", "--word_dim 3");
  EXPECT_THROWS_WITH(train::rcsl::load_word_vectors(write("dog 1 x 3\n"), vocab, emb), "line 1",
                     "field 3 is not a number");
  EXPECT_THROWS_WITH(train::rcsl::load_word_vectors(path("absent.txt"), vocab, emb), "cannot open", "absent.txt");
  EXPECT_THROWS_WITH(train::rcsl::load_word_vectors(write("dog 1 2 3\n"), vocab, zeros({2, 3})), "must be [5, dim]");
}

}  // namespace
}  // namespace rematch
