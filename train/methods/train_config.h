// Every option of `rematch train`, flat, named after the flags of the public PyTorch code (docs/methods/; the
// flag of each field is its name with `--`). Fields whose default depends on the method or the preset are
// NaN / -1 / "" here and are filled by resolve_defaults(): the run's config.json records the resolved values,
// so a run is reproducible from its config alone.
#pragma once

#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "tensor/device.h"

namespace rematch::train {

// --device: the spelling given ("cpu", "cuda", "cuda:1"; config.json keeps it) and the Device it names, parsed
// once, when the option is set: a spelling that is not cpu, cuda or cuda:N is an Error naming the flag. Whether
// this process can use the device is the command's check (usable_device), made once before any data is read.
class DeviceOption {
 public:
  DeviceOption() = default;
  DeviceOption(const std::string& spec);  // NOLINT: assigned from a flag's text
  DeviceOption(const char* spec) : DeviceOption(std::string(spec)) {}  // NOLINT
  const std::string& spec() const { return spec_; }
  const Device& device() const { return device_; }
  bool operator==(const std::string& spec) const { return spec_ == spec; }
  bool operator!=(const std::string& spec) const { return spec_ != spec; }

 private:
  std::string spec_ = "cpu";
  Device device_ = Device::cpu();
};
std::ostream& operator<<(std::ostream& out, const DeviceOption& d);

struct TrainConfig {
  // ---- what to run ------------------------------------------------------------------------------------------
  std::string method;          // triplet | infonce | rcl | l2rm | rcsl | rcsl-nc | uotrcl
  std::string preset;          // f30k | coco | cc152k | wiki | nus | xmedianet | "" (none)
  DeviceOption device;         // cpu | cuda | cuda:N
  uint64_t seed = 0;

  // ---- data -------------------------------------------------------------------------------------------------
  std::string data_path;       // folder holding <data_name>/ (precomp) or the labelled data file/folder root
  std::string data_name;       // e.g. f30k_precomp; for labelled data: wiki | nus | xmedianet | a folder name
  std::string vocab_path;      // folder of <data_name>_vocab.json ("" = <data_path>/vocab, then build one)
  // sgraf | ncr: the precomp dev subset used for model selection ("" = the method's official code's: ncr for l2rm,
  // sgraf for the others; docs/backbones.md §6.3).
  std::string val_subset;
  int64_t valid_len = -1;      // labelled data without a valid split: first valid_len test rows (-1: preset)
  bool coco_folds = false;     // also report COCO 5-fold 1K on testall (test split "testall")
  // test | testall ("" = the official run's: testall with the 5-fold 1K mean and the full 5K for --preset coco,
  // as L2RM's main_L2RM.py, RCL's evaluate_model.py and RCSL's train.py end; test otherwise).
  std::string test_split;

  // ---- noise ------------------------------------------------------------------------------------------------
  double noise_ratio = 0;      // mismatched pairs (image-level by default) or label noise (uotrcl)
  std::string noise_file;      // a published noise index / label file (overrides generation)
  // image | caption (pairs); symmetric | mrl (labels). "" = the method's protocol: image (RCL/DECL, the L2RM and
  // RCL noise files), caption for rcsl-nc (the RCSL paper follows NCR), symmetric for uotrcl.
  std::string noise_mode;
  int64_t noise_seed = -1;     // -1: the run seed

  // ---- optimisation -----------------------------------------------------------------------------------------
  int64_t batch_size = -1;
  int64_t num_epochs = -1;     // main epochs (warm-up epochs come on top for l2rm, inside for uotrcl: §4.3)
  int64_t warmup_epoch = -1;
  double learning_rate = std::numeric_limits<double>::quiet_NaN();
  int64_t lr_update = -1;      // ×0.1 every lr_update epochs
  double grad_clip = std::numeric_limits<double>::quiet_NaN();  // global norm clip (0 = off): 2 (SGRAF, RCSL), 0 (uotrcl)

  // ---- SGR / SAF backbone (triplet, infonce, rcl, l2rm) -----------------------------------------------------
  std::string module_name = "SGR";  // SGR | SAF
  int64_t embed_size = 1024;
  int64_t word_dim = 300;
  int64_t sim_dim = 256;
  int64_t sgr_step = 3;
  double dropout = 0.4;

  // ---- losses -----------------------------------------------------------------------------------------------
  double margin = 0.2;              // triplet margin (and GCE q for rcl --loss gce, as the RCL code)
  std::string triplet_negatives = "hardest";  // hardest (VSE++ max violation) | mean (sum over negatives)
  double tau = std::numeric_limits<double>::quiet_NaN();  // softmax temperature: 0.05 (rcl, l2rm), 0.03 (rcsl)
  std::string loss = "log";         // rcl φ: log | tan | abs | exp | gce
  double neg_ratio = -1;            // rcl: share of negatives used, (0,1); otherwise all B−1

  // ---- L2RM (docs/methods/l2rm.md) --------------------------------------------------------------------------
  double reg = std::numeric_limits<double>::quiet_NaN();  // Sinkhorn ε (λ): 0.01 f30k, 0.07 coco/cc152k
  double rho = 0.1;                 // partial transport mass
  double cost_lr = 2e-6;            // cost-net Adam lr
  int64_t ot_max_iter = 1000;
  double ot_tol = 1e-3;             // ‖Δu‖₂ stop, as sinkhorn_log_domain
  std::string split_loss = "mean";  // mean (code) | hardest (paper Eq. 4)
  std::string rce_label = "code";   // code (I + 1e-7) | paper (clip to [ε, 1−ε])
  std::string mask_positives = "auto";  // auto (on iff noise is injected, resolved to on | off) | on | off
  std::string rematch_loss = "sym_kl";  // sym_kl | kl | soft_infonce | js
  std::string dummy_costs = "shifted";  // shifted (ξ → 0, same plan, float32-safe) | l2rm (ξ = 100·max C)
  int64_t max_reserved = -1;        // reconstructed positives per cost update: U{1..max}, -1: ⌊0.1·batch⌋
  // Table 3 ablations (train/methods/ablations.h): "" = the method's own, resolved for l2rm.
  std::string rematch_ot;           // partial (masked partial OT, mass ρ) | full (balanced OT, mass 1)
  std::string cost_function;        // learned (f_c, updated each step) | cosine (C = 1 − S, no f_c update)

  // ---- RCSL (docs/methods/rcsl.md) --------------------------------------------------------------------------
  int64_t paired_length = -1;       // images that keep their captions (required for rcsl)
  int64_t mine_epoch = -1;          // first mining epoch (25)
  std::vector<int64_t> lr_milestones;   // ×0.1 at these epochs (15, 30, 45)
  double weight_decay = 0.01;       // AdamW
  std::string bank_refresh = "once";    // once | epoch
  double unpaired_keep = std::numeric_limits<double>::quiet_NaN();  // learning stage: 0.2 coco, 1 f30k
  std::string word_vectors;         // GloVe text file for the embedding init ("" = uniform, said in the log)
  bool no_augment = false;
  // Table 6 ablations (train/methods/ablations.h): drop one term of L = L_trl† + L_reg + L_rcm^t + L_rcm^v.
  bool no_reg = false;              // #2 w/o L_reg
  bool no_trl = false;              // #3 "w/o L_sdl†": w/o L_trl† (Eq. 5)
  bool no_rcm_t = false;            // #4 w/o L_rcm^t = L_m(B_t), the pairs (I_i, T'_i) with mined texts (Eq. 7–8)
  bool no_rcm_v = false;            // #5 w/o L_rcm^v = L_m(B_v), the pairs (I'_i, T_i) with mined images
  bool no_rcm = false;              // #6 w/o L_rcm, Table 4's "RCSL w/o RCM": no mining loss, no memory bank

  // ---- UOT-RCL (docs/methods/uotrcl.md) ---------------------------------------------------------------------
  int64_t hidden_dim = 4096;
  int64_t output_dim = 512;
  int64_t confident_per_class = 5;
  int64_t knn = -1;                 // 𝒦: 10 wiki, 200 nus, 150 xmedianet (≈5 % of the training set)
  double gamma = 0.99;              // target moving average
  double lambda_bhg = 0.4;
  double tau1 = 1, tau2 = 1, tau3 = 1;
  double s_start = 0.2, s_end = 0.8;    // transported mass schedule
  double lc_eps = std::numeric_limits<double>::quiet_NaN();   // label-correction OT ε (see docs/uotrcl-choices.md)
  int64_t lc_iters = 1000;
  double rel_eps = std::numeric_limits<double>::quiet_NaN();  // relation OT ε
  int64_t rel_iters = 100;
  std::string lc_eps_scale = "fixed";   // fixed: lc_eps in cost units | mean: lc_eps × mean(C_S)
  double lc_corner = 0;                 // price of the dummy corner (> 0 removes Eq. 13's slack)
  std::string rel_cost_norm = "mean";   // mean: relation OT on C^R / mean(C^R) | none
  std::string target_update = "epoch";  // Eq. 9 moving average once per epoch | per batch
  // Ablations (train/methods/ablations.h).
  bool no_plc = false;                  // w/o L_PLC (Eq. 15)
  bool no_bhg = false;                  // w/o L_BHG (Eq. 18)
  std::string confident_set;            // "" → jsd (Eq. 5) | random: as many pairs drawn uniformly

  // ---- run --------------------------------------------------------------------------------------------------
  std::string run_dir;              // "" = runs/<method>-<YYYYmmdd-HHMMSS>
  std::string resume;               // a run folder to continue
  bool overwrite = false;           // reuse a run folder that holds a finished or abandoned run
  std::string progress = "auto";    // auto | bar | plain | none
  int64_t log_step = 10;            // metrics.jsonl step records (and plain progress lines) every log_step steps
  bool plots = true;
  bool detect_anomaly = false;      // anomaly mode for every step (slow); a NaN loss retries its step with it anyway
  int64_t max_steps = -1;           // stop each epoch after this many steps (smoke runs and tests)
  int64_t eval_batch = 100;         // evaluation block size (images × captions)
};

// Fills method- and preset-dependent defaults (the schedules of docs/methods/, sources in docs/presets.md) and
// checks the combination: an unknown method or preset, rcsl without paired_length, a value out of range — an Error
// naming the flag.
void resolve_defaults(TrainConfig& config);

// The config as pretty JSON (config.json) and back (resume reads it).
std::string to_json(const TrainConfig& config);
TrainConfig train_config_from_json(const std::string& text);

// The config.json text of a run being resumed, read from `path`: parsed, then checked as resolve_defaults
// checks the flags of a new run (the file may have been edited or damaged since the run wrote it). Every error
// names the file.
TrainConfig resumed_train_config(const std::string& text, const std::string& path);

}  // namespace rematch::train
