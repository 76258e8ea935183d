// The flag tables of `rematch train` (docs/design.md §8.3, "Adding a training method"). Every option is one Flag: its
// name (the flag is --name and config.json's key), the typed field it sets (reached through the TrainConfig), its
// help, its range or choices, where its default comes from, and whether it is an ablation switch. The common
// options have one table (train_config.cpp); each method folder holds the table of its own options
// (<folder>/<method>_options.cpp), and its MethodSpec (method_spec.h) adds the per-preset defaults. The command line (flags, grouped --help), config.json
// and --dry_run (to_json, train_config_from_json), the range checks, the "flag of another method" error and
// docs/presets.md all read these tables; nothing else lists the options.
//
// A TrainConfig holds the common options and one typed section per method (OptionSections): a method's table
// reaches its struct with config.options<S>(). A flag shared by several methods (--margin, --tau, --embed_size,
// ...) is declared by each of their tables, each setting its own method's field: the command line and
// config.json set them all, and config.json writes the run's method's value.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace rematch::train {

struct TrainConfig;

// One typed struct per method, held by type: config.options<L2rmOptions>() is the L2RM section (a default one on
// first use). Copying copies every section.
class OptionSections {
 public:
  OptionSections() = default;
  OptionSections(const OptionSections& other);
  OptionSections& operator=(const OptionSections& other);
  OptionSections(OptionSections&&) noexcept = default;
  OptionSections& operator=(OptionSections&&) noexcept = default;

  template <class S> S& get() {
    std::unique_ptr<Base>& slot = items_[key<S>()];
    if (!slot) slot = std::make_unique<Holder<S>>();
    return static_cast<Holder<S>&>(*slot).value;
  }
  template <class S> const S& get() const {
    static const S kDefault{};
    const auto it = items_.find(key<S>());
    return it == items_.end() ? kDefault : static_cast<const Holder<S>&>(*it->second).value;
  }

 private:
  // One address per section type: the key of its slot.
  template <class S> static const void* key() {
    static const char tag = 0;
    return &tag;
  }
  struct Base {
    virtual ~Base() = default;
    virtual std::unique_ptr<Base> clone() const = 0;
  };
  template <class S> struct Holder : Base {
    S value{};
    std::unique_ptr<Base> clone() const override { return std::make_unique<Holder<S>>(*this); }
  };
  std::map<const void*, std::unique_ptr<Base>> items_;
};

// How a flag is given and stored. Choice: one of named values (an enum, an optional enum whose "" means "the
// method's own", or a bool); File: a path the run reads (checked by --dry_run).
enum class FlagKind { Integer, Unsigned, Real, Switch, Text, File, IntegerList, Choice };

struct Flag {
  std::string name;
  FlagKind kind = FlagKind::Text;
  std::string help;
  std::vector<std::string> choices;  // Choice: the names
  // Choice: the name a default replaces ("" for the choices whose "" means "the method's own", "auto" for
  // L2RM's --mask_positives); none for a choice that is always a value.
  std::optional<std::string> unset_choice;
  // Integer and Real: the allowed range; also_allowed: values outside it that mean something (knn -1).
  std::optional<double> min, max;
  bool min_open = false, max_open = false;
  std::optional<double> also_allowed;
  std::string also_allowed_means;  // "5 % of the training set"
  bool ablation = false;           // a switch of a paper's ablation table: refused for another method
  std::string negated_switch;      // Switch: the command-line spelling that sets it false (plots: no_plots)
  std::string source;              // where its default value comes from (docs/presets.md)
  nlohmann::json initial;          // its value in a default TrainConfig (null: unset, a number NaN)

  std::function<nlohmann::json(const TrainConfig&)> get;
  // From a value of the flag's JSON type (checked by the caller): a name that is no choice, or a device that is
  // not cpu, cuda or cuda:N, is an Error naming the flag.
  std::function<void(TrainConfig&, const nlohmann::json&)> set;

  // Builder calls, chained after a FlagTable call.
  Flag& at_least(double v) { return min = v, min_open = false, *this; }
  Flag& above(double v) { return min = v, min_open = true, *this; }
  Flag& at_most(double v) { return max = v, max_open = false, *this; }
  Flag& below(double v) { return max = v, max_open = true, *this; }
  Flag& or_value(double v, std::string means) { return also_allowed = v, also_allowed_means = std::move(means), *this; }
  Flag& from(std::string where) { return source = std::move(where), *this; }
  Flag& is_ablation() { return ablation = true, *this; }
  Flag& resolved_from(std::string choice) { return unset_choice = std::move(choice), *this; }

  // Whether the value in `c` is the "not given" one a default fills: NaN, a negative integer, "", [], or the
  // unset choice.
  bool unset(const TrainConfig& c) const;
  // "" when the value in `c` is within the range, else the error ("--rho must be in (0, 1) (got 2)").
  std::string range_error(const TrainConfig& c) const;
  // The range as the help and the docs say it: "in (0, 1)", "at least 2", "> 0 or -1 (5 % of ...)"; "" if none.
  std::string range_text() const;
};

// A named list of flags: the common options, or one method folder's (the title heads its group in --help).
struct OptionTable {
  std::string title;
  std::vector<Flag> flags;
  const Flag* find(const std::string& name) const;
};

// Typed names of a Choice: {value, "name"} pairs.
template <class T> using ChoiceNames = std::vector<std::pair<T, std::string>>;

namespace options_detail {
template <class T> nlohmann::json to_json_value(const T& v) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::isnan(v) ? nlohmann::json() : nlohmann::json(v);
  } else {
    return nlohmann::json(v);
  }
}
// "--flag must be one of a, b (got 'c')"
[[noreturn]] void bad_choice(const std::string& flag, const std::vector<std::string>& choices, const std::string& got);
}  // namespace options_detail

// Adds flags whose fields live in the struct S inside a TrainConfig; `field` is a member pointer of S or a
// callable S& -> T&.
template <class S> class FlagTable {
 public:
  using Reach = std::function<S&(TrainConfig&)>;
  using ConstReach = std::function<const S&(const TrainConfig&)>;
  FlagTable(std::string title, Reach reach, ConstReach const_reach)
      : reach_(std::move(reach)), const_reach_(std::move(const_reach)) {
    table_.title = std::move(title);
  }

  template <class F> Flag& integer(const std::string& name, F field, const std::string& help) {
    return add<int64_t>(name, FlagKind::Integer, field, help);
  }
  template <class F> Flag& unsigned_integer(const std::string& name, F field, const std::string& help) {
    return add<uint64_t>(name, FlagKind::Unsigned, field, help);
  }
  template <class F> Flag& real(const std::string& name, F field, const std::string& help) {
    return add<double>(name, FlagKind::Real, field, help);
  }
  template <class F> Flag& text(const std::string& name, F field, const std::string& help) {
    return add<std::string>(name, FlagKind::Text, field, help);
  }
  template <class F> Flag& file(const std::string& name, F field, const std::string& help) {
    return add<std::string>(name, FlagKind::File, field, help);
  }
  template <class F> Flag& integers(const std::string& name, F field, const std::string& help) {
    return add<std::vector<int64_t>>(name, FlagKind::IntegerList, field, help);
  }
  template <class F> Flag& on_off(const std::string& name, F field, const std::string& help) {
    return add<bool>(name, FlagKind::Switch, field, help);
  }
  template <class T, class F>
  Flag& choice(const std::string& name, F field, ChoiceNames<T> names, const std::string& help) {
    Flag& f = start(name, FlagKind::Choice, help);
    for (const auto& [value, n] : names) f.choices.push_back(n);
    if (!names.empty() && names.front().second.empty()) f.unset_choice = "";
    auto reach = reach_;
    auto const_reach = const_reach_;
    f.get = [const_reach, field, names](const TrainConfig& c) {
      const T& v = std::invoke(field, const_reach(c));
      for (const auto& [value, n] : names)
        if (value == v) return nlohmann::json(n);
      return nlohmann::json("?");
    };
    f.set = [reach, field, names, name](TrainConfig& c, const nlohmann::json& j) {
      const std::string got = j.get<std::string>();
      for (const auto& [value, n] : names)
        if (n == got) {
          std::invoke(field, reach(c)) = value;
          return;
        }
      std::vector<std::string> choices;
      for (const auto& [value, n] : names)
        if (!n.empty()) choices.push_back(n);
      options_detail::bad_choice(name, choices, got);
    };
    return f;
  }
  // A field of a type of its own, through its JSON form (--device).
  Flag& custom(const std::string& name, FlagKind kind, std::function<nlohmann::json(const S&)> get,
               std::function<void(S&, const nlohmann::json&)> set, const std::string& help) {
    Flag& f = start(name, kind, help);
    auto reach = reach_;
    auto const_reach = const_reach_;
    f.get = [const_reach, get](const TrainConfig& c) { return get(const_reach(c)); };
    f.set = [reach, set](TrainConfig& c, const nlohmann::json& j) { set(reach(c), j); };
    return f;
  }

  OptionTable& table() { return table_; }

 private:
  Flag& start(const std::string& name, FlagKind kind, const std::string& help) {
    table_.flags.emplace_back();
    Flag& f = table_.flags.back();
    f.name = name;
    f.kind = kind;
    f.help = help;
    return f;
  }
  template <class T, class F> Flag& add(const std::string& name, FlagKind kind, F field, const std::string& help) {
    Flag& f = start(name, kind, help);
    auto reach = reach_;
    auto const_reach = const_reach_;
    f.get = [const_reach, field](const TrainConfig& c) {
      return options_detail::to_json_value<T>(std::invoke(field, const_reach(c)));
    };
    f.set = [reach, field](TrainConfig& c, const nlohmann::json& j) {
      if constexpr (std::is_floating_point_v<T>) {
        std::invoke(field, reach(c)) = j.is_null() ? std::nan("") : j.get<double>();
      } else {
        std::invoke(field, reach(c)) = j.get<T>();
      }
    };
    return f;
  }

  Reach reach_;
  ConstReach const_reach_;
  OptionTable table_;
};

// Reads each flag's initial value from a default TrainConfig; returns the table.
OptionTable finish_table(OptionTable table);

// Whether a JSON value has the type of a flag (numbers must fit: an integer field takes no fraction and no
// number out of int64 range), and the type's name for the error ("an integer", "true or false", ...).
bool json_fits(FlagKind kind, const nlohmann::json& value);
const char* json_type_name(FlagKind kind);

// A value as the help and docs print it: 2e-4, 0.05, 128, true, "image", [15, 30, 45].
std::string format_value(const nlohmann::json& value);

}  // namespace rematch::train
