#include "train/methods/ncr/ncr_method.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

#include "autograd/autograd.h"
#include "nn/functional.h"
#include "train/losses/retrieval_losses.h"
#include "train/methods/kit/cycling_batches.h"

namespace rematch::train {
namespace {

const char* net_name(int k) { return k == 0 ? "A" : "B"; }

// A and B, drawn in that order from `gen`, as `co_train.py: main` builds SGRAF(opt) twice.
std::vector<SgrafNet> two_nets(const PairsKit& kit, const models::SgrafConfig& config, Generator& gen, double lr) {
  std::vector<SgrafNet> nets;
  nets.push_back(kit.new_net(config, gen, NetOptimizer{lr, {}}));
  nets.push_back(kit.new_net(config, gen, NetOptimizer{lr, {}}));
  return nets;
}

// (l − min)/(max − min) in the arithmetic of T (float: the code's float32 `torch.zeros(data_size)`).
template <class T>
std::vector<double> min_max(const std::vector<double>& losses) {
  std::vector<T> v(losses.begin(), losses.end());
  const T lo = *std::min_element(v.begin(), v.end()), hi = *std::max_element(v.begin(), v.end());
  std::vector<double> out(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    out[i] = static_cast<double>(static_cast<T>(v[i] - lo) / static_cast<T>(hi - lo));
  return out;
}

}  // namespace

Tensor ncr_soft_margin_triplet(const Tensor& scores, const Tensor& margins) {
  REMATCH_CHECK(scores.defined() && scores.dim() == 2 && scores.size(0) == scores.size(1),
                "ncr_soft_margin_triplet: scores must be a square [B, B] matrix, got ",
                scores.defined() ? scores.describe() : "undefined");
  const int64_t n = scores.size(0);
  REMATCH_CHECK(margins.defined() && margins.dim() == 2 && margins.size(0) == n &&
                    (margins.size(1) == n || margins.size(1) == 1),
                "ncr_soft_margin_triplet: margins must be [B, B] or [B, 1] for B = ", n, ", got ",
                margins.defined() ? margins.describe() : "undefined");
  const Tensor d = gather(scores, 1, reshape(arange(n, DType::Int64, scores.device()), {n, 1}));  // [B, 1]
  const Tensor positives = eye(n, n, DType::Bool, scores.device());
  // cost_s[i][j] = [M_ij + S_ij − S_ii]_+, cost_im[i][j] = [M_ij + S_ij − S_jj]_+, diagonals cleared.
  const Tensor cost_s = masked_fill(clamp_min(add(sub(scores, d), margins), 0.0), positives, 0.0);
  const Tensor cost_im = masked_fill(clamp_min(add(sub(scores, transpose(d, 0, 1)), margins), 0.0), positives, 0.0);
  return add(sum(max(cost_s, 1).first), sum(max(cost_im, 0).first));
}

double ncr_soft_margin(double alpha, double y, SoftMargin shape) {
  switch (shape) {
    case SoftMargin::Linear: return alpha * y;
    case SoftMargin::Exponential: return alpha * ((std::pow(10.0, y) - 1) / 9);
    case SoftMargin::Sin: return alpha * (std::sin(M_PI * y - M_PI / 2) / 2 + 0.5);
  }
  return alpha;
}

std::vector<double> ncr_predict_labels(const Tensor& scores, double alpha) {
  const std::vector<double> l =
      to(to(losses::per_sample_split_loss(scores.detach(), alpha, losses::SplitLoss::Mean), Device::cpu()),
         DType::Float64)
          .to_vector<double>();
  std::vector<double> p(l.size());
  for (size_t i = 0; i < l.size(); ++i) p[i] = std::clamp(alpha - l[i] / 2, 0.0, alpha);
  // The mean of the ⌊B/10⌋ + 1 largest (`idx = argsort(p); p / mean(p[idx[-ratio:]])`).
  const size_t ratio = std::min(p.size(), p.size() / 10 + 1);
  std::vector<double> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  double top = 0;
  for (size_t i = sorted.size() - ratio; i < sorted.size(); ++i) top += sorted[i];
  top /= static_cast<double>(ratio);
  for (double& v : p) v = top > 0 ? std::clamp(v / top, 0.0, 1.0) : 0.0;
  return p;
}

NcrSplit ncr_split(const std::vector<double>& losses, DType dtype, double threshold, uint64_t seed,
                   const std::vector<int>& initial_labels) {
  REMATCH_CHECK(losses.size() >= 2, "ncr: the co-divide needs at least 2 training pairs, got ", losses.size());
  NcrSplit s;
  s.normalised = dtype == DType::Float32 ? min_max<float>(losses) : min_max<double>(losses);
  const auto [lo, hi] = std::minmax_element(losses.begin(), losses.end());
  if (*lo == *hi) {
    // Every loss equal: the code divides 0 by 0 (NaN) and the mixture fails; no split exists, every pair is clean
    // with probability 1 (gaussian_mixture.h's degenerate case, docs/methods/ncr.md §3).
    s.normalised.assign(losses.size(), 0.0);
  }
  s.mixture = initial_labels.empty() ? mixture::fit_gaussian_mixture(s.normalised, seed)
                                     : mixture::fit_gaussian_mixture(s.normalised, initial_labels);
  s.probability = s.mixture.clean_probability;
  // `split_prob`: when every w exceeds the threshold, the ⌊N/100⌋-th smallest w becomes it.
  double t = threshold;
  if (*std::min_element(s.probability.begin(), s.probability.end()) > t) {
    std::vector<double> sorted = s.probability;
    std::sort(sorted.begin(), sorted.end());
    t = sorted[sorted.size() / 100];
  }
  s.clean.resize(s.probability.size());
  for (size_t i = 0; i < s.probability.size(); ++i) s.clean[i] = s.probability[i] > t ? 1 : 0;
  return s;
}

NcrMethod::NcrMethod(const CommonOptions& common, const NcrOptions& options, PairsData data, std::ostream& log)
    : log_(log),
      ncr_(options),
      gens_(common.seed),
      kit_(common, std::move(data), options.dtype),
      nets_(two_nets(kit_, kit_.model_config(options), gens_.model, common.learning_rate)) {
  log_ << kit_.describe(nets_[0]) << "\n";
  log_ << "ncr: nets A and B (" << net(1).parameter_count() << " parameters each), soft margin "
       << (ncr_.soft_margin == SoftMargin::Linear        ? "linear"
           : ncr_.soft_margin == SoftMargin::Exponential ? "exponential"
                                                         : "sin")
       << ", p_threshold " << ncr_.p_threshold << "\n";
}

std::pair<std::vector<double>, std::vector<double>> NcrMethod::per_sample_losses(int64_t epoch) {
  // `eval_train`: each net's per-pair loss, the mean hinge of the split (PairsKit::per_caption_losses).
  std::vector<std::vector<double>> out = kit_.per_caption_losses(nets_, epoch, [&](const Tensor& S) {
    return losses::per_sample_split_loss(S, ncr_.margin, losses::SplitLoss::Mean);
  });
  return {std::move(out[0]), std::move(out[1])};
}

void NcrMethod::build_plans(int64_t epoch) {
  steps_.clear();
  for (int k = 0; k < 2; ++k) {
    labeled_[k].clear();
    unlabeled_[k].clear();
  }
  if (warmup(epoch)) {
    // `co_train.py: main`: warmup(A) then warmup(B), each a pass of its own over the shuffled loader, which stops
    // at a batch of one pair (`warmup`: BatchNorm needs two).
    for (int k = 0; k < 2; ++k) {
      for (auto& b : kit_.all_pairs().epoch_plan(2 * epoch + k)) {
        if (b.size() < 2) break;
        labeled_[k].push_back(std::move(b));
      }
      for (int64_t i = 0; i < static_cast<int64_t>(labeled_[k].size()); ++i) steps_.push_back({k, i, false});
    }
    return;
  }
  const bool both = second_half(epoch);
  // Net k trains on its peer's split (`get_loader(..., pred=pred_B, prob=prob_B)` for A).
  for (int k = 0; k < 2; ++k) {
    const std::vector<uint8_t>& split = clean_[1 - k];
    std::vector<int64_t> clean, noisy;
    for (int64_t j = 0; j < static_cast<int64_t>(split.size()); ++j) (split[j] ? clean : noisy).push_back(j);
    if (clean.empty() || noisy.empty()) continue;  // no labelled batch, or no unlabelled one to draw: no iteration
    const data::Batcher labeled = kit_.loader(2 + 2 * static_cast<uint64_t>(k), false, clean);
    CyclingBatches unlabeled(kit_.loader(3 + 2 * static_cast<uint64_t>(k), false, noisy), epoch);
    for (auto& l : labeled.epoch_plan(epoch)) {
      std::vector<int64_t> next = unlabeled.next();
      // `train`: "drop last batch if only one sample" ends the net's epoch.
      if (l.size() < 2 || next.size() < 2) break;
      labeled_[k].push_back(std::move(l));
      unlabeled_[k].push_back(std::move(next));
    }
    for (int64_t i = 0; i < static_cast<int64_t>(labeled_[k].size()); ++i) {
      steps_.push_back({k, i, false});
      if (both) steps_.push_back({k, i, true});
    }
  }
}

EpochInfo NcrMethod::epoch_info(int64_t epoch) const {
  EpochInfo info{warmup(epoch) ? "warmup" : "co-train", static_cast<int64_t>(steps_.size()), {}};
  if (warmup(epoch)) return info;
  for (int k = 0; k < 2; ++k) {
    const std::string n = net_name(k);
    const double kept = static_cast<double>(std::count(clean_[k].begin(), clean_[k].end(), 1));
    info.stats["clean_size_" + n] = kept;
    info.stats["clean_precision_" + n] = quality_[k].clean_precision;
    info.stats["clean_recall_" + n] = quality_[k].clean_recall;
    info.stats["split_accuracy_" + n] = quality_[k].accuracy;
  }
  return info;
}

EpochInfo NcrMethod::begin_epoch(int64_t epoch) {
  epoch_ = epoch;
  // `adjust_learning_rate(opt, optimizer, epoch)` with the co-training epoch; the warm-up runs at the base rate.
  const CommonOptions& c = kit_.common();
  for (SgrafNet& n : nets_) n.set_lr(step_decay_lr(c.learning_rate, epoch, c.warmup_epoch, c.lr_update));
  targets_u_ = Tensor();
  if (!warmup(epoch)) {
    const auto [la, lb] = per_sample_losses(epoch);
    const std::vector<double>* losses[2] = {&la, &lb};
    for (int k = 0; k < 2; ++k) {
      NcrSplit s = ncr_split(*losses[k], kit_.dtype(), ncr_.p_threshold, c.seed + 2 * static_cast<uint64_t>(epoch) + k);
      prob_[k] = std::move(s.probability);
      clean_[k] = std::move(s.clean);
      quality_[k] = data::split_quality(clean_[k], kit_.correspondence().clean);
    }
  }
  build_plans(epoch);
  epoch_info_ = epoch_info(epoch);
  if (!warmup(epoch) && steps_.empty())
    log_ << "ncr: epoch " << epoch << ": a split left no labelled or no unlabelled pairs; no co-training step\n";
  return epoch_info_;
}

Tensor NcrMethod::margins(const std::vector<double>& y, int64_t rows, int64_t cols) const {
  std::vector<double> m(y.size());
  for (size_t i = 0; i < y.size(); ++i) m[i] = ncr_soft_margin(ncr_.margin, y[i], ncr_.soft_margin);
  return to(to(from_vector(m, {rows, cols}), kit_.dtype()), kit_.device());
}

StepResult NcrMethod::train_step(int64_t epoch, int64_t step) {
  check_step_in_epoch(name(), epoch, step, epoch_, steps_.size());
  const StepRef ref = steps_[static_cast<size_t>(step)];
  const int x = ref.net, y = 1 - ref.net;
  models::SgrafModel& X = net(x);
  StepResult r;
  if (warmup(epoch)) {
    // `warmup`: model.train(mode="warmup"), Σ_i mean_j C_s + Σ_j mean_i C_im with the constant margin.
    X.train();
    const data::Batch b = kit_.batch(labeled_[x][static_cast<size_t>(ref.index)]);
    const Tensor S = kit_.training_scores(X, b);
    const Tensor loss = sum(losses::per_sample_split_loss(S, ncr_.margin, losses::SplitLoss::Mean));
    r.loss = loss.item<double>();
    r.parts[std::string("warmup_") + net_name(x)] = r.loss;
    check_finite_loss(name(), epoch, step, std::string("warmup_") + net_name(x), r.loss);
    kit_.update(nets_[static_cast<size_t>(x)], loss, epoch, step);
    r.pairs = b.size();
    return r;
  }
  if (ref.unlabeled) {
    // The second update of the iteration: the unlabelled batch with the targets its labelled step computed.
    REMATCH_CHECK(targets_u_.defined(), name(), ": step ", step, " of epoch ", epoch,
                  " is an unlabelled update without its labelled step's targets");
    const data::Batch b = kit_.batch(unlabeled_[x][static_cast<size_t>(ref.index)]);
    X.train();
    const Tensor loss = ncr_soft_margin_triplet(kit_.training_scores(X, b), targets_u_);
    targets_u_ = Tensor();
    r.loss = loss.item<double>();
    r.parts[std::string("unlabeled_") + net_name(x)] = r.loss;
    check_finite_loss(name(), epoch, step, std::string("unlabeled_") + net_name(x), r.loss);
    kit_.update(nets_[static_cast<size_t>(x)], loss, epoch, step);
    r.pairs = b.size();
    return r;
  }
  // `train`: label rectification with X in eval mode, before any update of the iteration.
  const data::Batch bl = kit_.batch(labeled_[x][static_cast<size_t>(ref.index)]);
  const int64_t nl = bl.size();
  Tensor targets_l;
  {
    NoGradGuard no_grad;
    X.eval();
    const std::vector<double> pl = ncr_predict_labels(X(bl.regions, bl.captions, bl.lengths), ncr_.margin);
    // y_ij = w_i·1 + (1 − w_i)·p_j: [B, 1] times a [B] broadcast (`ptl = prob·labels + (1 − prob)·pl`), w the
    // peer's clean probability of the batch's caption i.
    const std::vector<int64_t> order = bl.caption_index.to_vector<int64_t>();
    std::vector<double> yl(static_cast<size_t>(nl * nl));
    for (int64_t i = 0; i < nl; ++i) {
      const double w = prob_[y][static_cast<size_t>(order[static_cast<size_t>(i)])];
      for (int64_t j = 0; j < nl; ++j)
        yl[static_cast<size_t>(i * nl + j)] = w * 1.0 + (1 - w) * pl[static_cast<size_t>(j)];
    }
    targets_l = margins(yl, nl, nl);
    if (second_half(epoch)) {
      // The unlabelled batch: the mean of both nets' predictions (Y stays in eval mode throughout).
      const data::Batch bu = kit_.batch(unlabeled_[x][static_cast<size_t>(ref.index)]);
      net(y).eval();
      const std::vector<double> p1 = ncr_predict_labels(X(bu.regions, bu.captions, bu.lengths), ncr_.margin);
      const std::vector<double> p2 = ncr_predict_labels(net(y)(bu.regions, bu.captions, bu.lengths), ncr_.margin);
      std::vector<double> yu(p1.size());
      for (size_t i = 0; i < p1.size(); ++i) yu[i] = (p1[i] + p2[i]) / 2;
      targets_u_ = margins(yu, static_cast<int64_t>(yu.size()), 1);
    }
  }
  X.train();
  const Tensor loss = ncr_soft_margin_triplet(kit_.training_scores(X, bl), targets_l);
  r.loss = loss.item<double>();
  r.parts[std::string("labeled_") + net_name(x)] = r.loss;
  check_finite_loss(name(), epoch, step, std::string("labeled_") + net_name(x), r.loss);
  kit_.update(nets_[static_cast<size_t>(x)], loss, epoch, step);
  r.pairs = nl;
  return r;
}

EvalResult NcrMethod::validate() {
  // `co_train.py: validate`: rSum of (S_A + S_B)/2 on the dev subset selects the model.
  const data::PrecompDataset& dev = *kit_.data().dev;
  const Tensor sa = kit_.split_scores(dev, net(0));  // sharded under mpirun (docs/distributed.md §4.1, 11)
  const Tensor sb = kit_.split_scores(dev, net(1));
  net(0).train();
  net(1).train();
  return two_nets_validation_result(sa, sb, dev.captions_per_image());
}

EvalResult NcrMethod::test() {
  // `evaluation.py: evalrank`: the average of A's and B's matrices; A and B alone as well.
  const data::PrecompDataset& t = *kit_.data().test;
  const Tensor sa = kit_.split_scores(t, net(0));  // sharded under mpirun (docs/distributed.md §4.1, 11)
  const Tensor sb = kit_.split_scores(t, net(1));
  net(0).train();
  net(1).train();
  return two_nets_test_result(sa, sb, t.captions_per_image(), kit_.common(), "NCR");
}

void NcrMethod::save_state(TrainingState& s) const {
  save_pairs_state(s, nets_[0], gens_, epoch_);
  // `rematch eval --checkpoint` scores both nets of this file, averaged (models/sgraf_checkpoint.h).
  s.put_entry("model_prefixes", R"(["model.", "model_B."])");
  nets_[1].save(s, "model_B.", "optim_B.");
  for (int k = 0; k < 2; ++k) {
    const std::string n = net_name(k);
    s.put_tensor("ncr.prob_" + n, from_vector(prob_[k], {static_cast<int64_t>(prob_[k].size())}));
    s.put_int_vector("ncr.clean_" + n, std::vector<int64_t>(clean_[k].begin(), clean_[k].end()));
  }
  s.put_int("ncr.has_targets_u", targets_u_.defined() ? 1 : 0);
  if (targets_u_.defined()) s.put_tensor("ncr.targets_u", targets_u_);
}

void NcrMethod::load_state(const TrainingState& s) {
  epoch_ = load_pairs_state(s, nets_[0], gens_);
  nets_[1].load(s, "model_B.", "optim_B.");
  const size_t n = static_cast<size_t>(kit_.train_split().num_captions());
  for (int k = 0; k < 2; ++k) {
    const std::string key = std::string("ncr.prob_") + net_name(k);
    prob_[k] = to(s.get_tensor(key), DType::Float64).to_vector<double>();
    const std::vector<int64_t> c = s.get_int_vector(std::string("ncr.clean_") + net_name(k));
    clean_[k].assign(c.begin(), c.end());
    // A damaged checkpoint must not index past the data.
    REMATCH_CHECK((prob_[k].empty() && clean_[k].empty()) || (prob_[k].size() == n && clean_[k].size() == n),
                  s.source(), ": '", key, "' and its clean flags have ", prob_[k].size(), " and ", clean_[k].size(),
                  " entries for ", n, " training captions");
    quality_[k] = clean_[k].empty() ? data::SplitQuality{} : data::split_quality(clean_[k], kit_.correspondence().clean);
  }
  targets_u_ = s.get_int("ncr.has_targets_u") ? to(to(s.get_tensor("ncr.targets_u"), kit_.dtype()), kit_.device()) : Tensor();
  if (epoch_ < 0) return;
  REMATCH_CHECK(warmup(epoch_) || !clean_[0].empty(), s.source(), ": co-training epoch ", epoch_,
                " without a saved split");
  build_plans(epoch_);
  epoch_info_ = epoch_info(epoch_);
}

std::optional<viz::EpochSplit> NcrMethod::epoch_split(int64_t epoch) const {
  if (warmup(epoch) || clean_[0].empty()) return std::nullopt;
  return viz::EpochSplit{epoch, "ncr", viz::SplitKind::kept, {clean_[0].begin(), clean_[0].end()}};
}

std::vector<PlanSplit> NcrMethod::plan_splits(int64_t epoch) const {
  if (warmup(epoch) || clean_[0].empty()) return {};
  return two_nets_plan_splits("ncr", epoch, clean_[0], clean_[1]);
}

std::string NcrMethod::results_notes() const {
  if (clean_[0].empty()) return "The best validated state is from the warm-up: no co-divide yet.\n";
  std::ostringstream s;
  for (int k = 0; k < 2; ++k)
    s << "Last co-divide of net " << net_name(k) << " (Gaussian mixture over per-sample losses): "
      << std::count(clean_[k].begin(), clean_[k].end(), 1) << " pairs clean; clean-set precision "
      << quality_[k].clean_precision << ", recall " << quality_[k].clean_recall << ", accuracy "
      << quality_[k].accuracy << " against the injected noise.\n";
  return s.str();
}

const MethodSpec& ncr_method_spec() {
  static const MethodSpec spec = [] {
    MethodSpec s;
    s.name = "ncr";
    s.summary = "NCR, co-divided, co-rectified soft-margin training of two SGR/SAF nets (NeurIPS'21)";
    s.doc = "docs/methods/ncr.md";
    s.layout = DataLayout::Precomp;
    s.presets = {"f30k", "coco", "cc152k"};
    s.tables = {&ncr_pairs_flags(), &ncr_flags()};
    s.defaults = ncr_defaults();
    s.check = check_ncr;
    s.data_parallel = true;
    s.demo.warmup_epochs = 3;
    s.demo.split_stat = "clean_precision_A";
    s.make = make_pairs_method<NcrMethod, NcrOptions>(false);
    return s;
  }();
  return spec;
}

}  // namespace rematch::train
