// Validators for number flags. CLI11's own let the wrong things through or say too much: it reads "-1" into an
// unsigned flag as 2^64 - 1 and clamps a number past the type's range (--seed -1, 2^64 and 99999999999999999999
// were one run); its PositiveNumber and NonNegativeNumber print their range as "0.000000 to 1797693134862315708…"
// (all 309 digits of DBL_MAX) and refuse 0 as "not in range 0.000000 to …". These say what the flag wants:
// "--img_dim: must be a whole number >= 1, got -1". The help text keeps CLI11's names (POSITIVE, NONNEGATIVE).
#pragma once

#include <CLI/CLI.hpp>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <system_error>

namespace rematch::cli {

namespace number_checks_detail {

// Reads `text` whole as a T (std::from_chars: no spaces, no '+', no hex); the error code says why not.
template <class T> std::errc read_whole(const std::string& text, T& value) {
  const char* end = text.data() + text.size();
  const std::from_chars_result r = std::from_chars(text.data(), end, value);
  if (r.ec == std::errc() && r.ptr != end) return std::errc::invalid_argument;
  return r.ec;
}

// A whole number of at least `low` (0 or 1) that an int64 holds.
inline CLI::Validator count_check(int64_t low, const char* name) {
  return CLI::Validator(
      [low](std::string& text) -> std::string {
        const std::string want = "a whole number >= " + std::to_string(low);
        int64_t v = 0;
        const std::errc e = read_whole(text, v);
        if (e == std::errc::result_out_of_range) return "must be " + want + " below 2^63, got " + text;
        if (e != std::errc()) return "must be " + want + ", got '" + text + "'";
        return v >= low ? std::string() : "must be " + want + ", got " + text;
      },
      name);
}

// A finite real number > 0 (strict) or >= 0.
inline CLI::Validator real_check(bool strict, const char* name) {
  return CLI::Validator(
      [strict](std::string& text) -> std::string {
        const std::string want = strict ? "a finite number > 0" : "a finite number >= 0";
        const char* begin = text.c_str();
        char* end = nullptr;
        errno = 0;
        const double v = std::strtod(begin, &end);
        if (end == begin || *end != '\0') return "must be " + want + ", got '" + text + "'";
        if (!std::isfinite(v) || errno == ERANGE || (strict ? !(v > 0) : !(v >= 0)))
          return "must be " + want + ", got " + text;
        return std::string();
      },
      name);
}

}  // namespace number_checks_detail

inline const CLI::Validator kPositive = number_checks_detail::real_check(true, "POSITIVE");
inline const CLI::Validator kNonNegative = number_checks_detail::real_check(false, "NONNEGATIVE");
inline const CLI::Validator kPositiveCount = number_checks_detail::count_check(1, "POSITIVE");
inline const CLI::Validator kNonNegativeCount = number_checks_detail::count_check(0, "NONNEGATIVE");

// Any whole number the flag's type holds (train's Integer and Unsigned flags, train/cli/train_command.cpp).
inline CLI::Validator whole_number(bool is_unsigned) {
  return CLI::Validator(
      [is_unsigned](std::string& s) -> std::string {
        uint64_t u = 0;
        int64_t i = 0;
        const std::errc e = is_unsigned ? number_checks_detail::read_whole(s, u) : number_checks_detail::read_whole(s, i);
        if (e == std::errc()) return "";
        const std::string range =
            is_unsigned ? "0 to 18446744073709551615" : "-9223372036854775808 to 9223372036854775807";
        return "must be a whole number from " + range + ", got '" + s + "'";
      },
      "");
}

}  // namespace rematch::cli
