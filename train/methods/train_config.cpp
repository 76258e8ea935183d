// The common options' table and defaults, and what every flag table feeds: resolve_defaults, check_config and
// the JSON form of a config (config.json, --dry_run). The methods' defaults are in their specs (method_spec.h;
// docs/methods/l2rm.md §1.1, rcl.md §2.2, rcsl.md §3.5, uotrcl.md §4.3), their sources in docs/presets.md.
#include "train/methods/train_config.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "tensor/error.h"
#include "tensor/json_depth.h"
#include "train/methods/method_spec.h"

namespace rematch::train {
namespace {

using Json = nlohmann::json;

std::string join(const std::vector<std::string>& items, const std::string& sep = ", ") {
  std::string out;
  for (const std::string& x : items) out += (out.empty() ? "" : sep) + x;
  return out;
}

std::vector<std::string> method_names() {
  std::vector<std::string> names;
  for (const MethodSpec* m : registered_methods()) names.push_back(m->name);
  return names;
}

OptionTable make_common_flags() {
  FlagTable<CommonOptions> t(
      "Common options", [](TrainConfig& c) -> CommonOptions& { return c; },
      [](const TrainConfig& c) -> const CommonOptions& { return c; });
  t.text("method", &CommonOptions::method, "The method to train (the groups below list each one's own options)");
  t.text("preset", &CommonOptions::preset,
         "The official run's hyperparameters for a data set: f30k | coco | cc152k (image-caption methods) or "
         "wiki | nus | xmedianet (uotrcl); docs/presets.md");
  t.custom(
       "device", FlagKind::Text, [](const CommonOptions& c) { return Json(c.device.spec()); },
       [](CommonOptions& c, const Json& j) { c.device = j.get<std::string>(); }, "cpu | cuda | cuda:N")
      .from("ours: the CPU runs anywhere; the official runs used one GPU (--device cuda)");
  t.unsigned_integer("seed", &CommonOptions::seed, "Random seed (weights, batches, noise unless --noise_seed)")
      .from("ours: 0 (docs/reproduce.md gives the seeds of the reported runs)");
  t.text("data_path", &CommonOptions::data_path,
         "Folder holding <data_name>/ (SCAN precomp layout), or the labelled data file/folder (uotrcl)");
  t.text("data_name", &CommonOptions::data_name, "Data set folder, e.g. f30k_precomp (default <preset>_precomp)");
  t.text("vocab_path", &CommonOptions::vocab_path, "Folder of <data_name>_vocab.json (default <data_path>/vocab)");
  t.choice<std::optional<data::ValSubset>>(
      "val_subset", &CommonOptions::val_subset,
      {{std::nullopt, ""}, {data::ValSubset::sgraf, "sgraf"}, {data::ValSubset::ncr, "ncr"}},
      "Part of dev used for model selection: sgraf (5,000 captions) | ncr (1,000 x im_div captions); default: the "
      "method's official code (l2rm ncr, the others sgraf)");
  t.integer("valid_len", &CommonOptions::valid_len,
            "Labelled data without a valid split: validate on the first valid_len test rows");
  t.on_off("coco_folds", &CommonOptions::coco_folds,
           "Also report COCO 5-fold 1K (use with --test_split testall; on by default with --preset coco)");
  t.choice<std::optional<TestSplit>>(
      "test_split", &CommonOptions::test_split,
      {{std::nullopt, ""}, {TestSplit::Test, "test"}, {TestSplit::Testall, "testall"}},
      "Split of the final test: test | testall (default: testall with 5-fold 1K and full 5K for --preset coco, as "
      "the official runs end; test otherwise)");
  t.real("noise_ratio", &CommonOptions::noise_ratio, "Share of mismatched pairs (or noisy labels, uotrcl) to inject")
      .at_least(0)
      .below(1)
      .from("no injected noise; the benchmarks' ratios are given per run (docs/reproduce.md)");
  t.file("noise_file", &CommonOptions::noise_file,
         "A published noise index (.npy) or label-noise file; overrides generation");
  t.choice<std::optional<NoiseMode>>(
      "noise_mode", &CommonOptions::noise_mode,
      {{std::nullopt, ""},
       {NoiseMode::Image, "image"},
       {NoiseMode::Caption, "caption"},
       {NoiseMode::Symmetric, "symmetric"},
       {NoiseMode::Mrl, "mrl"}},
      "image | caption (pairs: RCL/DECL image level or NCR caption level); symmetric | mrl (labels). Default: "
      "image (triplet, infonce, rcl, l2rm, decl), caption (ncr: its own protocol; rcsl-nc: the RCSL paper follows NCR; "
      "crcl: its data.py uses NCR's), "
      "symmetric (uotrcl)");
  t.integer("noise_seed", &CommonOptions::noise_seed, "Seed of the injected noise (default: --seed)");
  t.integer("batch_size", &CommonOptions::batch_size, "Batch size (default per method/preset)").at_least(2);
  t.integer("num_epochs", &CommonOptions::num_epochs,
            "Main epochs (l2rm, ncr, decl: after warm-up; uotrcl: warm-up included; crcl: the sum of --schedules)")
      .at_least(1);
  t.integer("warmup_epoch", &CommonOptions::warmup_epoch,
            "Warm-up epochs (l2rm, ncr, rcsl-nc, uotrcl, decl; crcl: of every round)")
      .at_least(0);
  t.real("learning_rate", &CommonOptions::learning_rate, "Base learning rate (default per method/preset)").above(0);
  t.integer("lr_update", &CommonOptions::lr_update,
            "Multiply the learning rate by 0.1 every lr_update epochs (after warm-up; crcl: from each round's start)");
  t.real("grad_clip", &CommonOptions::grad_clip, "Clip the global gradient norm (0: off; default 2, uotrcl 0)")
      .at_least(0);
  t.text("run_dir", &CommonOptions::run_dir, "Run folder (default runs/<method>-<date>-<time>)");
  t.text("resume", &CommonOptions::resume, "Continue the interrupted run in this folder, with its saved settings");
  t.on_off("overwrite", &CommonOptions::overwrite, "Replace an earlier run in --run_dir");
  t.choice<run::ProgressStyle>("progress", &CommonOptions::progress,
                               {{run::ProgressStyle::Auto, "auto"},
                                {run::ProgressStyle::Bar, "bar"},
                                {run::ProgressStyle::Plain, "plain"},
                                {run::ProgressStyle::None, "none"}},
                               "How progress is shown (auto: a bar on a terminal, plain lines otherwise)");
  t.integer("log_step", &CommonOptions::log_step, "metrics.jsonl (and plain progress) every log_step steps")
      .at_least(1)
      .from("ours: a metrics record every 10 steps");
  t.on_off("plots", &CommonOptions::plots, "Do not write PNG plots").from("ours: plots are written").negated_switch =
      "no_plots";
  t.on_off("detect_anomaly", &CommonOptions::detect_anomaly, "Check every op for NaN/Inf (slow)");
  t.integer("max_steps", &CommonOptions::max_steps, "Stop every epoch after this many steps (smoke runs)")
      .at_least(1)
      .or_value(-1, "every step");
  t.integer("eval_batch", &CommonOptions::eval_batch, "Evaluation block size (images x captions)")
      .at_least(1)
      .from("ours: the block size of the scoring, which changes no number (train/eval/sgraf_scoring.h)");
  return finish_table(t.table());
}

}  // namespace

// The defaults every method shares, after its own (docs/presets.md, "What every method shares").
const std::vector<Default>& common_defaults() {
  static const std::vector<Default> defaults = [] {
    std::vector<Default> d;
    Default coco = Default::per_preset(
        "test_split", {{"coco", "testall"}},
        "L2RM `main_L2RM.py` (end: `evalrank(..., \"testall\", fold5=True)` then full), RCL `evaluate_model.py` "
        "(`'coco' in data_name`: testall fold5 and not), RCSL `train.py` (end: the same), SGRAF README (fold5 for "
        "COCO 1K, 5K otherwise); --coco_folds is turned on with it");
    coco.then = [](TrainConfig& c) { c.coco_folds = true; };
    d.push_back(coco);
    d.push_back(Default::always("test_split", "test", "the test split of every data set"));
    d.push_back(Default::always("val_subset", "sgraf",
                                "RCL `data.py`, SGRAF `data.py`, RCSL `data.py`: 5,000 dev captions "
                                "(backbones.md §6.3)"));
    d.push_back(Default::computed(
        "noise_seed", [](const TrainConfig& c) { return Json(static_cast<int64_t>(c.seed)); }, "--seed",
        "ours: the run's seed draws its noise"));
    d.push_back(Default::always("grad_clip", 2.0, "`opts.py`/`opt.py` of every repository (SGRAF lineage, RCSL)"));
    return d;
  }();
  return defaults;
}

namespace {

const Flag& flag_of(const TrainConfig& c, const std::string& name) {
  const TrainFlag* f = find_train_flag(name);
  REMATCH_CHECK(f != nullptr, "no flag --", name);
  return f->of(c.method);
}

void apply(const Default& d, TrainConfig& c) {
  const Flag& f = flag_of(c, d.flag);
  if (!f.unset(c)) return;
  const Json v = d.value_for(c);
  if (v.is_null()) return;
  f.set(c, v);
  if (d.then) d.then(c);
}

void check_layout_choices(const TrainConfig& c, const MethodSpec& spec) {
  if (!c.noise_mode) return;
  const bool pairs = spec.layout == DataLayout::Precomp;
  const NoiseMode m = *c.noise_mode;
  const bool ok = pairs ? (m == NoiseMode::Image || m == NoiseMode::Caption)
                        : (m == NoiseMode::Symmetric || m == NoiseMode::Mrl);
  if (!ok)
    options_detail::bad_choice("noise_mode", pairs ? std::vector<std::string>{"image", "caption"}
                                                   : std::vector<std::string>{"symmetric", "mrl"},
                               noise_mode_name(m));
}

// An ablation switch given (a value other than its default) to a method whose tables do not declare it.
void check_ablation_owners(const TrainConfig& c) {
  for (const TrainFlag& f : train_flags()) {
    if (!f.first().ablation || f.belongs_to(c.method)) continue;
    for (const auto& [table, flag] : f.instances)
      REMATCH_CHECK(flag->get(c) == flag->initial, "--", f.name, " is an ablation of ", join(f.methods, " or "),
                    "; --method ", c.method, " has no such piece (drop the flag, or use --method ", f.methods.front(),
                    ")");
  }
}

}  // namespace

DeviceOption::DeviceOption(const std::string& spec) : spec_(spec) {
  try {
    device_ = Device::parse(spec);
  } catch (const Error&) {
    REMATCH_FAIL("--device must be cpu, cuda or cuda:N (got '", spec, "')");
  }
}

std::ostream& operator<<(std::ostream& out, const DeviceOption& d) { return out << d.spec(); }

const char* test_split_name(TestSplit split) { return split == TestSplit::Testall ? "testall" : "test"; }

const char* noise_mode_name(NoiseMode mode) {
  switch (mode) {
    case NoiseMode::Image:
      return "image";
    case NoiseMode::Caption:
      return "caption";
    case NoiseMode::Symmetric:
      return "symmetric";
    case NoiseMode::Mrl:
      return "mrl";
  }
  return "?";
}

std::string CommonOptions::test_split_name() const { return train::test_split_name(test_split.value_or(TestSplit::Test)); }

const OptionTable& common_flags() {
  static const OptionTable table = make_common_flags();
  return table;
}

void resolve_defaults(TrainConfig& c) {
  if (c.method.empty()) REMATCH_FAIL("--method is required (one of ", join(method_names()), ")");
  const MethodSpec& spec = method_spec(c.method);
  if (!c.preset.empty() && std::find(spec.presets.begin(), spec.presets.end(), c.preset) == spec.presets.end())
    options_detail::bad_choice("preset", spec.presets, c.preset);
  if (c.data_path.empty()) REMATCH_FAIL("--data_path is required (the folder holding the data set)");
  if (spec.layout == DataLayout::Precomp) {
    if (c.data_name.empty() && !c.preset.empty()) c.data_name = c.preset + "_precomp";
    if (c.data_name.empty()) REMATCH_FAIL("--data_name is required (e.g. f30k_precomp), or give --preset");
  }
  for (const Default& d : spec.defaults) apply(d, c);
  for (const Default& d : common_defaults()) apply(d, c);
  check_config(c);
}

void check_config(const TrainConfig& c) {
  const MethodSpec& spec = method_spec(c.method);
  check_ablation_owners(c);
  if (spec.require) spec.require(c);
  check_layout_choices(c, spec);
  for (const Flag& f : common_flags().flags) {
    const std::string e = f.range_error(c);
    if (!e.empty()) REMATCH_FAIL(e);
  }
  for (const OptionTable* table : spec.tables)
    for (const Flag& f : table->flags) {
      const std::string e = f.range_error(c);
      if (!e.empty()) REMATCH_FAIL(e);
    }
  if (spec.check) spec.check(c);
}

std::string to_json(const TrainConfig& c) {
  Json j = Json::object();
  for (const TrainFlag& f : train_flags()) j[f.name] = f.of(c.method).get(c);
  // JSON has no NaN: an unset (unused) number is written as null.
  return j.dump(2);
}

TrainConfig train_config_from_json(const std::string& text) {
  Json j;
  io::require_shallow_json(text, "train config");
  try {
    j = Json::parse(text);
  } catch (const Json::exception& e) {
    REMATCH_FAIL("train config: not valid JSON: ", e.what());
  }
  REMATCH_CHECK(j.is_object(), "train config: expected a JSON object");
  TrainConfig c;
  for (const auto& [key, value] : j.items()) {
    const TrainFlag* f = find_train_flag(key);
    REMATCH_CHECK(f != nullptr, "train config: unknown field '", key, "'");
    if (value.is_null()) continue;
    const FlagKind kind = f->first().kind;
    REMATCH_CHECK(json_fits(kind, value), "train config: field '", key, "' has the wrong type: expected ",
                  json_type_name(kind), ", got ", value.dump());
    for (const auto& [table, flag] : f->instances) flag->set(c, value);
  }
  return c;
}

TrainConfig resumed_train_config(const std::string& text, const std::string& path) {
  try {
    TrainConfig c = train_config_from_json(text);
    resolve_defaults(c);
    return c;
  } catch (const Error& e) {
    REMATCH_FAIL(path, ": ", e.what());
  }
}

}  // namespace rematch::train
