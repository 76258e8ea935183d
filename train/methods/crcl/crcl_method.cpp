#include "train/methods/crcl/crcl_method.h"

#include <sstream>

#include "autograd/autograd.h"
#include "train/methods/crcl/crcl_augment.h"

namespace rematch::train {

CrclMethod::CrclMethod(const CommonOptions& common, const CrclOptions& options, PairsData data, std::ostream& log)
    : crcl_(options),
      gens_(common.seed),
      kit_(common, std::move(data), options.dtype),
      net_(new_net()),
      augment_gen_(common.seed ^ 0x3c3c3c3c3c3c3c3cull) {
  log << kit_.describe(net_) << "\n";
  rule_.mc = !crcl_.no_mc;
  rule_.confident = !crcl_.no_confident;
  rule_.alpha = crcl_.alpha;
  mask_id_ = kit_.data().vocab.id("<mask>");
  round_start_ = {0};
  for (int64_t s : crcl_.schedules) round_start_.push_back(round_start_.back() + common.warmup_epoch + s);
  labels_.assign(static_cast<size_t>(kit_.train_split().num_captions()), 1.0);  // `model.move_gt = np.ones(data_length)`
  log << "crcl: " << rounds() << " round(s) of " << common.warmup_epoch << " warm-up + [";
  for (size_t r = 0; r < crcl_.schedules.size(); ++r) log << (r ? ", " : "") << crcl_.schedules[r];
  log << "] epochs, alpha " << crcl_.alpha << ", tau " << crcl_.tau << (rule_.mc ? "" : ", no moving average")
      << (rule_.confident ? "" : ", no confident floor") << (crcl_.no_augment ? ", no augmentation" : "") << "\n";
}

int64_t CrclMethod::round_of(int64_t epoch) const {
  REMATCH_CHECK(epoch >= 0 && epoch < round_start_.back(), "crcl: epoch ", epoch, " is outside the run (",
                round_start_.back(), " epochs)");
  int64_t r = 0;
  while (round_start_[static_cast<size_t>(r + 1)] <= epoch) ++r;
  return r;
}

SgrafNet CrclMethod::new_net() {
  // CRCL.py: torch.optim.AdamW(self.params, lr=opt.learning_rate), PyTorch's default weight decay.
  return kit_.new_net(kit_.model_config(crcl_), gens_.model,
                      NetOptimizer{kit_.common().learning_rate, crcl_.weight_decay});
}

Scalars CrclMethod::label_stats() const {
  double clean = 0, noisy = 0;
  int64_t n_clean = 0, n_noisy = 0;
  const std::vector<uint8_t>& truth = kit_.correspondence().clean;
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

EpochInfo CrclMethod::epoch_info(int64_t epoch) const {
  EpochInfo info{local_epoch(epoch) < kit_.common().warmup_epoch ? "warmup" : "main",
                 static_cast<int64_t>(plan_.size()), label_stats()};
  info.stats["round"] = static_cast<double>(round_of(epoch));
  return info;
}

EpochInfo CrclMethod::begin_epoch(int64_t epoch) {
  const CommonOptions& c = kit_.common();
  const int64_t round = round_of(epoch), local = local_epoch(epoch);
  if (local == 0 && round > 0) net_ = new_net();
  epoch_ = epoch;
  // train.py: adjust_learning_rate(opt, optimizer, epoch) with the round's epoch, warm-up included.
  net_.set_lr(step_decay_lr(c.learning_rate, local, 0, c.lr_update));
  plan_ = kit_.all_pairs_plan(epoch);
  epoch_info_ = epoch_info(epoch);
  return epoch_info_;
}

StepResult CrclMethod::train_step(int64_t epoch, int64_t step) {
  check_step_in_epoch(name(), epoch, step, epoch_, plan_.size());
  const int64_t round = round_of(epoch), local = local_epoch(epoch);
  const int64_t warmup_epochs = kit_.common().warmup_epoch;
  net_.model().train();
  data::Batch b = kit_.all_pairs().make_batch(plan_[static_cast<size_t>(step)]);
  if (!crcl_.no_augment) b = crcl_augment_batch(b, kit_.data().vocab.size(), mask_id_, augment_gen_);
  const std::vector<int64_t> ids = b.caption_index.to_vector<int64_t>();
  b = kit_.on_device(std::move(b));
  // Under mpirun each rank computes its columns of S, gathered on every rank (PairsKit::training_scores): the
  // augmentation above is drawn for the whole batch on every rank from the same generator state, and the loss and
  // the labels' update below run whole on every rank, identically (docs/distributed.md §4.1).
  const CrclProbabilities probs = crcl_probabilities(kit_.training_scores(net_.model(), b), crcl_.tau);
  // `y_last = torch.Tensor(self.move_gt[text_ids])`: the stored labels read as float32.
  std::vector<double> y_last(ids.size());
  for (size_t i = 0; i < ids.size(); ++i)
    y_last[i] = static_cast<double>(static_cast<float>(labels_[static_cast<size_t>(ids[i])]));
  const std::vector<double> y = crcl_targets(y_last, probs.p, local < warmup_epochs, rule_);
  StepResult r;
  const Tensor loss = crcl_loss(probs, y, &r.parts);
  r.loss = loss.item<double>();
  check_finite_loss(name(), epoch, step, "crcl", r.loss);
  kit_.update(net_, loss, epoch, step);
  // The labels change only once the step is taken (a retried step must not update them twice).
  const bool warmup_end = round == 0 && local == warmup_epochs - 1;
  const std::vector<double>& stored = warmup_end ? probs.p : y;
  for (size_t i = 0; i < ids.size(); ++i) labels_[static_cast<size_t>(ids[i])] = stored[i];
  r.pairs = b.size();
  return r;
}

void CrclMethod::save_state(TrainingState& s) const {
  save_pairs_state(s, net_, gens_, epoch_);
  s.put_generator("rng.augment", augment_gen_);
  s.put_tensor("crcl.labels", from_vector(labels_, {static_cast<int64_t>(labels_.size())}));
}

void CrclMethod::load_state(const TrainingState& s) {
  epoch_ = load_pairs_state(s, net_, gens_);
  s.get_generator("rng.augment", augment_gen_);
  const Tensor labels = s.get_tensor("crcl.labels");
  REMATCH_CHECK(labels.dim() == 1 && labels.size(0) == static_cast<int64_t>(labels_.size()), s.source(),
                ": crcl.labels has ", labels.describe(), ", the training set ", labels_.size(), " captions");
  labels_ = to(labels, DType::Float64).to_vector<double>();
  if (epoch_ >= 0) {
    plan_ = kit_.all_pairs_plan(epoch_);
    epoch_info_ = epoch_info(epoch_);
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
    s.data_parallel = true;
    s.demo.warmup_epochs = 4;
    s.make = make_pairs_method<CrclMethod, CrclOptions>(true);
    return s;
  }();
  return spec;
}

}  // namespace rematch::train
