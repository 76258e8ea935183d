// A transcription of nltk/tokenize/punkt.py (NLTK 3.8) restricted to what sentence splitting with a fixed
// parameter set needs: PunktLanguageVars' word tokenizer and period-context search, the two annotation passes,
// _match_potential_end_contexts, _slices_from_text and _realign_boundaries. Each regular expression of the
// original is matched by hand over code points; the comment above each function quotes the expression.
#include "train/data/punkt.h"

#include <string_view>

#include "train/data/unicode.h"

namespace rematch::data {

namespace {

constexpr std::u32string_view kNonWordChars = U")\";}]*:@'({[?!";             // _re_non_word_chars
constexpr std::u32string_view kNotWordStart = U"(\"`{[:;&#*@)}]-,";           // complement of _re_word_start
constexpr std::u32string_view kSentEndChars = U".?!";
constexpr std::u32string_view kPunctuation = U";:,.!?";                       // PunktSentenceTokenizer.PUNCTUATION
constexpr std::u32string_view kRealignChars = U"\"')]}";                      // re_boundary_realignment

bool one_of(char32_t c, std::u32string_view set) { return set.find(c) != std::u32string_view::npos; }

// string.whitespace, which _get_last_whitespace_index uses instead of \s.
bool ascii_whitespace(char32_t c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

// (?:\-{2,}|\.{2,}|(?:\.\s){2,}\.) at i: the match length, 0 when none.
size_t multi_char_punct(const std::u32string& s, size_t i) {
  const size_t n = s.size();
  if (i >= n || (s[i] != '-' && s[i] != '.')) return 0;
  size_t j = i;
  while (j < n && s[j] == s[i]) ++j;
  if (j - i >= 2) return j - i;
  if (s[i] == '-') return 0;
  size_t pairs = 0;
  j = i;
  while (j + 1 < n && s[j] == '.' && py_isspace(s[j + 1])) j += 2, ++pairs;
  if (pairs >= 2 && j < n && s[j] == '.') return j + 1 - i;
  if (pairs >= 3) return 2 * (pairs - 1) + 1;  // give one pair back: its period closes the match
  return 0;
}

// The lookahead that ends a word: (?=\s|$|NonWord|MultiChar|,(?=$|\s|NonWord|MultiChar)).
bool word_ends_at(const std::u32string& s, size_t j) {
  auto plain_end = [&](size_t k) {
    return k >= s.size() || py_isspace(s[k]) || one_of(s[k], kNonWordChars) || multi_char_punct(s, k) > 0;
  };
  if (plain_end(j)) return true;
  return s[j] == ',' && plain_end(j + 1);
}

// PunktLanguageVars.word_tokenize of one line: MultiChar | (?=WordStart)\S+?(?=word end) | \S.
void word_tokenize_line(const std::u32string& s, std::vector<std::u32string>& out) {
  size_t i = 0;
  while (i < s.size()) {
    if (size_t m = multi_char_punct(s, i)) {
      out.push_back(s.substr(i, m));
      i += m;
    } else if (py_isspace(s[i])) {
      ++i;
    } else if (!one_of(s[i], kNotWordStart)) {
      size_t j = i + 1;
      while (!word_ends_at(s, j)) ++j;
      out.push_back(s.substr(i, j - i));
      i = j;
    } else {
      out.push_back(s.substr(i, 1));
      ++i;
    }
  }
}

struct PunktToken {
  std::u32string tok, type;
  bool sentbreak = false, abbr = false, ellipsis = false;
  bool period_final() const { return !tok.empty() && tok.back() == '.'; }
  std::u32string type_no_period() const {
    return type.size() > 1 && type.back() == '.' ? type.substr(0, type.size() - 1) : type;
  }
  // \.\.+$
  bool is_ellipsis() const { return tok.size() >= 2 && tok.find_first_not_of(U'.') == std::u32string::npos; }
  // [^\W\d]\.$
  bool is_initial() const {
    return tok.size() == 2 && tok[1] == '.' && py_isword(tok[0]) && !py_isdecimal(tok[0]);
  }
};

// ^-?[\.,]?\d[\d,\.-]*\.?$ — the optional prefix characters are no digits, so taking them greedily is exact.
bool is_numeric(const std::u32string& s) {
  size_t i = 0;
  if (i < s.size() && s[i] == '-') ++i;
  if (i < s.size() && (s[i] == '.' || s[i] == ',')) ++i;
  if (i >= s.size() || !py_isdecimal(s[i])) return false;
  for (++i; i < s.size(); ++i)
    if (!py_isdecimal(s[i]) && s[i] != ',' && s[i] != '.' && s[i] != '-') return false;
  return true;
}

PunktToken make_token(const std::u32string& tok) {
  PunktToken t;
  t.tok = tok;
  t.type = py_lower(tok);
  if (is_numeric(t.type)) t.type = U"##number##";
  return t;
}

// PunktBaseClass._tokenize_words: the word tokenizer runs line by line; blank lines give no tokens.
std::vector<PunktToken> tokenize_words(const std::u32string& text) {
  std::vector<std::u32string> words;
  size_t start = 0;
  while (start <= text.size()) {
    size_t nl = text.find(U'\n', start);
    if (nl == std::u32string::npos) nl = text.size();
    const std::u32string line = text.substr(start, nl - start);
    if (!py_strip(line).empty()) word_tokenize_line(line, words);
    start = nl + 1;
  }
  std::vector<PunktToken> tokens;
  tokens.reserve(words.size());
  for (const auto& w : words) tokens.push_back(make_token(w));
  return tokens;
}

void first_pass(PunktToken& t, const PunktParameters& params) {
  if (t.tok.size() == 1 && one_of(t.tok[0], kSentEndChars)) {
    t.sentbreak = true;
  } else if (t.is_ellipsis()) {
    t.ellipsis = true;
  } else if (t.period_final() && !(t.tok.size() >= 2 && t.tok[t.tok.size() - 2] == '.')) {
    const std::u32string base = py_lower(t.tok.substr(0, t.tok.size() - 1));
    const std::u32string last_part = base.substr(base.rfind(U'-') + 1);  // npos + 1 == 0: the whole word
    if (params.abbreviations.count(base) || params.abbreviations.count(last_part))
      t.abbr = true;
    else
      t.sentbreak = true;
  }
}

enum class Ortho { no, unknown };  // "is a sentence starter": never "yes" without orthographic statistics

// _ortho_heuristic with an empty orthographic context: punctuation and lower-case words start no sentence.
Ortho ortho_heuristic(const PunktToken& t) {
  if (t.tok.size() == 1 && one_of(t.tok[0], kPunctuation)) return Ortho::no;
  if (py_islower(t.tok[0])) return Ortho::no;
  return Ortho::unknown;
}

// _second_pass_annotation without collocations or sentence starters. The abbreviation branch (4.2) can only
// add a break on orthographic evidence, which needs statistics, so it is absent here.
void second_pass(PunktToken& t1, const PunktToken& t2) {
  if (!t1.period_final()) return;
  const bool initial = t1.is_initial();
  if (!initial && t1.type_no_period() != U"##number##") return;
  const Ortho starter = ortho_heuristic(t2);
  // The special rule for initials ("J. Bach") also needs the next word to never occur in lower case, which
  // holds for every word when there are no statistics.
  if (starter == Ortho::no || (initial && py_isupper(t2.tok[0]))) {
    t1.sentbreak = false;
    t1.abbr = true;
  }
}

// text_contains_sentbreak: some token other than the last one is marked as a sentence break.
bool contains_sentbreak(const std::u32string& text, const PunktParameters& params) {
  std::vector<PunktToken> tokens = tokenize_words(text);
  for (auto& t : tokens) first_pass(t, params);
  for (size_t i = 0; i + 1 < tokens.size(); ++i) second_pass(tokens[i], tokens[i + 1]);
  for (size_t i = 0; i + 1 < tokens.size(); ++i)
    if (tokens[i].sentbreak) return true;
  return false;
}

// One match of period_context_re: [.?!](?=(?P<after_tok>NonWord|\s+(?P<next_tok>\S+))).
struct EndContext {
  size_t pos = 0;          // the sentence-end character
  size_t after_end = 0;    // after_tok is [pos + 1, after_end)
  size_t next_start = 0;   // start of next_tok, 0 when after_tok is punctuation
};

std::vector<EndContext> period_contexts(const std::u32string& s) {
  std::vector<EndContext> out;
  const size_t n = s.size();
  for (size_t p = 0; p < n; ++p) {
    if (!one_of(s[p], kSentEndChars) || p + 1 >= n) continue;
    if (one_of(s[p + 1], kNonWordChars)) {
      out.push_back({p, p + 2, 0});
      continue;
    }
    size_t q = p + 1;
    while (q < n && py_isspace(s[q])) ++q;
    if (q == p + 1 || q == n) continue;
    size_t r = q;
    while (r < n && !py_isspace(s[r])) ++r;
    out.push_back({p, r, q});
  }
  return out;
}

// _slices_from_text, with _match_potential_end_contexts inlined: each candidate's context is the word before
// it (overlapping candidates of "!!!" keep only the last), the end character and the token after it.
std::vector<std::pair<size_t, size_t>> slices_from_text(const std::u32string& text, const PunktParameters& params) {
  std::vector<std::pair<size_t, size_t>> slices;
  size_t last_break = 0;
  auto consider = [&](const EndContext& m, std::pair<size_t, size_t> word) {
    const std::u32string context =
        text.substr(word.first, word.second - word.first) + text.substr(m.pos, m.after_end - m.pos);
    if (!contains_sentbreak(context, params)) return;
    slices.emplace_back(last_break, m.pos + 1);
    last_break = m.next_start ? m.next_start : m.pos + 1;
  };
  std::pair<size_t, size_t> prev_slice{0, 0};
  const EndContext* prev = nullptr;
  const std::vector<EndContext> matches = period_contexts(text);
  for (const EndContext& m : matches) {
    // _get_last_whitespace_index returns 0 both for "none" and for a space at index 0; the original then
    // falls back to the previous word's start, and so do we.
    size_t last_ws = 0;
    for (size_t i = m.pos; i > prev_slice.second; --i)
      if (ascii_whitespace(text[i - 1])) {
        last_ws = i - 1 - prev_slice.second;
        break;
      }
    const size_t start = last_ws ? last_ws + prev_slice.second + 1 : prev_slice.first;
    const std::pair<size_t, size_t> word{start, m.pos};
    if (prev && prev_slice.second <= word.first) consider(*prev, prev_slice);
    prev = &m;
    prev_slice = word;
  }
  if (prev) consider(*prev, prev_slice);
  size_t end = text.size();
  while (end > 0 && py_isspace(text[end - 1])) --end;
  slices.emplace_back(last_break, end);
  return slices;
}

// re_boundary_realignment.match(text[a:b]) = ["\')\]}]+?(?:\s+|(?=--)|$): returns (closing characters, end).
bool realignment(const std::u32string& text, size_t a, size_t b, size_t& closing, size_t& end) {
  for (size_t k = 1; a + k <= b && one_of(text[a + k - 1], kRealignChars); ++k) {
    const size_t p = a + k;
    if (p < b && py_isspace(text[p])) {
      size_t q = p;
      while (q < b && py_isspace(text[q])) ++q;
      closing = k, end = q - a;
      return true;
    }
    if (p == b || (p + 1 < b && text[p] == '-' && text[p + 1] == '-')) {
      closing = k, end = k;
      return true;
    }
  }
  return false;
}

}  // namespace

const PunktParameters& caption_punkt_parameters() {
  static const PunktParameters params{{
      U"a.m", U"p.m", U"e.g", U"i.e", U"etc", U"vs", U"approx", U"mr", U"mrs", U"ms", U"dr", U"prof", U"jr",
      U"sr", U"st", U"mt", U"ft", U"ave", U"blvd", U"rd", U"inc", U"ltd", U"co", U"corp", U"dept", U"u.s",
      U"u.k", U"u.s.a", U"lbs", U"oz",
  }};
  return params;
}

std::vector<std::pair<size_t, size_t>> punkt_sentence_spans(const std::u32string& text,
                                                            const PunktParameters& params) {
  const std::vector<std::pair<size_t, size_t>> slices = slices_from_text(text, params);
  std::vector<std::pair<size_t, size_t>> out;
  size_t realign = 0;
  for (size_t k = 0; k < slices.size(); ++k) {
    const std::pair<size_t, size_t> s1{slices[k].first + realign, slices[k].second};
    if (k + 1 == slices.size()) {
      if (s1.first < s1.second) out.push_back(s1);
      continue;
    }
    const auto& s2 = slices[k + 1];
    size_t closing = 0, end = 0;
    if (realignment(text, s2.first, s2.second, closing, end)) {
      out.emplace_back(s1.first, s2.first + closing);
      realign = end;
    } else {
      realign = 0;
      if (s1.first < s1.second) out.push_back(s1);
    }
  }
  return out;
}

std::vector<std::u32string> punkt_sentences(const std::u32string& text, const PunktParameters& params) {
  std::vector<std::u32string> out;
  for (const auto& [a, b] : punkt_sentence_spans(text, params)) out.push_back(text.substr(a, b - a));
  return out;
}

}  // namespace rematch::data
