// GloVe text files for RCSL's word embedding (train/methods/rcsl/word_vectors.cpp): load_word_vectors into a
// [V, 3] embedding of a small vocabulary (words chosen to meet the "word-hit" retries: hyphens, dots, quotes,
// slashes).
#include "fuzz/fuzz_util.h"
#include "train/methods/rcsl/word_vectors.h"

using namespace rematch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const data::Vocabulary vocab = [] {
    data::Vocabulary v;
    for (const char* w : {"the", "dog", "t-shirt", "u.s.", "don't", "and/or", "a"}) v.add_word(w);
    return v;
  }();
  const std::string path = fuzz::write_file("glove.txt", fuzz::bytes(data, size));
  const Tensor embedding = zeros({vocab.size(), 3});
  train::rcsl::WordVectorStats stats;
  if (!fuzz::reads_or_names(path, [&] { stats = train::rcsl::load_word_vectors(path, vocab, embedding); })) return 0;
  if (stats.found < 0 || stats.found > vocab.size()) fuzz::fail("found " + std::to_string(stats.found) + " words");
  return 0;
}
