#include "train/data/vocab.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tensor/error.h"
#include "tensor/file_io.h"
#include "tensor/json_depth.h"
#include "train/data/tokenizer.h"

namespace rematch::data {

namespace {

const char* const kSpecials[] = {"<pad>", "<start>", "<end>", "<unk>"};

// The id a JSON key of idx2word stands for; only canonical decimal spellings ("0", "17") are accepted.
int64_t parse_id_key(const std::string& key, const std::string& path) {
  bool canonical = !key.empty() && key.size() <= 18 && (key == "0" || key[0] != '0');
  for (char c : key) canonical = canonical && c >= '0' && c <= '9';
  REMATCH_CHECK(canonical, "vocabulary file '", path, "': idx2word key \"", key, "\" is not a word id");
  return std::stoll(key);
}

}  // namespace

Vocabulary::Vocabulary() {
  for (const char* s : kSpecials) add_word(s);
}

Vocabulary Vocabulary::load(const std::string& path) {
  nlohmann::json j;
  const std::string text = io::read_text_file(path, "vocabulary file");  // names a missing file, refuses a FIFO
  io::require_shallow_json(text, "vocabulary file", path);
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    REMATCH_FAIL("vocabulary file '", path, "' is not valid JSON: ", e.what());
  }
  REMATCH_CHECK(j.is_object() && j.contains("word2idx") && j.contains("idx2word") && j.contains("idx"),
                "vocabulary file '", path, "' must be a JSON object with keys word2idx, idx2word and idx");
  const auto& w2i = j["word2idx"];
  const auto& i2w = j["idx2word"];
  REMATCH_CHECK(w2i.is_object() && i2w.is_object() && j["idx"].is_number_integer(), "vocabulary file '", path,
                "': word2idx and idx2word must be objects and idx an integer");
  const int64_t n = j["idx"].get<int64_t>();
  REMATCH_CHECK(n >= 4 && static_cast<int64_t>(i2w.size()) == n && static_cast<int64_t>(w2i.size()) == n,
                "vocabulary file '", path, "': idx = ", n, " but idx2word has ", i2w.size(), " and word2idx ",
                w2i.size(), " entries (need idx >= 4 and all three equal)");

  std::vector<std::string> words(static_cast<size_t>(n));
  std::vector<bool> seen(static_cast<size_t>(n), false);
  for (const auto& [key, value] : i2w.items()) {
    const int64_t id = parse_id_key(key, path);
    REMATCH_CHECK(id < n, "vocabulary file '", path, "': idx2word id ", id, " is out of range for idx = ", n);
    REMATCH_CHECK(value.is_string(), "vocabulary file '", path, "': idx2word[\"", key, "\"] is not a string");
    words[static_cast<size_t>(id)] = value.get<std::string>();
    seen[static_cast<size_t>(id)] = true;
  }
  for (int64_t i = 0; i < n; ++i)
    REMATCH_CHECK(seen[static_cast<size_t>(i)], "vocabulary file '", path, "': idx2word has no id ", i);
  for (int64_t i = 0; i < 4; ++i)
    REMATCH_CHECK(words[static_cast<size_t>(i)] == kSpecials[i], "vocabulary file '", path,
                  "': special tokens must be <pad>=0 <start>=1 <end>=2 <unk>=3, but id ", i, " is \"",
                  words[static_cast<size_t>(i)], "\"");

  Vocabulary v;
  v.words_.clear();
  v.ids_.clear();
  for (int64_t i = 0; i < n; ++i) {
    const std::string& w = words[static_cast<size_t>(i)];
    REMATCH_CHECK(v.ids_.emplace(w, i).second, "vocabulary file '", path, "': word \"", w, "\" appears at ids ",
                  v.ids_[w], " and ", i);
    v.words_.push_back(w);
  }
  for (const auto& [word, value] : w2i.items()) {
    const auto it = v.ids_.find(word);
    REMATCH_CHECK(value.is_number_integer() && it != v.ids_.end() && it->second == value.get<int64_t>(),
                  "vocabulary file '", path, "': word2idx[\"", word, "\"] = ", value.dump(),
                  " disagrees with idx2word", it == v.ids_.end() ? " (word missing there)" : "");
  }
  return v;
}

void Vocabulary::save(const std::string& path) const {
  nlohmann::ordered_json w2i = nlohmann::ordered_json::object(), i2w = nlohmann::ordered_json::object();
  for (int64_t i = 0; i < size(); ++i) {
    w2i[words_[static_cast<size_t>(i)]] = i;
    i2w[std::to_string(i)] = words_[static_cast<size_t>(i)];
  }
  nlohmann::ordered_json j;
  j["word2idx"] = std::move(w2i);
  j["idx2word"] = std::move(i2w);
  j["idx"] = size();
  io::write_file_atomically(path, j.dump(), "Vocabulary::save");
}

int64_t Vocabulary::add_word(const std::string& word) {
  const auto [it, inserted] = ids_.emplace(word, size());
  if (inserted) words_.push_back(word);
  return it->second;
}

int64_t Vocabulary::id(const std::string& word) const {
  const auto it = ids_.find(word);
  return it == ids_.end() ? kUnk : it->second;
}

const std::string& Vocabulary::word(int64_t id) const {
  REMATCH_CHECK(id >= 0 && id < size(), "vocabulary: id ", id, " is out of range [0, ", size(), ")");
  return words_[static_cast<size_t>(id)];
}

std::vector<int64_t> Vocabulary::encode(const std::vector<std::string>& tokens) const {
  std::vector<int64_t> ids;
  ids.reserve(tokens.size() + 2);
  ids.push_back(kStart);
  for (const std::string& t : tokens) ids.push_back(id(t));
  ids.push_back(kEnd);
  return ids;
}

std::vector<std::string> Vocabulary::decode(const std::vector<int64_t>& ids, bool keep_special) const {
  std::vector<std::string> words;
  for (int64_t i : ids) {
    if (!keep_special && (i == kPad || i == kStart || i == kEnd)) continue;
    words.push_back(word(i));
  }
  return words;
}

std::string without_trailing_slashes(const std::string& name) {
  const size_t end = name.find_last_not_of('/');
  return end == std::string::npos ? name.substr(0, 1) : name.substr(0, end + 1);
}

std::string vocabulary_path(const std::string& vocab_path, const std::string& data_name) {
  return without_trailing_slashes(vocab_path) + "/" + without_trailing_slashes(data_name) + "_vocab.json";
}

std::string find_vocabulary_file(const std::string& vocab_path, const std::string& data_path,
                                 const std::string& data_name) {
  if (!vocab_path.empty()) {
    const std::string given = vocabulary_path(vocab_path, data_name);
    REMATCH_CHECK(std::filesystem::is_regular_file(given), "--vocab_path ", vocab_path, ": there is no vocabulary file '",
                  given, "' (give the folder that holds ", without_trailing_slashes(data_name), "_vocab.json)");
    return given;
  }
  const std::string beside_data = vocabulary_path(without_trailing_slashes(data_path) + "/vocab", data_name);
  const std::string here = vocabulary_path("./vocab", data_name);
  for (const std::string& candidate : {beside_data, here})
    if (std::filesystem::is_regular_file(candidate)) return candidate;
  REMATCH_FAIL("no vocabulary file: neither '", beside_data, "' nor '", here, "' exists; give --vocab_path, the ",
               "folder that holds ", without_trailing_slashes(data_name), "_vocab.json");
}

Vocabulary build_vocabulary(const std::vector<std::string>& captions, int64_t min_count) {
  REMATCH_CHECK(min_count >= 1, "build_vocabulary: min_count must be at least 1, got ", min_count);
  std::vector<std::string> order;  // first appearance, as Counter iterates
  std::unordered_map<std::string, int64_t> counts;
  for (const std::string& caption : captions)
    for (std::string& token : tokenize_caption(caption))
      if (counts[token]++ == 0) order.push_back(std::move(token));
  Vocabulary v;
  for (const std::string& w : order)
    if (counts[w] >= min_count) v.add_word(w);
  return v;
}

}  // namespace rematch::data
