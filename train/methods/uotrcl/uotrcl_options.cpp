#include "train/methods/uotrcl/uotrcl_options.h"

#include <cmath>
#include <utility>

namespace rematch::train {
namespace {

template <typename T> void require(bool ok, const char* flag, const T& value, const char* what) {
  REMATCH_CHECK(ok, "uotrcl: --", flag, " = ", value, " ", what);
}

}  // namespace

TargetUpdate parse_target_update(const std::string& name) {
  if (name == "epoch") return TargetUpdate::Epoch;
  if (name == "batch") return TargetUpdate::Batch;
  REMATCH_FAIL("uotrcl: target update must be 'epoch' or 'batch', got '", name, "'");
}

const char* target_update_name(TargetUpdate update) { return update == TargetUpdate::Epoch ? "epoch" : "batch"; }

UotrclOptions uotrcl_options(const TrainConfig& c) {
  UotrclOptions o;
  require(!c.data_path.empty(), "data_path", "\"\"", "is required (an HDF5 file or a folder of .npy files)");
  o.data_path = c.data_path;
  o.valid_len = c.valid_len;
  require(c.noise_ratio >= 0 && c.noise_ratio <= 1, "noise_ratio", c.noise_ratio, "must lie in [0, 1]");
  o.noise_ratio = c.noise_ratio;
  o.noise_file = c.noise_file;
  o.noise_mode = data::parse_label_noise(c.noise_mode);
  o.seed = c.seed;
  o.noise_seed = c.noise_seed < 0 ? c.seed : static_cast<uint64_t>(c.noise_seed);
  o.device = c.device.device();
  require(c.batch_size > 0, "batch_size", c.batch_size, "must be positive");
  o.batch_size = c.batch_size;
  require(c.num_epochs > 0, "num_epochs", c.num_epochs, "must be positive (warm-up epochs included)");
  o.num_epochs = c.num_epochs;
  require(c.warmup_epoch >= 0 && c.warmup_epoch <= c.num_epochs, "warmup_epoch", c.warmup_epoch,
          "must lie in 0..num_epochs (the warm-up is inside num_epochs for uotrcl)");
  o.warmup_epochs = c.warmup_epoch;
  require(std::isfinite(c.learning_rate) && c.learning_rate > 0, "learning_rate", c.learning_rate,
          "must be finite and positive");
  o.learning_rate = c.learning_rate;
  require(c.lr_update >= 0, "lr_update", c.lr_update, "must be >= 0 (0 = a constant learning rate)");
  o.lr_update = c.lr_update;
  require(c.grad_clip >= 0, "grad_clip", c.grad_clip, "must be >= 0 (0 = off)");
  o.grad_clip = c.grad_clip;
  require(c.eval_batch > 0, "eval_batch", c.eval_batch, "must be positive");
  o.eval_batch = c.eval_batch;
  require(c.hidden_dim > 0, "hidden_dim", c.hidden_dim, "must be positive");
  require(c.output_dim > 0, "output_dim", c.output_dim, "must be positive");
  o.hidden_dim = c.hidden_dim;
  o.output_dim = c.output_dim;
  require(c.confident_per_class > 0, "confident_per_class", c.confident_per_class, "must be positive");
  o.confident_per_class = c.confident_per_class;
  require(c.knn > 0 || c.knn == -1, "knn", c.knn, "must be positive, or -1 for 5 % of the training set");
  o.knn = c.knn;
  require(c.gamma >= 0 && c.gamma <= 1, "gamma", c.gamma, "must lie in [0, 1]");
  o.gamma = c.gamma;
  require(std::isfinite(c.lambda_bhg) && c.lambda_bhg >= 0, "lambda_bhg", c.lambda_bhg, "must be >= 0");
  o.lambda_bhg = c.lambda_bhg;
  for (const auto& [flag, v] : {std::pair{"tau1", c.tau1}, std::pair{"tau2", c.tau2}, std::pair{"tau3", c.tau3}})
    require(std::isfinite(v) && v > 0, flag, v, "must be finite and positive");
  o.tau1 = c.tau1;
  o.tau2 = c.tau2;
  o.tau3 = c.tau3;
  require(c.s_start > 0 && c.s_start <= 1, "s_start", c.s_start, "must lie in (0, 1]");
  require(c.s_end > 0 && c.s_end <= 1, "s_end", c.s_end, "must lie in (0, 1]");
  o.s_start = c.s_start;
  o.s_end = c.s_end;
  require(std::isfinite(c.lc_eps) && c.lc_eps > 0, "lc_eps", c.lc_eps, "must be finite and positive");
  require(c.lc_iters > 0, "lc_iters", c.lc_iters, "must be positive");
  o.label_correction.epsilon = c.lc_eps;
  o.label_correction.max_iter = c.lc_iters;
  require(std::isfinite(c.rel_eps) && c.rel_eps > 0, "rel_eps", c.rel_eps, "must be finite and positive");
  require(c.rel_iters > 0, "rel_iters", c.rel_iters, "must be positive");
  o.relation.epsilon = c.rel_eps;
  o.relation.max_iter = c.rel_iters;
  require(c.lc_eps_scale == "fixed" || c.lc_eps_scale == "mean", "lc_eps_scale", c.lc_eps_scale,
          "must be fixed or mean");
  o.label_correction.relative = c.lc_eps_scale == "mean";
  require(std::isfinite(c.lc_corner) && c.lc_corner >= 0, "lc_corner", c.lc_corner, "must be >= 0");
  o.label_correction.corner = c.lc_corner;
  require(c.rel_cost_norm == "mean" || c.rel_cost_norm == "none", "rel_cost_norm", c.rel_cost_norm,
          "must be mean or none");
  o.relation.normalize_cost = c.rel_cost_norm == "mean";
  o.target_update = parse_target_update(c.target_update);
  require(c.confident_set.empty() || c.confident_set == "jsd" || c.confident_set == "random", "confident_set",
          c.confident_set, "must be jsd or random");
  o.random_confident = c.confident_set == "random";
  require(!(c.no_plc && c.no_bhg), "no_plc", "true", "with --no_bhg leaves no loss after the warm-up");
  o.plc = !c.no_plc;
  o.bhg = !c.no_bhg;
  return o;
}

}  // namespace rematch::train
