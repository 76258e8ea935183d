#include "train/cli/train_command.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <deque>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <memory>
#include <optional>

#include "models/scoring_budget.h"
#include "parallel/communicator.h"
#include "tensor/device.h"
#include "tensor/file_io.h"
#include "train/cli/app.h"
#include "train/cli/eval_checkpoint.h"
#include "train/cli/number_checks.h"
#include "train/methods/data_files.h"
#include "train/methods/make_method.h"
#include "train/methods/resume_check.h"
#include "train/methods/trainer.h"
#include "train/run/interrupt.h"
#include "train/run/run_folder.h"

namespace rematch::cli {
namespace {

using train::TrainConfig;

// One command-line flag of `rematch train` (a train::TrainFlag: the common options and every method's, from their
// tables) and the value CLI11 parsed into the slot of its kind.
struct FlagSlot {
  const train::TrainFlag* flag = nullptr;
  CLI::Option* option = nullptr;
  int64_t integer = 0;
  uint64_t unsigned_integer = 0;
  double real = 0;
  bool on = false;
  std::string text;
  std::vector<int64_t> integers;

  nlohmann::json value() const {
    switch (flag->first().kind) {
      case train::FlagKind::Integer:
        return integer;
      case train::FlagKind::Unsigned:
        return unsigned_integer;
      case train::FlagKind::Real:
        return real;
      case train::FlagKind::Switch:
        return flag->first().negated_switch.empty();  // --no_plots turns plots off
      case train::FlagKind::IntegerList:
        return integers;
      case train::FlagKind::Text:
      case train::FlagKind::File:
      case train::FlagKind::Choice:
        return text;
    }
    return nullptr;
  }
};

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (const std::string& x : items) out += (out.empty() ? "" : sep) + x;
  return out;
}

// The default `method` gives flag `f` without --preset, from its MethodSpec::defaults (the value for every preset,
// or for none), else the flag's initial value in its table; null when neither sets one (a per-preset or computed
// default, or an unset flag).
nlohmann::json default_without_preset(const train::TrainFlag& f, const std::string& method) {
  for (const train::Default& d : train::method_spec(method).defaults) {
    if (d.flag != f.name) continue;
    if (d.rule) return nullptr;
    for (const auto& [preset, value] : d.values)
      if (preset == "*" || preset.empty()) return value;
    return nullptr;
  }
  const train::Flag& own = f.of(method);
  if (own.initial.is_null() || own.unset(TrainConfig{})) return nullptr;
  return own.initial;
}

// "(default X; m n Y)" for a flag several methods share whose defaults differ (or that has no initial value to
// show as "=X"): X is the value most of them give (the first registered's on a tie), then the methods giving
// another, grouped by value in registration order. Generated from the methods' Default tables, so a method that
// joins a shared flag with its own default appears here. "" when they all agree with the initial value.
std::string method_defaults_text(const train::TrainFlag& f) {
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;  // value → methods, in order
  for (const std::string& m : f.methods) {
    const nlohmann::json v = default_without_preset(f, m);
    if (v.is_null()) continue;
    const std::string text = train::format_value(v);
    auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& x) { return x.first == text; });
    if (g == groups.end()) groups.push_back({text, {m}});
    else g->second.push_back(m);
  }
  if (groups.empty()) return "";
  const train::Flag& first = f.first();
  const bool shown = !first.initial.is_null() && !first.unset(TrainConfig{});
  if (groups.size() == 1 && shown && train::format_value(first.initial) == groups.front().first) return "";
  auto most = groups.begin();
  for (auto g = groups.begin(); g != groups.end(); ++g)
    if (g->second.size() > most->second.size()) most = g;
  std::string text = "(default " + most->first;
  for (auto g = groups.begin(); g != groups.end(); ++g)
    if (g != most) text += "; " + join(g->second, " ") + " " + g->first;
  return text + ")";
}

// The help of a flag: its table's, its range, the methods it is for when it is not its group's alone, and then
// their defaults when they differ.
std::string help_text(const train::TrainFlag& f) {
  const train::Flag& first = f.first();
  std::string help = first.help;
  const std::string range = first.range_text();
  if (!range.empty()) help += " [" + range + "]";
  if (f.group == train::kSharedOptions) {
    help += " (--method " + join(f.methods, " | ") + ")";
    const std::string defaults = method_defaults_text(f);
    if (!defaults.empty()) help += " " + defaults;
  }
  return help;
}

// Every flag, grouped as --help shows them: the common options, one group per method table, then the options
// several methods share.
void add_flags(CLI::App& cmd, std::deque<FlagSlot>& slots) {
  std::vector<const train::TrainFlag*> order;
  for (const train::TrainFlag& f : train::train_flags())
    if (f.group != train::kSharedOptions) order.push_back(&f);
  for (const train::TrainFlag& f : train::train_flags())
    if (f.group == train::kSharedOptions) order.push_back(&f);
  for (const train::TrainFlag* shown : order) {
    const train::TrainFlag& f = *shown;
    slots.emplace_back();
    FlagSlot& slot = slots.back();
    slot.flag = &f;
    const train::Flag& first = f.first();
    const std::string name = "--" + f.name, help = help_text(f);
    switch (first.kind) {
      case train::FlagKind::Integer:
        slot.option = cmd.add_option(name, slot.integer, help)->check(whole_number(false));
        break;
      case train::FlagKind::Unsigned:
        slot.option = cmd.add_option(name, slot.unsigned_integer, help)->check(whole_number(true));
        break;
      case train::FlagKind::Real:
        slot.option = cmd.add_option(name, slot.real, help);
        break;
      case train::FlagKind::Switch:
        slot.option = first.negated_switch.empty() ? cmd.add_flag(name, slot.on, help)
                                                   : cmd.add_flag("--" + first.negated_switch, slot.on, help);
        break;
      case train::FlagKind::IntegerList:
        slot.option = cmd.add_option(name, slot.integers, help);
        break;
      case train::FlagKind::Text:
      case train::FlagKind::File:
        slot.option = cmd.add_option(name, slot.text, help);
        break;
      case train::FlagKind::Choice: {
        std::vector<std::string> names;
        for (const std::string& c : first.choices)
          if (!c.empty()) names.push_back(c);
        slot.option = cmd.add_option(name, slot.text, help)->type_name("{" + join(names, ",") + "}");
        break;
      }
    }
    if (first.kind != train::FlagKind::Switch && !first.initial.is_null() && !first.unset(TrainConfig{}) &&
        first.initial != "")
      slot.option->default_str(train::format_value(first.initial));
    slot.option->group(f.group);
  }
}

// A config stores "not given" as NaN (a number) or a negative integer, and the method's default then fills it
// (Flag::unset, train/methods/options.h); JSON has no infinity either, so config.json writes ±inf as null, which
// reads back as "not given". Typed on the command line such a value is a slip, not an omission: `--learning_rate
// nan` trained at the default rate, `--num_epochs -1` for 100 epochs, and a run given `--margin inf` resumed
// with the default margin. Refused, naming the flag, unless the flag gives the value a meaning (--knn -1).
void refuse_value_read_as_unset(const train::TrainFlag& f, const nlohmann::json& v) {
  const train::Flag& first = f.first();
  const bool real = first.kind == train::FlagKind::Real, integer = first.kind == train::FlagKind::Integer;
  if (!real && !integer) return;
  const double x = real ? v.get<double>() : static_cast<double>(v.get<int64_t>());
  if (real ? std::isfinite(x) : x >= 0) return;
  for (const auto& [table, flag] : f.instances)
    if (flag->also_allowed && *flag->also_allowed == x) return;
  const std::string range = first.range_text();
  const std::string got = real ? (std::isnan(x) ? "nan" : x > 0 ? "inf" : "-inf") : std::to_string(v.get<int64_t>());
  throw UsageError("--" + f.name + " must be " +
                   (range.empty() ? (real ? "a finite number" : "at least 0") : range) + " (got " + got +
                   "); leave the flag out for its default");
}

// The config the command line gives: each flag given sets its field in every table that declares it; a value
// that is no choice of its flag (or no device), or one the config would read as "not given", is a usage error
// naming the flag.
TrainConfig config_from_flags(const std::deque<FlagSlot>& slots) {
  TrainConfig c;
  for (const FlagSlot& slot : slots) {
    if (slot.option->count() == 0) continue;
    nlohmann::json v = slot.value();
    refuse_value_read_as_unset(*slot.flag, v);
    // The files the run reads are recorded as absolute paths: config.json is read again by --resume and
    // `retrieve --run` from whatever folder they start in, where a relative path names other data (a resume from
    // another folder trained on another data set of the same shapes without a word).
    const bool reads_a_path = slot.flag->first().kind == train::FlagKind::File || slot.flag->name == "data_path" ||
                              slot.flag->name == "vocab_path";
    if (reads_a_path && !v.get<std::string>().empty())
      v = std::filesystem::absolute(v.get<std::string>()).lexically_normal().string();
    try {
      for (const auto& [table, flag] : slot.flag->instances) flag->set(c, v);
    } catch (const Error& e) {
      throw UsageError(e.what());
    }
  }
  return c;
}

// Flags that may accompany --resume (they change how the run is shown, not what it computes, or only show it).
bool allowed_with_resume(const std::string& name) {
  return name == "--resume" || name == "--progress" || name == "--dry_run" || name == "--remake_best" ||
         name == "--restart" || name == "--dist_backend";
}

// --dry_run: the resolved configuration as JSON on stdout (the keys of config.json), the data
// files checked on stderr, nothing trained and no run folder made. The device is checked by name only: a
// command meant for a GPU machine can be checked anywhere (an unusable device is a note, not an error).
void dry_run(const TrainConfig& c, std::ostream& out, std::ostream& err) {
  const std::vector<train::DataFile> files = train::check_data_files(c);
  try {
    usable_device(c.device.spec(), "--device");
  } catch (const std::exception& e) {
    err << "note: " << e.what() << "\n";
  }
  for (const train::DataFile& f : files) err << "data: " << f.role << ": " << f.path << "\n";
  err << "dry run: configuration resolved and " << files.size() << " data files readable; nothing was trained\n";
  out << train::to_json(c) << "\n";
}

void report(const train::TrainOutcome& outcome, const std::string& run_dir, std::ostream& out) {
  if (outcome.interrupted)
    throw Interrupted("interrupted; the run can continue with: rematch train --resume " + run_dir);
  out << "best validation score " << outcome.best_score << " at epoch " << outcome.best_epoch + 1 << "\n"
      << outcome.test.table << "\n";
  // COCO's protocol reports two numbers (the official runs print both): say both on one line.
  const auto& m = outcome.test.metrics;
  if (m.count("full_rsum") && m.count("rsum"))
    out << "test rSum: " << m.at("rsum") << " (5-fold 1K mean), " << m.at("full_rsum") << " (full split)\n";
  out << "results: " << run_dir << "/results.md\n";
}

// The settings of the run in `dir`, from its config.json, read only (no lock, nothing written).
TrainConfig read_run_config(const std::string& dir) {
  const std::string config_path = dir + "/config.json";
  if (!std::filesystem::is_regular_file(config_path))
    REMATCH_FAIL("run folder '", dir, "': holds no run to resume (no ", config_path, ")");
  io::ReadFile f(config_path, "read_config");
  std::string text(f.size(), '\0');
  text.resize(f.read_at(text.data(), text.size(), 0));
  return train::resumed_train_config(text, config_path);
}

// Whether the run computes on a GPU: --device, or with --resume the run's config.json. The backend is chosen
// before rank 0 checks the folder, so a config.json that cannot be read counts as the CPU here; the resume
// reports it.
bool trains_on_gpu(const TrainConfig& c) {
  if (c.resume.empty()) return c.device.device().is_cuda();
  try {
    return read_run_config(c.resume).device.device().is_cuda();
  } catch (const std::exception&) {
    return false;
  }
}

// Under mpirun the ranks follow rank 0's resume plan: rank 0 checks the folder (and may repair it, resume_check.h),
// then the others load the checkpoint it left as checkpoint_latest, which is the state rank 0 resumes from.
train::ResumePlan shared_resume_plan(const run::RunFolder& folder, const train::ResumeOptions& options) {
  parallel::Communicator& comm = parallel::world();
  train::ResumePlan plan;
  if (comm.rank() == 0) plan = train::check_resume(folder, options);
  if (comm.world_size() == 1) return plan;
  const std::vector<int64_t> decided =
      comm.broadcast(from_vector(std::vector<int64_t>{static_cast<int64_t>(plan.from), plan.forget_best ? 1 : 0}, {2}),
                     0)
          .to_vector<int64_t>();
  if (comm.rank() != 0) {
    plan.from = static_cast<train::ResumeFrom>(decided[0]);
    plan.forget_best = decided[1] != 0;
    if (plan.from != train::ResumeFrom::Start) plan.state = train::TrainingState::load(folder.checkpoint_latest_path());
  }
  comm.barrier();  // every rank holds its state before rank 0 writes again
  return plan;
}

void run_train(CLI::App& cmd, TrainConfig c, bool dry, const train::ResumeOptions& resume_options, std::ostream& out,
               std::ostream& err) {
  if (c.resume.empty() && (resume_options.remake_best || resume_options.restart))
    throw UsageError(std::string(resume_options.restart ? "--restart" : "--remake_best") +
                     " only goes with --resume DIR (it says how to continue the run in DIR)");
  // SIGINT/SIGTERM from here on only set the flag the trainer polls (it then saves a checkpoint and stops):
  // none can end the process between writing config.json and the first checkpoint.
  std::optional<run::InterruptGuard> interrupt_guard;
  if (!dry) interrupt_guard.emplace(train::kInterruptNotice);
  if (c.resume.empty()) {
    train::NewRun run;
    try {
      train::resolve_defaults(c);
    } catch (const Error& e) {
      throw UsageError(e.what());
    }
    if (dry) return dry_run(c, out, err);
    usable_device(c.device.spec(), "--device");  // before any data is read
    c.device = c.device.on(parallel::rank_device(c.device.device(), parallel::world()));
    train::check_training_data(c, err);
    run = train::train_new_run(c, err);
    return report(run.outcome, run.run_dir, out);
  }
  for (const CLI::Option* o : cmd.get_options())
    if (o->count() > 0 && !allowed_with_resume(o->get_name()))
      throw UsageError(o->get_name() + " cannot be combined with --resume: a resumed run keeps the settings of " +
                       c.resume + "/config.json");
  const run::ProgressStyle progress = c.progress;
  // A dry run writes nothing and takes no lock: not even the folder RunFolder would create before finding no
  // run in it. It reads config.json only.
  if (dry) {
    c = read_run_config(c.resume);
    c.progress = progress;
    return dry_run(c, out, err);
  }
  run::RunFolder folder(c.resume, parallel::world().rank() == 0 ? run::RunStart::Resume : run::RunStart::Follower);
  c = train::resumed_train_config(folder.read_config(), folder.config_path());
  c.progress = progress;
  // Both checkpoints and config.json are checked before the data is read and before a step is trained.
  train::ResumePlan plan = shared_resume_plan(folder, resume_options);
  for (const std::string& note : plan.notes) err << note << "\n";
  usable_device(c.device.spec(), "--device (from " + c.resume + "/config.json)");
  c.device = c.device.on(parallel::rank_device(c.device.device(), parallel::world()));
  train::check_training_data(c, err);
  std::unique_ptr<train::Method> method = train::make_method(c, err);
  report(train::run_training(*method, c, folder, &plan, err), folder.dir(), out);
}

}  // namespace

void add_train_command(CLI::App& app, std::ostream& out, std::ostream& err) {
  auto slots = std::make_shared<std::deque<FlagSlot>>();
  auto dry = std::make_shared<bool>(false);
  auto resume_options = std::make_shared<train::ResumeOptions>();
  CLI::App* cmd = app.add_subcommand("train", "Train a retrieval model with one of the robust methods");
  std::vector<std::string> methods;
  for (const train::MethodSpec* m : train::registered_methods()) methods.push_back("  " + m->name + ": " + m->summary);
  cmd->footer("Methods (--method), each with its options' group above:\n" + join(methods, "\n") +
              "\nPresets and the source of every default: docs/presets.md");
  add_flags(*cmd, *slots);
  const std::string common = train::common_flags().title;
  cmd->add_flag("--remake_best", resume_options->remake_best,
                "With --resume, when checkpoint_best is lost or damaged: continue from checkpoint_latest and take "
                "the best state again from the validations still to come")
      ->group(common);
  cmd->add_flag("--restart", resume_options->restart,
                "With --resume: train the run in that folder again from its beginning with its config.json "
                "(same settings and seed; its checkpoints and metrics are deleted)")
      ->group(common);
  auto dist_backend = std::make_shared<std::string>("auto");
  cmd->add_option("--dist_backend", *dist_backend,
                  "Under mpirun -n N: auto (mpi, or nccl with --device cuda) | none | mpi | nccl; each rank computes its "
                  "share of every batch (with --device cuda on the GPU of its rank on its machine) and rank 0 writes "
                  "the run folder; the run is the one one process trains (docs/distributed.md §4). Allowed with "
                  "--resume: a run resumes on any number of processes")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "none", "mpi", "nccl"}))
      ->group(common);
  auto memory_budget = std::make_shared<std::string>("auto");
  cmd->add_option("--memory_budget", *memory_budget,
                  "SGR/SAF training steps: the most the batched scoring may keep for backward; past it the captions "
                  "are scored one at a time and recomputed in backward (the results equal one pass's to rounding, "
                  "whatever the budget): auto (half of the device's memory) | none (always one pass) | a size "
                  "(512MiB, 2GiB, bytes). A setting of this process, not of the run: not in config.json "
                  "(docs/memory.md §2)")
      ->capture_default_str()
      ->group(common);
  cmd->add_flag("--dry_run", *dry,
                "Resolve the preset and flags, check that the data files exist and are readable, print the "
                "configuration as JSON (the keys of config.json) and exit without training")
      ->group(common);
  cmd->callback([cmd, slots, dry, resume_options, dist_backend, memory_budget, &out, &err] {
    models::set_scoring_memory_budget(models::parse_memory_budget(*memory_budget, "--memory_budget"));
    const TrainConfig c = config_from_flags(*slots);
    if (*dry) return run_train(*cmd, c, true, *resume_options, out, err);
    // nccl moves the GPU tensors, and host values (flags, statistics) through MPI (docs/distributed.md §1).
    parallel::Communicator& comm = parallel::init_world(parallel::choose_backend(*dist_backend, trains_on_gpu(c)));
    // An error on one rank ends every rank (its message); SIGINT/SIGTERM on any rank stops every rank at the same
    // step after rank 0 saved the checkpoint (trainer.cpp), an ordinary end with the interrupted exit code.
    std::optional<Interrupted> stopped;
    parallel::run_on_every_rank([&] {
      try {
        run_train(*cmd, c, false, *resume_options, rank_zero_stream(out), rank_zero_stream(err));
      } catch (const Interrupted& e) {
        stopped = e;
      }
    });
    if (stopped && comm.rank() == 0) throw *stopped;
    if (stopped)
      throw Interrupted("rank " + std::to_string(comm.rank()) + " of " + std::to_string(comm.world_size()) +
                        " stopped with rank 0");
  });
}

}  // namespace rematch::cli
