// The small English grammar of the synthetic image–caption benchmark (train/synth/pairs_world.h): the word
// lists of its concepts (object nouns and attribute adjectives), its function words, spatial phrases and
// ungrounded distractor phrases, the caption generator, and the full vocabulary the grammar can produce.
// Captions look like raw COCO/F30K captions ("A red dog next to a small car.": first letter upper-case,
// final period attached), so they go through the same tokenisation as the public data sets (lower-case,
// the period split off as its own token).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "train/synth/random_stream.h"

namespace rematch::synth {

// The most object / attribute concepts the grammar has words for.
int64_t max_object_concepts();
int64_t max_attribute_concepts();
const std::string& object_word(int64_t object);
const std::string& attribute_word(int64_t attribute);

// One object instance of a scene: which object concept, carrying which attribute concept.
struct SceneObject {
  int64_t object = 0;
  int64_t attribute = 0;
};

// One caption naming a random subset (1–3) of `objects`, most of them with their attribute, linked by
// spatial phrases or function words, sometimes followed by an ungrounded distractor phrase.
std::string make_caption(const std::vector<SceneObject>& objects, RandomStream& rs);

// Every word the grammar can emit for `objects`/`attributes` concepts, in vocabulary order: the specials
// <pad>, <start>, <end>, <unk> (ids 0..3, docs/backbones.md §3.1), ".", function and spatial words, then the
// attribute and object words.
std::vector<std::string> pairs_vocabulary(int64_t objects, int64_t attributes);

// The tokens of a caption as the NLTK-style tokeniser sees this grammar's output: lower-cased, split on
// spaces, the final period its own token. (The grammar never emits other punctuation.)
std::vector<std::string> caption_tokens(const std::string& caption);

}  // namespace rematch::synth
