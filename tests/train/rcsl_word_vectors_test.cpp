// --word_vectors (train/methods/rcsl/word_vectors.h): GloVe text parsing, the official word-hit retry
// (encoders.py: drop '-', '.', '\'', keep the part before '/'), words holding spaces, and the errors.
#include <algorithm>
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
      "dog 99 98 97\n");  // a repeated word: the last vector counts (torchtext's stoi)
  const Tensor emb = full({vocab.size(), 3}, 0.5);
  const train::rcsl::WordVectorStats s = train::rcsl::load_word_vectors(file, vocab, emb);
  EXPECT_EQ(s.found, 6);
  EXPECT_EQ(s.vocabulary, vocab.size());
  EXPECT_EQ(s.file_words, 8);
  EXPECT_TRUE(test::values_equal(select(emb, 0, dog), {99, 98, 97}));
  EXPECT_TRUE(test::values_equal(select(emb, 0, well), {4, 5, 6}));
  EXPECT_TRUE(test::values_equal(select(emb, 0, us), {7, 8, 9}));
  EXPECT_TRUE(test::values_equal(select(emb, 0, andor), {10, 11, 12}));
  EXPECT_TRUE(test::values_equal(select(emb, 0, its), {13, 14, 15}));  // the exact spelling wins over the retry
  EXPECT_TRUE(test::values_equal(select(emb, 0, spaced), {16, 17, 18}));
  EXPECT_TRUE(test::values_equal(select(emb, 0, missing), {0.5, 0.5, 0.5}));
  EXPECT_TRUE(test::values_equal(select(emb, 0, data::Vocabulary::kUnk), {0.5, 0.5, 0.5}));
}

// With a file, the official code keeps nn.Embedding's N(0, 1) in every row GloVe lacks — the four special
// words included — and writes the file's vectors into the others.
TEST_F(RcslWordVectors, RowsTheFileLacksAreStandardNormal) {
  data::Vocabulary vocab;
  const int64_t dog = vocab.add_word("dog");
  for (int i = 0; i < 300; ++i) vocab.add_word("w" + std::to_string(i));
  const std::string file = write("dog 1 2 3\n");
  const Tensor emb = full({vocab.size(), 3}, 0.05);  // as a U(-0.1, 0.1) init would leave it: all |x| <= 0.1
  Generator gen(7);
  const train::rcsl::WordVectorStats s = train::rcsl::init_from_word_vectors(file, vocab, emb, gen);
  EXPECT_EQ(s.found, 1);
  EXPECT_TRUE(test::values_equal(select(emb, 0, dog), {1, 2, 3}));
  // Every other row was redrawn N(0, 1): mean ~0, variance ~1 over 303 x 3 values, none left at 0.05.
  std::vector<double> rest;
  for (int64_t id = 0; id < vocab.size(); ++id)
    if (id != dog)
      for (double x : to(select(emb, 0, id), DType::Float64).to_vector<double>()) rest.push_back(x);
  double mean = 0, var = 0;
  for (double x : rest) mean += x / static_cast<double>(rest.size());
  for (double x : rest) var += (x - mean) * (x - mean) / static_cast<double>(rest.size());
  EXPECT_NEAR(mean, 0.0, 0.15);
  EXPECT_NEAR(var, 1.0, 0.2);
  EXPECT_EQ(std::count(rest.begin(), rest.end(), static_cast<double>(0.05f)), 0);
  for (int64_t special : {data::Vocabulary::kPad, data::Vocabulary::kStart, data::Vocabulary::kEnd,
                          data::Vocabulary::kUnk})
    EXPECT_FALSE(test::values_equal(select(emb, 0, special), {0.05, 0.05, 0.05})) << special;
  // The same generator state gives the same rows; a bad file changes neither the embedding nor the generator.
  Generator again(7);
  const Tensor emb2 = zeros({vocab.size(), 3});
  train::rcsl::init_from_word_vectors(file, vocab, emb2, again);
  EXPECT_TRUE(test::values_equal(emb2, to(emb, DType::Float64).to_vector<double>()));
  const Tensor untouched = zeros({vocab.size(), 3});
  Generator fresh(7);
  EXPECT_THROWS_WITH(train::rcsl::init_from_word_vectors(write("dog 1 x 3\n"), vocab, untouched, fresh), "line 1");
  EXPECT_EQ(amax(abs(untouched)).item<double>(), 0.0);
  EXPECT_EQ(fresh.offset(), 0u);
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

// A vector holding nan, inf or a number beyond float (strtof reads all three) would put NaN into the embedding.
TEST_F(RcslWordVectors, NonFiniteVectorsAreRefused) {
  data::Vocabulary vocab;
  vocab.add_word("dog");
  const Tensor emb = zeros({vocab.size(), 3});
  EXPECT_THROWS_WITH(train::rcsl::load_word_vectors(write("dog 1 nan 3\n"), vocab, emb), "vectors.txt", "line 1",
                     "field 3 is nan (nan); word vectors must be finite");
  EXPECT_THROWS_WITH(train::rcsl::load_word_vectors(write("cat 1 2 3\ndog 1e400 2 3\n"), vocab, emb), "line 2",
                     "field 2 is inf (1e400)");
  EXPECT_THROWS_WITH(train::rcsl::load_word_vectors(write("dog -inf 2 3\n"), vocab, emb), "field 2 is -inf");
  EXPECT_EQ(amax(abs(emb)).item<double>(), 0.0);
}

}  // namespace
}  // namespace rematch
