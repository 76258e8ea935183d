#include "train/methods/pairs/pairs_method.h"

#include <cmath>
#include <limits>

#include "autograd/autograd.h"
#include "dist/gather_op.h"
#include "train/methods/data_parallel.h"
#include "train/eval/sgraf_scoring.h"
#include "train/losses/retrieval_losses.h"

namespace rematch::train {
namespace {

models::SgrafConfig model_config(const PairsOptions& c, const PairsData& d) {
  models::SgrafConfig m;
  m.module = c.module_name;
  m.vocab_size = d.vocab.size();
  m.img_dim = d.train->feature_dim();
  m.num_regions = d.train->num_regions();
  m.word_dim = c.word_dim;
  m.embed_size = c.embed_size;
  m.sim_dim = c.sim_dim;
  m.sgr_step = c.sgr_step;
  m.dropout = c.dropout;
  models::validate(m);
  return m;
}

}  // namespace

EvalResult eval_result(const eval::RetrievalMetrics& m, const std::string& label) {
  EvalResult r;
  r.score = m.rsum();
  r.metrics = {{"i2t_r1", m.i2t_r1},   {"i2t_r5", m.i2t_r5},   {"i2t_r10", m.i2t_r10},
               {"t2i_r1", m.t2i_r1},   {"t2i_r5", m.t2i_r5},   {"t2i_r10", m.t2i_r10},
               {"i2t_medr", m.i2t_medr}, {"t2i_medr", m.t2i_medr}, {"rsum", m.rsum()}};
  r.table = label + "\n" + eval::format_metrics_table(m);
  return r;
}

EvalResult test_result(const Tensor& sims, int64_t captions_per_image, const CommonOptions& config) {
  const eval::RetrievalMetrics whole = eval::retrieval_metrics(sims, captions_per_image);
  const std::string split = config.test_split_name();
  if (!config.coco_folds) return eval_result(whole, split);
  EvalResult r = eval_result(eval::mean_metrics(eval::per_fold_metrics(sims, captions_per_image, 5)),
                             split + " 5-fold 1K (mean over folds)");
  const EvalResult full = eval_result(whole, split + " full");
  for (const auto& [k, v] : full.metrics) r.metrics["full_" + k] = v;
  r.table += "\n" + full.table;
  return r;
}

PairsMethod::PairsMethod(const CommonOptions& common, const PairsOptions& options, PairsData data, std::ostream& log)
    : common_(common),
      options_(options),
      log_(log),
      data_(std::move(data)),
      device_(common.device.device()),
      dtype_(options.dtype),
      model_gen_(common.seed),
      sample_gen_(common.seed ^ 0x5a5a5a5a5a5a5a5aull),
      loss_kind_(common.method == "infonce" ? PairsLoss::Infonce
                 : common.method == "rcl"   ? PairsLoss::Rcl
                                            : PairsLoss::Triplet),
      comm_(dist::world()) {
  const models::SgrafConfig mc = model_config(options_, data_);
  model_ = std::make_unique<models::SgrafModel>(mc, dtype_, &model_gen_);
  model_->to(device_);
  optimizer_ = std::make_unique<nn::Adam>(model_->parameters(), common_.learning_rate);
  data::BatcherOptions o;
  o.batch_size = common_.batch_size;
  o.seed = common_.seed;
  all_pairs_ = std::make_unique<data::Batcher>(*data_.train, o, data_.correspondence.caption_to_row);
  log_ << "model: " << models::describe(mc) << ", " << model_->parameter_count() << " parameters on "
       << device_.str() << "\n";
}

double PairsMethod::lr_at(double base, int64_t epoch) const {
  const int64_t main_epoch = epoch - common_.warmup_epoch;
  if (main_epoch < 0 || common_.lr_update <= 0) return base;
  return base * std::pow(0.1, static_cast<double>(main_epoch / common_.lr_update));
}

std::vector<std::vector<int64_t>> PairsMethod::all_pairs_plan(int64_t epoch) const {
  std::vector<std::vector<int64_t>> plan;
  for (auto& b : all_pairs_->epoch_plan(epoch))
    if (b.size() >= 2) plan.push_back(std::move(b));
  return plan;
}

EpochInfo PairsMethod::begin_epoch(int64_t epoch) {
  epoch_ = epoch;
  optimizer_->set_lr(lr_at(common_.learning_rate, epoch));
  plan_ = all_pairs_plan(epoch);
  epoch_info_ = EpochInfo{"train", static_cast<int64_t>(plan_.size()), {}};
  return epoch_info_;
}

data::Batch PairsMethod::batch(const std::vector<int64_t>& captions) const {
  data::Batch b = all_pairs_->make_batch(captions);
  if (b.regions.dtype() != dtype_) b.regions = to(b.regions, dtype_);
  if (!device_.is_cpu()) {
    b.regions = to(b.regions, device_);
    b.captions = to(b.captions, device_);
  }
  return b;
}

Tensor PairsMethod::scores(const data::Batch& b) { return (*model_)(b.regions, b.captions, b.lengths); }

Tensor PairsMethod::training_scores(const data::Batch& b) {
  const int64_t n = b.size();
  shared_step_ = comm_.world_size() > 1 && n >= comm_.world_size();
  if (!shared_step_) return scores(b);
  return gathered_columns(b, false);
}

Tensor PairsMethod::gathered_columns(const data::Batch& b, bool decl_logits, models::SgrafModel* m) {
  shared_step_ = true;
  const dist::RowRange mine = batch_share(comm_, b.size());
  models::SgrafModel::ColumnShare share;
  share.begin = mine.begin;
  share.end = mine.end;
  share.decl_logits = decl_logits;
  share.gather = [this](const Tensor& x) { return dist::all_gather_rows(comm_, x); };
  share.gather_values = [this](const Tensor& x) { return comm_.all_gather(x); };
  const Tensor columns = (m ? *m : *model_).forward_columns(b.regions, b.captions, b.lengths, share);  // [B, n_r]
  // Rows of S^T in rank order, then S: each rank's backward keeps its own columns' gradient.
  return transpose(dist::all_gather_rows(comm_, transpose(columns, 0, 1), dist::GatherBackward::OwnRows), 0, 1);
}

void PairsMethod::optimizer_step(const Tensor& loss, int64_t epoch, int64_t step) {
  optimizer_->zero_grad();
  backward(loss);
  if (shared_step_) all_reduce_gradients(comm_, model_->parameters());  // before the clip: the global norm
  shared_step_ = false;
  clip_checked_gradients(name(), epoch, step, model_->parameters(), common_.grad_clip);
  optimizer_->step();
}

Tensor PairsMethod::batch_loss(const Tensor& S, Scalars& parts) {
  Tensor loss;
  switch (loss_kind_) {
    case PairsLoss::Triplet:
      loss = nn::hardest_negative_triplet(S, options_.margin, options_.triplet_negatives == TripletNegatives::Hardest);
      break;
    case PairsLoss::Infonce:
      loss = losses::infonce_loss(S, options_.tau);
      break;
    case PairsLoss::Rcl: {
      const Tensor negatives = losses::random_negative_mask(S.size(0), options_.neg_ratio, sample_gen_, S.device());
      loss = losses::complementary_contrastive_loss(S, options_.tau, options_.loss, options_.margin, negatives);
      break;
    }
  }
  parts[common_.method] = loss.item<double>();
  return loss;
}

StepResult PairsMethod::train_step(int64_t epoch, int64_t step) {
  REMATCH_CHECK(epoch == epoch_ && step >= 0 && step < static_cast<int64_t>(plan_.size()), name(),
                ": step ", step, " of epoch ", epoch, " is outside the epoch in progress (", epoch_, ", ",
                plan_.size(), " steps)");
  model_->train();
  const data::Batch b = batch(plan_[static_cast<size_t>(step)]);
  StepResult r;
  const Tensor loss = batch_loss(training_scores(b), r.parts);
  r.loss = loss.item<double>();
  check_finite_loss(name(), epoch, step, common_.method, r.loss);
  optimizer_step(loss, epoch, step);
  r.pairs = b.size();
  return r;
}

Tensor PairsMethod::split_scores(const data::PrecompDataset& split, models::SgrafModel* m) {
  if (m == nullptr) m = model_.get();
  const eval::BlockSize block{common_.eval_batch, common_.eval_batch};
  if (comm_.world_size() == 1) return eval::score_precomp_split({m}, split, block);
  const int64_t n_img = split.num_captions() / split.captions_per_image();
  const dist::RowRange rows = dist::block_rows(n_img, block.images, comm_.rank(), comm_.world_size());
  m->eval();  // as score_precomp_rows leaves it, on a rank without rows too
  const Tensor mine = rows.begin < rows.end
                          ? eval::score_precomp_rows({m}, split, rows.begin, rows.end, block)
                          : zeros({0, split.num_captions()}, m->parameters().front().dtype());
  return comm_.all_gather(mine);
}

EvalResult PairsMethod::evaluate(const data::PrecompDataset& split, const std::string& label) {
  const Tensor sims = split_scores(split);
  model_->train();
  return eval_result(eval::retrieval_metrics(sims, split.captions_per_image()), label);
}

EvalResult PairsMethod::validate() { return evaluate(*data_.dev, "dev"); }

EvalResult PairsMethod::test() {
  const data::PrecompDataset& t = *data_.test;
  const Tensor sims = split_scores(t);
  model_->train();
  return test_result(sims, t.captions_per_image(), common_);
}

void PairsMethod::save_state(TrainingState& s) const {
  s.put_module("model.", *model_);
  s.put_entry("model_config", models::to_json(model_->config()));  // rematch eval/score read run checkpoints
  s.put_optimizer("optim.", *optimizer_);
  s.put_generator("rng.model", model_gen_);
  s.put_generator("rng.sample", sample_gen_);
  s.put_int("epoch", epoch_);
}

void PairsMethod::load_state(const TrainingState& s) {
  s.get_module("model.", *model_);
  s.get_optimizer("optim.", *optimizer_);
  s.get_generator("rng.model", model_gen_);
  s.get_generator("rng.sample", sample_gen_);
  epoch_ = s.get_int("epoch");
  if (epoch_ >= 0) {
    plan_ = all_pairs_plan(epoch_);
    epoch_info_ = EpochInfo{"train", static_cast<int64_t>(plan_.size()), {}};
  }
}

void PairsMethod::write_run_files(const std::string& dir) { data::save_noise(data_.correspondence, dir); }

namespace {

// triplet, infonce or rcl on the precomp data (RCL appends its <mask> word to the vocabulary).
MethodSpec pairs_spec(const std::string& name, const std::string& summary, std::vector<Default> defaults) {
  MethodSpec s;
  s.name = name;
  s.summary = summary;
  s.doc = "docs/methods/" + name + ".md";
  s.layout = DataLayout::Precomp;
  s.presets = {"f30k", "coco", "cc152k"};
  s.tables = {&pairs_flags()};
  s.defaults = std::move(defaults);
  const bool mask_word = name == "rcl";
  s.make = make_pairs_method<PairsOptions, PairsMethod>(mask_word);
  return s;
}

}  // namespace

const MethodSpec& triplet_method_spec() {
  static const MethodSpec spec =
      pairs_spec("triplet", "the VSE++ hardest-negative triplet on SGR/SAF (SGRAF's own training)", triplet_defaults());
  return spec;
}

const MethodSpec& infonce_method_spec() {
  static const MethodSpec spec =
      pairs_spec("infonce", "InfoNCE on SGR/SAF (RCL's --loss infoNCE baseline)", rcl_defaults());
  return spec;
}

const MethodSpec& rcl_method_spec() {
  static const MethodSpec spec =
      pairs_spec("rcl", "RCL's complementary contrastive learning on SGR/SAF (TPAMI'23)", rcl_defaults());
  return spec;
}

}  // namespace rematch::train
