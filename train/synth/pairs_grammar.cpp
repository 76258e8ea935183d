#include "train/synth/pairs_grammar.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

#include "tensor/error.h"

namespace rematch::synth {
namespace {

const std::vector<std::string> kObjects = {
    "dog",   "cat",   "car",      "bus",   "truck",    "bicycle", "horse",    "bird",  "boat",   "chair",
    "table", "lamp",  "cup",      "bottle", "ball",    "kite",    "umbrella", "bench", "tree",   "flower",
    "house", "clock", "book",     "phone", "laptop",   "bag",     "hat",      "shoe",  "train",  "plane",
    "sheep", "cow",   "elephant", "giraffe", "zebra",  "bear",    "pizza",    "cake",  "apple",  "banana",
    "sandwich", "fence", "door",  "window", "sign",    "vase",    "bowl",     "toy"};
const std::vector<std::string> kAttributes = {
    "red",  "blue", "green", "yellow", "black",  "white",   "orange",  "brown", "pink",  "purple", "gray",  "small",
    "large", "tall", "old",  "new",    "wooden", "metal",   "striped", "shiny", "dirty", "round",  "tiny",  "wet"};
// Relations are not grounded in the region features: they are the "function word" part of a caption that a
// model must learn to ignore, like most of a real caption.
const std::vector<std::string> kSpatial = {"next to", "on top of", "behind", "in front of",
                                           "near",    "beside",    "under",  "above"};
const std::vector<std::string> kDistractors = {"on a sunny day", "in the afternoon", "seen from above",
                                               "in the city",    "at night",         "in a park",
                                               "during the day", "on the street"};
// Fixed words of the templates below; listed so the vocabulary covers them.
const std::vector<std::string> kTemplateWords = {"a", "an", "the", "there", "is", "and", "this", "picture",
                                                 "shows", "with", "photo", "of"};

bool starts_with_vowel(const std::string& w) { return std::string("aeiou").find(w[0]) != std::string::npos; }

// "a red dog", "an old car", "the dog": the attribute is dropped now and then, as real captions do.
std::string noun_phrase(const SceneObject& o, RandomStream& rs) {
  std::string head = rs.bernoulli(0.8) ? attribute_word(o.attribute) + " " + object_word(o.object)
                                       : object_word(o.object);
  if (rs.bernoulli(0.2)) return "the " + head;
  return (starts_with_vowel(head) ? "an " : "a ") + head;
}

std::string join_phrases(const std::vector<std::string>& nps, const std::string& sep) {
  std::string s = nps[0];
  for (size_t i = 1; i < nps.size(); ++i) s += sep + nps[i];
  return s;
}

}  // namespace

int64_t max_object_concepts() { return static_cast<int64_t>(kObjects.size()); }
int64_t max_attribute_concepts() { return static_cast<int64_t>(kAttributes.size()); }

const std::string& object_word(int64_t object) {
  REMATCH_CHECK(object >= 0 && object < max_object_concepts(), "synth grammar: no object concept ", object);
  return kObjects[object];
}

const std::string& attribute_word(int64_t attribute) {
  REMATCH_CHECK(attribute >= 0 && attribute < max_attribute_concepts(), "synth grammar: no attribute concept ",
                attribute);
  return kAttributes[attribute];
}

std::string make_caption(const std::vector<SceneObject>& objects, RandomStream& rs) {
  const int64_t k = static_cast<int64_t>(objects.size());
  REMATCH_CHECK(k > 0, "make_caption: a scene needs at least one object");
  // Mostly two or three objects, so most captions carry at least one attribute-object binding to check.
  const int64_t named = (k == 1 || rs.bernoulli(0.1)) ? 1 : 2 + rs.below(std::min<int64_t>(k, 3) - 1);
  std::vector<std::string> nps;
  for (int64_t i : rs.distinct(named, k)) nps.push_back(noun_phrase(objects[i], rs));

  std::string s;
  switch (rs.below(5)) {
    case 0: {  // "a red dog next to a small car behind a tree"
      s = nps[0];
      for (size_t i = 1; i < nps.size(); ++i) s += " " + kSpatial[rs.below(kSpatial.size())] + " " + nps[i];
      break;
    }
    case 1: s = "there is " + join_phrases(nps, " and "); break;
    case 2: s = "this picture shows " + join_phrases(nps, " " + kSpatial[rs.below(kSpatial.size())] + " "); break;
    case 3: s = join_phrases(nps, " with "); break;
    default: s = "a photo of " + join_phrases(nps, " and "); break;
  }
  if (rs.bernoulli(0.3)) s += " " + kDistractors[rs.below(kDistractors.size())];
  s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
  return s + ".";
}

std::vector<std::string> pairs_vocabulary(int64_t objects, int64_t attributes) {
  REMATCH_CHECK(objects >= 0 && objects <= max_object_concepts() && attributes >= 0 &&
                    attributes <= max_attribute_concepts(),
                "pairs_vocabulary: the grammar has ", max_object_concepts(), " objects and ",
                max_attribute_concepts(), " attributes; asked for ", objects, " and ", attributes);
  std::vector<std::string> vocab = {"<pad>", "<start>", "<end>", "<unk>", "."};
  std::set<std::string> seen(vocab.begin(), vocab.end());
  auto add_words = [&](const std::string& phrase) {
    std::istringstream is(phrase);
    for (std::string w; is >> w;)
      if (seen.insert(w).second) vocab.push_back(w);
  };
  for (const auto& w : kTemplateWords) add_words(w);
  for (const auto& p : kSpatial) add_words(p);
  for (const auto& p : kDistractors) add_words(p);
  for (int64_t a = 0; a < attributes; ++a) add_words(kAttributes[a]);
  for (int64_t o = 0; o < objects; ++o) add_words(kObjects[o]);
  return vocab;
}

std::vector<std::string> caption_tokens(const std::string& caption) {
  std::string lower = caption;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::vector<std::string> tokens;
  std::istringstream is(lower);
  for (std::string w; is >> w;) {
    if (w.size() > 1 && w.back() == '.') {
      tokens.push_back(w.substr(0, w.size() - 1));
      tokens.push_back(".");
    } else {
      tokens.push_back(w);
    }
  }
  return tokens;
}

}  // namespace rematch::synth
