#include "train/methods/method_spec.h"

#include <algorithm>
#include <map>
#include <set>

#include "tensor/error.h"

namespace rematch::train {
namespace {

std::vector<TrainFlag> merge_flags() {
  std::vector<TrainFlag> flags;
  auto add = [&](const OptionTable& table, const MethodSpec* method) {
    for (const Flag& f : table.flags) {
      auto it = std::find_if(flags.begin(), flags.end(), [&](const TrainFlag& x) { return x.name == f.name; });
      if (it == flags.end()) {
        flags.push_back(TrainFlag{f.name, table.title, {}, {}});
        it = flags.end() - 1;
      }
      const bool seen = std::any_of(it->instances.begin(), it->instances.end(),
                                    [&](const auto& instance) { return instance.second == &f; });
      if (!seen) it->instances.emplace_back(&table, &f);
      if (method && std::find(it->methods.begin(), it->methods.end(), method->name) == it->methods.end())
        it->methods.push_back(method->name);
    }
  };
  add(common_flags(), nullptr);
  std::map<std::string, std::set<std::string>> title_methods;  // a group's methods: those of its tables
  for (const MethodSpec* m : registered_methods())
    for (const OptionTable* table : m->tables) {
      add(*table, m);
      title_methods[table->title].insert(m->name);
    }
  for (TrainFlag& f : flags) {
    if (!f.methods.empty() && std::set<std::string>(f.methods.begin(), f.methods.end()) != title_methods[f.group])
      f.group = kSharedOptions;
    else if (!f.methods.empty())
      f.group = group_title(f.group);
  }
  return flags;
}

}  // namespace

const char* const kSharedOptions = "Options of several methods (each says which)";

std::string group_title(const std::string& title) {
  if (title.find("--method") != std::string::npos) return title;
  std::string names;
  for (const MethodSpec* m : registered_methods())
    if (std::any_of(m->tables.begin(), m->tables.end(), [&](const OptionTable* t) { return t->title == title; }))
      names += (names.empty() ? "" : " | ") + m->name;
  return names.empty() ? title : title + " (--method " + names + ")";
}

nlohmann::json Default::value_for(const TrainConfig& config) const {
  if (rule) return rule(config);
  const nlohmann::json* any = nullptr;
  for (const auto& [preset, value] : values) {
    if (preset == config.preset) return value;
    if (preset == "*") any = &value;
  }
  return any ? *any : nlohmann::json();
}

const Flag& TrainFlag::of(const std::string& method) const {
  if (const MethodSpec* spec = find_method_spec(method))
    for (const auto& [table, flag] : instances)
      if (std::find(spec->tables.begin(), spec->tables.end(), table) != spec->tables.end()) return *flag;
  return first();
}

bool TrainFlag::belongs_to(const std::string& method) const {
  return methods.empty() || std::find(methods.begin(), methods.end(), method) != methods.end();
}

const std::vector<TrainFlag>& train_flags() {
  static const std::vector<TrainFlag> flags = merge_flags();
  return flags;
}

const TrainFlag* find_train_flag(const std::string& name) {
  for (const TrainFlag& f : train_flags())
    if (f.name == name) return &f;
  return nullptr;
}

const MethodSpec* find_method_spec(const std::string& name) {
  for (const MethodSpec* m : registered_methods())
    if (m->name == name) return m;
  return nullptr;
}

const MethodSpec& method_spec(const std::string& name) {
  if (const MethodSpec* m = find_method_spec(name)) return *m;
  std::vector<std::string> names;
  for (const MethodSpec* m : registered_methods()) names.push_back(m->name);
  options_detail::bad_choice("method", names, name);
}

}  // namespace rematch::train
