#include "train/methods/trainer.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>

#include "autograd/autograd.h"
#include "parallel/communicator.h"
#include "tensor/file_io.h"
#include "train/methods/data_parallel.h"
#include "train/methods/method_spec.h"
#include "train/methods/run_position.h"
#include "train/run/interrupt.h"
#include "train/run/memory_tally.h"
#include "train/run/progress.h"
#include "viz/plots.h"

namespace rematch::train {

const char* const kInterruptNotice =
    "\ninterrupted: finishing the step and saving a checkpoint; press Ctrl-C again to quit now\n";

namespace {

using Position = RunPosition;

// Rank 0 writes (docs/distributed.md §4): every rank holds the same state, and this file is one process's.
void save_checkpoint(const Method& method, const Position& p, const std::string& config_xxh64,
                     const std::string& path) {
  if (parallel::world().rank() != 0) return;
  TrainingState s;
  method.save_state(s);
  put_position(s, p);
  if (!config_xxh64.empty()) s.put_entry(kConfigHashEntry, config_xxh64);
  s.save(path);
}

std::string fixed(double v, int digits) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << v;
  return s.str();
}

// One train_step; a NonFiniteLoss re-runs it from the same generator states under anomaly mode so the error
// names the op that first produced a non-finite value (docs/design.md §4.4).
StepResult guarded_step(Method& method, int64_t epoch, int64_t step, bool anomaly) {
  std::vector<GeneratorState> before;
  for (Generator* g : method.generators()) before.push_back(g->state());
  const GeneratorState default_before = default_generator().state();
  try {
    AnomalyModeGuard guard(anomaly);
    return method.train_step(epoch, step);
  } catch (const NonFiniteLoss& e) {
    if (anomaly) throw;
    std::vector<Generator*> gens = method.generators();
    for (size_t i = 0; i < gens.size(); ++i) gens[i]->set_state(before[i]);
    default_generator().set_state(default_before);
    try {
      AnomalyModeGuard guard(true);
      method.train_step(epoch, step);
    } catch (const NonFiniteLoss&) {
      throw;
    } catch (const Error& anomaly_error) {
      REMATCH_FAIL(e.what(), "; re-run under anomaly mode: ", anomaly_error.what(),
                   ". The run stopped; no checkpoint was written for this step");
    }
    throw;
  }
}

// plots/loss.png, plots/validation.png, and plots/<name>.png of each statistic the method declares with `plot`
// (its values of metrics.jsonl's epoch_start records, by epoch).
void write_curves(const run::RunFolder& folder, const std::vector<EpochStat>& stats) {
  std::vector<double> steps, losses, epochs, scores;
  std::vector<std::vector<double>> stat_epochs(stats.size()), stat_values(stats.size());
  int64_t global = 0, last_epoch = -1, epoch_base = 0, last_step = 0;
  for (const run::MetricRecord& r : run::read_metrics(folder.metrics_path())) {
    if (r.epoch != last_epoch) {
      epoch_base += last_step;
      last_epoch = r.epoch;
      last_step = 0;
    }
    if (r.kind == "train" && r.has("loss")) {
      global = epoch_base + r.step;
      last_step = r.step;
      steps.push_back(static_cast<double>(global));
      losses.push_back(r.get("loss"));
    } else if (r.kind == "val" && r.has("score")) {
      epochs.push_back(static_cast<double>(r.epoch + 1));
      scores.push_back(r.get("score"));
    } else if (r.kind == "epoch_start") {
      for (size_t i = 0; i < stats.size(); ++i)
        if (stats[i].plot && r.has(stats[i].name)) {
          stat_epochs[i].push_back(static_cast<double>(r.epoch + 1));
          stat_values[i].push_back(r.get(stats[i].name));
        }
    }
  }
  if (!steps.empty())
    run::line_plot(folder.plot_path("loss.png"), "training loss", "step", "loss", {{"loss", steps, losses, std::nullopt}});
  if (!epochs.empty())
    run::line_plot(folder.plot_path("validation.png"), "validation score", "epoch", "score",
                   {{"validation", epochs, scores, std::nullopt}});
  for (size_t i = 0; i < stats.size(); ++i)
    if (!stat_epochs[i].empty())
      run::line_plot(folder.plot_path(stats[i].name + ".png"), stats[i].name + " per epoch", "epoch", stats[i].name,
                     {{stats[i].name, stat_epochs[i], stat_values[i], std::nullopt}});
}

// The epoch line's part for the statistics the method shows there ("  clean_precision 0.812").
std::string epoch_line_stats(const std::vector<EpochStat>& declared, const Scalars& stats) {
  std::string out;
  for (const EpochStat& d : declared) {
    const auto it = stats.find(d.name);
    if (d.epoch_line && it != stats.end()) out += "  " + d.name + " " + fixed(it->second, d.digits);
  }
  return out;
}

// Under a file-size limit (ulimit -f) a write past it raises SIGXFSZ, whose default action kills the process
// with a temporary file or half a metrics line left behind. Ignored, the write fails with EFBIG instead and the
// run stops with an error naming the file like on a full disk. The previous action is restored afterwards.
class FileSizeSignalIgnored {
 public:
  FileSizeSignalIgnored() {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    ::sigaction(SIGXFSZ, &ignore, &previous_);
  }
  ~FileSizeSignalIgnored() { ::sigaction(SIGXFSZ, &previous_, nullptr); }
  FileSizeSignalIgnored(const FileSizeSignalIgnored&) = delete;
  FileSizeSignalIgnored& operator=(const FileSizeSignalIgnored&) = delete;

 private:
  struct sigaction previous_ {};
};

// What a user whose run folder could not be written (a full disk, a read-only folder) can do: resume from the
// checkpoint that is still there, or start again when there is none.
std::string after_write_failure(const run::RunFolder& folder, const std::optional<Position>& saved) {
  const std::string once = "once " + folder.dir() + " can be written again (free space on its disk, or make it "
                           "writable), ";
  if (!saved)
    return ". Training stopped before its first checkpoint: " + once + "start again with --overwrite, or pick " +
           "another --run_dir";
  const std::string at = describe_position(*saved);
  return ". Training stopped; the last checkpoint, " + folder.checkpoint_latest_path() + " (" + at +
         "), is intact: " + once + "continue with: rematch train --resume " + folder.dir();
}

// metrics.jsonl, written by rank 0 only under mpirun (the other ranks compute the same records).
class RankZeroMetrics {
 public:
  RankZeroMetrics(const std::string& path, bool writer) {
    if (writer) log_.emplace(path);
  }
  void append(const run::MetricRecord& r) {
    if (log_) log_->append(r);
  }
  void truncate_after(int64_t epoch, int64_t step) {
    if (log_) log_->truncate_after(epoch, step);
  }

 private:
  std::optional<run::MetricsLog> log_;
};

// run_training's work; `saved` follows what checkpoint_latest holds (the position resumed from, then each one
// saved), for the message of a failed write.
TrainOutcome train_and_test(Method& method, const TrainConfig& config, run::RunFolder& folder, ResumePlan* plan,
                            std::ostream& out, std::optional<Position>& saved) {
  Position pos;
  const bool resuming = plan != nullptr && plan->from != ResumeFrom::Start;
  // checkpoint_best's state as the resume check read it: the test's unless a later epoch validates better.
  std::optional<TrainingState> best_read;
  if (resuming && !plan->forget_best) best_read = std::move(plan->best);
  if (resuming) {  // before the metrics log opens: a folder that refuses it still holds this checkpoint
    method.load_state(*plan->state);
    pos = get_position(*plan->state);
    saved = pos;
    if (plan->forget_best) {
      pos.best_epoch = -1;
      pos.best_score = -std::numeric_limits<double>::infinity();
    }
  }
  parallel::Communicator& comm = parallel::world();
  const bool writer = comm.rank() == 0;  // under mpirun rank 0 writes the run folder; every rank computes
  const std::string config_xxh64 = writer ? config_hash(folder) : "";
  RankZeroMetrics metrics(folder.metrics_path(), writer);
  if (resuming) {
    metrics.truncate_after(pos.epoch, pos.step);
    out << "resuming " << folder.dir() << " at epoch " << pos.epoch + 1 << ", step " << pos.step
        << (pos.epoch_done ? " (epoch finished)" : "") << "\n";
    if (pos.epoch_done) {
      ++pos.epoch;
      pos.step = 0;
      pos.in_epoch = pos.epoch_done = false;
    }
  } else if (writer) {
    method.write_run_files(folder.dir());
  }

  run::ProgressOptions popt;
  popt.style = config.progress;
  popt.is_tty = run::is_terminal(STDERR_FILENO) && &out == &std::cerr;
  popt.log_every = config.log_step;
  const int64_t epochs = method.num_epochs();
  run::ProgressReporter progress(out, epochs, popt);
  // The CLI installs its guard before it writes anything (train_command.cpp); a caller that did not gets one here.
  std::optional<run::InterruptGuard> interrupt_guard;
  if (!run::interrupt_guard_active()) interrupt_guard.emplace(kInterruptNotice);
  TrainOutcome outcome;
  // The training steps' time, its collectives' and the bytes rank 0 put in them (mpirun).
  double step_seconds = 0, step_comm_seconds = 0, step_bytes = 0;
  int64_t steps_run = 0;
  run::MemoryTally memory(config.device.device());  // memory.md (docs/memory.md §1)

  for (; pos.epoch < epochs; ++pos.epoch, pos.step = 0, pos.in_epoch = false) {
    const int64_t e = pos.epoch;
    EpochInfo info;
    if (pos.in_epoch) {
      info = method.current_epoch();
    } else {
      info = method.begin_epoch(e);
      pos.in_epoch = true;
      const std::optional<viz::EpochSplit> split = writer ? method.epoch_split(e) : std::nullopt;
      // Under mpirun: the ranks planned one epoch (its step count and every vector of decisions that chose its
      // batches, Method::plan_splits; docs/distributed.md §4.2).
      if (comm.world_size() > 1) check_ranks_plan_one_epoch(comm, e, info.steps, method.plan_splits(e));
      // Before epoch_start is logged: a report that finds the record finds the epoch's split (docs/viz.md §4).
      if (split && writer) viz::write_epoch_split(folder.dir(), *split);
      run::MetricRecord r{e, 0, "epoch_start", {{"lr", method.learning_rate()}, {"steps", double(info.steps)}}};
      for (const auto& [k, v] : info.stats) r.values.emplace_back(k, v);
      metrics.append(r);
    }
    const int64_t steps = config.max_steps > 0 ? std::min(info.steps, config.max_steps) : info.steps;
    if (steps > 0) progress.start_epoch(e + 1, steps);
    memory.begin_steps();
    for (; pos.step < steps; ++pos.step) {
      const auto step_start = std::chrono::steady_clock::now();
      const double comm_before = parallel::collective_tally().seconds;
      const int64_t bytes_before = parallel::collective_tally().bytes;
      if (on_any_rank(comm, run::interrupted())) {  // the ranks stop at the same step
        save_checkpoint(method, pos, config_xxh64, folder.checkpoint_latest_path());
        saved = pos;
        progress.message("saved " + folder.checkpoint_latest_path() + " at epoch " + std::to_string(e + 1) +
                         ", step " + std::to_string(pos.step) + "; continue with: rematch train --resume " +
                         folder.dir());
        outcome.interrupted = true;
        return outcome;
      }
      const StepResult r = guarded_step(method, e, pos.step, config.detect_anomaly);
      step_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - step_start).count();
      step_comm_seconds += parallel::collective_tally().seconds - comm_before;
      step_bytes += static_cast<double>(parallel::collective_tally().bytes - bytes_before);
      ++steps_run;
      progress.step(pos.step + 1, r.loss, r.pairs);
      if ((pos.step + 1) % config.log_step == 0 || pos.step + 1 == steps) {
        run::MetricRecord rec{e, pos.step + 1, "train", {{"loss", r.loss}, {"lr", method.learning_rate()}}};
        for (const auto& [k, v] : r.parts) rec.values.emplace_back(k, v);
        metrics.append(rec);
      }
    }
    memory.end_steps();
    method.end_epoch(e);
    const EvalResult val = method.validate();
    memory.end_validation();  // and the caches are given back before the next epoch
    const bool candidate = method.best_candidate(e);
    const bool best = candidate && val.score > pos.best_score;
    if (best) {
      pos.best_score = val.score;
      pos.best_epoch = e;
      outcome.best_validation = val;
    }
    run::MetricRecord rec{e, steps, "val", {{"score", val.score}}};
    for (const auto& [k, v] : val.metrics) rec.values.emplace_back("val_" + k, v);
    metrics.append(rec);
    std::string summary = "val " + fixed(val.score, 2);
    if (best)
      summary += " (best)";
    else if (!candidate)
      summary += " (this stage does not compete for the best state)";
    else
      summary += " (best " + fixed(pos.best_score, 2) + ")";
    summary += epoch_line_stats(method.epoch_stats(), info.stats);
    if (steps > 0)
      progress.end_epoch(summary);
    else
      progress.message("epoch " + std::to_string(e + 1) + ": no steps; " + summary);
    outcome.last_epoch_stats = info.stats;
    pos.step = steps;
    pos.epoch_done = true;
    if (best) {
      save_checkpoint(method, pos, config_xxh64, folder.checkpoint_best_path());
      best_read.reset();
    }
    save_checkpoint(method, pos, config_xxh64, folder.checkpoint_latest_path());
    saved = pos;
    pos.epoch_done = false;
    if (config.plots && writer) {
      write_curves(folder, method.epoch_stats());
      method.write_plots(folder.plots_dir(), e);
    }
  }

  // The test of the best validated state (docs/backbones.md §7, docs/methods/l2rm.md §1.1: best dev rSum over all
  // epochs, warm-up included).
  if (comm.world_size() > 1)
    progress.message("data-parallel: " + std::to_string(comm.world_size()) + " ranks; the steps took " +
                     fixed(step_seconds, 2) + " s, " + fixed(step_comm_seconds, 2) + " s of it (" +
                     fixed(100 * step_comm_seconds / std::max(step_seconds, 1e-9), 1) + "%) in collectives (rank 0), " +
                     fixed(step_bytes / std::max<int64_t>(steps_run, 1) / 1e6, 2) + " MB a step into them");
  comm.barrier();  // rank 0's checkpoint_best is written
  if (pos.best_epoch >= 0) {
    // Read once: the state the resume check read, or the file this run wrote last.
    const TrainingState best = best_read ? std::move(*best_read) : TrainingState::load(folder.checkpoint_best_path());
    method.load_state(best);
    if (!outcome.best_validation.table.size()) outcome.best_validation = method.validate();
  }
  outcome.best_epoch = pos.best_epoch;
  outcome.best_score = pos.best_score;
  outcome.test = method.test();
  run::MetricRecord rec{epochs, 0, "test", {{"best_epoch", double(pos.best_epoch)}}};
  for (const auto& [k, v] : outcome.test.metrics) rec.values.emplace_back("test_" + k, v);
  metrics.append(rec);
  if (writer) folder.write_results(results_markdown(method, config, outcome));
  if (writer) {
    TrainingState state;
    method.save_state(state);
    size_t model_bytes = 0, optimizer_bytes = 0;
    for (const auto& [name, t] : state.tensors())
      (name.find("optim.state.") != std::string::npos ? optimizer_bytes : model_bytes) +=
          static_cast<size_t>(t.numel()) * dtype_size(t.dtype());
    memory.set_state_bytes(model_bytes, optimizer_bytes);
    io::write_file_atomically(folder.dir() + "/memory.md", memory.markdown(), "write memory.md");
    progress.message(memory.summary());
  }
  progress.message("best epoch " + std::to_string(pos.best_epoch + 1) + " (validation " + fixed(pos.best_score, 2) +
                   "); test:\n" + outcome.test.table);
  return outcome;
}

}  // namespace

TrainOutcome run_training(Method& method, const TrainConfig& config, run::RunFolder& folder, ResumePlan* plan,
                          std::ostream& out) {
  check_data_parallel(method);
  FileSizeSignalIgnored writes_past_a_size_limit_fail;
  std::optional<Position> saved;
  for (const std::string& p : folder.removed_temporaries())
    out << "removed " << p << ", a temporary file left by a process that is no longer running\n";
  try {
    return train_and_test(method, config, folder, plan, out, saved);
  } catch (const io::WriteError& e) {
    throw e.extended(after_write_failure(folder, saved));
  }
}

TrainOutcome run_training(Method& method, const TrainConfig& config, run::RunFolder& folder, bool resuming,
                          std::ostream& out) {
  if (!resuming) return run_training(method, config, folder, nullptr, out);
  ResumePlan plan = check_resume(folder, ResumeOptions{});
  for (const std::string& note : plan.notes) out << note << "\n";
  return run_training(method, config, folder, &plan, out);
}

void check_data_parallel(const Method& method) {
  check_data_parallel(method.name(), find_method_spec(method.name()), parallel::world().world_size());
}

void check_data_parallel(const std::string& name, const MethodSpec* spec, int world) {
  if (world == 1) return;
  REMATCH_CHECK(spec && spec->data_parallel, "--method ", name, " does not train on several processes ",
                "yet (mpirun started ", world, "; docs/distributed.md §4 lists the methods that do): run it in one ",
                "process");
}

std::string results_markdown(const Method& method, const TrainConfig& c, const TrainOutcome& o) {
  std::ostringstream s;
  s << "# rematch train --method " << method.name() << "\n\n"
    << "| setting | value |\n|---|---|\n"
    << "| data | " << c.data_path << "/" << c.data_name << " |\n"
    << "| noise | " << c.noise_ratio << " (" << (c.noise_mode ? noise_mode_name(*c.noise_mode) : "")
    << (c.noise_file.empty() ? "" : ", " + c.noise_file)
    << ") |\n"
    << "| epochs | " << c.num_epochs << " main + " << c.warmup_epoch << " warm-up |\n"
    << "| batch size | " << c.batch_size << " |\n| learning rate | " << c.learning_rate << " |\n"
    << "| seed | " << c.seed << " |\n| device | " << c.device << " |\n\n"
    << "Best validation score " << fixed(o.best_score, 2) << " at epoch " << o.best_epoch + 1 << ".\n\n"
    << "## Test (best validated state)\n\n```\n" << o.test.table << "\n```\n"
    << "\nMemory (peak tensor memory, caches, peak resident set): memory.md.\n";
  // The method's notes, then the statistics it declares for results.md, of the state tested (the best epoch's;
  // the last epoch's when none was validated as best).
  std::ostringstream notes;
  notes << method.results_notes();
  const Scalars stats = method.current_epoch().stats;
  const int64_t epoch = o.best_epoch >= 0 ? o.best_epoch + 1 : method.num_epochs();
  for (const EpochStat& d : method.epoch_stats()) {
    const auto it = stats.find(d.name);
    if (d.results && it != stats.end()) notes << "- " << d.name << " (epoch " << epoch << "): " << it->second << "\n";
  }
  if (!notes.str().empty()) s << "\n## Notes\n\n" << notes.str();
  return s.str();
}

}  // namespace rematch::train
