#include "train/methods/options.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <sstream>

#include "tensor/error.h"
#include "train/methods/train_config.h"

namespace rematch::train {

OptionSections::OptionSections(const OptionSections& other) {
  for (const auto& [type, item] : other.items_) items_[type] = item->clone();
}

OptionSections& OptionSections::operator=(const OptionSections& other) {
  if (this != &other) {
    std::map<const void*, std::unique_ptr<Base>> copy;
    for (const auto& [type, item] : other.items_) copy[type] = item->clone();
    items_ = std::move(copy);
  }
  return *this;
}

namespace options_detail {

void bad_choice(const std::string& flag, const std::vector<std::string>& choices, const std::string& got) {
  std::string list;
  for (const std::string& c : choices) list += (list.empty() ? "" : ", ") + c;
  REMATCH_FAIL("--", flag, " must be one of ", list, " (got '", got, "')");
}

}  // namespace options_detail

namespace {

std::string number_text(double v, bool integer) {
  if (integer) return std::to_string(static_cast<int64_t>(v));
  return format_value(nlohmann::json(v));
}

// A value as an error message shows it (as the earlier messages did: the stream's default form).
std::string got_text(const nlohmann::json& v) {
  if (v.is_null()) return "nan";
  if (v.is_number_float()) {
    std::ostringstream s;
    s << v.get<double>();
    return s.str();
  }
  return v.dump();
}

}  // namespace

bool Flag::unset(const TrainConfig& c) const {
  const nlohmann::json v = get(c);
  switch (kind) {
    case FlagKind::Integer:
      return v.get<int64_t>() < 0;
    case FlagKind::Real:
      return v.is_null();
    case FlagKind::Text:
    case FlagKind::File:
      return v.get<std::string>().empty();
    case FlagKind::IntegerList:
      return v.empty();
    case FlagKind::Choice:
      return unset_choice && v.get<std::string>() == *unset_choice;
    case FlagKind::Unsigned:
    case FlagKind::Switch:
      return false;
  }
  return false;
}

std::string Flag::range_text() const {
  if (!min && !max) return "";
  const bool integer = kind == FlagKind::Integer;
  std::string text;
  if (min && max) {
    text = std::string("in ") + (min_open ? "(" : "[") + number_text(*min, integer) + ", " + number_text(*max, integer) +
           (max_open ? ")" : "]");
  } else if (min) {
    text = integer && !min_open ? "at least " + number_text(*min, true)
                                : std::string(min_open ? "> " : ">= ") + number_text(*min, integer);
  } else {
    text = std::string(max_open ? "< " : "<= ") + number_text(*max, integer);
  }
  if (also_allowed)
    text += " or " + number_text(*also_allowed, integer) +
            (also_allowed_means.empty() ? "" : " (" + also_allowed_means + ")");
  return text;
}

std::string Flag::range_error(const TrainConfig& c) const {
  if (!min && !max) return "";
  const nlohmann::json v = get(c);
  const double x = v.is_null() ? std::nan("") : v.get<double>();
  if (also_allowed && x == *also_allowed) return "";
  bool ok = kind != FlagKind::Real || std::isfinite(x);
  if (min) ok = ok && (min_open ? x > *min : x >= *min);
  if (max) ok = ok && (max_open ? x < *max : x <= *max);
  if (ok) return "";
  return "--" + name + " must be " + range_text() + " (got " + got_text(v) + ")";
}

const Flag* OptionTable::find(const std::string& name) const {
  for (const Flag& f : flags)
    if (f.name == name) return &f;
  return nullptr;
}

OptionTable finish_table(OptionTable table) {
  const TrainConfig defaults;
  for (Flag& f : table.flags) f.initial = f.get(defaults);
  return table;
}

bool json_fits(FlagKind kind, const nlohmann::json& v) {
  switch (kind) {
    case FlagKind::Switch:
      return v.is_boolean();
    case FlagKind::Unsigned:
      return v.is_number_unsigned();
    case FlagKind::Integer:
      return v.is_number_integer() &&
             !(v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()));
    case FlagKind::Real:
      return v.is_number();
    case FlagKind::Text:
    case FlagKind::File:
    case FlagKind::Choice:
      return v.is_string();
    case FlagKind::IntegerList:
      return v.is_array() &&
             std::all_of(v.begin(), v.end(), [](const nlohmann::json& x) { return json_fits(FlagKind::Integer, x); });
  }
  return false;
}

const char* json_type_name(FlagKind kind) {
  switch (kind) {
    case FlagKind::Switch:
      return "true or false";
    case FlagKind::Unsigned:
      return "a non-negative integer";
    case FlagKind::Integer:
      return "an integer";
    case FlagKind::Real:
      return "a number";
    case FlagKind::Text:
    case FlagKind::File:
    case FlagKind::Choice:
      return "a string";
    case FlagKind::IntegerList:
      return "a list of integers";
  }
  return "?";
}

std::string format_value(const nlohmann::json& v) {
  if (v.is_null()) return "unset";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_array()) {
    std::string out;
    for (const nlohmann::json& x : v) out += (out.empty() ? "" : " ") + format_value(x);
    return out;
  }
  if (!v.is_number_float()) return v.dump();
  const double x = v.get<double>();
  if (x == std::floor(x) && std::abs(x) < 1e15) return std::to_string(static_cast<int64_t>(x));
  // The shortest text that reads back as x; small numbers as 2e-4.
  const bool small = std::abs(x) < 1e-3;
  char buf[64];
  for (int p = 1; p <= 17; ++p) {
    std::snprintf(buf, sizeof buf, small ? "%.*e" : "%.*g", small ? p - 1 : p, x);
    if (std::strtod(buf, nullptr) == x) break;
  }
  std::string s = buf;
  const size_t e = s.find('e');
  if (e == std::string::npos) return s;
  std::string mantissa = s.substr(0, e), exponent = s.substr(e + 1);
  if (mantissa.find('.') != std::string::npos) {
    while (mantissa.back() == '0') mantissa.pop_back();
    if (mantissa.back() == '.') mantissa.pop_back();
  }
  const bool negative = exponent[0] == '-';
  size_t digits = exponent.find_first_not_of("+-0");
  return mantissa + "e" + (negative ? "-" : "") + (digits == std::string::npos ? "0" : exponent.substr(digits));
}

}  // namespace rematch::train
