#include "train/methods/bicro/bicro_method.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "autograd/autograd.h"
#include "train/losses/retrieval_losses.h"
#include "train/methods/bicro/bicro_beta_mixture.h"
#include "train/methods/kit/cycling_batches.h"
#include "train/methods/ncr/ncr_method.h"
#include "train/mixture/gaussian_mixture.h"

namespace rematch::train {
namespace {


const char* net_name(int k) { return k == 0 ? "A" : "B"; }

std::vector<SgrafNet> two_nets(const PairsKit& kit, const models::SgrafConfig& config, Generator& gen, double lr) {
  std::vector<SgrafNet> nets;
  nets.push_back(kit.new_net(config, gen, NetOptimizer{lr, {}}));
  nets.push_back(kit.new_net(config, gen, NetOptimizer{lr, {}}));
  return nets;
}

// (l − min)/(max − min) in the arithmetic of T (`eval_train`'s `torch.zeros(data_size)`: the default dtype).
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

Tensor bicro_margins(const std::vector<double>& y, double alpha, SoftMargin shape, DType dtype, Device device) {
  const int64_t n = static_cast<int64_t>(y.size());
  std::vector<double> m(static_cast<size_t>(n * n));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      m[static_cast<size_t>(i * n + j)] = ncr_soft_margin(alpha, y[static_cast<size_t>(j)], shape);
  return to(to(from_vector(m, {n, n}), dtype), device);
}

Tensor bicro_warmup_loss(const Tensor& scores, double margin, double rate) {
  const Tensor l = losses::per_sample_split_loss(scores, margin, losses::SplitLoss::Mean);  // [B]
  const int64_t n = l.size(0);
  const int64_t k = static_cast<int64_t>(static_cast<double>(n) * rate);  // int(B * warmup_rate)
  // `all_loss.topk(k, largest=False)`, then `all_loss * index`: the k smallest, summed.
  const std::vector<double> v = to(to(l.detach(), Device::cpu()), DType::Float64).to_vector<double>();
  std::vector<int64_t> order(v.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return v[static_cast<size_t>(a)] < v[static_cast<size_t>(b)]; });
  std::vector<double> keep(v.size(), 0.0);
  for (int64_t i = 0; i < k; ++i) keep[static_cast<size_t>(order[static_cast<size_t>(i)])] = 1.0;
  return sum(mul(l, to(to(from_vector(keep, {n}), l.dtype()), l.device())));
}

BicroSplit bicro_split(const std::vector<double>& losses, DType dtype, double threshold, BicroFit fit, uint64_t seed) {
  REMATCH_CHECK(losses.size() >= 2, "bicro: the split needs at least 2 training pairs, got ", losses.size());
  BicroSplit s;
  const auto [lo, hi] = std::minmax_element(losses.begin(), losses.end());
  if (*lo == *hi) {
    // Every loss equal: the code divides 0 by 0 and every posterior is NaN (nothing clean, no net trains). No
    // split exists; here every pair is clean with probability 1, as NCR's (docs/methods/bicro.md §3).
    s.normalised.assign(losses.size(), 0.0);
    s.probability.assign(losses.size(), 1.0);
    s.clean.assign(losses.size(), 1);
    return s;
  }
  s.normalised = dtype == DType::Float32 ? min_max<float>(losses) : min_max<double>(losses);
  if (fit == BicroFit::Gmm) {
    s.probability = mixture::fit_gaussian_mixture(s.normalised, seed).clean_probability;
  } else {
    const BicroBetaMixture m = fit_bicro_beta_mixture(s.normalised);
    for (double x : s.normalised) s.probability.push_back(m.posterior(x, 0));
  }
  // `split_prob`: when every w exceeds the threshold (np.min is NaN when any w is), the ⌊N/100⌋-th smallest.
  double t = threshold;
  const bool any_nan = std::any_of(s.probability.begin(), s.probability.end(), [](double p) { return std::isnan(p); });
  if (!any_nan && *std::min_element(s.probability.begin(), s.probability.end()) > t) {
    std::vector<double> sorted = s.probability;
    std::sort(sorted.begin(), sorted.end());
    t = sorted[sorted.size() / 100];
  }
  for (double p : s.probability) s.clean.push_back(p > t ? 1 : 0);
  return s;
}

BicroMethod::BicroMethod(const CommonOptions& common, const BicroOptions& options, PairsData data, std::ostream& log)
    : log_(log),
      bicro_(options),
      gens_(common.seed),
      kit_(common, std::move(data), options.dtype),
      nets_(two_nets(kit_, kit_.model_config(options), gens_.model, common.learning_rate)) {
  log_ << kit_.describe(nets_[0]) << "\n";
  log_ << "bicro: nets A and B (" << net(1).parameter_count() << " parameters each), "
       << (bicro_.fit_type != BicroFit::Gmm ? "Beta" : "Gaussian") << " mixture split at p_threshold "
       << bicro_.p_threshold << ", warm-up rate " << bicro_.warmup_rate << ", noise_tem " << bicro_.noise_tem << "\n";
}

std::pair<std::vector<double>, std::vector<double>> BicroMethod::per_sample_losses(int64_t epoch) {
  // `eval_train`: as NCR's (PairsKit::per_caption_losses).
  std::vector<std::vector<double>> out = kit_.per_caption_losses(nets_, epoch, [&](const Tensor& S) {
    return losses::per_sample_split_loss(S, bicro_.margin, losses::SplitLoss::Mean);
  });
  return {std::move(out[0]), std::move(out[1])};
}

void BicroMethod::build_plans(int64_t epoch) {
  steps_.clear();
  for (int k = 0; k < 2; ++k) {
    labeled_[k].clear();
    unlabeled_[k].clear();
  }
  if (warmup(epoch)) {
    // `co_train.py: main`: warmup(A) then warmup(B), each a pass over the shuffled loader, which stops at a batch
    // of one pair.
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
  for (int k = 0; k < 2; ++k) {
    const std::vector<uint8_t>& split = clean_[1 - k];
    std::vector<int64_t> clean, noisy;
    for (int64_t j = 0; j < static_cast<int64_t>(split.size()); ++j) (split[j] ? clean : noisy).push_back(j);
    // `if len(pred_B.nonzero()[0])`: no clean pair, no iteration; no noisy pair: the code's unlabelled loader
    // cannot be drawn from (it fails), here the net skips the epoch as NCR's does.
    if (clean.empty() || noisy.empty()) continue;
    const data::Batcher labeled = kit_.loader(2 + 2 * static_cast<uint64_t>(k), false, clean);
    CyclingBatches unlabeled(kit_.loader(3 + 2 * static_cast<uint64_t>(k), false, noisy), epoch);
    for (auto& l : labeled.epoch_plan(epoch)) {
      std::vector<int64_t> next = unlabeled.next();
      if (l.size() < 2 || next.size() < 2) break;  // "drop last batch if only one sample"
      labeled_[k].push_back(std::move(l));
      unlabeled_[k].push_back(std::move(next));
    }
    for (int64_t i = 0; i < static_cast<int64_t>(labeled_[k].size()); ++i) {
      // `train`: in the second half net.train on the unlabelled batch first, then on the labelled one.
      if (both) steps_.push_back({k, i, true});
      steps_.push_back({k, i, false});
    }
  }
}

EpochInfo BicroMethod::epoch_info(int64_t epoch) const {
  EpochInfo info{warmup(epoch) ? "warmup" : "co-train", static_cast<int64_t>(steps_.size()), {}};
  if (warmup(epoch)) return info;
  for (int k = 0; k < 2; ++k) {
    const std::string n = net_name(k);
    info.stats["clean_size_" + n] = static_cast<double>(std::count(clean_[k].begin(), clean_[k].end(), 1));
    info.stats["clean_precision_" + n] = quality_[k].clean_precision;
    info.stats["clean_recall_" + n] = quality_[k].clean_recall;
    info.stats["split_accuracy_" + n] = quality_[k].accuracy;
  }
  return info;
}

EpochInfo BicroMethod::begin_epoch(int64_t epoch) {
  epoch_ = epoch;
  const CommonOptions& c = kit_.common();
  for (SgrafNet& n : nets_) n.set_lr(step_decay_lr(c.learning_rate, epoch, c.warmup_epoch, c.lr_update));
  labels_l_.clear();
  labels_u_.clear();
  if (!warmup(epoch)) {
    const auto [la, lb] = per_sample_losses(epoch);
    const std::vector<double>* losses[2] = {&la, &lb};
    for (int k = 0; k < 2; ++k) {
      BicroSplit s = bicro_split(*losses[k], kit_.dtype(), bicro_.p_threshold, bicro_.fit_type.value_or(BicroFit::Bmm),
                                 c.seed + 2 * static_cast<uint64_t>(epoch) + static_cast<uint64_t>(k));
      prob_[k] = std::move(s.probability);
      clean_[k] = std::move(s.clean);
      quality_[k] = data::split_quality(clean_[k], kit_.correspondence().clean);
    }
  }
  build_plans(epoch);
  epoch_info_ = epoch_info(epoch);
  if (!warmup(epoch) && steps_.empty())
    log_ << "bicro: epoch " << epoch << ": a split left no labelled or no unlabelled pairs; no co-training step\n";
  return epoch_info_;
}

void BicroMethod::predict(int x, int64_t index, bool both) {
  // `train`: net2.val_start(); with torch.no_grad(): c_y, n_y = net2.predict(...).
  NoGradGuard no_grad;
  models::SgrafModel& Y = net(1 - x);
  Y.eval();
  const data::Batch bl = kit_.batch(labeled_[x][static_cast<size_t>(index)]);
  const BicroGlobal gl =
      bicro_global(Y.encode_images(bl.regions), Y.encode_captions(bl.captions, bl.lengths), bl.lengths);
  const Tensor S = Y(bl.regions, bl.captions, bl.lengths);
  BicroGlobal gu;
  if (both) {
    const data::Batch bu = kit_.batch(unlabeled_[x][static_cast<size_t>(index)]);
    gu = bicro_global(Y.encode_images(bu.regions), Y.encode_captions(bu.captions, bu.lengths), bu.lengths);
  }
  BicroLabels r = bicro_labels(S, gl, both ? &gu : nullptr, bicro_.margin, bicro_.noise_tem);
  labels_l_ = std::move(r.labeled);
  labels_u_ = std::move(r.unlabeled);
}

StepResult BicroMethod::train_step(int64_t epoch, int64_t step) {
  check_step_in_epoch(name(), epoch, step, epoch_, steps_.size());
  const StepRef ref = steps_[static_cast<size_t>(step)];
  const int x = ref.net;
  models::SgrafModel& X = net(x);
  SgrafNet& xnet = nets_[static_cast<size_t>(x)];
  StepResult r;
  if (warmup(epoch)) {
    X.train();
    const data::Batch b = kit_.batch(labeled_[x][static_cast<size_t>(ref.index)]);
    const Tensor loss = bicro_warmup_loss(kit_.training_scores(X, b), bicro_.margin, bicro_.warmup_rate);
    r.loss = loss.item<double>();
    r.parts[std::string("warmup_") + net_name(x)] = r.loss;
    check_finite_loss(name(), epoch, step, std::string("warmup_") + net_name(x), r.loss);
    kit_.update(xnet, loss, epoch, step);
    r.pairs = b.size();
    return r;
  }
  const bool both = second_half(epoch);
  if (ref.unlabeled || !both) predict(x, ref.index, both);  // the iteration's first step
  REMATCH_CHECK(!labels_l_.empty(), name(), ": step ", step, " of epoch ", epoch,
                " is a labelled update without the labels its iteration's first step computed");
  const std::vector<int64_t>& captions =
      ref.unlabeled ? unlabeled_[x][static_cast<size_t>(ref.index)] : labeled_[x][static_cast<size_t>(ref.index)];
  const data::Batch b = kit_.batch(captions);
  const std::vector<double>& y = ref.unlabeled ? labels_u_ : labels_l_;
  REMATCH_CHECK(static_cast<int64_t>(y.size()) == b.size(), name(), ": ", y.size(), " labels for a batch of ",
                b.size());
  X.train();
  const Tensor M = bicro_margins(y, bicro_.margin, bicro_.soft_margin, kit_.dtype(), kit_.device());
  const Tensor loss = ncr_soft_margin_triplet(kit_.training_scores(X, b), M);
  const std::string part = std::string(ref.unlabeled ? "unlabeled_" : "labeled_") + net_name(x);
  r.loss = loss.item<double>();
  r.parts[part] = r.loss;
  check_finite_loss(name(), epoch, step, part, r.loss);
  kit_.update(xnet, loss, epoch, step);
  if (!ref.unlabeled) {
    labels_l_.clear();
    labels_u_.clear();
  }
  r.pairs = b.size();
  return r;
}

EvalResult BicroMethod::validate() {
  const data::PrecompDataset& dev = *kit_.data().dev;
  const Tensor sa = kit_.split_scores(dev, net(0));
  const Tensor sb = kit_.split_scores(dev, net(1));
  net(0).train();
  net(1).train();
  return two_nets_validation_result(sa, sb, dev.captions_per_image());
}

EvalResult BicroMethod::test() {
  // `evaluation.py: evalrank`: the average of A's and B's matrices; A and B alone as well.
  const data::PrecompDataset& t = *kit_.data().test;
  const Tensor sa = kit_.split_scores(t, net(0));
  const Tensor sb = kit_.split_scores(t, net(1));
  net(0).train();
  net(1).train();
  return two_nets_test_result(sa, sb, t.captions_per_image(), kit_.common(), "BiCro");
}

void BicroMethod::save_state(TrainingState& s) const {
  save_pairs_state(s, nets_[0], gens_, epoch_);
  s.put_entry("model_prefixes", R"(["model.", "model_B."])");
  nets_[1].save(s, "model_B.", "optim_B.");
  for (int k = 0; k < 2; ++k) {
    const std::string n = net_name(k);
    s.put_tensor("bicro.prob_" + n, from_vector(prob_[k], {static_cast<int64_t>(prob_[k].size())}));
    s.put_int_vector("bicro.clean_" + n, std::vector<int64_t>(clean_[k].begin(), clean_[k].end()));
  }
  s.put_tensor("bicro.labels_l", from_vector(labels_l_, {static_cast<int64_t>(labels_l_.size())}));
  s.put_tensor("bicro.labels_u", from_vector(labels_u_, {static_cast<int64_t>(labels_u_.size())}));
}

void BicroMethod::load_state(const TrainingState& s) {
  epoch_ = load_pairs_state(s, nets_[0], gens_);
  nets_[1].load(s, "model_B.", "optim_B.");
  const size_t n = static_cast<size_t>(kit_.train_split().num_captions());
  for (int k = 0; k < 2; ++k) {
    const std::string key = std::string("bicro.prob_") + net_name(k);
    prob_[k] = to(s.get_tensor(key), DType::Float64).to_vector<double>();
    const std::vector<int64_t> c = s.get_int_vector(std::string("bicro.clean_") + net_name(k));
    clean_[k].assign(c.begin(), c.end());
    REMATCH_CHECK((prob_[k].empty() && clean_[k].empty()) || (prob_[k].size() == n && clean_[k].size() == n),
                  s.source(), ": '", key, "' and its clean flags have ", prob_[k].size(), " and ", clean_[k].size(),
                  " entries for ", n, " training captions");
    quality_[k] = clean_[k].empty() ? data::SplitQuality{} : data::split_quality(clean_[k], kit_.correspondence().clean);
  }
  labels_l_ = to(s.get_tensor("bicro.labels_l"), DType::Float64).to_vector<double>();
  labels_u_ = to(s.get_tensor("bicro.labels_u"), DType::Float64).to_vector<double>();
  if (epoch_ < 0) return;
  REMATCH_CHECK(warmup(epoch_) || !clean_[0].empty(), s.source(), ": co-training epoch ", epoch_,
                " without a saved split");
  build_plans(epoch_);
  epoch_info_ = epoch_info(epoch_);
}

std::optional<viz::EpochSplit> BicroMethod::epoch_split(int64_t epoch) const {
  if (warmup(epoch) || clean_[0].empty()) return std::nullopt;
  return viz::EpochSplit{epoch, "bicro", viz::SplitKind::kept, {clean_[0].begin(), clean_[0].end()}};
}

std::vector<PlanSplit> BicroMethod::plan_splits(int64_t epoch) const {
  if (warmup(epoch) || clean_[0].empty()) return {};
  return two_nets_plan_splits("bicro", epoch, clean_[0], clean_[1]);
}

std::string BicroMethod::results_notes() const {
  if (clean_[0].empty()) return "The best validated state is from the warm-up: no split yet.\n";
  std::ostringstream s;
  for (int k = 0; k < 2; ++k)
    s << "Last split of net " << net_name(k) << " ("
      << (bicro_.fit_type != BicroFit::Gmm ? "Beta" : "Gaussian") << " mixture over per-pair losses): "
      << std::count(clean_[k].begin(), clean_[k].end(), 1) << " pairs clean; clean-set precision "
      << quality_[k].clean_precision << ", recall " << quality_[k].clean_recall << ", accuracy "
      << quality_[k].accuracy << " against the injected noise.\n";
  return s.str();
}

const MethodSpec& bicro_method_spec() {
  static const MethodSpec spec = [] {
    MethodSpec s;
    s.name = "bicro";
    s.summary = "BiCro, NCR's co-training with soft labels from bidirectional cross-modal similarity consistency "
                "(CVPR'23)";
    s.doc = "docs/methods/bicro.md";
    s.layout = DataLayout::Precomp;
    s.presets = {"f30k", "coco", "cc152k"};
    s.tables = {&bicro_pairs_flags(), &bicro_flags()};
    s.defaults = bicro_defaults();
    s.check = check_bicro;
    s.data_parallel = true;
    s.demo.warmup_epochs = 6;  // tests/train/bicro_behaviour_test.cpp: 3 or 4 warm-up epochs leave the model too weak
    s.demo.split_stat = "clean_precision_A";
    // tests/train/bicro_behaviour_test.cpp: with the scripts' share of each warm-up batch (0.3, 0.5) when the
    // warm-up starts to learn on this world depends on the seed and the BLAS kernels, and co-training from a weak
    // model collapses it; the whole batch (as NCR's warm-up) learns for every seed (docs/methods/bicro.md).
    s.demo.flags = {{"warmup_rate", 1.0}};
    s.make = make_pairs_method<BicroMethod, BicroOptions>(false);
    return s;
  }();
  return spec;
}

}  // namespace rematch::train
