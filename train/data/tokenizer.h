// Caption tokenisation as every SCAN-lineage repository does it (docs/backbones.md §3.2): strip, lower-case, then
// nltk.word_tokenize — Punkt sentence splitting (punkt.h) followed by NLTK 3.8's NLTKWordTokenizer, the improved
// Treebank word splitter (punctuation split off, "n't"/"'s" clitics separated, '"' written as `` and '',
// hyphenated words kept whole) — and finally ids [<start>] + vocab(tokens) + [<end>], unknown words → <unk>.
// tests/reference/tokenizer_reference.py produces the fixtures that pin this to NLTK itself.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "train/data/vocab.h"

namespace rematch::data {

// NLTKWordTokenizer().tokenize(sentence): Treebank-style splitting of one sentence (UTF-8 in and out). Like
// the original it only splits off a period at the very end of its input.
std::vector<std::string> treebank_tokenize(const std::string& sentence);

// nltk.word_tokenize(text) with the caption Punkt parameters: sentences first, then each one split into words.
std::vector<std::string> word_tokenize(const std::string& text);

// word_tokenize(caption.strip().lower()): the tokens the repositories count and look up in the vocabulary.
std::vector<std::string> tokenize_caption(const std::string& caption);

// vocab.encode(tokenize_caption(caption)): [<start>, ids..., <end>].
std::vector<int64_t> encode_caption(const std::string& caption, const Vocabulary& vocab);

}  // namespace rematch::data
