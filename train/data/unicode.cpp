#include "train/data/unicode.h"

#include <algorithm>

#include "tensor/error.h"

namespace rematch::data {

using unicode_detail::CodeRange;

namespace {

bool in_ranges(char32_t c, const CodeRange* ranges, size_t n) {
  const CodeRange* end = ranges + n;
  const CodeRange* it =
      std::upper_bound(ranges, end, c, [](char32_t v, const CodeRange& r) { return v < r.first; });
  return it != ranges && c <= (it - 1)->last;
}

// Unicode's Cased property: lower case, upper case or title case.
bool is_cased(char32_t c) {
  const bool title = c == 0x1C5 || c == 0x1C8 || c == 0x1CB || c == 0x1F2 || (c >= 0x1F88 && c <= 0x1FAF &&
                     (c & 0xF) >= 8) || c == 0x1FBC || c == 0x1FCC || c == 0x1FFC;
  return title || py_islower(c) || py_isupper(c);
}

// An abridged Case_Ignorable property: the apostrophes, periods and colons of Word_Break MidLetter/MidNumLet,
// combining diacritics, modifier letters and zero-width format characters — what occurs inside real words.
bool is_case_ignorable(char32_t c) {
  return c == '\'' || c == '.' || c == ':' || c == '^' || c == '`' || c == 0xA8 || c == 0xAD || c == 0xAF ||
         c == 0xB4 || c == 0xB7 || c == 0xB8 || (c >= 0x2B0 && c <= 0x36F) || (c >= 0x200B && c <= 0x200F) ||
         c == 0x2018 || c == 0x2019 || c == 0x2024 || c == 0x2027 || (c >= 0x1AB0 && c <= 0x1AFF) ||
         (c >= 0x1DC0 && c <= 0x1DFF) || (c >= 0x20D0 && c <= 0x20FF) || (c >= 0xFE00 && c <= 0xFE0F);
}

// Python lower-cases GREEK CAPITAL SIGMA to final ς when a cased letter precedes it and none follows it, case-
// ignorable characters skipped on both sides (unicodeobject.c: handle_capital_sigma).
bool final_sigma(const std::u32string& s, size_t i) {
  size_t j = i;
  while (j > 0 && is_case_ignorable(s[j - 1])) --j;
  if (j == 0 || !is_cased(s[j - 1])) return false;
  j = i + 1;
  while (j < s.size() && is_case_ignorable(s[j])) ++j;
  return j == s.size() || !is_cased(s[j]);
}

}  // namespace

std::u32string utf8_decode(const std::string& text, const std::string& what) {
  std::u32string out;
  out.reserve(text.size());
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  for (size_t i = 0; i < n;) {
    const unsigned char b = s[i];
    int extra = 0;
    char32_t c = 0;
    if (b < 0x80) {
      c = b;
    } else if ((b & 0xE0) == 0xC0) {
      c = b & 0x1F, extra = 1;
    } else if ((b & 0xF0) == 0xE0) {
      c = b & 0x0F, extra = 2;
    } else if ((b & 0xF8) == 0xF0) {
      c = b & 0x07, extra = 3;
    } else {
      REMATCH_FAIL(what, ": invalid UTF-8 byte 0x", std::hex, static_cast<int>(b), std::dec, " at byte ", i);
    }
    REMATCH_CHECK(i + extra < n, what, ": UTF-8 sequence cut off at byte ", i);
    for (int k = 1; k <= extra; ++k) {
      REMATCH_CHECK((s[i + k] & 0xC0) == 0x80, what, ": invalid UTF-8 continuation byte at byte ", i + k);
      c = (c << 6) | (s[i + k] & 0x3F);
    }
    // Overlong forms and surrogates are rejected like Python's strict decoder does.
    static const char32_t kMin[4] = {0, 0x80, 0x800, 0x10000};
    REMATCH_CHECK(c >= kMin[extra] && c <= 0x10FFFF && !(c >= 0xD800 && c <= 0xDFFF), what,
                  ": invalid UTF-8 sequence at byte ", i);
    out.push_back(c);
    i += static_cast<size_t>(extra) + 1;
  }
  return out;
}

std::string utf8_encode(const std::u32string& text) {
  std::string out;
  out.reserve(text.size());
  for (char32_t c : text) {
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
    } else if (c < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (c >> 6)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else if (c < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (c >> 12)));
      out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (c >> 18)));
      out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    }
  }
  return out;
}

bool py_isspace(char32_t c) {
  // Python's whitespace (Py_UNICODE_ISSPACE): the C0 separators 0x1C-0x1F count too.
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
         c == 0x3000;
}

bool py_isword(char32_t c) {
  if (c < 0x80) return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  return in_ranges(c, unicode_detail::k_word_ranges, unicode_detail::k_word_range_count);
}

bool py_isdecimal(char32_t c) {
  if (c < 0x80) return c >= '0' && c <= '9';
  return in_ranges(c, unicode_detail::k_decimal_ranges, unicode_detail::k_decimal_range_count);
}

bool py_islower(char32_t c) {
  return in_ranges(c, unicode_detail::k_lower_ranges, unicode_detail::k_lower_range_count);
}

bool py_isupper(char32_t c) {
  return in_ranges(c, unicode_detail::k_upper_ranges, unicode_detail::k_upper_range_count);
}

std::u32string py_lower(const std::u32string& s) {
  using unicode_detail::k_lower_run_count;
  using unicode_detail::k_lower_runs;
  std::u32string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const char32_t c = s[i];
    if (c < 0x80) {
      out.push_back(c >= 'A' && c <= 'Z' ? c + 32 : c);
      continue;
    }
    if (c == 0x130) {  // LATIN CAPITAL LETTER I WITH DOT ABOVE lower-cases to two code points
      out += U"i\u0307";
      continue;
    }
    if (c == 0x3A3) {
      out.push_back(final_sigma(s, i) ? 0x3C2 : 0x3C3);
      continue;
    }
    // Runs are sorted by first code point; only the last run starting at or before c can contain it.
    const auto* end = k_lower_runs + k_lower_run_count;
    const auto* it = std::upper_bound(k_lower_runs, end, c,
                                      [](char32_t v, const unicode_detail::LowerRun& r) { return v < r.first; });
    char32_t mapped = c;
    if (it != k_lower_runs) {
      const auto& r = *(it - 1);
      const char32_t off = c - r.first;
      if (off % static_cast<char32_t>(r.stride) == 0 && off / static_cast<char32_t>(r.stride) <
                                                            static_cast<char32_t>(r.count))
        mapped = static_cast<char32_t>(static_cast<int64_t>(c) + r.delta);
    }
    out.push_back(mapped);
  }
  return out;
}

std::u32string py_strip(const std::u32string& s) {
  size_t b = 0, e = s.size();
  while (b < e && py_isspace(s[b])) ++b;
  while (e > b && py_isspace(s[e - 1])) --e;
  return s.substr(b, e - b);
}

}  // namespace rematch::data
