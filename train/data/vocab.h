// The word vocabulary of the SCAN-lineage repositories (docs/backbones.md §3.1): a JSON file
// `<vocab_path>/<data_name>_vocab.json` with `word2idx` (word → id), `idx2word` (string keys "0", "1", ... →
// word) and `idx` (the size). Ids 0..3 are always <pad> <start> <end> <unk>. The public data sets ship their
// vocabularies and they must be used as shipped (their word order is arbitrary and checkpoints depend on it);
// build_vocabulary is for new data sets only.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace rematch::data {

class Vocabulary {
 public:
  static constexpr int64_t kPad = 0, kStart = 1, kEnd = 2, kUnk = 3;

  // Only the four special tokens.
  Vocabulary();

  // Reads a vocabulary JSON. A missing or malformed file, ids that are not 0..idx-1, word2idx and idx2word
  // that disagree, or special tokens not at 0..3 are an Error naming the file.
  static Vocabulary load(const std::string& path);
  // Writes the same JSON layout (keys in id order), through a temporary file renamed into place.
  void save(const std::string& path) const;

  int64_t size() const { return static_cast<int64_t>(words_.size()); }
  // Appends `word` unless present (RCL adds "<mask>" this way) and returns its id.
  int64_t add_word(const std::string& word);
  bool contains(const std::string& word) const { return ids_.count(word) != 0; }
  // The id of `word`, kUnk when it is not in the vocabulary.
  int64_t id(const std::string& word) const;
  // The word of `id`; an Error when out of range.
  const std::string& word(int64_t id) const;

  // [kStart] + ids of tokens + [kEnd].
  std::vector<int64_t> encode(const std::vector<std::string>& tokens) const;
  // Words of ids; <start>, <end> and <pad> are dropped unless keep_special.
  std::vector<std::string> decode(const std::vector<int64_t>& ids, bool keep_special = false) const;

 private:
  std::vector<std::string> words_;
  std::unordered_map<std::string, int64_t> ids_;
};

// `<vocab_path>/<data_name>_vocab.json`; trailing slashes of data_name are dropped (a shell completes
// `f30k_precomp/`, which must not become `f30k_precomp/_vocab.json`).
std::string vocabulary_path(const std::string& vocab_path, const std::string& data_name);

// `name` without its trailing slashes ("f30k_precomp/" -> "f30k_precomp"; "/" stays "/").
std::string without_trailing_slashes(const std::string& name);

// The vocabulary file of a data set, looked up as the official code and rematch's layout place it:
// in `vocab_path` when that flag is given (and only there), else `<data_path>/vocab`, else
// `./vocab` (where the official scripts read it). An Error names every place tried and the flag to give.
std::string find_vocabulary_file(const std::string& vocab_path, const std::string& data_path,
                                 const std::string& data_name);

// SCAN's build_vocab: tokenise every caption (tokenize_caption), keep words seen at least min_count times,
// specials first, then words in order of first appearance (Python's Counter order).
Vocabulary build_vocabulary(const std::vector<std::string>& captions, int64_t min_count = 4);

}  // namespace rematch::data
