#include "train/methods/rcsl/rcsl_options.h"

#include <cmath>
#include <sstream>

#include "tensor/error.h"
#include "train/losses/retrieval_losses.h"

namespace rematch::train {
namespace {

void require(bool ok, const std::string& message) { REMATCH_CHECK(ok, message); }

std::string flag_value(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

}  // namespace

RcslOptions rcsl_options(const TrainConfig& c) {
  require(c.method == "rcsl" || c.method == "rcsl-nc",
          "rcsl_options: --method must be rcsl or rcsl-nc, got '" + c.method + "'");
  RcslOptions o;
  o.noisy_correspondence = c.method == "rcsl-nc";
  if (!o.noisy_correspondence) {
    require(c.paired_length >= 0,
            "--method rcsl needs --paired_length (the number of training images that keep their captions, e.g. "
            "500, 1000, 2000 or 5000 as RCSL's train.sh)");
    require(c.noise_ratio == 0 && c.noise_file.empty(),
            "--method rcsl takes its unpaired data from --paired_length; --noise_ratio/--noise_file are for "
            "rcsl-nc");
    require(c.warmup_epoch <= 0,
            "--warmup_epoch is for rcsl-nc (rcsl has no warm-up), got " + std::to_string(c.warmup_epoch));
  } else {
    require(c.warmup_epoch >= 0, "--warmup_epoch is unset (resolve_defaults fills it for rcsl-nc)");
  }
  o.paired_length = c.paired_length;
  o.split_seed = c.noise_seed >= 0 ? static_cast<uint64_t>(c.noise_seed) : 123;
  o.warmup_epochs = o.noisy_correspondence ? c.warmup_epoch : 0;
  o.num_epochs = c.num_epochs;
  o.mine_epoch = c.mine_epoch;
  o.batch_size = c.batch_size;
  o.learning_rate = c.learning_rate;
  o.lr_milestones = c.lr_milestones;
  o.weight_decay = c.weight_decay;
  o.grad_clip = c.grad_clip;
  o.margin = c.margin;
  o.tau = c.tau;
  o.unpaired_keep = c.unpaired_keep;
  o.refresh_bank_every_epoch = c.bank_refresh == "epoch";
  o.augment = !c.no_augment;
  o.trl = !c.no_trl;
  o.reg = !c.no_reg;
  o.rcm_t = !c.no_rcm && !c.no_rcm_t;
  o.rcm_v = !c.no_rcm && !c.no_rcm_v;
  o.word_vectors = c.word_vectors;
  o.split_loss = c.split_loss;
  o.embed_size = c.embed_size;
  o.word_dim = c.word_dim;
  o.eval_block = c.eval_batch;
  o.seed = c.seed;

  require(o.num_epochs >= 1, "--num_epochs must be >= 1 (got " + std::to_string(o.num_epochs) + ")");
  require(o.mine_epoch >= 0 && o.mine_epoch <= o.num_epochs,
          "--mine_epoch must be in [0, num_epochs = " + std::to_string(o.num_epochs) + "] (got " +
              std::to_string(o.mine_epoch) + "; unset means resolve_defaults did not run)");
  require(o.warmup_epochs <= o.mine_epoch, "--warmup_epoch (" + std::to_string(o.warmup_epochs) +
                                               ") must not exceed --mine_epoch (" + std::to_string(o.mine_epoch) +
                                               "): rcsl-nc warms up inside the learning stage");
  require(o.batch_size >= 2, "--batch_size must be >= 2 (got " + std::to_string(o.batch_size) + ")");
  require(std::isfinite(o.learning_rate) && o.learning_rate > 0,
          "--learning_rate must be > 0 (got " + flag_value(o.learning_rate) + ")");
  require(std::isfinite(o.tau) && o.tau > 0, "--tau must be > 0 (got " + flag_value(o.tau) + ")");
  require(o.unpaired_keep >= 0 && o.unpaired_keep <= 1,
          "--unpaired_keep must be in [0, 1] (got " + flag_value(o.unpaired_keep) + ")");
  require(std::isfinite(o.weight_decay) && o.weight_decay >= 0,
          "--weight_decay must be >= 0 (got " + flag_value(o.weight_decay) + ")");
  require(o.grad_clip >= 0, "--grad_clip must be >= 0 (got " + flag_value(o.grad_clip) + ")");
  require(o.margin >= 0, "--margin must be >= 0 (got " + flag_value(o.margin) + ")");
  for (int64_t m : o.lr_milestones)
    require(m >= 0, "--lr_milestones must be epochs >= 0 (got " + std::to_string(m) + ")");
  require(c.bank_refresh == "once" || c.bank_refresh == "epoch",
          "--bank_refresh must be once or epoch (got '" + c.bank_refresh + "')");
  losses::parse_split_loss(o.split_loss);
  require(o.embed_size >= 1 && o.word_dim >= 1, "--embed_size and --word_dim must be >= 1 (got " +
                                                    std::to_string(o.embed_size) + ", " + std::to_string(o.word_dim) +
                                                    ")");
  require(o.eval_block >= 1, "--eval_batch must be >= 1 (got " + std::to_string(o.eval_block) + ")");
  return o;
}

}  // namespace rematch::train
