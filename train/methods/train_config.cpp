// Method and preset defaults of `rematch train` (the tables of docs/methods/l2rm.md §1.1, rcl.md §2.2, rcsl.md §3.5,
// uotrcl.md §4.3) and the JSON form of a config.
#include "train/methods/train_config.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <type_traits>

#include "tensor/device.h"
#include "tensor/error.h"
#include "train/methods/ablations.h"

namespace rematch::train {
namespace {

using Json = nlohmann::json;

// Every field, once: the JSON form lists them in this order.
#define REMATCH_TRAIN_CONFIG_FIELDS(X)                                                                         \
  X(method) X(preset) X(device) X(seed) X(data_path) X(data_name) X(vocab_path) X(val_subset) X(valid_len)     \
  X(coco_folds) X(test_split) X(noise_ratio) X(noise_file) X(noise_mode) X(noise_seed) X(batch_size)           \
  X(num_epochs) X(warmup_epoch) X(learning_rate) X(lr_update) X(grad_clip) X(module_name) X(embed_size)        \
  X(word_dim) X(sim_dim) X(sgr_step) X(dropout) X(margin) X(triplet_negatives) X(tau) X(loss) X(neg_ratio)     \
  X(reg) X(rho) X(cost_lr) X(ot_max_iter) X(ot_tol) X(split_loss) X(rce_label) X(mask_positives)               \
  X(rematch_loss) X(dummy_costs) X(max_reserved) X(rematch_ot) X(cost_function) X(paired_length) X(mine_epoch)  \
  X(lr_milestones) X(weight_decay) X(bank_refresh) X(unpaired_keep) X(word_vectors) X(no_augment) X(no_reg)    \
  X(no_trl) X(no_rcm_t) X(no_rcm_v) X(no_rcm) X(hidden_dim) X(output_dim)                                       \
  X(confident_per_class) X(knn) X(gamma) X(lambda_bhg) X(tau1) X(tau2) X(tau3) X(s_start) X(s_end) X(lc_eps)   \
  X(lc_iters) X(rel_eps) X(rel_iters) X(lc_eps_scale) X(lc_corner) X(rel_cost_norm) X(target_update) X(no_plc) X(no_bhg) X(confident_set) X(run_dir) X(resume) X(overwrite) X(progress) X(log_step) X(plots)       \
  X(detect_anomaly) X(max_steps) X(eval_batch)

const std::set<std::string> kPairsMethods = {"triplet", "infonce", "rcl", "l2rm"};
const std::set<std::string> kMethods = {"triplet", "infonce", "rcl", "l2rm", "rcsl", "rcsl-nc", "uotrcl"};

// Whether a JSON value is exactly of a field's type. nlohmann converts any number to any arithmetic type with a
// plain cast, so it is checked first: a fraction in an integer field would be truncated, and a number out of the
// field's range (1e300, or -1 for the unsigned seed) converted with undefined behaviour.
template <typename T> bool holds(const Json& v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v.is_boolean();
  } else if constexpr (std::is_same_v<T, uint64_t>) {
    return v.is_number_unsigned();
  } else if constexpr (std::is_same_v<T, int64_t>) {
    return v.is_number_integer() &&
           !(v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()));
  } else if constexpr (std::is_same_v<T, double>) {
    return v.is_number();
  } else if constexpr (std::is_same_v<T, std::string>) {
    return v.is_string();
  } else {
    static_assert(std::is_same_v<T, std::vector<int64_t>>, "a TrainConfig field of a type holds() does not know");
    return v.is_array() && std::all_of(v.begin(), v.end(), [](const Json& x) { return holds<int64_t>(x); });
  }
}

template <typename T> const char* type_name() {
  if constexpr (std::is_same_v<T, bool>) return "true or false";
  if constexpr (std::is_same_v<T, uint64_t>) return "a non-negative integer";
  if constexpr (std::is_same_v<T, int64_t>) return "an integer";
  if constexpr (std::is_same_v<T, double>) return "a number";
  if constexpr (std::is_same_v<T, std::string>) return "a string";
  return "a list of integers";
}

template <typename T> bool holds_for(const T&, const Json& v) { return holds<T>(v); }
bool holds_for(const DeviceOption&, const Json& v) { return v.is_string(); }
template <typename T> const char* type_name_for(const T&) { return type_name<T>(); }
const char* type_name_for(const DeviceOption&) { return "a string"; }
template <typename T> void read_into(T& field, const Json& v) { v.get_to(field); }
void read_into(DeviceOption& d, const Json& v) { d = DeviceOption(v.get<std::string>()); }

template <typename T> const T& json_value(const T& v) { return v; }
const std::string& json_value(const DeviceOption& d) { return d.spec(); }

std::string join(const std::set<std::string>& s) {
  std::string out;
  for (const std::string& x : s) out += (out.empty() ? "" : ", ") + x;
  return out;
}

void check_choice(const char* flag, const std::string& value, const std::set<std::string>& allowed) {
  if (!allowed.count(value))
    REMATCH_FAIL("--", flag, " must be one of ", join(allowed), " (got '", value, "')");
}

template <typename T> void set_if_unset(T& field, T value) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(field)) field = value;
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (field.empty()) field = value;
  } else {
    if (field < 0) field = value;
  }
}

// docs/methods/l2rm.md §1.1 (L2RM scripts), rcl.md §2.2 (RCL scripts), SGRAF's scripts for the baselines.
void pairs_defaults(TrainConfig& c) {
  const bool coco = c.preset == "coco", cc = c.preset == "cc152k";
  set_if_unset(c.batch_size, int64_t{128});
  set_if_unset(c.tau, 0.05);
  set_if_unset(c.noise_mode, std::string("image"));  // RCL/DECL image level, as the L2RM and RCL noise files
  if (c.method == "l2rm") {
    set_if_unset(c.warmup_epoch, coco || cc ? int64_t{10} : int64_t{5});
    set_if_unset(c.num_epochs, coco ? int64_t{20} : cc ? int64_t{40} : int64_t{35});
    set_if_unset(c.lr_update, coco ? int64_t{10} : cc ? int64_t{20} : int64_t{15});
    set_if_unset(c.reg, coco || cc ? 0.07 : 0.01);
    set_if_unset(c.learning_rate, 2e-4);
    set_if_unset(c.max_reserved, std::max<int64_t>(1, c.batch_size / 10));
  } else if (c.method == "rcl" || c.method == "infonce") {
    // RCL-SGRAF's train_f30k.sh, train_coco.sh and train_cc152k.sh (infonce is its `--loss infoNCE` baseline);
    // sources per value in docs/presets.md.
    set_if_unset(c.warmup_epoch, int64_t{0});
    set_if_unset(c.num_epochs, coco ? int64_t{20} : cc ? int64_t{40} : int64_t{30});
    set_if_unset(c.lr_update, coco ? int64_t{10} : cc ? int64_t{20} : int64_t{15});
    // The RCL COCO script passes no --learning_rate, so opts.py's 5e-4 applies (docs/methods/rcl.md §2.2 ⚠).
    set_if_unset(c.learning_rate, coco ? 5e-4 : 2e-4);
  } else {
    // triplet: SGRAF's own training (README commands, opts.py lr 2e-4); its F30K SAF model trains 30 epochs with
    // ×0.1 at 20, SGR 40 at 30. CC152K has no SGRAF script: opts.py's 40 / 30.
    const bool f30k_saf = !coco && !cc && c.module_name == "SAF";
    set_if_unset(c.warmup_epoch, int64_t{0});
    set_if_unset(c.num_epochs, coco ? int64_t{20} : f30k_saf ? int64_t{30} : int64_t{40});
    set_if_unset(c.lr_update, coco ? int64_t{10} : f30k_saf ? int64_t{20} : int64_t{30});
    set_if_unset(c.learning_rate, 2e-4);
  }
}

// docs/methods/rcsl.md §3.1, §3.5 (RCSL train.sh and opts).
void rcsl_defaults(TrainConfig& c) {
  set_if_unset(c.batch_size, int64_t{256});
  set_if_unset(c.num_epochs, int64_t{40});
  set_if_unset(c.mine_epoch, int64_t{25});
  set_if_unset(c.learning_rate, 5e-4);
  set_if_unset(c.tau, 0.03);
  // The code tests `'coco' in data_path`; a COCO preset or data set name does here.
  const bool coco = c.preset == "coco" || c.data_name.find("coco") != std::string::npos;
  set_if_unset(c.unpaired_keep, coco ? 0.2 : 1.0);
  set_if_unset(c.warmup_epoch, c.method == "rcsl-nc" ? int64_t{5} : int64_t{0});
  set_if_unset(c.lr_update, int64_t{0});
  if (c.lr_milestones.empty()) c.lr_milestones = {15, 30, 45};
  // RCSL-NC's noise follows NCR (paper, "Datasets": "following (Huang et al. 2021), we inject unmatched
  // correspondences ... by proportionally shuffling the captions"): caption level (data/noise.h).
  set_if_unset(c.noise_mode, std::string(c.method == "rcsl-nc" ? "caption" : "image"));
  if (c.method == "rcsl") {
    // RCSL draws its semi-paired split with NumPy seed 123 whatever the run's seed (§3.1).
    set_if_unset(c.noise_seed, int64_t{123});
    if (c.paired_length < 0)
      REMATCH_FAIL("--method rcsl needs --paired_length (the number of images that keep their captions, e.g. "
                   "500, 1000, 2000 or 5000 as RCSL's train.sh)");
  }
}

// docs/methods/uotrcl.md §4.1, §4.3 (UOT-RCL paper §V-B; MRL's valid_len).
void uotrcl_defaults(TrainConfig& c) {
  const std::string& p = c.preset;
  set_if_unset(c.batch_size, p == "nus" ? int64_t{500} : int64_t{100});
  set_if_unset(c.num_epochs, int64_t{100});
  set_if_unset(c.warmup_epoch, int64_t{2});
  set_if_unset(c.learning_rate, 1e-4);
  set_if_unset(c.lr_update, int64_t{0});
  // 𝒦 ≈ 5 % of the training set; -1 without a preset: the method takes 5 % of N.
  if (p == "wiki") set_if_unset(c.knn, int64_t{10});
  if (p == "nus") set_if_unset(c.knn, int64_t{200});
  if (p == "xmedianet") set_if_unset(c.knn, int64_t{150});
  if (p == "wiki") set_if_unset(c.valid_len, int64_t{231});
  if (p == "nus") set_if_unset(c.valid_len, int64_t{5000});
  if (p == "xmedianet") set_if_unset(c.valid_len, int64_t{4000});
  set_if_unset(c.valid_len, int64_t{0});
  // Not published; chosen by the study in docs/uotrcl-choices.md.
  set_if_unset(c.lc_eps, 0.5);
  set_if_unset(c.rel_eps, 0.02);
  set_if_unset(c.grad_clip, 0.0);  // neither UOT-RCL nor MRL clips
  set_if_unset(c.noise_mode, std::string("symmetric"));
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

void resolve_defaults(TrainConfig& c) {
  if (c.method.empty()) REMATCH_FAIL("--method is required (one of ", join(kMethods), ")");
  check_choice("method", c.method, kMethods);
  if (!c.preset.empty()) {
    const bool labelled = c.method == "uotrcl";
    if (labelled)
      check_choice("preset", c.preset, {"wiki", "nus", "xmedianet"});
    else
      check_choice("preset", c.preset, {"f30k", "coco", "cc152k"});
  }
  if (c.data_path.empty()) REMATCH_FAIL("--data_path is required (the folder holding the data set)");
  if (c.data_name.empty() && !c.preset.empty() && c.method != "uotrcl")
    c.data_name = c.preset + "_precomp";
  if (c.data_name.empty() && c.method != "uotrcl")
    REMATCH_FAIL("--data_name is required (e.g. f30k_precomp), or give --preset");
  if (kPairsMethods.count(c.method))
    pairs_defaults(c);
  else if (c.method == "uotrcl")
    uotrcl_defaults(c);
  else
    rcsl_defaults(c);
  // L2RM's positives mask, one rule: `auto` masks the given pairs iff this run injects mismatches, i.e.
  // --noise_ratio > 0 or a --noise_file (which overrides generation, data/noise.h). The code's test is
  // `noise_ratio != 0` (docs/methods/l2rm.md §1.5 step 4), and there noise_ratio != 0 is exactly when a noise index is
  // loaded or drawn (data.py: `if noise_ratio:`); rematch takes a file whatever the ratio, so the code's
  // meaning is "noise injected", not the number. CC152K carries real noise and injects none (the code even
  // forces noise_ratio = 0 there), so its preset runs with the mask off. config.json records on or off.
  if (c.method == "l2rm" && c.mask_positives == "auto")
    c.mask_positives = c.noise_ratio > 0 || !c.noise_file.empty() ? "on" : "off";
  // The official protocols (issue 15 points 1-2): model selection on each code's dev subset (docs/backbones.md
  // §6.3: L2RM's data.py keeps 1000·im_div dev captions, RCL/SGRAF/RCSL 5,000), and COCO's final test on testall,
  // reported as the mean of five 1K folds and the full 5K (L2RM main_L2RM.py, RCL evaluate_model.py and RCSL
  // train.py all end so for COCO).
  if (c.method != "uotrcl") {
    set_if_unset(c.val_subset, std::string(c.method == "l2rm" ? "ncr" : "sgraf"));
    if (c.preset == "coco" && c.test_split.empty()) {
      c.test_split = "testall";
      c.coco_folds = true;
    }
  }
  set_if_unset(c.val_subset, std::string("sgraf"));
  set_if_unset(c.test_split, std::string("test"));
  if (c.noise_seed < 0) c.noise_seed = static_cast<int64_t>(c.seed);
  set_if_unset(c.grad_clip, 2.0);  // SGRAF-lineage and RCSL code clip the global norm at 2

  check_choice("val_subset", c.val_subset, {"sgraf", "ncr"});
  check_choice("test_split", c.test_split, {"test", "testall"});
  if (c.method == "uotrcl")
    check_choice("noise_mode", c.noise_mode, {"symmetric", "mrl"});
  else
    check_choice("noise_mode", c.noise_mode, {"image", "caption"});
  check_choice("module_name", c.module_name, {"SGR", "SAF"});
  check_choice("triplet_negatives", c.triplet_negatives, {"hardest", "mean"});
  check_choice("loss", c.loss, {"log", "tan", "abs", "exp", "gce"});
  check_choice("split_loss", c.split_loss, {"mean", "hardest"});
  check_choice("rce_label", c.rce_label, {"code", "paper"});
  check_choice("mask_positives", c.mask_positives, {"auto", "on", "off"});
  check_choice("rematch_loss", c.rematch_loss, {"sym_kl", "kl", "soft_infonce", "js"});
  check_choice("dummy_costs", c.dummy_costs, {"shifted", "l2rm"});
  check_choice("bank_refresh", c.bank_refresh, {"once", "epoch"});
  check_choice("progress", c.progress, {"auto", "bar", "plain", "none"});

  REMATCH_CHECK(c.noise_ratio >= 0 && c.noise_ratio < 1, "--noise_ratio must be in [0, 1) (got ", c.noise_ratio, ")");
  REMATCH_CHECK(c.batch_size >= 2, "--batch_size must be at least 2 (got ", c.batch_size, ")");
  REMATCH_CHECK(c.num_epochs >= 1, "--num_epochs must be at least 1 (got ", c.num_epochs, ")");
  REMATCH_CHECK(c.warmup_epoch >= 0, "--warmup_epoch must be >= 0 (got ", c.warmup_epoch, ")");
  REMATCH_CHECK(c.learning_rate > 0, "--learning_rate must be > 0 (got ", c.learning_rate, ")");
  REMATCH_CHECK(c.grad_clip >= 0, "--grad_clip must be >= 0 (got ", c.grad_clip, ")");
  REMATCH_CHECK(std::isnan(c.tau) || c.tau > 0, "--tau must be > 0 (got ", c.tau, ")");
  REMATCH_CHECK(c.log_step >= 1, "--log_step must be >= 1 (got ", c.log_step, ")");
  REMATCH_CHECK(c.eval_batch >= 1, "--eval_batch must be >= 1 (got ", c.eval_batch, ")");
  if (c.method == "l2rm") {
    REMATCH_CHECK(c.reg > 0, "--reg (the Sinkhorn ε) must be > 0 (got ", c.reg, ")");
    REMATCH_CHECK(c.rho > 0 && c.rho < 1, "--rho (the transported mass) must be in (0, 1) (got ", c.rho, ")");
    REMATCH_CHECK(c.max_reserved >= 1 && c.max_reserved <= c.batch_size, "--max_reserved must be in [1, batch_size] (got ",
                  c.max_reserved, ")");
  }
  if (c.method == "rcsl" || c.method == "rcsl-nc")
    REMATCH_CHECK(c.mine_epoch >= 0 && c.mine_epoch <= c.num_epochs, "--mine_epoch must be in [0, num_epochs] (got ",
                  c.mine_epoch, ")");
  if (c.method == "uotrcl")
    REMATCH_CHECK(c.warmup_epoch < c.num_epochs, "--warmup_epoch (", c.warmup_epoch,
                  ") must be smaller than --num_epochs (", c.num_epochs, "): UOT-RCL counts warm-up inside");
  resolve_ablations(c);
  if (c.method == "l2rm") {
    check_choice("rematch_ot", c.rematch_ot, {"partial", "full"});
    check_choice("cost_function", c.cost_function, {"learned", "cosine"});
  }
  if (c.method == "uotrcl") check_choice("confident_set", c.confident_set, {"jsd", "random"});
}

std::string to_json(const TrainConfig& c) {
  Json j = Json::object();
#define REMATCH_TO_JSON(f) j[#f] = json_value(c.f);
  REMATCH_TRAIN_CONFIG_FIELDS(REMATCH_TO_JSON)
#undef REMATCH_TO_JSON
  // JSON has no NaN: an unset (unused) number is written as null.
  return j.dump(2);
}

TrainConfig train_config_from_json(const std::string& text) {
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::exception& e) {
    REMATCH_FAIL("train config: not valid JSON: ", e.what());
  }
  REMATCH_CHECK(j.is_object(), "train config: expected a JSON object");
  TrainConfig c;
  std::set<std::string> known;
#define REMATCH_FROM_JSON(f)                                                                              \
  known.insert(#f);                                                                                       \
  if (j.contains(#f) && !j[#f].is_null()) {                                                               \
    REMATCH_CHECK(holds_for(c.f, j[#f]), "train config: field '", #f, "' has the wrong type: expected ",   \
                  type_name_for(c.f), ", got ", j[#f].dump());                                            \
    read_into(c.f, j[#f]);                                                                                \
  }
  REMATCH_TRAIN_CONFIG_FIELDS(REMATCH_FROM_JSON)
#undef REMATCH_FROM_JSON
  for (const auto& [key, value] : j.items())
    REMATCH_CHECK(known.count(key), "train config: unknown field '", key, "'");
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
