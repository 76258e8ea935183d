#include "train/methods/cream/cream_method.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <sstream>

#include "autograd/autograd.h"
#include "train/methods/cream/cream_losses.h"
#include "train/methods/kit/cycling_batches.h"
#include "train/methods/ncr/ncr_method.h"

namespace rematch::train {
namespace {

const char* net_name(int k) { return k == 0 ? "A" : "B"; }

// `train.py: main` builds SGRAF(opt) twice: A, then B, from `gen`.
std::vector<SgrafNet> two_nets(const PairsKit& kit, const models::SgrafConfig& config, Generator& gen, double lr) {
  std::vector<SgrafNet> nets;
  nets.push_back(kit.new_net(config, gen, NetOptimizer{lr, {}}));
  nets.push_back(kit.new_net(config, gen, NetOptimizer{lr, {}}));
  return nets;
}

double mean_of(const std::vector<double>& v) {
  return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

// The batch's clean posteriors w (index = position in the batch, which Batcher orders by caption length).
std::vector<double> of_batch(const data::Batch& b, const std::vector<double>& per_caption) {
  const std::vector<int64_t> order = b.caption_index.to_vector<int64_t>();
  std::vector<double> w(order.size());
  for (size_t i = 0; i < order.size(); ++i) w[i] = per_caption[static_cast<size_t>(order[i])];
  return w;
}

}  // namespace

std::vector<uint8_t> cream_parts(const std::vector<uint8_t>& clean_a, const std::vector<uint8_t>& clean_b) {
  REMATCH_CHECK(clean_a.size() == clean_b.size(), "cream_parts: the two nets' clean flags have ", clean_a.size(),
                " and ", clean_b.size(), " entries");
  std::vector<uint8_t> parts(clean_a.size());
  for (size_t i = 0; i < parts.size(); ++i)
    parts[i] = static_cast<uint8_t>(clean_a[i] && clean_b[i]     ? CreamPart::Clean
                                    : !clean_a[i] && !clean_b[i] ? CreamPart::Noisy
                                                                 : CreamPart::Hard);
  return parts;
}

CreamMethod::CreamMethod(const CommonOptions& common, const CreamOptions& options, PairsData data, std::ostream& log)
    : log_(log),
      cream_(options),
      gens_(common.seed),
      kit_(common, std::move(data), options.dtype),
      nets_(two_nets(kit_, kit_.model_config(options), gens_.model, common.learning_rate)) {
  log_ << kit_.describe(nets_[0]) << "\n";
  log_ << "cream: nets A and B (" << net(1).parameter_count() << " parameters each), tau " << cream_.tau
       << ", p_threshold " << cream_.p_threshold << ", hard pairs from co-training epoch " << cream_.hard_start_epoch
       << ", noisy pairs from " << cream_.noisy_start_epoch << "\n";
}

std::pair<std::vector<double>, std::vector<double>> CreamMethod::per_sample_losses(int64_t epoch) {
  // `eval_train` with mode "eval_loss": each net's per-pair InfoNCE loss (PairsKit::per_caption_losses).
  std::vector<std::vector<double>> out =
      kit_.per_caption_losses(nets_, epoch, [&](const Tensor& S) { return cream_infonce_per_pair(S, cream_.tau); });
  return {std::move(out[0]), std::move(out[1])};
}

std::vector<int64_t> CreamMethod::part(CreamPart p) const {
  std::vector<int64_t> out;
  for (size_t j = 0; j < parts_.size(); ++j)
    if (parts_[j] == static_cast<uint8_t>(p)) out.push_back(static_cast<int64_t>(j));
  return out;
}

void CreamMethod::build_plans(int64_t epoch) {
  steps_.clear();
  for (int k = 0; k < 2; ++k) {
    warmup_batches_[k].clear();
    iterations_[k].clear();
  }
  if (warmup(epoch)) {
    // `train.py: main`: warmup(A) then warmup(B), each its own pass over the shuffled loader, which stops at a batch
    // of one pair (`warmup`).
    for (int k = 0; k < 2; ++k) {
      for (auto& b : kit_.all_pairs().epoch_plan(2 * epoch + k)) {
        if (b.size() < 2) break;
        warmup_batches_[k].push_back(std::move(b));
      }
      for (int64_t i = 0; i < static_cast<int64_t>(warmup_batches_[k].size()); ++i)
        steps_.push_back({k, i, Kind::Warmup});
    }
    return;
  }
  const int64_t e = co_epoch(epoch);
  const std::vector<int64_t> clean = part(CreamPart::Clean), hard = part(CreamPart::Hard),
                             noisy = part(CreamPart::Noisy);
  // `train_one_epoch`: "No clean pairs! This epoch is skipped!"
  if (clean.empty()) return;
  for (int k = 0; k < 2; ++k) {
    // A and B each get new loaders over the same three sets (`get_loader(..., "train", ...)` before each net).
    const uint64_t base = 2 + 3 * static_cast<uint64_t>(k);
    const data::Batcher clean_loader = kit_.loader(base, false, clean);
    std::vector<std::vector<int64_t>> h_plan;
    if (!hard.empty()) h_plan = kit_.loader(base + 1, false, hard).epoch_plan(epoch);
    std::optional<CyclingBatches> noisy_batches;  // `train_one_epoch` re-creates the noisy iterator when it runs out
    if (!noisy.empty()) noisy_batches.emplace(kit_.loader(base + 2, false, noisy), epoch);
    size_t h_cursor = 0;
    std::vector<int64_t> last_hard;
    for (auto& c : clean_loader.epoch_plan(epoch)) {
      Iteration it;
      bool hard_fresh = false;
      if (!hard.empty()) {
        if (h_cursor < h_plan.size()) {
          last_hard = h_plan[h_cursor++];
          hard_fresh = true;
        }
        it.hard = last_hard;  // once run out: the last batch again (its labels still enter the filter), untrained
      }
      if (noisy_batches) it.noisy = noisy_batches->next();
      // "drop last batch if only one sample": a clean batch of one ends the net's epoch, a hard or noisy one is
      // not trained.
      if (c.size() < 2) break;
      it.clean = std::move(c);
      it.hard_trains = hard_fresh && it.hard.size() >= 2 && e >= cream_.hard_start_epoch;
      it.noisy_trains = !it.noisy.empty() && it.noisy.size() >= 2 && e >= cream_.noisy_start_epoch;
      iterations_[k].push_back(std::move(it));
    }
    for (int64_t i = 0; i < static_cast<int64_t>(iterations_[k].size()); ++i) {
      const Iteration& it = iterations_[k][static_cast<size_t>(i)];
      steps_.push_back({k, i, Kind::Clean});
      if (it.hard_trains) steps_.push_back({k, i, Kind::Hard});
      if (it.noisy_trains) steps_.push_back({k, i, Kind::Noisy});
    }
  }
}

EpochInfo CreamMethod::epoch_info(int64_t epoch) const {
  EpochInfo info{warmup(epoch) ? "warmup" : "co-train", static_cast<int64_t>(steps_.size()), {}};
  if (warmup(epoch) || parts_.empty()) return info;
  const std::vector<uint8_t>& truth = kit_.correspondence().clean;
  const char* names[3] = {"clean", "hard", "noisy"};
  for (int p = 0; p < 3; ++p) {
    int64_t size = 0, truly_clean = 0;
    for (size_t j = 0; j < parts_.size(); ++j)
      if (parts_[j] == p) {
        ++size;
        truly_clean += truth[j] ? 1 : 0;
      }
    info.stats[std::string(names[p]) + "_size"] = static_cast<double>(size);
    // `main` prints each set's share of truly clean pairs ("The clean ratio is ...").
    info.stats[std::string(names[p]) + "_precision"] =
        size > 0 ? static_cast<double>(truly_clean) / static_cast<double>(size) : 0.0;
  }
  return info;
}

EpochInfo CreamMethod::begin_epoch(int64_t epoch) {
  epoch_ = epoch;
  // `adjust_learning_rate(opt, optimizer, epoch)` with the co-training epoch; the warm-up runs at the base rate.
  const CommonOptions& c = kit_.common();
  for (SgrafNet& n : nets_) n.set_lr(step_decay_lr(c.learning_rate, epoch, c.warmup_epoch, c.lr_update));
  labels_h_.clear();
  labels_n_.clear();
  if (!warmup(epoch)) {
    const auto [la, lb] = per_sample_losses(epoch);
    const std::vector<double>* losses[2] = {&la, &lb};
    std::vector<uint8_t> clean[2];
    for (int k = 0; k < 2; ++k) {
      // `eval_train` + `split_prob`: the same co-divide as NCR's (GaussianMixture(2, max_iter=10, tol=1e-2,
      // reg_covar=5e-4) over min–max normalised losses).
      NcrSplit s = ncr_split(*losses[k], kit_.dtype(), cream_.p_threshold, c.seed + 2 * static_cast<uint64_t>(epoch) + k);
      prob_[k] = std::move(s.probability);
      clean[k] = std::move(s.clean);
    }
    parts_ = cream_parts(clean[0], clean[1]);
  }
  build_plans(epoch);
  epoch_info_ = epoch_info(epoch);
  if (!warmup(epoch) && steps_.empty())
    log_ << "cream: epoch " << epoch << ": the split left no clean pairs; no co-training step (`train_one_epoch`)\n";
  return epoch_info_;
}

StepResult CreamMethod::train_step(int64_t epoch, int64_t step) {
  check_step_in_epoch(name(), epoch, step, epoch_, steps_.size());
  const StepRef ref = steps_[static_cast<size_t>(step)];
  const int x = ref.net, y = 1 - ref.net;
  models::SgrafModel& X = net(x);
  SgrafNet& X_net = nets_[static_cast<size_t>(x)];
  StepResult r;
  auto finish = [&](const Tensor& loss, const std::string& part, int64_t pairs) {
    r.loss = loss.item<double>();
    r.parts[part + "_" + net_name(x)] = r.loss;
    check_finite_loss(name(), epoch, step, part + "_" + net_name(x), r.loss);
    kit_.update(X_net, loss, epoch, step);
    r.pairs = pairs;
    return r;
  };
  if (ref.kind == Kind::Warmup) {
    // `warmup`: model.train(mode="warmup"), mean_i ℓ_i.
    X.train();
    const data::Batch b = kit_.batch(warmup_batches_[x][static_cast<size_t>(ref.index)]);
    return finish(mean(cream_infonce_per_pair(kit_.training_scores(X, b), cream_.tau)), "warmup", b.size());
  }
  const Iteration& it = iterations_[x][static_cast<size_t>(ref.index)];
  if (ref.kind == Kind::Hard || ref.kind == Kind::Noisy) {
    const bool hard = ref.kind == Kind::Hard;
    const std::vector<double>& labels = hard ? labels_h_ : labels_n_;
    REMATCH_CHECK(!labels.empty(), name(), ": step ", step, " of epoch ", epoch, " is a ", hard ? "hard" : "noisy",
                  " update without its clean step's labels");
    const data::Batch b = kit_.batch(hard ? it.hard : it.noisy);
    X.train();
    const Tensor loss =
        cream_refined_loss(kit_.training_scores(X, b), labels, cream_.tau, hard ? filter_h_ : filter_n_);
    (hard ? labels_h_ : labels_n_).clear();
    return finish(loss, hard ? "hard" : "noisy", b.size());
  }
  // `train_one_epoch`: label refinement with X (and Y) in eval mode, before any update of the iteration.
  const data::Batch bc = kit_.batch(it.clean);
  std::vector<double> labels_c;
  double filter_c = 0;
  {
    NoGradGuard no_grad;
    X.eval();
    net(y).eval();
    const std::vector<double> pc = cream_predict(X(bc.regions, bc.captions, bc.lengths), cream_.tau);
    // targets_c = w^Y·1 + (1 − w^Y)·p^X (`torch.mul(batch_prob_B_c, batch_labels_c) + ...` for A).
    const std::vector<double> wc = of_batch(bc, prob_[y]);
    labels_c.resize(pc.size());
    for (size_t i = 0; i < pc.size(); ++i) labels_c[i] = wc[i] + (1 - wc[i]) * pc[i];
    const double n_c = static_cast<double>(std::count(parts_.begin(), parts_.end(), 0));
    const double n_h = static_cast<double>(std::count(parts_.begin(), parts_.end(), 1));
    const double n_n = static_cast<double>(std::count(parts_.begin(), parts_.end(), 2));
    labels_h_.clear();
    labels_n_.clear();
    if (!it.hard.empty()) {
      // targets_h = w̄·1 + (1 − w̄)·p^X, w̄ = (w^A + w^B)/2.
      const data::Batch bh = kit_.batch(it.hard);
      const std::vector<double> ph = cream_predict(X(bh.regions, bh.captions, bh.lengths), cream_.tau);
      const std::vector<double> wa = of_batch(bh, prob_[0]), wb = of_batch(bh, prob_[1]);
      labels_h_.resize(ph.size());
      for (size_t i = 0; i < ph.size(); ++i) {
        const double w = (wa[i] + wb[i]) / 2;
        labels_h_[i] = w + (1 - w) * ph[i];
      }
    }
    if (!it.noisy.empty()) {
      // targets_u = (p^X + p^Y)/2.
      const data::Batch bn = kit_.batch(it.noisy);
      const std::vector<double> p1 = cream_predict(X(bn.regions, bn.captions, bn.lengths), cream_.tau);
      const std::vector<double> p2 = cream_predict(net(y)(bn.regions, bn.captions, bn.lengths), cream_.tau);
      labels_n_.resize(p1.size());
      for (size_t i = 0; i < p1.size(); ++i) labels_n_[i] = (p1[i] + p2[i]) / 2;
    }
    // filter = Σ_parts mean(labels)·|part| / N; above 85% clean pairs the clean and hard filters are 0, otherwise the
    // clean one is max(hard_start_epoch − e, filter) (≥ 1 before the hard stage: only the positives weigh).
    const double filter =
        (mean_of(labels_c) * n_c + mean_of(labels_h_) * n_h + mean_of(labels_n_) * n_n) / (n_c + n_h + n_n);
    const double ratio = n_c / (n_c + n_h + n_n);
    if (ratio > 0.85) {
      filter_c = 0;
      filter_h_ = 0;
    } else {
      filter_c = std::max(static_cast<double>(cream_.hard_start_epoch - co_epoch(epoch)), filter);
      filter_h_ = filter;
    }
    filter_n_ = filter;
    if (!it.hard_trains) labels_h_.clear();
    if (!it.noisy_trains) labels_n_.clear();
  }
  X.train();
  const Tensor loss = cream_refined_loss(kit_.training_scores(X, bc), labels_c, cream_.tau, filter_c);
  return finish(loss, "clean", bc.size());
}

EvalResult CreamMethod::validate() {
  // `train.py: validate`: rSum of (S_A + S_B)/2 on the dev subset selects the model.
  const data::PrecompDataset& dev = *kit_.data().dev;
  const Tensor sa = kit_.split_scores(dev, net(0));
  const Tensor sb = kit_.split_scores(dev, net(1));
  net(0).train();
  net(1).train();
  return two_nets_validation_result(sa, sb, dev.captions_per_image());
}

EvalResult CreamMethod::test() {
  // `evaluation.py: evalrank`: the average of A's and B's matrices; A and B alone as well.
  const data::PrecompDataset& t = *kit_.data().test;
  const Tensor sa = kit_.split_scores(t, net(0));
  const Tensor sb = kit_.split_scores(t, net(1));
  net(0).train();
  net(1).train();
  return two_nets_test_result(sa, sb, t.captions_per_image(), kit_.common(), "CREAM");
}

void CreamMethod::save_state(TrainingState& s) const {
  save_pairs_state(s, nets_[0], gens_, epoch_);
  s.put_entry("model_prefixes", R"(["model.", "model_B."])");
  nets_[1].save(s, "model_B.", "optim_B.");
  for (int k = 0; k < 2; ++k) s.put_double_vector(std::string("cream.prob_") + net_name(k), prob_[k]);
  s.put_int_vector("cream.parts", std::vector<int64_t>(parts_.begin(), parts_.end()));
  s.put_double_vector("cream.labels_h", labels_h_);
  s.put_double_vector("cream.labels_n", labels_n_);
  s.put_double_vector("cream.filters", {filter_h_, filter_n_});
}

void CreamMethod::load_state(const TrainingState& s) {
  epoch_ = load_pairs_state(s, nets_[0], gens_);
  nets_[1].load(s, "model_B.", "optim_B.");
  const size_t n = static_cast<size_t>(kit_.train_split().num_captions());
  for (int k = 0; k < 2; ++k) prob_[k] = s.get_double_vector(std::string("cream.prob_") + net_name(k));
  const std::vector<int64_t> p = s.get_int_vector("cream.parts");
  parts_.assign(p.begin(), p.end());
  // A damaged checkpoint must not index past the data.
  REMATCH_CHECK((parts_.empty() && prob_[0].empty() && prob_[1].empty()) ||
                    (parts_.size() == n && prob_[0].size() == n && prob_[1].size() == n),
                s.source(), ": 'cream.parts', 'cream.prob_A' and 'cream.prob_B' have ", parts_.size(), ", ",
                prob_[0].size(), " and ", prob_[1].size(), " entries for ", n, " training captions");
  for (const uint8_t v : parts_)
    REMATCH_CHECK(v <= 2, s.source(), ": 'cream.parts' holds ", static_cast<int>(v), ", not 0, 1 or 2");
  labels_h_ = s.get_double_vector("cream.labels_h");
  labels_n_ = s.get_double_vector("cream.labels_n");
  const std::vector<double> f = s.get_double_vector("cream.filters");
  REMATCH_CHECK(f.size() == 2, s.source(), ": 'cream.filters' has ", f.size(), " entries, not 2");
  filter_h_ = f[0];
  filter_n_ = f[1];
  if (epoch_ < 0) return;
  REMATCH_CHECK(warmup(epoch_) || !parts_.empty(), s.source(), ": co-training epoch ", epoch_, " without a saved split");
  build_plans(epoch_);
  epoch_info_ = epoch_info(epoch_);
}

std::optional<viz::EpochSplit> CreamMethod::epoch_split(int64_t epoch) const {
  if (warmup(epoch) || parts_.empty()) return std::nullopt;
  std::vector<uint8_t> kept(parts_.size());
  for (size_t j = 0; j < parts_.size(); ++j) kept[j] = parts_[j] == 0 ? 1 : 0;
  return viz::EpochSplit{epoch, "cream", viz::SplitKind::kept, {kept.begin(), kept.end()}};
}

std::vector<PlanSplit> CreamMethod::plan_splits(int64_t epoch) const {
  if (warmup(epoch) || parts_.empty()) return {};
  return {PlanSplit{"the clean, hard and noisy sets",
                    viz::EpochSplit{epoch, "cream", viz::SplitKind::label, {parts_.begin(), parts_.end()}}}};
}

std::string CreamMethod::results_notes() const {
  if (parts_.empty()) return "The best validated state is from the warm-up: no split yet.\n";
  const EpochInfo info = epoch_info(epoch_);
  std::ostringstream s;
  s << "Last split (Gaussian mixtures of both nets over per-pair InfoNCE losses): ";
  for (const char* p : {"clean", "hard", "noisy"})
    s << info.stats.at(std::string(p) + "_size") << " " << p << " pairs (" << info.stats.at(std::string(p) + "_precision")
      << " truly clean)" << (std::string(p) == "noisy" ? ".\n" : ", ");
  return s.str();
}

const MethodSpec& cream_method_spec() {
  static const MethodSpec spec = [] {
    MethodSpec s;
    s.name = "cream";
    s.summary = "CREAM, consistency refining and mining of clean, hard and noisy pairs by two SGR/SAF nets (TIP'24)";
    s.doc = "docs/methods/cream.md";
    s.layout = DataLayout::Precomp;
    s.presets = {"f30k", "coco", "cc152k"};
    s.tables = {&cream_pairs_flags(), &cream_flags()};
    s.defaults = cream_defaults();
    s.check = check_cream;
    s.data_parallel = true;  // docs/distributed.md §4.1, item 10
    s.demo.warmup_epochs = 3;
    s.demo.split_stat = "clean_precision";
    s.make = make_pairs_method<CreamMethod, CreamOptions>(false);
    return s;
  }();
  return spec;
}

}  // namespace rematch::train
