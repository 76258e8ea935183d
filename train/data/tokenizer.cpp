// NLTKWordTokenizer.tokenize (nltk/tokenize/destructive.py, NLTK 3.8) transcribed pass by pass. Every pass is
// one re.sub of the original: the pattern is tried at each position of the pass's input from left to right, a
// match is replaced and scanning resumes after it. The comment on each pass quotes the original expression.
#include "train/data/tokenizer.h"

#include <string_view>

#include "train/data/punkt.h"
#include "train/data/unicode.h"

namespace rematch::data {

namespace {

using Text = std::u32string;

bool one_of(char32_t c, std::u32string_view set) { return set.find(c) != std::u32string_view::npos; }

// One re.sub pass. `match(s, i, out)` tries the pattern at position i of the input; on success it appends the
// replacement to `out` and returns the match length (patterns here never match the empty string).
template <typename Match>
Text sub(const Text& s, Match match) {
  Text out;
  out.reserve(s.size() + 16);
  size_t i = 0;
  while (i < s.size()) {
    if (size_t len = match(s, i, out))
      i += len;
    else
      out.push_back(s[i++]);
  }
  return out;
}

// " " + s[i, i+len) + " ", the replacement r" \g<0> " used by most passes.
size_t pad(const Text& s, size_t i, size_t len, Text& out) {
  out.push_back(U' ');
  out.append(s, i, len);
  out.push_back(U' ');
  return len;
}

// Pads every occurrence of a single character from `set`.
Text pad_chars(const Text& s, std::u32string_view set) {
  if (s.find_first_of(set.data(), 0, set.size()) == Text::npos) return s;  // the common case: nothing to pad
  return sub(s, [&](const Text& t, size_t i, Text& out) -> size_t {
    return one_of(t[i], set) ? pad(t, i, 1, out) : 0;
  });
}

// Pads every occurrence of a literal string (non-overlapping, left to right).
Text pad_literal(const Text& s, std::u32string_view lit, std::u32string_view replacement) {
  if (s.find(lit.data(), 0, lit.size()) == Text::npos) return s;
  return sub(s, [&](const Text& t, size_t i, Text& out) -> size_t {
    if (t.compare(i, lit.size(), lit.data(), lit.size()) != 0) return 0;
    out.append(replacement.data(), replacement.size());
    return lit.size();
  });
}

// Pads each maximal run of character c whose length is at least min_len.
Text pad_runs(const Text& s, char32_t c, size_t min_len) {
  return sub(s, [&](const Text& t, size_t i, Text& out) -> size_t {
    size_t j = i;
    while (j < t.size() && t[j] == c) ++j;
    return j - i >= min_len && j > i ? pad(t, i, j - i, out) : 0;
  });
}

// A character of the input matches a pattern letter under re.IGNORECASE: their simple lower cases agree, or
// they are one of sre's extra equivalences (ı ~ i, ſ ~ s). `p` is a lower-case ASCII letter or an apostrophe.
bool ignorecase_eq(char32_t c, char32_t p) {
  if (c < 0x80) return (c >= 'A' && c <= 'Z' ? c + 32 : c) == p;
  if ((p == 'i' && (c == 0x130 || c == 0x131)) || (p == 's' && c == 0x17F)) return true;
  return py_lower(Text(1, c)) == Text(1, p);
}

// ([^\.])(\.)([<closers>]*)\s*$ : the period that ends the input, with the closing marks after it.
size_t final_period(const Text& s, size_t i, Text& out, std::u32string_view closers, bool space_after_period) {
  const size_t n = s.size();
  if (i + 1 >= n || s[i] == '.' || s[i + 1] != '.') return 0;
  size_t j = i + 2;
  while (j < n && one_of(s[j], closers)) ++j;
  size_t k = j;
  while (k < n && py_isspace(s[k])) ++k;
  if (k != n) return 0;
  out.push_back(s[i]);
  out += space_after_period ? U" . " : U" .";
  out.append(s, i + 2, j - i - 2);
  out.push_back(U' ');
  return n - i;
}

Text starting_quotes(Text t) {
  // ([«“‘„]|[`]+) -> " \1 "
  t = sub(t, [](const Text& s, size_t i, Text& out) -> size_t {
    if (one_of(s[i], U"«“‘„")) return pad(s, i, 1, out);
    size_t j = i;
    while (j < s.size() && s[j] == '`') ++j;
    return j > i ? pad(s, i, j - i, out) : 0;
  });
  // ^\" -> ``
  if (!t.empty() && t[0] == '"') t = U"``" + t.substr(1);
  // (``) -> " \1 "
  t = pad_literal(t, U"``", U" `` ");
  // ([ \(\[{<])(\"|\'{2}) -> "\1 `` "
  t = sub(t, [](const Text& s, size_t i, Text& out) -> size_t {
    if (!one_of(s[i], U" ([{<") || i + 1 >= s.size()) return 0;
    size_t quote = 0;
    if (s[i + 1] == '"')
      quote = 1;
    else if (i + 2 < s.size() && s[i + 1] == '\'' && s[i + 2] == '\'')
      quote = 2;
    if (!quote) return 0;
    out.push_back(s[i]);
    out += U" `` ";
    return 1 + quote;
  });
  // (?i)(\')(?!re|ve|ll|m|t|s|d|n)(\w)\b -> "\1 \2": an opening quote before a one-letter word. The two-letter
  // exclusions can never apply, because \b after a single \w rules out a second word character.
  return sub(t, [](const Text& s, size_t i, Text& out) -> size_t {
    if (s[i] != '\'' || i + 1 >= s.size() || !py_isword(s[i + 1])) return 0;
    if (i + 2 < s.size() && py_isword(s[i + 2])) return 0;
    for (char32_t clitic : std::u32string_view(U"mtsdn"))
      if (ignorecase_eq(s[i + 1], clitic)) return 0;
    out += U"' ";
    out.push_back(s[i + 1]);
    return 2;
  });
}

Text punctuation(Text t) {
  // ([^\.])(\.)([\]\)}>"\'»”’ ]*)\s*$ -> "\1 \2 \3 "
  t = sub(t, [](const Text& s, size_t i, Text& out) { return final_period(s, i, out, U"])}>\"'»”’ ", true); });
  // ([:,])([^\d]) -> " \1 \2"
  t = sub(t, [](const Text& s, size_t i, Text& out) -> size_t {
    if ((s[i] != ':' && s[i] != ',') || i + 1 >= s.size() || py_isdecimal(s[i + 1])) return 0;
    out.push_back(U' ');
    out.push_back(s[i]);
    out.push_back(U' ');
    out.push_back(s[i + 1]);
    return 2;
  });
  // ([:,])$ -> " \1 "   ($ also matches before a final newline)
  t = sub(t, [](const Text& s, size_t i, Text& out) -> size_t {
    const size_t n = s.size();
    const bool at_end = i + 1 == n || (i + 2 == n && s[n - 1] == '\n');
    return (s[i] == ':' || s[i] == ',') && at_end ? pad(s, i, 1, out) : 0;
  });
  t = pad_runs(t, U'.', 2);    // \.{2,} -> " \g<0> "
  t = pad_chars(t, U";@#$%&");  // [;@#$%&] -> " \g<0> "
  // ([^\.])(\.)([\]\)}>"\']*)\s*$ -> "\1 \2\3 "
  t = sub(t, [](const Text& s, size_t i, Text& out) { return final_period(s, i, out, U"])}>\"'", false); });
  t = pad_chars(t, U"?!");  // [?!] -> " \g<0> "
  // ([^'])' -> "\1 ' "
  t = sub(t, [](const Text& s, size_t i, Text& out) -> size_t {
    if (s[i] == '\'' || i + 2 >= s.size() || s[i + 1] != '\'' || s[i + 2] != ' ') return 0;
    out.push_back(s[i]);
    out += U" ' ";
    return 3;
  });
  return pad_chars(t, U"*");  // [*] -> " \g<0> "
}

Text ending_quotes(Text t) {
  t = pad_chars(t, U"»”’");             // ([»”’]) -> " \1 "
  t = pad_literal(t, U"''", U" '' ");  // '' -> " '' "
  t = pad_literal(t, U"\"", U" '' ");  // " -> " '' "
  // ([^' ])('[sS]|'[mM]|'[dD]|') -> "\1 \2 "
  t = sub(t, [](const Text& s, size_t i, Text& out) -> size_t {
    const size_t n = s.size();
    if (one_of(s[i], U"' ") || i + 2 >= n || s[i + 1] != '\'') return 0;
    if (i + 3 < n && one_of(s[i + 2], U"sSmMdD") && s[i + 3] == ' ') {
      out.push_back(s[i]);
      out += U" '";
      out.push_back(s[i + 2]);
      out.push_back(U' ');
      return 4;
    }
    if (s[i + 2] != ' ') return 0;
    out.push_back(s[i]);
    out += U" ' ";
    return 3;
  });
  // ([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) -> "\1 \2 "
  return sub(t, [](const Text& s, size_t i, Text& out) -> size_t {
    if (one_of(s[i], U"' ") || i + 4 >= s.size() || s[i + 4] != ' ') return 0;
    for (std::u32string_view c : {U"'ll", U"'LL", U"'re", U"'RE", U"'ve", U"'VE", U"n't", U"N'T"}) {
      if (s.compare(i + 1, 3, c.data(), 3) != 0) continue;
      out.push_back(s[i]);
      out.push_back(U' ');
      out.append(c.data(), 3);
      out.push_back(U' ');
      return 5;
    }
    return 0;
  });
}

// One MacIntyre contraction: (?i)\b(first)(second)\b, or (?=\s) at the end for "wanna"; the optional leading
// space is CONTRACTIONS3's " ('t)(is)\b". Replacement " \1 \2 ".
Text split_contraction(const Text& t, std::u32string_view lead, std::u32string_view first, std::u32string_view second,
                       bool space_after) {
  const Text pattern = Text(lead) + Text(first) + Text(second);
  return sub(t, [&](const Text& s, size_t i, Text& out) -> size_t {
    const size_t n = s.size();
    // \b before a word that starts with a letter (CONTRACTIONS2 only; CONTRACTIONS3 starts with a space).
    if (lead.empty() && i > 0 && py_isword(s[i - 1])) return 0;
    if (i + pattern.size() > n) return 0;
    for (size_t k = 0; k < pattern.size(); ++k)
      if (!ignorecase_eq(s[i + k], pattern[k])) return 0;
    const size_t j = i + pattern.size();
    if (space_after ? !(j < n && py_isspace(s[j])) : (j < n && py_isword(s[j]))) return 0;
    out.push_back(U' ');
    out.append(s, i + lead.size(), first.size());
    out.push_back(U' ');
    out.append(s, i + lead.size() + first.size(), second.size());
    out.push_back(U' ');
    return pattern.size();
  });
}

Text contractions(Text t) {
  struct Pair {
    std::u32string_view first, second;
  };
  static constexpr Pair kContractions2[] = {{U"can", U"not"}, {U"d", U"'ye"},  {U"gim", U"me"}, {U"gon", U"na"},
                                            {U"got", U"ta"},  {U"lem", U"me"}, {U"more", U"'n"}};
  for (const Pair& p : kContractions2) t = split_contraction(t, U"", p.first, p.second, false);
  t = split_contraction(t, U"", U"wan", U"na", true);
  // CONTRACTIONS3: (?i) ('t)(is)\b and (?i) ('t)(was)\b
  t = split_contraction(t, U" ", U"'t", U"is", false);
  return split_contraction(t, U" ", U"'t", U"was", false);
}

std::vector<std::string> split_on_whitespace(const Text& t) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < t.size()) {
    while (i < t.size() && py_isspace(t[i])) ++i;
    size_t j = i;
    while (j < t.size() && !py_isspace(t[j])) ++j;
    if (j > i) out.push_back(utf8_encode(t.substr(i, j - i)));
    i = j;
  }
  return out;
}

std::vector<std::string> treebank_tokenize_u32(Text t) {
  t = punctuation(starting_quotes(std::move(t)));
  t = pad_chars(t, U"][(){}<>");           // PARENS_BRACKETS
  t = pad_literal(t, U"--", U" -- ");      // DOUBLE_DASHES
  t = ending_quotes(U" " + t + U" ");      // "add extra space to make things easier"
  return split_on_whitespace(contractions(std::move(t)));
}

std::vector<std::string> word_tokenize_u32(const Text& text) {
  std::vector<std::string> out;
  for (const Text& sentence : punkt_sentences(text, caption_punkt_parameters())) {
    std::vector<std::string> words = treebank_tokenize_u32(sentence);
    out.insert(out.end(), words.begin(), words.end());
  }
  return out;
}

}  // namespace

std::vector<std::string> treebank_tokenize(const std::string& sentence) {
  return treebank_tokenize_u32(utf8_decode(sentence, "treebank_tokenize"));
}

std::vector<std::string> word_tokenize(const std::string& text) {
  return word_tokenize_u32(utf8_decode(text, "word_tokenize"));
}

std::vector<std::string> tokenize_caption(const std::string& caption) {
  return word_tokenize_u32(py_lower(py_strip(utf8_decode(caption, "caption"))));
}

std::vector<int64_t> encode_caption(const std::string& caption, const Vocabulary& vocab) {
  return vocab.encode(tokenize_caption(caption));
}

}  // namespace rematch::data
