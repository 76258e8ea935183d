#include "train/cli/train_command.h"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <memory>
#include <optional>

#include "tensor/device.h"
#include "tensor/file_io.h"
#include "train/cli/app.h"
#include "train/methods/data_files.h"
#include "train/methods/make_method.h"
#include "train/methods/resume_check.h"
#include "train/methods/trainer.h"
#include "train/run/interrupt.h"
#include "train/run/run_folder.h"

namespace rematch::cli {
namespace {

using train::TrainConfig;

void add_flags(CLI::App& cmd, TrainConfig& c, std::string& device) {
  auto opt = [&](const std::string& name, auto& field, const std::string& help) {
    return cmd.add_option("--" + name, field, help);
  };
  opt("method", c.method, "triplet | infonce | rcl | l2rm | rcsl | rcsl-nc | uotrcl");
  opt("preset", c.preset, "Official hyperparameters: f30k | coco | cc152k (pairs, rcsl) or wiki | nus | xmedianet (uotrcl)");
  opt("device", device, "cpu | cuda | cuda:N")->capture_default_str();
  opt("seed", c.seed, "Random seed (weights, batches, noise unless --noise_seed)")->capture_default_str();
  opt("data_path", c.data_path, "Folder holding <data_name>/ (SCAN precomp layout), or the labelled data file/folder (uotrcl)");
  opt("data_name", c.data_name, "Data set folder, e.g. f30k_precomp (default <preset>_precomp)");
  opt("vocab_path", c.vocab_path, "Folder of <data_name>_vocab.json (default <data_path>/vocab)");
  opt("val_subset", c.val_subset,
      "Part of dev used for model selection: sgraf (5,000 captions) | ncr (1,000 x im_div captions); default: the "
      "method's official code (l2rm ncr, the others sgraf)");
  opt("valid_len", c.valid_len, "Labelled data without a valid split: validate on the first valid_len test rows");
  cmd.add_flag("--coco_folds", c.coco_folds,
               "Also report COCO 5-fold 1K (use with --test_split testall; on by default with --preset coco)");
  opt("test_split", c.test_split,
      "Split of the final test: test | testall (default: testall with 5-fold 1K and full 5K for --preset coco, "
      "as the official runs end; test otherwise)");
  opt("noise_ratio", c.noise_ratio, "Share of mismatched pairs (or noisy labels, uotrcl) to inject")->capture_default_str();
  opt("noise_file", c.noise_file, "A published noise index (.npy) or label-noise file; overrides generation");
  opt("noise_mode", c.noise_mode,
      "image | caption (pairs: RCL/DECL image level or NCR caption level); symmetric | mrl (labels). Default: "
      "image (triplet, infonce, rcl, l2rm), caption (rcsl-nc: the RCSL paper follows NCR), symmetric (uotrcl)");
  opt("noise_seed", c.noise_seed, "Seed of the injected noise (default: --seed)");
  opt("batch_size", c.batch_size, "Batch size (default per method/preset)");
  opt("num_epochs", c.num_epochs, "Main epochs (l2rm: after warm-up; uotrcl: warm-up included)");
  opt("warmup_epoch", c.warmup_epoch, "Warm-up epochs (l2rm, rcsl-nc, uotrcl)");
  opt("learning_rate", c.learning_rate, "Base learning rate (default per method/preset)");
  opt("lr_update", c.lr_update, "Multiply the learning rate by 0.1 every lr_update epochs (after warm-up)");
  opt("grad_clip", c.grad_clip, "Clip the global gradient norm (0: off; default 2, uotrcl 0)");
  opt("module_name", c.module_name, "SGR | SAF")->capture_default_str();
  opt("embed_size", c.embed_size, "Joint embedding size")->capture_default_str();
  opt("word_dim", c.word_dim, "Word embedding size")->capture_default_str();
  opt("sim_dim", c.sim_dim, "Similarity vector size (SGR/SAF)")->capture_default_str();
  opt("sgr_step", c.sgr_step, "Graph reasoning steps (SGR)")->capture_default_str();
  opt("dropout", c.dropout, "Dropout of the text embedding and the self-attention")->capture_default_str();
  opt("margin", c.margin, "Triplet margin (also the GCE q of --loss gce, as the RCL code)")->capture_default_str();
  opt("triplet_negatives", c.triplet_negatives, "hardest (VSE++ max violation) | mean (sum over all negatives)")
      ->capture_default_str();
  opt("tau", c.tau, "Softmax temperature (default 0.05; rcsl 0.03)");
  opt("loss", c.loss, "RCL complementary loss φ: log | tan | abs | exp | gce")->capture_default_str();
  opt("neg_ratio", c.neg_ratio, "RCL: share of negatives per row in (0, 1); otherwise all B-1")->capture_default_str();
  opt("reg", c.reg, "L2RM Sinkhorn ε (default 0.01 f30k, 0.07 coco/cc152k)");
  opt("rho", c.rho, "L2RM partial transport mass")->capture_default_str();
  opt("cost_lr", c.cost_lr, "L2RM cost-net learning rate")->capture_default_str();
  opt("ot_max_iter", c.ot_max_iter, "Sinkhorn iterations at most")->capture_default_str();
  opt("ot_tol", c.ot_tol, "Sinkhorn stop: L2 change of the potential (L2RM's rule)")->capture_default_str();
  opt("split_loss", c.split_loss, "L2RM per-sample loss: mean (code) | hardest (paper Eq. 4)")->capture_default_str();
  opt("rce_label", c.rce_label, "L2RM RCE label: code (I + 1e-7) | paper (clipped)")->capture_default_str();
  opt("mask_positives", c.mask_positives,
      "L2RM OT mask of the given pairs: auto (on iff noise is injected: --noise_ratio > 0 or --noise_file; so off "
      "on CC152K, as the code) | on | off (Table 3's w/o positives masked)")
      ->capture_default_str();
  opt("rematch_loss", c.rematch_loss, "L2RM rematch loss: sym_kl | kl | soft_infonce | js")->capture_default_str();
  opt("dummy_costs", c.dummy_costs, "L2RM dummy costs: shifted (same plan, float32-safe) | l2rm (ξ = 100 max C)")
      ->capture_default_str();
  opt("max_reserved", c.max_reserved, "L2RM reconstructed positives per cost update: U{1..max} (default batch/10)");
  opt("rematch_ot", c.rematch_ot,
      "L2RM rematch plan: partial (masked partial OT, mass rho; default) | full (balanced OT, mass 1: Table 3's "
      "w/o partial OT)");
  opt("cost_function", c.cost_function,
      "L2RM OT cost: learned (f_c, trained on reconstructed pairs; default) | cosine (1 - S, f_c never updated: "
      "Table 3's w/o learnable cost)");
  opt("paired_length", c.paired_length, "RCSL: images that keep their captions (required for rcsl)");
  opt("mine_epoch", c.mine_epoch, "RCSL: first epoch of the mining stage (default 25)");
  opt("lr_milestones", c.lr_milestones, "RCSL: epochs where the learning rate is multiplied by 0.1 (default 15 30 45)");
  opt("weight_decay", c.weight_decay, "RCSL AdamW weight decay")->capture_default_str();
  opt("bank_refresh", c.bank_refresh, "RCSL memory bank: once (as the code) | epoch")->capture_default_str();
  opt("unpaired_keep", c.unpaired_keep, "RCSL learning stage: share of unpaired captions kept per epoch (coco 0.2)");
  opt("word_vectors", c.word_vectors,
      "RCSL: GloVe text file for the word embedding; words it lacks get N(0, 1), as the official code (default: "
      "no file, every word U(-0.1, 0.1), the code's init without GloVe)");
  cmd.add_flag("--no_augment", c.no_augment, "RCSL: no region/token augmentation");
  cmd.add_flag("--no_reg", c.no_reg, "RCSL ablation (Table 6 #2): drop L_reg (alignment + uniformity)");
  cmd.add_flag("--no_trl", c.no_trl,
               "RCSL ablation (Table 6 #3, 'w/o L_sdl†'): drop the paired triplet L_trl† of Eq. 5, keep L_reg "
               "(the dagger is L_trl†'s; #8 'w/o L_sdl† & L_rcm' must leave L_reg)");
  cmd.add_flag("--no_rcm_t", c.no_rcm_t,
               "RCSL ablation (Table 6 #4): drop L_rcm^t = L_m(B_t), the pairs (I_i, T'_i) with mined texts (Eq. 7-8)");
  cmd.add_flag("--no_rcm_v", c.no_rcm_v,
               "RCSL ablation (Table 6 #5): drop L_rcm^v = L_m(B_v), the pairs (I'_i, T_i) with mined images");
  cmd.add_flag("--no_rcm", c.no_rcm,
               "RCSL ablation (Table 6 #6, Table 4's 'RCSL w/o RCM'): no mining loss and no memory bank; the "
               "stages, optimizer reset and batches stay (#7: with --no_reg, #8: with --no_trl)");
  opt("hidden_dim", c.hidden_dim, "UOT-RCL MLP width")->capture_default_str();
  opt("output_dim", c.output_dim, "UOT-RCL common space size")->capture_default_str();
  opt("confident_per_class", c.confident_per_class, "UOT-RCL confident samples per class")->capture_default_str();
  opt("knn", c.knn, "UOT-RCL neighbours 𝒦 (default per preset, else 5% of the training set)");
  opt("gamma", c.gamma, "UOT-RCL target moving average")->capture_default_str();
  opt("lambda_bhg", c.lambda_bhg, "UOT-RCL weight of L_BHG")->capture_default_str();
  opt("tau1", c.tau1, "UOT-RCL prototype temperature")->capture_default_str();
  opt("tau2", c.tau2, "UOT-RCL relation temperature")->capture_default_str();
  opt("tau3", c.tau3, "UOT-RCL cross-modal temperature")->capture_default_str();
  opt("s_start", c.s_start, "UOT-RCL transported mass at the first main epoch")->capture_default_str();
  opt("s_end", c.s_end, "UOT-RCL transported mass at the last epoch")->capture_default_str();
  opt("lc_eps", c.lc_eps, "UOT-RCL label-correction Sinkhorn ε (docs/uotrcl-choices.md)");
  opt("lc_iters", c.lc_iters, "UOT-RCL label-correction Sinkhorn iterations")->capture_default_str();
  opt("rel_eps", c.rel_eps, "UOT-RCL relation OT ε (docs/uotrcl-choices.md)");
  opt("rel_iters", c.rel_iters, "UOT-RCL relation OT iterations")->capture_default_str();
  opt("lc_eps_scale", c.lc_eps_scale, "UOT-RCL label-correction ε: fixed (cost units) | mean (× mean cost)")
      ->capture_default_str();
  opt("lc_corner", c.lc_corner, "UOT-RCL price of the dummy corner (> 0 removes Eq. 13's slack)")->capture_default_str();
  opt("rel_cost_norm", c.rel_cost_norm, "UOT-RCL relation OT cost: mean (divided by its mean) | none")
      ->capture_default_str();
  opt("target_update", c.target_update, "UOT-RCL target moving average (Eq. 9): epoch | batch")->capture_default_str();
  cmd.add_flag("--no_plc", c.no_plc, "UOT-RCL ablation: drop L_PLC (Eq. 15); the main loss is lambda_bhg L_BHG");
  cmd.add_flag("--no_bhg", c.no_bhg, "UOT-RCL ablation: drop L_BHG (Eq. 18); the main loss is L_PLC");
  opt("confident_set", c.confident_set,
      "UOT-RCL confident set G: jsd (Eq. 5, default) | random (as many training pairs drawn uniformly: the "
      "ablation)");
  opt("run_dir", c.run_dir, "Run folder (default runs/<method>-<date>-<time>)");
  opt("resume", c.resume, "Continue the interrupted run in this folder, with its saved settings");
  cmd.add_flag("--overwrite", c.overwrite, "Replace an earlier run in --run_dir");
  opt("progress", c.progress, "auto | bar | plain | none")->capture_default_str();
  opt("log_step", c.log_step, "metrics.jsonl (and plain progress) every log_step steps")->capture_default_str();
  cmd.add_flag("!--no_plots", c.plots, "Do not write PNG plots");
  cmd.add_flag("--detect_anomaly", c.detect_anomaly, "Check every op for NaN/Inf (slow)");
  opt("max_steps", c.max_steps, "Stop every epoch after this many steps (smoke runs)");
  opt("eval_batch", c.eval_batch, "Evaluation block size (images x captions)")->capture_default_str();
}

// Flags that may accompany --resume (they change how the run is shown, not what it computes, or only show it).
bool allowed_with_resume(const std::string& name) {
  return name == "--resume" || name == "--progress" || name == "--dry_run" || name == "--remake_best" ||
         name == "--restart";
}

// --dry_run (issue 15 point 10): the resolved configuration as JSON on stdout (the keys of config.json), the data
// files checked on stderr, nothing trained and no run folder made. The device is checked by name only: a
// command meant for a GPU machine can be checked anywhere (an unusable device is a note, not an error).
void dry_run(const TrainConfig& c, std::ostream& out, std::ostream& err) {
  try {
    train::check_method_options(c);
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
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
    run = train::train_new_run(c, err);
    return report(run.outcome, run.run_dir, out);
  }
  for (const CLI::Option* o : cmd.get_options())
    if (o->count() > 0 && !allowed_with_resume(o->get_name()))
      throw UsageError(o->get_name() + " cannot be combined with --resume: a resumed run keeps the settings of " +
                       c.resume + "/config.json");
  const std::string progress = c.progress;
  // A dry run writes nothing and takes no lock: not even the folder RunFolder would create before finding no
  // run in it. It reads config.json only.
  if (dry) {
    const std::string config_path = c.resume + "/config.json";
    if (!std::filesystem::is_regular_file(config_path))
      REMATCH_FAIL("run folder '", c.resume, "': holds no run to resume (no ", config_path, ")");
    io::ReadFile f(config_path, "read_config");
    std::string text(f.size(), '\0');
    text.resize(f.read_at(text.data(), text.size(), 0));
    c = train::resumed_train_config(text, config_path);
    c.progress = progress;
    return dry_run(c, out, err);
  }
  run::RunFolder folder(c.resume, run::RunStart::Resume);
  c = train::resumed_train_config(folder.read_config(), folder.config_path());
  c.progress = progress;
  // Both checkpoints and config.json are checked before the data is read and before a step is trained.
  const train::ResumePlan plan = train::check_resume(folder, resume_options);
  for (const std::string& note : plan.notes) err << note << "\n";
  usable_device(c.device.spec(), "--device (from " + c.resume + "/config.json)");
  std::unique_ptr<train::Method> method = train::make_method(c, err);
  report(train::run_training(*method, c, folder, &plan, err), folder.dir(), out);
}

}  // namespace

void add_train_command(CLI::App& app, std::ostream& out, std::ostream& err) {
  auto config = std::make_shared<TrainConfig>();
  auto device = std::make_shared<std::string>(config->device.spec());
  auto dry = std::make_shared<bool>(false);
  auto resume_options = std::make_shared<train::ResumeOptions>();
  CLI::App* cmd = app.add_subcommand("train", "Train a retrieval model with one of the robust methods");
  add_flags(*cmd, *config, *device);
  cmd->add_flag("--remake_best", resume_options->remake_best,
                "With --resume, when checkpoint_best is lost or damaged: continue from checkpoint_latest and take "
                "the best state again from the validations still to come");
  cmd->add_flag("--restart", resume_options->restart,
                "With --resume: train the run in that folder again from its beginning with its config.json "
                "(same settings and seed; its checkpoints and metrics are deleted)");
  cmd->add_flag("--dry_run", *dry,
                "Resolve the preset and flags, check that the data files exist and are readable, print the "
                "configuration as JSON (the keys of config.json) and exit without training");
  cmd->callback([cmd, config, device, dry, resume_options, &out, &err] {
    TrainConfig c = *config;
    try {
      c.device = *device;  // parsed here, once
    } catch (const Error& e) {
      throw UsageError(e.what());
    }
    run_train(*cmd, c, *dry, *resume_options, out, err);
  });
}

}  // namespace rematch::cli
