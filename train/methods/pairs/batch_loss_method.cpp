#include "train/methods/pairs/batch_loss_method.h"

#include "nn/nn.h"
#include "train/losses/retrieval_losses.h"

namespace rematch::train {

BatchLossMethod::BatchLossMethod(const CommonOptions& common, const PairsOptions& options, BatchLoss loss,
                                 PairsData data, std::ostream& log)
    : options_(options),
      loss_(loss),
      gens_(common.seed),
      kit_(common, std::move(data), options.dtype),
      net_(kit_.new_net(kit_.model_config(options), gens_.model, NetOptimizer{common.learning_rate, {}})) {
  log << kit_.describe(net_) << "\n";
}

EpochInfo BatchLossMethod::begin_epoch(int64_t epoch) {
  const CommonOptions& c = kit_.common();
  epoch_ = epoch;
  net_.set_lr(step_decay_lr(c.learning_rate, epoch, c.warmup_epoch, c.lr_update));
  plan_ = kit_.all_pairs_plan(epoch);
  epoch_info_ = EpochInfo{"train", static_cast<int64_t>(plan_.size()), {}};
  return epoch_info_;
}

Tensor BatchLossMethod::batch_loss(const Tensor& S) {
  switch (loss_) {
    case BatchLoss::Triplet:
      return nn::hardest_negative_triplet(S, options_.margin, options_.triplet_negatives == TripletNegatives::Hardest);
    case BatchLoss::Infonce:
      return losses::infonce_loss(S, options_.tau);
    case BatchLoss::Rcl: {
      const Tensor negatives = losses::random_negative_mask(S.size(0), options_.neg_ratio, gens_.sample, S.device());
      return losses::complementary_contrastive_loss(S, options_.tau, options_.loss, options_.margin, negatives);
    }
  }
  REMATCH_FAIL(name(), ": unknown loss");
}

StepResult BatchLossMethod::train_step(int64_t epoch, int64_t step) {
  check_step_in_epoch(name(), epoch, step, epoch_, plan_.size());
  net_.model().train();
  const data::Batch b = kit_.batch(plan_[static_cast<size_t>(step)]);
  StepResult r;
  const Tensor loss = batch_loss(kit_.training_scores(net_.model(), b));
  r.loss = loss.item<double>();
  r.parts[name()] = r.loss;
  check_finite_loss(name(), epoch, step, name(), r.loss);
  kit_.update(net_, loss, epoch, step);
  r.pairs = b.size();
  return r;
}

void BatchLossMethod::save_state(TrainingState& s) const {
  save_pairs_state(s, net_, gens_, epoch_);
}

void BatchLossMethod::load_state(const TrainingState& s) {
  epoch_ = load_pairs_state(s, net_, gens_);
  if (epoch_ >= 0) {
    plan_ = kit_.all_pairs_plan(epoch_);
    epoch_info_ = EpochInfo{"train", static_cast<int64_t>(plan_.size()), {}};
  }
}

namespace {

// triplet, infonce or rcl on the precomp data (RCL appends its <mask> word to the vocabulary).
MethodSpec batch_loss_spec(const std::string& name, const std::string& summary, std::vector<Default> defaults,
                           BatchLoss loss, bool mask_word) {
  MethodSpec s;
  s.name = name;
  s.summary = summary;
  s.doc = "docs/methods/" + name + ".md";
  s.layout = DataLayout::Precomp;
  s.presets = {"f30k", "coco", "cc152k"};
  s.tables = {&pairs_flags()};
  s.defaults = std::move(defaults);
  s.data_parallel = true;
  s.make = make_pairs_method<BatchLossMethod, PairsOptions>(mask_word, loss);
  return s;
}

}  // namespace

const MethodSpec& triplet_method_spec() {
  static const MethodSpec spec =
      batch_loss_spec("triplet", "the VSE++ hardest-negative triplet on SGR/SAF (SGRAF's own training)",
                      triplet_defaults(), BatchLoss::Triplet, false);
  return spec;
}

const MethodSpec& infonce_method_spec() {
  static const MethodSpec spec = batch_loss_spec("infonce", "InfoNCE on SGR/SAF (RCL's --loss infoNCE baseline)",
                                                 rcl_defaults(), BatchLoss::Infonce, false);
  return spec;
}

const MethodSpec& rcl_method_spec() {
  static const MethodSpec spec =
      batch_loss_spec("rcl", "RCL's complementary contrastive learning on SGR/SAF (TPAMI'23)", rcl_defaults(),
                      BatchLoss::Rcl, true);
  return spec;
}

}  // namespace rematch::train
