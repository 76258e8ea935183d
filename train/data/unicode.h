// UTF-8 text as code points, and the character classes of Python's str methods and `re` module that the NLTK
// tokenizers depend on. The captions of the public benchmarks were tokenised by Python; matching Python's
// notion of "word character", "whitespace" and "lower case" is what makes our token ids equal theirs, also for
// the odd caption with an accent or a curly quote. Tables: unicode_tables.cpp (generated, Unicode 14).
#pragma once

#include <cstddef>
#include <string>

namespace rematch::data {

// Decodes UTF-8; an invalid byte sequence is an Error that says where (`what` names the text's origin).
std::u32string utf8_decode(const std::string& text, const std::string& what = "text");
std::string utf8_encode(const std::u32string& text);

bool py_isspace(char32_t c);    // str.isspace, re's \s
bool py_isword(char32_t c);     // re's \w: str.isalnum() or '_'
bool py_isdecimal(char32_t c);  // re's \d: str.isdecimal()
bool py_islower(char32_t c);    // str.islower() of a one-character string
bool py_isupper(char32_t c);    // str.isupper() of a one-character string
// str.lower() and str.strip() (Unicode whitespace).
std::u32string py_lower(const std::u32string& s);
std::u32string py_strip(const std::u32string& s);

namespace unicode_detail {
struct CodeRange {
  char32_t first, last;  // inclusive
};
struct LowerRun {
  char32_t first;
  int count, stride, delta;  // first + k·stride (k < count) lower-cases to itself + delta
};
extern const CodeRange k_word_ranges[];
extern const size_t k_word_range_count;
extern const CodeRange k_decimal_ranges[];
extern const size_t k_decimal_range_count;
extern const CodeRange k_lower_ranges[];
extern const size_t k_lower_range_count;
extern const CodeRange k_upper_ranges[];
extern const size_t k_upper_range_count;
extern const LowerRun k_lower_runs[];
extern const size_t k_lower_run_count;
}  // namespace unicode_detail

}  // namespace rematch::data
