#include "train/cli/retrieve_command.h"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <memory>
#include <string>

#include "train/cli/app.h"
#include "train/cli/eval_checkpoint.h"
#include "train/cli/number_checks.h"
#include "train/cli/report_folder.h"
#include "train/cli/report_pages.h"
#include "train/data/finite_features.h"
#include "train/data/float_npy.h"
#include "train/data/precomp_dataset.h"

namespace rematch::cli {
namespace {

struct RetrieveFlags {
  CheckpointScoringOptions scoring;
  std::string sims, run_dir;
  int64_t captions_per_image = 5;
  RetrievalReportOptions report;
  CLI::Option* cpi_opt = nullptr;
};

void run_retrieve(RetrieveFlags f, std::ostream& out, std::ostream& err) {
  if (f.run_dir.empty() && f.report.out_dir.empty()) throw UsageError("give --out (the report's folder)");
  if (!f.run_dir.empty()) {
    if (!std::filesystem::is_regular_file(f.run_dir + "/config.json"))
      throw UsageError("--run " + f.run_dir + " is not a run folder (it has no config.json)");
    const std::string out_dir = f.report.out_dir.empty() ? f.run_dir + "/report" : f.report.out_dir;
    // The default <run>/report too: a user's notes there were replaced, and a file of that name gave std::
    // filesystem's raw exception.
    const std::string problem = report_folder_problem(out_dir);
    if (!problem.empty()) throw UsageError(problem);
    const std::string page = write_run_report(f.run_dir, out_dir, f.report.images, err);  // may fail: say nothing yet
    out << "report: " << page << "\n";
    return;
  }
  // Checked before any scoring: a folder given by the user may hold their own files (train/cli/report_folder.h).
  const std::string problem = report_folder_problem(f.report.out_dir);
  if (!problem.empty()) throw UsageError(problem);
  ScoredSplit scored;
  if (!f.scoring.checkpoints.empty()) {
    scored = score_split(f.scoring, err);
  } else if (!f.sims.empty()) {
    if (f.scoring.data_path.empty() || f.scoring.data_name.empty())
      throw UsageError("--sims needs --data_path and --data_name (the split's captions)");
    scored.sims = data::load_float_npy(f.sims, "--sims", err, /*keep_float64=*/true);
    // Divided, not multiplied: N_img * captions_per_image can wrap around to the column count.
    if (scored.sims.dim() != 2 || scored.sims.size(0) == 0 || f.captions_per_image < 1 ||
        scored.sims.size(1) % f.captions_per_image != 0 ||
        scored.sims.size(1) / f.captions_per_image != scored.sims.size(0))
      throw UsageError("--sims " + f.sims + " is " + scored.sims.shape_str() + ", not [N_img, N_img * " +
                       std::to_string(f.captions_per_image) + "] with N_img > 0 for --captions_per_image " +
                       std::to_string(f.captions_per_image));
    if (scored.sims.dtype() != DType::Float32 && scored.sims.dtype() != DType::Float64)
      throw UsageError("--sims " + f.sims + " holds " + scored.sims.describe() + ", not float scores");
    data::check_finite_rows(scored.sims, "--sims", f.sims, "score", "a score matrix with NaN or Inf ranks nothing: "
                            "score the split again");
    scored.captions_per_image = f.captions_per_image;
    scored.summary = f.sims;
  } else {
    throw UsageError("give --checkpoint (models to score the split with), --sims (a saved matrix) or --run");
  }
  f.report.notes = &err;
  const std::string page = write_retrieval_report(scored, f.scoring, f.report);
  out << "report: " << page << "\n";
}

}  // namespace

void add_retrieve_command(CLI::App& app, std::ostream& out, std::ostream& err) {
  auto f = std::make_shared<RetrieveFlags>();
  CLI::App* cmd = app.add_subcommand(
      "retrieve",
      "An HTML page of what a model retrieves (top-k captions of images, top-k images of captions, ground truth "
      "marked), or with --run what a training run caught");
  CLI::Option* ckpt = add_checkpoint_scoring_options(*cmd, f->scoring);
  cmd->add_option("--sims", f->sims, "A saved similarity matrix .npy [N_img, N_img * captions_per_image] instead of "
                                     "--checkpoint")
      ->check(CLI::ExistingFile)
      ->excludes(ckpt);
  f->cpi_opt = cmd->add_option("--captions_per_image", f->captions_per_image, "With --sims: 5 (COCO, F30K) or 1 (CC152K)")
                   ->capture_default_str()
                   ->check(kPositiveCount);
  cmd->add_option("--run", f->run_dir, "A run folder: the pairs its method flagged and kept, and what its best "
                                       "checkpoint retrieves (default --out: <run>/report)")
      ->excludes(ckpt);
  cmd->add_option("--out", f->report.out_dir, "Folder of the report (the page and its thumbnails)");
  cmd->add_option("--top_k", f->report.top_k, "Results per query")->capture_default_str()->check(kPositiveCount);
  cmd->add_option("--queries", f->report.random_queries, "Random query images and captions, when none are chosen")
      ->capture_default_str()
      ->check(kNonNegativeCount);
  cmd->add_option("--query_image", f->report.query_images, "Query image (row of the score matrix; repeatable)");
  cmd->add_option("--query_caption", f->report.query_captions, "Query caption (column; repeatable)");
  cmd->add_option("--seed", f->report.seed, "Seed of the random queries")->capture_default_str();
  cmd->add_option("--images_dir", f->report.images.images_dir,
                  "Folder of the data set's pictures (default: <data_path>/<data_name>/images when it exists)");
  cmd->add_option("--image_list", f->report.images.image_list,
                  "File of the split's image file names, one per image or per features row (default: <split>_ids.txt)");
  cmd->add_option("--karpathy_json", f->report.images.karpathy_json,
                  "The Karpathy split JSON (dataset_flickr30k.json, dataset_coco.json): image file names of the split");
  cmd->add_option("--thumbnail", f->report.thumbnail_side, "Longest side of a thumbnail, pixels")
      ->capture_default_str()
      ->check(CLI::Range(16, 1024));
  cmd->callback([f, &out, &err] { run_retrieve(*f, out, err); });
}

}  // namespace rematch::cli
