// What `rematch train` knows of a method: its MethodSpec, defined in the method's folder and registered by one
// line in make_method.cpp (docs/design.md §8.3). The spec names the method, its data layout and presets, the
// tables of its options (options.h), the defaults it gives the common and its own options per preset with their
// sources (docs/presets.md is generated from them), its checks across flags, how it is made: from its typed
// options, the common options, its data and the log (make_with), and what the trainer and the demo need of it
// (data_parallel, demo).
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "train/methods/data_files.h"
#include "train/methods/method.h"
#include "train/methods/train_config.h"

namespace rematch::train {

// Where a method's data comes from: the SCAN precomp folders of image-caption pairs (train/data/
// precomp_dataset.h) or the labelled image/text features (train/data/labeled_dataset.h).
enum class DataLayout { Precomp, Labelled };

// One default of a method: the value an unset flag takes (Flag::unset), per preset, or computed from the rest of
// the config; applied in the order of MethodSpec::defaults, before the common defaults.
struct Default {
  std::string flag;
  // {preset, value}; the preset "" is the value without --preset. A preset missing from the list leaves the flag
  // unset (then the common default, or the method, decides).
  std::vector<std::pair<std::string, nlohmann::json>> values;
  std::string source;
  // A value computed from the config instead (L2RM's --max_reserved from the batch size): `rule` gives it, and
  // `rule_text` is what the docs print for every preset (the values, when listed, are then only the docs').
  std::function<nlohmann::json(const TrainConfig&)> rule;
  std::string rule_text;
  // Done as well when the default is taken (COCO's --test_split testall also turns --coco_folds on).
  std::function<void(TrainConfig&)> then;

  static Default per_preset(std::string flag, std::vector<std::pair<std::string, nlohmann::json>> values,
                            std::string source) {
    Default d;
    d.flag = std::move(flag);
    d.values = std::move(values);
    d.source = std::move(source);
    return d;
  }
  static Default always(std::string flag, nlohmann::json value, std::string source) {
    return per_preset(std::move(flag), {{"*", std::move(value)}}, std::move(source));
  }
  static Default computed(std::string flag, std::function<nlohmann::json(const TrainConfig&)> rule,
                          std::string rule_text, std::string source) {
    Default d;
    d.flag = std::move(flag);
    d.rule = std::move(rule);
    d.rule_text = std::move(rule_text);
    d.source = std::move(source);
    return d;
  }
  // The value for `config`, or null when this default sets nothing for its preset.
  nlohmann::json value_for(const TrainConfig& config) const;
};

// What `rematch demo` (train/cli/demo_command.cpp) needs of a method it trains, beyond its flags.
struct DemoPart {
  // Its warm-up epochs, counted in the epochs every method gets alike: what its behaviour test measured on the
  // demo's CPU world (tests/train/<method>_behaviour_test.cpp); L2RM's until its model ranks well enough for the
  // split.
  int64_t warmup_epochs = 0;
  // The EpochInfo statistic the demo's table shows as the split's precision ("": the method keeps no split).
  std::string split_stat;
  // Whether its run's page (the pairs it flagged, with pictures) is the one the demo opens first.
  bool report = false;
  // Values the demo gives some of its own flags on the demo's small world, where its behaviour test found the
  // method's default does not learn (each with the reason beside it); config.json records them like any flag.
  std::vector<std::pair<std::string, nlohmann::json>> flags;
};

struct MethodSpec {
  std::string name;                    // --method
  std::string summary;                 // one line: what it trains, after which paper
  std::string doc;                     // its page: docs/methods/<method>.md
  DataLayout layout = DataLayout::Precomp;
  std::vector<std::string> presets;    // the values --preset takes with it
  std::vector<const OptionTable*> tables;  // its options (a table may be shared with other methods)
  std::vector<Default> defaults;
  // What the method requires of the flags whatever their values (rcsl's --paired_length, no injected noise):
  // run by check_config before any range, so a missing flag is named first.
  std::function<void(const TrainConfig&)> require;
  // Checks across flags, after every flag's own range (--max_reserved within the batch, --mine_epoch within
  // the run, the ablations' combinations).
  std::function<void(const TrainConfig&)> check;
  // The files it reads beyond its layout's (MSCN's meta split under --meta_source split), each an Error naming what
  // to do when missing: `rematch train --dry_run` lists and checks them with the layout's (check_data_files).
  std::function<std::vector<DataFile>(const TrainConfig&)> data_files;
  // Reads the data (an Error before any training) and builds the method.
  std::function<std::unique_ptr<Method>(const TrainConfig&, std::ostream&)> make;
  // Whether it trains on several processes with one process's semantics (docs/distributed.md §4; its steps share
  // each batch among the ranks of parallel::world(), train/methods/data_parallel.h). A method that does not is refused
  // under mpirun, by name, before a run folder is made.
  bool data_parallel = false;
  DemoPart demo;
};

// The one way a method is made: its options section S of the config, the common options, the data `load` reads
// for them, and the log.
template <class S, class Data>
std::function<std::unique_ptr<Method>(const TrainConfig&, std::ostream&)> make_with(
    std::function<Data(const CommonOptions&, const S&, std::ostream&)> load,
    std::function<std::unique_ptr<Method>(const CommonOptions&, const S&, Data, std::ostream&)> build) {
  return [load, build](const TrainConfig& config, std::ostream& log) {
    const S& options = config.options<S>();
    return build(config, options, load(config, options, log), log);
  };
}

// Every flag of `rematch train`, merged by name: the common ones, then each registered method's tables in order
// (the order of --help). A name several tables declare (--margin) has one instance per table.
struct TrainFlag {
  std::string name;
  // The title of its first table, or kSharedOptions when methods outside that table's declare it too (--margin).
  std::string group;
  std::vector<std::pair<const OptionTable*, const Flag*>> instances;  // (table, flag), in registration order
  std::vector<std::string> methods;  // the methods whose tables declare it (empty: a common option)
  const Flag& first() const { return *instances.front().second; }
  // The instance `method` reads (the first when its tables have none).
  const Flag& of(const std::string& method) const;
  bool belongs_to(const std::string& method) const;
};
const std::vector<TrainFlag>& train_flags();
extern const char* const kSharedOptions;
// The heading of a group of options in --help and docs/presets.md: its table's title, followed by the methods
// whose tables carry that title (" (--method a | b | ...)", in registration order) when the title names none
// itself, so that a group several methods share lists them as they are registered.
std::string group_title(const std::string& title);
const TrainFlag* find_train_flag(const std::string& name);

// The registered methods, in the order of --help (make_method.cpp), and one by name (an Error naming --method
// and the choices).
const std::vector<const MethodSpec*>& registered_methods();
const MethodSpec& method_spec(const std::string& name);
const MethodSpec* find_method_spec(const std::string& name);

}  // namespace rematch::train
