#include "train/methods/resume_check.h"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "nn/safetensors.h"
#include "tensor/checksum.h"
#include "tensor/json_depth.h"
#include "train/methods/run_position.h"
#include "train/run/run_folder_contents.h"

namespace rematch::train {
namespace {
namespace fs = std::filesystem;

// One checkpoint file as found.
struct Found {
  std::string path;
  bool exists = false;
  std::optional<TrainingState> state;  // set when intact and of this run
  RunPosition position;
  std::string problem;  // why it cannot be used ("" when it can, or when it does not exist)

  bool usable() const { return state.has_value(); }
  std::string status() const {
    if (!exists) return path + " does not exist";
    if (!usable()) return path + " cannot be used: " + problem;
    return path + " is intact (" + describe_position(position) + ")";
  }
};

Found inspect(const std::string& path, const std::string& run_config_hash) {
  Found f;
  f.path = path;
  std::error_code ec;
  f.exists = fs::exists(path, ec);
  if (!f.exists) return f;
  try {
    TrainingState s = TrainingState::load(path);
    f.position = get_position(s);
    if (s.has_entry(kConfigHashEntry) && !run_config_hash.empty() && s.get_entry(kConfigHashEntry) != run_config_hash)
      f.problem = "it was written by another run (its config.json differed from this folder's)";
    else
      f.state = std::move(s);
  } catch (const Error& e) {
    f.problem = e.what();
  }
  return f;
}

void remove_files_of_the_stopped_run(const run::RunFolder& folder) {
  std::error_code ec;
  for (const std::string& p : {folder.checkpoint_latest_path(), folder.checkpoint_best_path(), folder.metrics_path(),
                               folder.results_path()}) {
    fs::remove(p, ec);
    if (ec) REMATCH_FAIL("run folder '", folder.dir(), "': cannot delete ", p, " to start the run again: ", ec.message());
  }
  // Only the plots rematch wrote: a figure of the user's in plots/ stays (train/run/run_folder_contents.h).
  std::vector<fs::path> plots;
  for (fs::directory_iterator it(folder.plots_dir(), ec), end; !ec && it != end; it.increment(ec))
    if (run::written_by_rematch_in("plots", it->path().string())) plots.push_back(it->path());
  for (const fs::path& p : plots) {
    std::error_code rm;
    fs::remove(p, rm);
  }
}

// The epochs metrics.jsonl records as finished (a "val" record each) when it records anything past the first
// epoch's end, else 0 (also when it does not exist). The first checkpoint is written right after the first
// epoch's "val" record (train/methods/trainer.cpp), or earlier at a Ctrl-C: a stop before it, or inside its
// write, leaves nothing of a later epoch (nor the final "test" record). Unreadable, it is an error naming it:
// whether the run had checkpoints cannot be told then.
int64_t epochs_past_the_first_checkpoint(const run::RunFolder& folder) {
  std::error_code ec;
  if (!fs::exists(folder.metrics_path(), ec)) return 0;
  std::set<int64_t> finished;
  bool past_first = false;
  try {
    for (const run::MetricRecord& r : run::read_metrics(folder.metrics_path())) {
      if (r.kind == "val") finished.insert(r.epoch);
      if (r.epoch >= 1) past_first = true;
    }
  } catch (const std::exception& e) {
    REMATCH_FAIL("run folder '", folder.dir(), "': cannot resume: neither checkpoint exists and ", e.what(),
                 ", so whether the run had checkpoints cannot be told. Train it again from its beginning with the "
                 "same settings: rematch train --resume ", folder.dir(), " --restart");
  }
  return past_first ? static_cast<int64_t>(finished.size()) : 0;
}

}  // namespace

std::string config_hash(const run::RunFolder& folder) {
  std::error_code ec;
  if (!fs::exists(folder.config_path(), ec)) return "";
  const std::string text = folder.read_config();
  nlohmann::json j;
  try {
    io::require_shallow_json(text, "config", folder.config_path());
    j = nlohmann::json::parse(text);
  } catch (const std::exception&) {  // not JSON, or nested too deep to read back: the text itself
    return xxh64_hex(text);
  }
  // Where the run is written and how it is shown change nothing it computes: the same settings in another
  // folder are the same run (and write the same checkpoint bytes).
  if (j.is_object())
    for (const char* key : {"run_dir", "resume", "overwrite", "progress"}) j.erase(key);
  return xxh64_hex(j.dump());
}

ResumePlan check_resume(const run::RunFolder& folder, const ResumeOptions& options) {
  ResumePlan plan;
  const std::string dir = folder.dir();
  const std::string resume = "rematch train --resume " + dir;
  if (options.restart) {
    remove_files_of_the_stopped_run(folder);
    plan.from = ResumeFrom::Start;
    plan.notes.push_back("--restart: the checkpoints and metrics of " + dir +
                         " were deleted; the run starts again from its beginning with its config.json");
    return plan;
  }
  const std::string hash = config_hash(folder);
  Found latest = inspect(folder.checkpoint_latest_path(), hash);
  Found best = inspect(folder.checkpoint_best_path(), hash);
  std::vector<std::string> unchecked;
  for (const Found* f : {&latest, &best})
    if (f->usable() && !f->state->checksum_verified()) unchecked.push_back(f->path);
  if (!unchecked.empty()) {
    std::string files;
    for (const std::string& p : unchecked) files += (files.empty() ? "" : " and ") + p;
    plan.notes.push_back("note: " + files + (unchecked.size() > 1 ? " carry" : " carries") +
                         " no checksum (written by an earlier rematch) and loaded without one; the checkpoints "
                         "written from now on carry one");
  }

  if (!latest.exists && !best.exists) {
    // Epochs recorded past the first checkpoint mean the checkpoints were deleted or moved, not a run that
    // stopped before its first one: starting again is then the user's call (--restart), never taken silently.
    const int64_t epochs = epochs_past_the_first_checkpoint(folder);
    if (epochs > 0)
      REMATCH_FAIL("run folder '", dir, "': cannot resume: ", latest.path, " and ", best.path, " are missing, though ",
                   folder.metrics_path(), " records ", epochs, epochs == 1 ? " finished epoch" : " finished epochs",
                   " (a run writes its checkpoint at the end of each). Put the checkpoints back if they were moved; "
                   "or train this run again from its beginning with the same settings (its config.json; the "
                   "metrics are deleted): ", resume, " --restart; or start a new run with another --run_dir");
    remove_files_of_the_stopped_run(folder);
    plan.from = ResumeFrom::Start;
    plan.notes.push_back(dir + " holds no checkpoint yet (the run stopped before its first one): starting it "
                         "again from its beginning with its config.json (the same settings and seed)");
    return plan;
  }

  // A stop between the two writes at an epoch's end leaves best newer than latest: continue from the newer.
  const bool best_is_newer = latest.usable() && best.usable() &&
                             (best.position.epoch > latest.position.epoch ||
                              (best.position.epoch == latest.position.epoch && best.position.epoch_done &&
                               !latest.position.epoch_done));
  if (latest.usable() && !best_is_newer) {
    const RunPosition& p = latest.position;
    const bool best_needed = p.best_epoch >= 0;
    const bool best_matches = best.usable() && best.position.epoch_done && best.position.epoch == p.best_epoch;
    if (best_needed && !best_matches) {
      const std::string what_best = best.usable() ? best.path + " holds " + describe_position(best.position) +
                                                        ", not the best state of epoch " +
                                                        std::to_string(p.best_epoch + 1)
                                                  : best.status();
      if (p.epoch_done && p.epoch == p.best_epoch) {
        latest.state->save(folder.checkpoint_best_path());
        plan.best = latest.state->deep_copy();
        plan.notes.push_back(what_best + "; re-made it from " + latest.path +
                             ", which holds that same state (the end of epoch " + std::to_string(p.best_epoch + 1) +
                             ")");
      } else if (options.remake_best) {
        plan.forget_best = true;
        plan.notes.push_back(what_best + "; --remake_best: the best state is taken again from the validations "
                             "still to come (the final test uses the best of those, not epoch " +
                             std::to_string(p.best_epoch + 1) + ")");
      } else {
        REMATCH_FAIL("run folder '", dir, "': cannot resume as it is: ", what_best, ". That file is the best "
                     "validated state (epoch ", p.best_epoch + 1, "), which the final test evaluates; ",
                     latest.status(), ". Either continue from ", latest.path, " with the best state taken again "
                     "from the validations still to come: ", resume, " --remake_best; or train this run again "
                     "from its beginning with the same settings: ", resume, " --restart");
      }
    } else if (best.exists && !best.usable()) {
      plan.notes.push_back(best.status() + "; no validation has chosen a best state yet, so it is not needed and "
                           "will be written again");
    } else if (best_needed) {
      plan.best = std::move(best.state);
    }
    plan.from = ResumeFrom::Latest;
    plan.state = std::move(latest.state);
    return plan;
  }

  if (best_is_newer) {
    best.state->save(folder.checkpoint_latest_path());
    plan.notes.push_back(best.path + " (" + describe_position(best.position) + ") is newer than " + latest.path +
                         " (" + describe_position(latest.position) + "): the run stopped between the two writes at "
                         "the end of an epoch; resuming from " + best.path + " (" + latest.path +
                         " now holds that state)");
    plan.from = ResumeFrom::Best;
    plan.best = best.state->deep_copy();
    plan.state = std::move(best.state);
    return plan;
  }
  if (best.usable()) {
    best.state->save(folder.checkpoint_latest_path());
    plan.notes.push_back(latest.status() + "; resuming from " + best.path + " (" + describe_position(best.position) +
                         "), an earlier state of this run: what follows it is trained again and, resume being "
                         "exact, gives the same run (" + latest.path + " now holds that state)");
    plan.from = ResumeFrom::Best;
    plan.best = best.state->deep_copy();
    plan.state = std::move(best.state);
    return plan;
  }

  REMATCH_FAIL("run folder '", dir, "': cannot resume: ", latest.status(), "; and ", best.status(),
               ". No state of this run is left to continue from. Train it again from its beginning with the same "
               "settings (its config.json; the checkpoints and metrics are deleted): ", resume,
               " --restart; or start a new run with another --run_dir");
}

}  // namespace rematch::train
