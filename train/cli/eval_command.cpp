#include "train/cli/eval_command.h"

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "parallel/communicator.h"
#include "tensor/npy.h"
#include "train/cli/app.h"
#include "train/cli/eval_checkpoint.h"
#include "train/cli/number_checks.h"
#include "train/data/float_npy.h"
#include "train/eval/retrieval_metrics.h"

namespace rematch::cli {
namespace {

struct EvalOptions {
  std::string sims;
  int64_t captions_per_image = 5;
  int64_t folds = 1;
  bool json = false;
  CheckpointScoringOptions scoring;  // --checkpoint: score the split instead of reading --sims
  CLI::Option* captions_per_image_opt = nullptr;
};

void run_eval(const EvalOptions& given, std::ostream& all_out, std::ostream& err) {
  EvalOptions o = given;
  Tensor sims;
  if (!o.scoring.checkpoints.empty()) {
    const ScoredSplit s = score_split(o.scoring, err);
    if (parallel::world().rank() != 0) return;  // under mpirun: every rank holds the matrix, rank 0 reports
    sims = s.sims;
    o.sims = s.summary;
    if (o.captions_per_image_opt->count() == 0) o.captions_per_image = s.captions_per_image;
  } else if (o.sims.empty()) {
    throw UsageError("give --sims (a saved matrix) or --checkpoint (models to score a split with)");
  } else {
    sims = data::load_float_npy(o.sims, "--sims", err, /*keep_float64=*/true);
  }
  std::ostream& out = all_out;
  // The matrix is only known after loading, so these checks cannot be CLI11 validators; they are still
  // command-line mistakes (wrong --captions_per_image or --folds for this file), hence UsageError. A scored
  // matrix is named by what was scored, not as --sims.
  const std::string what = given.sims.empty() ? "the scores of " + o.sims : "--sims " + o.sims;
  if (sims.dim() != 2 || (sims.dtype() != DType::Float32 && sims.dtype() != DType::Float64))
    throw UsageError(what + " must hold a 2-D float32/float64/float16 matrix, got " + sims.describe());
  const int64_t n_img = sims.size(0), n_cap = sims.size(1);
  // Divided, not multiplied: N_img * captions_per_image can wrap around to the column count.
  if (n_img < 1 || n_cap % o.captions_per_image != 0 || n_cap / o.captions_per_image != n_img)
    throw UsageError(what + " is " + sims.shape_str() + ", which is not [N_img, N_img * " +
                     std::to_string(o.captions_per_image) + "] for --captions_per_image " +
                     std::to_string(o.captions_per_image));
  if (n_img % o.folds != 0)
    throw UsageError(std::to_string(n_img) + " images do not split into --folds " + std::to_string(o.folds) +
                     " equal folds");
  const eval::RetrievalMetrics m =
      o.folds == 1 ? eval::retrieval_metrics(sims, o.captions_per_image)
                   : eval::mean_metrics(eval::per_fold_metrics(sims, o.captions_per_image, o.folds));
  if (o.json) {
    out << eval::metrics_json(m) << "\n";
    return;
  }
  out << o.sims << ": " << n_img << " images x " << n_cap << " captions (" << o.captions_per_image
      << " per image)";
  if (o.folds > 1) out << ", mean over " << o.folds << " folds of " << n_img / o.folds << " images";
  out << "\n" << eval::format_metrics_table(m);
}

}  // namespace

void add_eval_command(CLI::App& app, std::ostream& out, std::ostream& err) {
  auto o = std::make_shared<EvalOptions>();
  CLI::App* cmd = app.add_subcommand(
      "eval", "Retrieval metrics (R@1/5/10, medr, meanr, rSum) of a similarity matrix or of SGR/SAF checkpoints");
  CLI::Option* sims =
      cmd->add_option("--sims", o->sims, "Similarity matrix .npy [N_img, N_img * captions_per_image], rows = images")
          ->check(CLI::ExistingFile);
  sims->excludes(add_checkpoint_scoring_options(*cmd, o->scoring));
  o->captions_per_image_opt =
      cmd->add_option("--captions_per_image", o->captions_per_image,
                      "5 for COCO/F30K, 1 for CC152K (with --checkpoint: read from the data unless given)")
          ->capture_default_str()
          ->check(kPositiveCount);
  cmd->add_option("--folds", o->folds, "Average over this many consecutive image folds (COCO 1K: 5)")
      ->capture_default_str()
      ->check(kPositiveCount);
  cmd->add_flag("--json", o->json, "Print one JSON object instead of the table");
  cmd->callback([o, &out, &err] { parallel::run_on_every_rank([&] { run_eval(*o, out, err); }); });
}

}  // namespace rematch::cli
