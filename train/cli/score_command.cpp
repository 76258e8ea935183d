#include "train/cli/score_command.h"

#include <CLI/CLI.hpp>
#include <chrono>
#include <memory>
#include <string>

#include "parallel/communicator.h"
#include "tensor/npy.h"
#include "train/cli/eval_checkpoint.h"
#include "train/cli/npy_output.h"

namespace rematch::cli {
namespace {

struct ScoreOptions {
  CheckpointScoringOptions scoring;
  std::string out;
};

void run_score(const ScoreOptions& o, std::ostream& all_out, std::ostream& err) {
  const auto start = std::chrono::steady_clock::now();
  require_replaceable_npy(o.out, "--out");
  const ScoredSplit s = score_split(o.scoring, err);
  // Under mpirun every rank holds the whole matrix; rank 0 writes it and reports.
  if (parallel::world().rank() != 0) return;
  std::ostream& out = all_out;
  save_npy(o.out, s.sims);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out << s.summary << ": " << s.sims.size(0) << " images x " << s.sims.size(1) << " captions (" << s.captions_per_image
      << " per image)\nwrote " << o.out << ": float32 " << s.sims.shape_str() << ", rows = images (" << seconds
      << " s on " << o.scoring.device << ")\n";
}

}  // namespace

void add_score_command(CLI::App& app, std::ostream& out, std::ostream& err) {
  auto o = std::make_shared<ScoreOptions>();
  CLI::App* cmd = app.add_subcommand("score", "Similarity matrix of SGR/SAF checkpoints on a split (.npy)");
  add_checkpoint_scoring_options(*cmd, o->scoring)->required();
  cmd->get_option("--data_path")->required();
  cmd->get_option("--data_name")->required();
  cmd->add_option("--out", o->out, "Output .npy [N_img, N_cap], rows = images")->required();
  cmd->callback([o, &out, &err] { parallel::run_on_every_rank([&] { run_score(*o, out, err); }); });
}

}  // namespace rematch::cli
