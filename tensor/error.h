// The one exception type of rematch, and the check macro every layer validates its input with.
// A message always says which op (or file) failed and what it saw: shapes, dtypes, devices, values.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace rematch {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

namespace detail {
template <typename... Args> std::string concat(Args&&... args) {
  std::ostringstream os;
  (os << ... << std::forward<Args>(args));
  return os.str();
}
}  // namespace detail

}  // namespace rematch

// REMATCH_CHECK(cond, "op add: shapes ", a.shape_str(), " and ", ...): throws rematch::Error with the parts
// concatenated when `cond` is false. Never compiled out: it guards user input, not invariants.
#define REMATCH_CHECK(cond, ...)                                            \
  do {                                                                      \
    if (!(cond)) throw ::rematch::Error(::rematch::detail::concat(__VA_ARGS__)); \
  } while (0)

#define REMATCH_FAIL(...) throw ::rematch::Error(::rematch::detail::concat(__VA_ARGS__))
