// Word-embedding initialisation from a GloVe text file (`--word_vectors FILE`; docs/methods/shared.md §0.4 rule 7,
// rcsl.md §3.2). RCSL's train.sh initialises its text encoder with GloVe 840B-300d through torchtext, which cannot
// be downloaded here, so the file is the user's. Format: one word per line followed by its `dim` numbers, space
// separated (a word may itself hold spaces, as a few 840B entries do: the last `dim` fields are the vector). Each
// vocabulary word found gets its vector; a word the file repeats gets its last vector, as torchtext's `stoi`
// (built by one dict comprehension over the file's words) keeps the last index. The lookup repeats the official
// "word-hit" trick (encoders.py EncoderText_gru.init_weights): a word missing from the file is retried with '-',
// '.' and '\'' removed and, if it holds a '/', only its part before the first '/'.
//
// The rows the file lacks, as the official code leaves them (EncoderText_gru.init_weights): with GloVe it never
// touches them, so they keep nn.Embedding's default N(0, 1) — <pad>, <start>, <end>, <unk> included; only
// without GloVe (`word2idx is None`) does it draw every row U(−0.1, 0.1), which is models/vse_text_encoder's
// init and stays so when no --word_vectors is given.
#pragma once

#include <cstdint>
#include <string>

#include "tensor/tensor.h"
#include "train/data/vocab.h"

namespace rematch::train::rcsl {

struct WordVectorStats {
  int64_t found = 0;       // vocabulary words given a vector
  int64_t vocabulary = 0;  // vocabulary size
  int64_t file_words = 0;  // lines read
};

// Writes the vector of every vocabulary word the file has into row `id` of `embedding` [V, dim] (in place, on
// its device, without a graph). A missing file, a line with fewer than dim + 1 fields or a field that is not a
// number is an Error naming the file, the line and dim (so a 100-d file given to --word_dim 300 says so).
WordVectorStats load_word_vectors(const std::string& path, const data::Vocabulary& vocab, const Tensor& embedding);

// The official init with a word-vector file: every row of `embedding` drawn N(0, 1) from `gen` (nn.Embedding's
// default), then load_word_vectors. Errors as load_word_vectors, before anything is drawn or written.
WordVectorStats init_from_word_vectors(const std::string& path, const data::Vocabulary& vocab,
                                       const Tensor& embedding, Generator& gen);

}  // namespace rematch::train::rcsl
