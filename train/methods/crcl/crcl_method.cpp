#include "train/methods/crcl/crcl_method.h"

#include <cmath>
#include <sstream>

#include "autograd/autograd.h"
#include "train/methods/crcl/crcl_augment.h"

namespace rematch::train {

CrclMethod::CrclMethod(const CommonOptions& common, const CrclOptions& options, PairsData data, std::ostream& log)
    : PairsMethod(common, options, std::move(data), log),
      crcl_(options),
      augment_gen_(common.seed ^ 0x3c3c3c3c3c3c3c3cull) {
  REMATCH_CHECK(common_.method == "crcl", "CrclMethod: method is '", common_.method, "'");
  rule_.mc = !crcl_.no_mc;
  rule_.confident = !crcl_.no_confident;
  rule_.alpha = crcl_.alpha;
  mask_id_ = data_.vocab.id("<mask>");
  round_start_ = {0};
  for (int64_t s : crcl_.schedules) round_start_.push_back(round_start_.back() + common_.warmup_epoch + s);
  labels_.assign(static_cast<size_t>(data_.train->num_captions()), 1.0);  // `model.move_gt = np.ones(data_length)`
  // CRCL.py: torch.optim.AdamW(self.params, lr=opt.learning_rate), PyTorch's default weight decay.
  optimizer_ = std::make_unique<nn::AdamW>(model_->parameters(), common_.learning_rate, nn::AdamBetas{}, 1e-8,
                                           crcl_.weight_decay);
  log_ << "crcl: " << rounds() << " round(s) of " << common_.warmup_epoch << " warm-up + [";
  for (size_t r = 0; r < crcl_.schedules.size(); ++r) log_ << (r ? ", " : "") << crcl_.schedules[r];
  log_ << "] epochs, alpha " << crcl_.alpha << ", tau " << options_.tau << (rule_.mc ? "" : ", no moving average")
       << (rule_.confident ? "" : ", no confident floor") << (crcl_.no_augment ? ", no augmentation" : "") << "\n";
}

int64_t CrclMethod::round_of(int64_t epoch) const {
  REMATCH_CHECK(epoch >= 0 && epoch < round_start_.back(), "crcl: epoch ", epoch, " is outside the run (",
                round_start_.back(), " epochs)");
  int64_t r = 0;
  while (round_start_[static_cast<size_t>(r + 1)] <= epoch) ++r;
  return r;
}

void CrclMethod::new_model() {
  // train.py: `model1 = CRCL(opt)` — new weights (drawn from the model generator) and a new AdamW.
  const models::SgrafConfig mc = model_->config();
  model_ = std::make_unique<models::SgrafModel>(mc, dtype_, &model_gen_);
  model_->to(device_);
  optimizer_ = std::make_unique<nn::AdamW>(model_->parameters(), common_.learning_rate, nn::AdamBetas{}, 1e-8,
                                           crcl_.weight_decay);
}

Scalars CrclMethod::label_stats() const {
  double clean = 0, noisy = 0;
  int64_t n_clean = 0, n_noisy = 0;
  const std::vector<uint8_t>& truth = data_.correspondence.clean;
  for (size_t i = 0; i < labels_.size(); ++i) {
    if (i < truth.size() && !truth[i]) {
      noisy += labels_[i];
      ++n_noisy;
    } else {
      clean += labels_[i];
      ++n_clean;
    }
  }
  Scalars s;
  s["clean_label"] = n_clean ? clean / static_cast<double>(n_clean) : 0.0;
  if (n_noisy) s["noisy_label"] = noisy / static_cast<double>(n_noisy);
  return s;
}

EpochInfo CrclMethod::begin_epoch(int64_t epoch) {
  const int64_t round = round_of(epoch), local = local_epoch(epoch);
  if (local == 0 && round > 0) new_model();
  epoch_ = epoch;
  // train.py: adjust_learning_rate(opt, optimizer, epoch) with the round's epoch, warm-up included.
  const double lr = common_.lr_update > 0
                        ? common_.learning_rate * std::pow(0.1, static_cast<double>(local / common_.lr_update))
                        : common_.learning_rate;
  optimizer_->set_lr(lr);
  plan_ = all_pairs_plan(epoch);
  epoch_info_ = EpochInfo{local < common_.warmup_epoch ? "warmup" : "main", static_cast<int64_t>(plan_.size()),
                          label_stats()};
  epoch_info_.stats["round"] = static_cast<double>(round);
  return epoch_info_;
}

StepResult CrclMethod::train_step(int64_t epoch, int64_t step) {
  REMATCH_CHECK(epoch == epoch_ && step >= 0 && step < static_cast<int64_t>(plan_.size()), name(), ": step ", step,
                " of epoch ", epoch, " is outside the epoch in progress (", epoch_, ", ", plan_.size(), " steps)");
  const int64_t round = round_of(epoch), local = local_epoch(epoch);
  model_->train();
  data::Batch b = all_pairs_->make_batch(plan_[static_cast<size_t>(step)]);
  if (!crcl_.no_augment) b = crcl_augment_batch(b, data_.vocab.size(), mask_id_, augment_gen_);
  const std::vector<int64_t> ids = b.caption_index.to_vector<int64_t>();
  if (b.regions.dtype() != dtype_) b.regions = to(b.regions, dtype_);
  if (!device_.is_cpu()) {
    b.regions = to(b.regions, device_);
    b.captions = to(b.captions, device_);
  }
  // Under mpirun each rank computes its columns of S, gathered on every rank (PairsMethod::training_scores): the
  // augmentation above is drawn for the whole batch on every rank from the same generator state, and the loss and
  // the labels' update below run whole on every rank, identically (docs/distributed.md §4.1).
  const CrclProbabilities probs = crcl_probabilities(training_scores(b), options_.tau);
  // `y_last = torch.Tensor(self.move_gt[text_ids])`: the stored labels read as float32.
  std::vector<double> y_last(ids.size());
  for (size_t i = 0; i < ids.size(); ++i)
    y_last[i] = static_cast<double>(static_cast<float>(labels_[static_cast<size_t>(ids[i])]));
  const std::vector<double> y = crcl_targets(y_last, probs.p, local < common_.warmup_epoch, rule_);
  StepResult r;
  const Tensor loss = crcl_loss(probs, y, &r.parts);
  r.loss = loss.item<double>();
  check_finite_loss(name(), epoch, step, "crcl", r.loss);
  optimizer_step(loss, epoch, step);
  // The labels change only once the step is taken (a retried step must not update them twice).
  const bool warmup_end = round == 0 && local == common_.warmup_epoch - 1;
  const std::vector<double>& stored = warmup_end ? probs.p : y;
  for (size_t i = 0; i < ids.size(); ++i) labels_[static_cast<size_t>(ids[i])] = stored[i];
  r.pairs = b.size();
  return r;
}

void CrclMethod::save_state(TrainingState& s) const {
  PairsMethod::save_state(s);
  s.put_generator("rng.augment", augment_gen_);
  s.put_tensor("crcl.labels", from_vector(labels_, {static_cast<int64_t>(labels_.size())}));
}

void CrclMethod::load_state(const TrainingState& s) {
  PairsMethod::load_state(s);
  s.get_generator("rng.augment", augment_gen_);
  const Tensor labels = s.get_tensor("crcl.labels");
  REMATCH_CHECK(labels.dim() == 1 && labels.size(0) == static_cast<int64_t>(labels_.size()), s.source(),
                ": crcl.labels has ", labels.describe(), ", the training set ", labels_.size(), " captions");
  labels_ = to(labels, DType::Float64).to_vector<double>();
  if (epoch_ >= 0) {
    const int64_t local = local_epoch(epoch_);
    epoch_info_ = EpochInfo{local < common_.warmup_epoch ? "warmup" : "main", static_cast<int64_t>(plan_.size()),
                            label_stats()};
    epoch_info_.stats["round"] = static_cast<double>(round_of(epoch_));
  }
}

std::string CrclMethod::results_notes() const {
  const Scalars s = label_stats();
  std::ostringstream out;
  out << "Correspondence labels at the end: mean " << s.at("clean_label") << " over the matched training pairs";
  if (s.count("noisy_label")) out << ", " << s.at("noisy_label") << " over the mismatched ones";
  out << ". The tested state is the best validated epoch of the last of " << rounds() << " round(s).\n";
  return out.str();
}

const MethodSpec& crcl_method_spec() {
  static const MethodSpec spec = [] {
    MethodSpec s;
    s.name = "crcl";
    s.summary = "CRCL, active complementary learning with self-refining correspondence (NeurIPS'23), on SGR/SAF";
    s.doc = "docs/methods/crcl.md";
    s.layout = DataLayout::Precomp;
    s.presets = {"f30k", "coco", "cc152k"};
    s.tables = {&crcl_pairs_flags(), &crcl_flags()};
    s.defaults = crcl_defaults();
    s.check = check_crcl;
    s.make = make_pairs_method<CrclOptions, CrclMethod>(true);
    return s;
  }();
  return spec;
}

}  // namespace rematch::train
