// Vocabulary JSON files (train/data/vocab.cpp): Vocabulary::load; a vocabulary that loads saves and loads back
// the same, and encodes and decodes its own words.
#include "fuzz/fuzz_util.h"
#include "train/data/vocab.h"

using namespace rematch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fuzz::write_file("input_vocab.json", fuzz::bytes(data, size));
  data::Vocabulary v;
  if (!fuzz::reads_or_names(path, [&] { v = data::Vocabulary::load(path); })) return 0;
  const std::string copy = fuzz::temp_dir() + "/copy_vocab.json";
  v.save(copy);
  const data::Vocabulary back = data::Vocabulary::load(copy);
  std::vector<std::string> words;
  for (int64_t id = 0; id < v.size(); ++id) {
    if (back.word(id) != v.word(id)) fuzz::fail("save + load changed word " + std::to_string(id));
    words.push_back(v.word(id));
  }
  std::vector<int64_t> ids = v.encode(words);
  if (v.decode(ids, true).size() != words.size() + 2) fuzz::fail("encode + decode changed the number of words");
  return 0;
}
