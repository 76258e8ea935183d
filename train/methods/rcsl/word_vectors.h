// Word-embedding initialisation from a GloVe text file (`--word_vectors FILE`; SPEC decision 7, §3.2). RCSL's
// train.sh initialises its text encoder with GloVe 840B-300d through torchtext, which cannot be downloaded here,
// so the file is the user's. Format: one word per line followed by its `dim` numbers, space separated (a word
// may itself hold spaces, as a few 840B entries do: the last `dim` fields are the vector). Each vocabulary word
// found gets its vector; the others keep their uniform initialisation. The lookup repeats the official
// "word-hit" trick (encoders.py EncoderText_gru.init_weights): a word missing from the file is retried with '-',
// '.' and '\'' removed and, if it holds a '/', only its part before the first '/'.
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

}  // namespace rematch::train::rcsl
