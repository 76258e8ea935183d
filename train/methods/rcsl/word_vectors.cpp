#include "train/methods/rcsl/word_vectors.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <unordered_map>
#include <vector>

#include "autograd/autograd.h"
#include "nn/nn.h"
#include "tensor/file_io.h"

namespace rematch::train::rcsl {
namespace {

// encoders.py: word.replace('-', '').replace('.', '').replace("'", ''), then the part before the first '/'.
std::string word_hit_variant(const std::string& word) {
  std::string out;
  for (char ch : word)
    if (ch != '-' && ch != '.' && ch != '\'') out.push_back(ch);
  const size_t slash = out.find('/');
  return slash == std::string::npos ? out : out.substr(0, slash);
}

// Start offsets of the space-separated fields of `line` (empty fields from repeated spaces are skipped).
std::vector<size_t> field_starts(const std::string& line) {
  std::vector<size_t> starts;
  for (size_t i = 0; i < line.size(); ++i)
    if (line[i] != ' ' && (i == 0 || line[i - 1] == ' ')) starts.push_back(i);
  return starts;
}

// The file's vector of each vocabulary id (empty: not in the file), after the word-hit retry.
struct VocabularyVectors {
  std::vector<std::vector<float>> by_id;
  WordVectorStats stats;
};

VocabularyVectors read_word_vectors(const std::string& path, const data::Vocabulary& vocab, const Tensor& embedding) {
  REMATCH_CHECK(embedding.defined() && embedding.dim() == 2 && embedding.size(0) == vocab.size(),
                "load_word_vectors: the embedding must be [", vocab.size(), ", dim], got ",
                embedding.defined() ? embedding.describe() : "undefined");
  const int64_t dim = embedding.size(1);
  io::require_regular_file(path, "--word_vectors");  // an ifstream would wait forever on a FIFO
  std::ifstream in(path);
  REMATCH_CHECK(in.good(), "--word_vectors: cannot open '", path, "'");

  // The keys each vocabulary word may be found under: its own spelling, then the word-hit variant.
  std::unordered_map<std::string, std::vector<float>> wanted;
  for (int64_t id = 0; id < vocab.size(); ++id) {
    wanted.emplace(vocab.word(id), std::vector<float>{});
    wanted.emplace(word_hit_variant(vocab.word(id)), std::vector<float>{});
  }

  WordVectorStats stats;
  stats.vocabulary = vocab.size();
  std::string line;
  int64_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const std::vector<size_t> starts = field_starts(line);
    REMATCH_CHECK(static_cast<int64_t>(starts.size()) >= dim + 1, "--word_vectors '", path, "' line ", line_no, ": ",
                  starts.size(), " fields, expected a word and ", dim, " numbers (--word_dim ", dim, ")");
    ++stats.file_words;
    const size_t first_number = starts[starts.size() - static_cast<size_t>(dim)];
    size_t word_end = first_number;
    while (word_end > 0 && line[word_end - 1] == ' ') --word_end;
    auto it = wanted.find(line.substr(0, word_end));
    if (it == wanted.end()) continue;
    std::vector<float>& v = it->second;
    v.clear();  // a repeated word: the last vector counts (torchtext's stoi)
    v.reserve(static_cast<size_t>(dim));
    const char* p = line.c_str() + first_number;
    for (int64_t k = 0; k < dim; ++k) {
      char* end = nullptr;
      const float x = std::strtof(p, &end);
      REMATCH_CHECK(end != p && (*end == ' ' || *end == '\0'), "--word_vectors '", path, "' line ", line_no, ": field ",
                    k + 2, " is not a number");
      const char* text = p;
      while (*text == ' ') ++text;
      REMATCH_CHECK(std::isfinite(x), "--word_vectors '", path, "' line ", line_no, ": field ", k + 2, " is ", x,
                    " (", std::string(text, static_cast<size_t>(end - text)), "); word vectors must be finite");
      v.push_back(x);
      p = end;
    }
  }
  REMATCH_CHECK(!in.bad(), "--word_vectors: error reading '", path, "' after line ", line_no);

  VocabularyVectors out;
  out.stats = stats;
  for (int64_t id = 0; id < vocab.size(); ++id) {
    const std::vector<float>* v = &wanted.at(vocab.word(id));
    if (v->empty()) v = &wanted.at(word_hit_variant(vocab.word(id)));
    out.by_id.push_back(*v);
    if (!v->empty()) ++out.stats.found;
  }
  return out;
}

void write_rows(const VocabularyVectors& vectors, const Tensor& embedding) {
  NoGradGuard no_grad;
  for (size_t id = 0; id < vectors.by_id.size(); ++id)
    if (!vectors.by_id[id].empty())
      kernels::copy_(kernels::select(embedding, 0, static_cast<int64_t>(id)), from_vector(vectors.by_id[id]));
}

}  // namespace

WordVectorStats load_word_vectors(const std::string& path, const data::Vocabulary& vocab, const Tensor& embedding) {
  const VocabularyVectors vectors = read_word_vectors(path, vocab, embedding);
  write_rows(vectors, embedding);
  return vectors.stats;
}

WordVectorStats init_from_word_vectors(const std::string& path, const data::Vocabulary& vocab,
                                       const Tensor& embedding, Generator& gen) {
  const VocabularyVectors vectors = read_word_vectors(path, vocab, embedding);  // errors before any draw
  {
    NoGradGuard no_grad;
    nn::normal_(embedding, 0.0, 1.0, &gen);  // nn.Embedding's default, kept for the rows the file lacks
  }
  write_rows(vectors, embedding);
  return vectors.stats;
}

}  // namespace rematch::train::rcsl
