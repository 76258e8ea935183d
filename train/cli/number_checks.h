// Validators for number flags, in place of CLI11's PositiveNumber and NonNegativeNumber: those print their range
// as "0.000000 to 1797693134862315708…" (all 309 digits of DBL_MAX), refuse 0 as "not in range 0.000000 to …",
// and let an integer flag's 99999999999999999999 through to be clamped to 2^63 - 1. These say what the flag wants:
// "--img_dim: must be a whole number >= 1, got -1". The help text keeps CLI11's names (POSITIVE, NONNEGATIVE).
#pragma once

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

namespace rematch::cli {

namespace number_checks_detail {

// strict: > 0 (a count: >= 1); otherwise >= 0. whole: the flag holds an int64.
inline CLI::Validator number_check(bool strict, bool whole, const char* name) {
  return CLI::Validator(
      [strict, whole](std::string& text) -> std::string {
        const std::string want = whole ? (strict ? "a whole number >= 1" : "a whole number >= 0")
                                       : (strict ? "a finite number > 0" : "a finite number >= 0");
        const char* begin = text.c_str();
        char* end = nullptr;
        errno = 0;
        if (whole) {
          const long long v = std::strtoll(begin, &end, 10);
          if (end == begin || *end != '\0') return "must be " + want + ", got '" + text + "'";
          if (errno == ERANGE) return "must be " + want + " below 2^63, got " + text;
          return (strict ? v >= 1 : v >= 0) ? std::string() : "must be " + want + ", got " + text;
        }
        const double v = std::strtod(begin, &end);
        if (end == begin || *end != '\0') return "must be " + want + ", got '" + text + "'";
        if (!std::isfinite(v) || errno == ERANGE || (strict ? !(v > 0) : !(v >= 0)))
          return "must be " + want + ", got " + text;
        return std::string();
      },
      name);
}

}  // namespace number_checks_detail

inline const CLI::Validator kPositive = number_checks_detail::number_check(true, false, "POSITIVE");
inline const CLI::Validator kNonNegative = number_checks_detail::number_check(false, false, "NONNEGATIVE");
inline const CLI::Validator kPositiveCount = number_checks_detail::number_check(true, true, "POSITIVE");
inline const CLI::Validator kNonNegativeCount = number_checks_detail::number_check(false, true, "NONNEGATIVE");

}  // namespace rematch::cli
