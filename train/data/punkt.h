// Sentence splitting exactly as NLTK 3.8's PunktSentenceTokenizer does it (nltk/tokenize/punkt.py), the first
// half of nltk.word_tokenize, which SCAN/SGRAF/NCR/L2RM/RCL ran on every caption. Its only effect on a caption is
// that a period ending an inner sentence ("a dog. a cat") becomes a token of its own, while the period of an
// abbreviation ("st. bernard") stays on the word.
//
// Punkt is a trained model, and NLTK's English model (nltk_data `punkt`) is not available to this project. We run
// the algorithm with an explicit parameter set instead: a list of abbreviations (caption_punkt_parameters) and no
// collocations, no frequent sentence starters and no orthographic statistics. On lower-cased captions the
// heuristics that need those statistics reduce to: an abbreviation never ends a sentence; an initial ("j.") or a
// number ("5.") followed by a lower-case word does not end one either. Both hold for the English model in all
// but rare cases, so the difference from the trained model is the abbreviation list itself.
#pragma once

#include <set>
#include <string>
#include <utility>
#include <vector>

namespace rematch::data {

struct PunktParameters {
  // Lower-case abbreviation types without their final period ("dr", "a.m").
  std::set<std::u32string> abbreviations;
};

// The abbreviations used for captions: titles, street and unit abbreviations, times and Latin abbreviations
// that show up in image descriptions. tests/reference/tokenizer_reference.py uses the same list.
const PunktParameters& caption_punkt_parameters();

// [start, end) code-point spans of the sentences of `text` (boundaries realigned past closing quotes and
// brackets, trailing whitespace of the last sentence dropped), as PunktSentenceTokenizer.span_tokenize.
std::vector<std::pair<size_t, size_t>> punkt_sentence_spans(const std::u32string& text,
                                                            const PunktParameters& params);
std::vector<std::u32string> punkt_sentences(const std::u32string& text, const PunktParameters& params);

}  // namespace rematch::data
