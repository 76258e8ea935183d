#include "train/cli/demo_command.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iomanip>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "train/cli/app.h"
#include "train/cli/demo_folder.h"
#include "train/cli/labeled_demo.h"
#include "train/cli/report_pages.h"
#include "train/methods/make_method.h"
#include "train/run/run_folder.h"
#include "train/synth/pairs_world.h"
#include "viz/plots.h"

namespace rematch::cli {
namespace {

struct DemoOptions {
  std::string out = "demo";
  std::string device = "cpu";
  uint64_t seed = 0;
  double noise_ratio = 0.6;
  int64_t epochs = -1;  // main epochs per method (-1: the size's default)
  std::string progress = "auto";
  std::vector<std::string> methods = {"triplet", "rcl", "l2rm"};  // in the order they train and are listed
  bool labeled = false;  // the class-labelled demo instead (labeled_demo.h)
};

// The data and model sizes of a demo: small enough for two CPU cores, larger on a GPU.
struct DemoSize {
  synth::PairsWorldConfig world;
  std::string module;
  int64_t embed = 0, word_dim = 0, sim_dim = 0, batch = 0, epochs = 0, lr_update = 0;
  double lr = 0, dropout = 0;
};

// CPU: a world of few concepts without twins, so a small SAF model learns it within a few hundred steps (a
// measured choice: on harder worlds, or at lr 2e-4, no method leaves chance level within the time budget);
// the same learning rate for every method; each method's warm-up is its spec's (MethodSpec::demo).
DemoSize demo_size(bool gpu) {
  DemoSize s;
  s.world = demo_world(gpu);
  s.module = gpu ? "SGR" : "SAF";
  s.embed = gpu ? 512 : 64;
  s.word_dim = gpu ? 300 : 32;
  s.sim_dim = gpu ? 128 : 32;
  s.batch = gpu ? 128 : 32;
  s.epochs = gpu ? 20 : 9;
  s.lr_update = gpu ? 10 : 100;
  s.lr = gpu ? 2e-4 : 5e-3;
  s.dropout = gpu ? 0.4 : 0.1;
  return s;
}

// The warm-up epochs of a method in the demo (MethodSpec::demo): each method with one runs it before its
// --num_epochs main epochs (docs/methods/<method>.md), so it counts in the budget every method gets alike.
int64_t demo_warmup(const std::string& method) { return train::method_spec(method).demo.warmup_epochs; }

// "l2rm 5, crcl 4, ncr 3, decl 2": the methods with a warm-up in the demo, the longest first.
std::string demo_warmups_text() {
  std::vector<const train::MethodSpec*> with;
  for (const train::MethodSpec* m : train::registered_methods())
    if (m->demo.warmup_epochs > 0) with.push_back(m);
  std::stable_sort(with.begin(), with.end(), [](const train::MethodSpec* a, const train::MethodSpec* b) {
    return a->demo.warmup_epochs > b->demo.warmup_epochs;
  });
  std::string text;
  for (const train::MethodSpec* m : with)
    text += (text.empty() ? "" : ", ") + m->name + " " + std::to_string(m->demo.warmup_epochs);
  return text;
}

// A method the demo can train: image-caption pairs (the precomp layout) on a model whose size the demo sets.
void check_demo_method(const std::string& method, const std::vector<std::string>& chosen) {
  const train::TrainFlag* embed = train::find_train_flag("embed_size");
  std::vector<std::string> names;
  std::string choices;
  for (const train::MethodSpec* m : train::registered_methods())
    if (m->layout == train::DataLayout::Precomp && embed && embed->belongs_to(m->name)) {
      names.push_back(m->name);
      choices += (choices.empty() ? "" : ", ") + m->name;
    }
  if (!train::find_method_spec(method))
    throw UsageError("--methods " + method + ": no such method (the demo trains " + choices + ")");
  if (std::find(names.begin(), names.end(), method) == names.end())
    throw UsageError("--methods " + method + ": the demo trains the methods of image-caption pairs on a similarity "
                     "model (" + choices + "); train " + method + " with rematch train");
  if (std::count(chosen.begin(), chosen.end(), method) > 1)
    throw UsageError("--methods: " + method + " is listed twice");
}

train::TrainConfig method_config(const std::string& method, const DemoOptions& o, const DemoSize& s,
                                 const std::string& data_path) {
  train::TrainConfig c;
  c.method = method;
  c.device = o.device;
  c.seed = o.seed;
  c.data_path = data_path;
  c.data_name = s.world.data_name;
  c.noise_ratio = o.noise_ratio;
  // Image-level mismatches for every method, as the demo announces (ncr's and crcl's own protocol is NCR's
  // caption-level noise).
  c.noise_mode = train::NoiseMode::Image;
  c.batch_size = s.batch;
  // The model's size, through the method's own flags (each method's section of the config holds its model).
  auto set = [&](const std::string& flag, const nlohmann::json& value) {
    const train::TrainFlag* f = train::find_train_flag(flag);
    if (f && f->belongs_to(method)) f->of(method).set(c, value);
  };
  set("embed_size", s.embed);
  set("word_dim", s.word_dim);
  set("sim_dim", s.sim_dim);
  set("module_name", s.module);
  set("dropout", s.dropout);
  c.learning_rate = s.lr;
  c.lr_update = s.lr_update;
  const int64_t epochs = o.epochs > 0 ? o.epochs : s.epochs;
  c.warmup_epoch = demo_warmup(method);
  c.num_epochs = epochs - c.warmup_epoch;
  set("schedules", nlohmann::json::array({c.num_epochs}));  // crcl: one round of warm-up and main epochs
  for (const auto& [flag, value] : train::method_spec(method).demo.flags) set(flag, value);
  // L2RM's Sinkhorn ε, in every config as the flag's one table sets it (config.json keeps the flat keys).
  if (const train::TrainFlag* reg = train::find_train_flag("reg"))
    for (const auto& [table, flag] : reg->instances) flag->set(c, 0.05);
  c.val_subset = data::ValSubset::sgraf;  // the whole (small) dev split for every method, so the comparison is like for like
  c.run_dir = o.out + "/" + method;
  c.overwrite = true;  // the demo's own run folders: a second demo replaces the first
  c.progress = run::parse_progress_style(o.progress);
  c.log_step = 5;
  train::resolve_defaults(c);
  return c;
}

std::string fixed(double v, int digits) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << v;
  return s.str();
}

void run_demo(const DemoOptions& o, std::ostream& out, std::ostream& err) {
  const bool gpu = o.device != "cpu";
  const DemoSize size = demo_size(gpu);
  if (o.methods.empty()) throw UsageError("--methods: name at least one method");
  for (const std::string& m : o.methods) check_demo_method(m, o.methods);
  for (const std::string& m : o.methods)
    if (o.epochs >= 0 && o.epochs <= demo_warmup(m))
      throw UsageError("--epochs must exceed the " + std::to_string(demo_warmup(m)) + " warm-up epochs of " + m);
  if (!(o.noise_ratio >= 0 && o.noise_ratio < 1)) throw UsageError("--noise_ratio must be in [0, 1)");
  device_flag(o.device);  // before the data is made
  std::vector<std::string> method_names;  // run folders an earlier demo may have left, of any method
  for (const train::MethodSpec* m : train::registered_methods()) method_names.push_back(m->name);
  const std::string in_the_way = demo_folder_problem(o.out, method_names);
  if (!in_the_way.empty()) throw UsageError(in_the_way);
  const auto start = std::chrono::steady_clock::now();
  const std::string data_path = o.out + "/data";
  // Every method's configuration before any data is made: a method that needs more than the demo gives (rcsl's
  // --paired_length) is named now.
  std::vector<train::TrainConfig> configs;
  for (const std::string& method : o.methods) {
    try {
      configs.push_back(method_config(method, o, size, data_path));
    } catch (const Error& e) {
      throw UsageError("--methods " + method + ": " + e.what());
    }
  }

  synth::PairsWorldConfig wc = size.world;
  wc.seed = o.seed;
  const synth::PairsWorldFiles files = synth::write_pairs_world(synth::make_pairs_world(wc), data_path);
  out << "rematch demo: synthetic image-caption benchmark (" << wc.train_images << " training images x 5 captions, "
      << wc.regions << " regions of " << wc.feature_dim << " features) in " << files.data_dir << "\n"
      << "  " << fixed(100 * o.noise_ratio, 0) << "% of the training images mismatched (image level), seed " << o.seed
      << ", device " << o.device << "\n\n";

  struct Row {
    std::string method;
    train::TrainOutcome outcome;
    std::string run_dir;
  };
  std::vector<Row> rows;
  std::vector<run::Series> curves;
  for (const train::TrainConfig& c : configs) {
    const std::string& method = c.method;
    out << "training " << method << " ..." << std::endl;
    train::NewRun r = train::train_new_run(c, err);
    if (r.outcome.interrupted)
      throw Interrupted("interrupted during " + method + "; its run can continue with: rematch train --resume " +
                        r.run_dir);
    rows.push_back({method, r.outcome, r.run_dir});
    run::Series s{method, {}, {}, std::nullopt};
    for (const run::MetricRecord& m : run::read_metrics(r.run_dir + "/metrics.jsonl"))
      if (m.kind == "val") {
        s.xs.push_back(static_cast<double>(m.epoch + 1));
        s.ys.push_back(m.get("score"));
      }
    curves.push_back(s);
  }
  run::line_plot(o.out + "/validation_rsum.png", "validation rSum, " + fixed(100 * o.noise_ratio, 0) + "% mismatched",
                 "epoch", "rSum", curves);

  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out << "\nTest split (" << wc.test_images << " images, " << 5 * wc.test_images
      << " captions), best validated epoch of each method:\n\n"
      << "| method  | i2t R@1 | i2t R@5 | i2t R@10 | t2i R@1 | t2i R@5 | t2i R@10 |  rSum  | split precision |\n"
      << "|---------|---------|---------|----------|---------|---------|----------|--------|-----------------|\n";
  for (const Row& r : rows) {
    const train::Scalars& m = r.outcome.test.metrics;
    auto cell = [&](const char* k, int w) {
      std::ostringstream s;
      s << std::setw(w) << fixed(m.at(k), 1);
      return s.str();
    };
    // The split's precision, the statistic the method's spec names (ncr: net A's co-divide).
    const std::string& stat = train::method_spec(r.method).demo.split_stat;
    const auto precision = stat.empty() ? r.outcome.last_epoch_stats.end() : r.outcome.last_epoch_stats.find(stat);
    std::ostringstream p;
    p << std::setw(15) << (precision == r.outcome.last_epoch_stats.end() ? "-" : fixed(precision->second, 3));
    out << "| " << std::left << std::setw(7) << r.method << std::right << " | " << cell("i2t_r1", 7) << " | "
        << cell("i2t_r5", 7) << " | " << cell("i2t_r10", 8) << " | " << cell("t2i_r1", 7) << " | "
        << cell("t2i_r5", 7) << " | " << cell("t2i_r10", 8) << " | " << cell("rsum", 6) << " | " << p.str()
        << " |\n";
  }
  out << "\nsplit precision: share of truly matched pairs among those the method kept as clean (its last epoch's "
         "split, ncr's net A; - for a method without one).\n"
         "Run folders (config.json, metrics.jsonl, checkpoints, results.md, plots/): ";
  for (const Row& r : rows) out << r.run_dir << " ";
  out << "\nValidation curves: " << o.out << "/validation_rsum.png\nTotal time " << fixed(seconds / 60, 1)
      << " min.\n";
  // The page a newcomer opens first: the pairs flagged as mismatched by the method whose spec asks for its page
  // (L2RM's, with pictures, docs/viz.md §4.3); without one, those of the first method that kept a split, else what
  // the first method retrieves.
  const Row* shown = nullptr;
  for (const Row& r : rows)
    if (train::method_spec(r.method).demo.report) shown = &r;
  for (const Row& r : rows)
    if (!shown && std::filesystem::is_directory(r.run_dir + "/splits")) shown = &r;
  if (!shown) shown = &rows.front();
  const std::string report = write_run_report(shown->run_dir, o.out + "/report", {}, err);  // logs to err first
  out << "Report (open it in a browser): " << report << "\n";
}

}  // namespace

synth::PairsWorldConfig demo_world(bool gpu) {
  synth::PairsWorldConfig w;
  w.train_images = gpu ? 6000 : 500;
  w.dev_images = gpu ? 500 : 100;
  w.test_images = gpu ? 1000 : 100;
  w.regions = gpu ? 36 : 6;
  w.feature_dim = gpu ? 256 : 32;
  w.concepts = gpu ? 24 : 8;
  w.attributes = gpu ? 12 : 4;
  w.twin_fraction = gpu ? 0.3 : 0.0;
  w.feature_noise = gpu ? 0.5 : 0.2;
  // MSCN's clean meta split (docs/methods/mscn.md §4), images of their own: the other splits are the same without it.
  w.meta_images = gpu ? 100 : 20;
  return w;
}

void add_demo_command(CLI::App& app, std::ostream& out, std::ostream& err) {
  auto o = std::make_shared<DemoOptions>();
  CLI::App* cmd = app.add_subcommand(
      "demo", "Train triplet, rcl and l2rm (or --methods) on a synthetic benchmark with 60% mismatched pairs and "
              "compare them");
  cmd->add_option("--out", o->out, "Folder for the data, one run folder per method and the comparison plot")
      ->capture_default_str();
  cmd->add_option("--device", o->device, "cpu | cuda | cuda:N (cuda: larger dimensions)")->capture_default_str();
  cmd->add_option("--seed", o->seed, "Seed of the data, the noise and the training")->capture_default_str();
  CLI::Option* noise = cmd->add_option("--noise_ratio", o->noise_ratio,
                                       "Share of mismatched training images (with --labeled: of wrong training "
                                       "labels, default 0.5)")
                           ->capture_default_str();
  CLI::Option* epochs = cmd->add_option("--epochs", o->epochs,
                  "Epochs per method (default 9 on CPU, 20 on GPU; warm-up epochs included: " + demo_warmups_text() +
                      "; with --labeled 20, UOT-RCL's 2 warm-up epochs included)");
  cmd->add_option("--progress", o->progress, "auto | bar | plain | none")->capture_default_str();
  CLI::Option* labeled = cmd->add_flag(
      "--labeled", o->labeled,
      "The class-labelled demo instead: a cross-entropy baseline, mrl, dscmr and uotrcl on a synthetic labelled "
      "benchmark with 50% symmetric label noise, their mAP table and UOT-RCL's corrected labels");
  cmd->add_option("--methods", o->methods,
                  "The methods to train and compare, comma-separated, in order (any method of image-caption pairs "
                  "on a similarity model, e.g. triplet,infonce,rcl,l2rm)")
      ->delimiter(',')
      ->capture_default_str();
  labeled->excludes("--methods");
  cmd->callback([o, noise, epochs, &out, &err] {
    if (!o->labeled) return run_demo(*o, out, err);
    LabeledDemoOptions l;
    l.out = o->out;
    l.device = o->device;
    l.seed = o->seed;
    l.progress = o->progress;
    if (noise->count() > 0) l.noise_ratio = o->noise_ratio;
    if (epochs->count() > 0) l.epochs = o->epochs;
    run_labeled_demo(l, out, err);
  });
}

}  // namespace rematch::cli
