// The caption tokenizer against NLTK's own output (tests/reference/tokenizer_reference.py): every fixture
// caption must give exactly NLTK's sentences, words and tokens.
#include "train/data/tokenizer.h"

#include <fstream>
#include <nlohmann/json.hpp>

#include "test_util.h"
#include "train/data/punkt.h"
#include "train/data/unicode.h"

namespace rematch::data {
namespace {

const nlohmann::json& fixture() {
  static const nlohmann::json j = [] {
    std::ifstream in(std::string(REMATCH_FIXTURES) + "/tokenizer/captions.json");
    return nlohmann::json::parse(in);
  }();
  return j;
}

std::string show(const std::vector<std::string>& tokens) {
  std::string s;
  for (const auto& t : tokens) s += "[" + t + "]";
  return s;
}

TEST(Tokenizer, FixtureHasEnoughCaptions) { EXPECT_GE(fixture()["cases"].size(), 500u); }

TEST(Tokenizer, AbbreviationsMatchTheReference) {
  std::set<std::u32string> want;
  for (const auto& a : fixture()["abbreviations"]) want.insert(utf8_decode(a.get<std::string>()));
  EXPECT_EQ(want, caption_punkt_parameters().abbreviations);
}

TEST(Tokenizer, CaptionTokensMatchNltk) {
  int failures = 0;
  for (const auto& c : fixture()["cases"]) {
    const std::string caption = c["caption"];
    const auto want = c["tokens"].get<std::vector<std::string>>();
    const auto got = tokenize_caption(caption);
    if (got != want && ++failures <= 20)
      ADD_FAILURE() << "caption \"" << caption << "\"\n  nltk: " << show(want) << "\n  ours: " << show(got);
  }
  EXPECT_EQ(failures, 0);
}

TEST(Tokenizer, SentencesMatchPunkt) {
  int failures = 0;
  for (const auto& c : fixture()["cases"]) {
    const std::u32string lowered = py_lower(py_strip(utf8_decode(c["caption"].get<std::string>())));
    std::vector<std::string> got;
    for (const auto& s : punkt_sentences(lowered, caption_punkt_parameters())) got.push_back(utf8_encode(s));
    const auto want = c["sentences"].get<std::vector<std::string>>();
    if (got != want && ++failures <= 20)
      ADD_FAILURE() << "caption \"" << c["caption"].get<std::string>() << "\"\n  punkt: " << show(want)
                    << "\n  ours:  " << show(got);
  }
  EXPECT_EQ(failures, 0);
}

TEST(Tokenizer, MixedCaseWordTokenizeAndTreebankMatchNltk) {
  int failures = 0;
  for (const auto& c : fixture()["cases"]) {
    const std::string caption = c["caption"];
    const auto words = word_tokenize(caption);
    const auto tb = treebank_tokenize(caption);
    if (words != c["words"].get<std::vector<std::string>>() && ++failures <= 20)
      ADD_FAILURE() << "word_tokenize \"" << caption << "\": " << show(words);
    if (tb != c["treebank"].get<std::vector<std::string>>() && ++failures <= 20)
      ADD_FAILURE() << "treebank \"" << caption << "\": " << show(tb);
  }
  EXPECT_EQ(failures, 0);
}

TEST(Tokenizer, LowerAndStripMatchPython) {
  for (const auto& c : fixture()["lower"]) {
    const std::u32string text = utf8_decode(c["text"].get<std::string>());
    EXPECT_EQ(utf8_encode(py_lower(text)), c["lower"].get<std::string>()) << c["text"].get<std::string>();
    EXPECT_EQ(utf8_encode(py_strip(text)), c["strip"].get<std::string>()) << c["text"].get<std::string>();
  }
}

TEST(Tokenizer, EncodeWrapsIdsInStartEndAndMapsUnknownWords) {
  Vocabulary v;
  const int64_t a = v.add_word("a"), dog = v.add_word("dog"), dot = v.add_word(".");
  EXPECT_EQ(encode_caption("A dog barks.", v),
            (std::vector<int64_t>{Vocabulary::kStart, a, dog, Vocabulary::kUnk, dot, Vocabulary::kEnd}));
  EXPECT_EQ(encode_caption("", v), (std::vector<int64_t>{Vocabulary::kStart, Vocabulary::kEnd}));
}

TEST(Tokenizer, InvalidUtf8IsAnError) {
  EXPECT_THROWS_WITH(tokenize_caption(std::string("caf\xC3", 4)), "caption", "UTF-8");
  EXPECT_THROWS_WITH(tokenize_caption(std::string("\xFF")), "caption", "invalid UTF-8");
}

}  // namespace
}  // namespace rematch::data
