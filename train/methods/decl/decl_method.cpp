#include "train/methods/decl/decl_method.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "autograd/autograd.h"

namespace rematch::train {
namespace decl {

Tensor evidence(const Tensor& raw, double tau) {
  // `SGRAF.py: SGRAF.forward_sim` (mode 'not sims'): torch.exp(torch.tanh(raw_sims) / self.tau).
  return exp(div(tanh(raw), tau));
}

Tensor dirichlet_kl_to_uniform(const Tensor& alpha) {
  // `DECL.py: KL(alpha, c)` with β = 1: KL = Σ_j (α_j − 1)(ψ(α_j) − ψ(S)) + log Γ(S) − Σ_j log Γ(α_j) − log Γ(c),
  // S = Σ_j α_j (the code's Σ_j log Γ(β_j) is 0 and log Γ(S_β) = log Γ(c)).
  const int64_t c = alpha.size(1);
  const Tensor S = sum(alpha, {1}, true);
  const Tensor ln_b = sub(lgamma(S), sum(lgamma(alpha), {1}, true));
  const double ln_b_uniform = -std::lgamma(static_cast<double>(c));
  const Tensor kl = sum(mul(sub(alpha, 1.0), sub(digamma(alpha), digamma(S))), {1}, true);
  return add(add(kl, ln_b), ln_b_uniform);
}

Tensor evidential_loss(const Tensor& alpha, const Tensor& labels, double lambda2) {
  // `DECL.py: mse_loss(label, alpha, c, lambda2)`.
  const Tensor S = sum(alpha, {1}, true);
  const Tensor m = div(alpha, S);
  const Tensor A = sum(square(sub(labels, m)), {1}, true);
  const Tensor B = sum(div(mul(alpha, sub(S, alpha)), mul(mul(S, S), add(S, 1.0))), {1}, true);
  // α̃ = E·(1 − y) + 1: the evidence of the labelled entry removed.
  const Tensor alp = add(mul(sub(alpha, 1.0), rsub(1.0, labels)), 1.0);
  const Tensor C = mul(dirichlet_kl_to_uniform(alp), lambda2);
  return add(add(A, B), C);
}

Tensor robust_dynamic_hinge(const Tensor& scores, double margin, int64_t k) {
  // `DECL.py: DECL.RDH_loss(scores, neg)`.
  const int64_t n = scores.size(0);
  REMATCH_CHECK(scores.dim() == 2 && scores.size(1) == n, "decl: RDH expects a square score matrix, got ",
                scores.describe());
  REMATCH_CHECK(k >= 1 && k <= n, "decl: RDH hardness ", k, " outside [1, ", n, "]");
  const Tensor I = eye(n, n, scores.dtype(), scores.device());
  const Tensor diagonal = sum(mul(scores, I), {1}, true);                        // [B, 1]: s_ii
  const Tensor cost_s = clamp_min(add(sub(scores, diagonal), margin), 0.0);        // image i: [α + s_ij − s_ii]₊
  const Tensor cost_im = clamp_min(add(sub(scores, transpose(diagonal, 0, 1)), margin), 0.0);  // [α + s_ij − s_jj]₊
  const Tensor mask = to(I, DType::Bool);
  const Tensor top_row = topk(masked_fill(cost_s, mask, 0.0), k, 1).first;
  const Tensor top_column = topk(transpose(masked_fill(cost_im, mask, 0.0), 0, 1), k, 1).first;
  return div(add(sum(top_row, {1}), sum(top_column, {1})), static_cast<double>(k));
}

int64_t hardness(int64_t batch_size, double eta, int64_t mu, int64_t step, int64_t batch_length) {
  // neg = max(int(self.opt.batch_size - self.opt.eta * self.step), self.mu); if batch_length < neg: batch_length − 1.
  const double annealed = static_cast<double>(batch_size) - eta * static_cast<double>(step);
  int64_t k = std::max(static_cast<int64_t>(annealed), mu);  // int() truncates toward zero, as the cast
  if (batch_length < k) k = batch_length - 1;
  return k;
}

}  // namespace decl

DeclMethod::DeclMethod(const CommonOptions& common, const DeclOptions& options, PairsData data, std::ostream& log)
    : decl_(options),
      gens_(common.seed),
      kit_(common, std::move(data), options.dtype),
      net_(kit_.new_net(kit_.model_config(options), gens_.model, NetOptimizer{common.learning_rate, {}})) {
  log << kit_.describe(net_) << "\n";
  log << "decl: τ = " << decl_.tau << ", λ1 = " << decl_.lambda1 << ", λ2 = " << decl_.lambda2 << ", η = " << decl_.eta
      << ", μ = " << decl_.mu << ", margin " << decl_.margin << "\n";
}

std::vector<uint8_t> DeclMethod::evidence_split(int64_t epoch) {
  // `train.py: get_correspondence`: model.val_start(), the shuffled train loader (every batch, the last partial
  // one too), no graph.
  models::SgrafModel& m = net_.model();
  m.eval();
  const std::vector<std::vector<double>> values =
      kit_.per_caption(kit_.loader(1, false), epoch, 2, [&](const data::Batch& b) {
        const int64_t k = b.size();
        const Tensor e = decl::evidence(m.logits(b.regions, b.captions, b.lengths), decl_.tau);
        const Tensor sum_e = add(e, transpose(e, 0, 1));
        const Tensor norm_e = div(sum_e, sum(sum_e, {1}, true));
        const std::vector<int64_t> pred = to(argmax(norm_e, 1), Device::cpu()).to_vector<int64_t>();
        // u = k/Σ_j α^{i2t}_ij + k/Σ_j α^{t2i}_ij, α = e + 1.
        const double kd = static_cast<double>(k);
        const Tensor u = add(rdiv(kd, sum(add(e, 1.0), {1})), rdiv(kd, sum(add(transpose(e, 0, 1), 1.0), {1})));
        std::vector<double> matched(pred.size());
        for (size_t i = 0; i < pred.size(); ++i) matched[i] = pred[i] == static_cast<int64_t>(i) ? 1.0 : 0.0;
        return std::vector<std::vector<double>>{std::move(matched),
                                                to(to(u, DType::Float64), Device::cpu()).to_vector<double>()};
      });
  m.train();
  const std::vector<double>& uncertainty = values[1];
  std::vector<uint8_t> clean(values[0].size());
  for (size_t j = 0; j < clean.size(); ++j) clean[j] = values[0][j] > 0.5 ? 1 : 0;
  double u_clean = 0, u_noisy = 0;
  int64_t n_clean = 0;
  for (size_t j = 0; j < clean.size(); ++j) {
    (clean[j] ? u_clean : u_noisy) += uncertainty[j];
    n_clean += clean[j];
  }
  const int64_t n_noisy = static_cast<int64_t>(clean.size()) - n_clean;
  clean_uncertainty_ = n_clean > 0 ? u_clean / static_cast<double>(n_clean) : 0.0;
  noisy_uncertainty_ = n_noisy > 0 ? u_noisy / static_cast<double>(n_noisy) : 0.0;
  return clean;
}

std::vector<std::vector<int64_t>> DeclMethod::main_plan(int64_t epoch) const {
  std::vector<std::vector<int64_t>> plan;
  for (auto& b : kit_.all_pairs().epoch_plan(epoch)) {
    if (static_cast<int64_t>(b.size()) < decl_.mu + 1) break;
    plan.push_back(std::move(b));
  }
  return plan;
}

EpochInfo DeclMethod::main_epoch_info() const {
  const int64_t n_clean = std::count(clean_.begin(), clean_.end(), 1);
  return EpochInfo{"main", static_cast<int64_t>(plan_.size()),
                   {{"clean_size", static_cast<double>(n_clean)},
                    {"noisy_size", static_cast<double>(clean_.size()) - static_cast<double>(n_clean)},
                    {"clean_precision", quality_.clean_precision},
                    {"clean_recall", quality_.clean_recall},
                    {"noisy_recall", quality_.noisy_recall},
                    {"split_accuracy", quality_.accuracy},
                    {"clean_uncertainty", clean_uncertainty_},
                    {"noisy_uncertainty", noisy_uncertainty_}}};
}

EpochInfo DeclMethod::begin_epoch(int64_t epoch) {
  const CommonOptions& c = kit_.common();
  epoch_ = epoch;
  // `adjust_learning_rate(opt, optimizer, epoch)` with the main loop's epoch (from 0 after the warm-up).
  net_.set_lr(step_decay_lr(c.learning_rate, epoch, c.warmup_epoch, c.lr_update));
  if (warmup(epoch)) {
    // `train.py`: the warm-up epochs at the initial learning rate, every batch but a single pair.
    plan_ = kit_.all_pairs_plan(epoch);
    clean_.clear();
    epoch_info_ = EpochInfo{"warmup", static_cast<int64_t>(plan_.size()), {}};
    return epoch_info_;
  }
  clean_ = evidence_split(epoch);
  quality_ = data::split_quality(clean_, kit_.correspondence().clean);
  plan_ = main_plan(epoch);
  epoch_info_ = main_epoch_info();
  return epoch_info_;
}

StepResult DeclMethod::train_step(int64_t epoch, int64_t step) {
  check_step_in_epoch(name(), epoch, step, epoch_, plan_.size());
  const bool warm = warmup(epoch);
  if (!warm)
    REMATCH_CHECK(clean_.size() == static_cast<size_t>(kit_.train_split().num_captions()), name(),
                  ": no split for main epoch ", epoch);
  net_.model().train();
  const data::Batch b = kit_.batch(plan_[static_cast<size_t>(step)]);
  const int64_t n = b.size();
  // `self.step += 1` first; the count is kept only once the step is taken (a non-finite loss is retried).
  const int64_t step_no = step_count_ + 1;
  const int64_t k = decl::hardness(kit_.common().batch_size, decl_.eta, decl_.mu, step_no, n);
  // y = I, with y_ii = 0 for the pairs of the split's noisy side (`train_batch`: batch_labels[i][i] = 0).
  std::vector<double> labels(static_cast<size_t>(n * n), 0.0), clean_mask(static_cast<size_t>(n), 1.0);
  const std::vector<int64_t> order = b.caption_index.to_vector<int64_t>();
  bool any_clean = warm;
  for (int64_t i = 0; i < n; ++i) {
    const bool c = warm || clean_[static_cast<size_t>(order[static_cast<size_t>(i)])];
    clean_mask[static_cast<size_t>(i)] = c ? 1.0 : 0.0;
    labels[static_cast<size_t>(i * n + i)] = c ? 1.0 : 0.0;
    any_clean = any_clean || c;
  }
  const Tensor y = to(to(from_vector(labels, {n, n}), kit_.dtype()), kit_.device());
  const Tensor raw = kit_.training_scores(net_.model(), b, ScoreKind::Logits);
  const Tensor e = decl::evidence(raw, decl_.tau);
  const Tensor alpha_i2t = add(e, 1.0), alpha_t2i = add(transpose(e, 0, 1), 1.0);
  const Tensor l_edl = mean(add(decl::evidential_loss(alpha_i2t, y, decl_.lambda2),
                                decl::evidential_loss(alpha_t2i, y, decl_.lambda2)));
  Tensor loss = l_edl;
  StepResult r;
  r.parts["edl"] = l_edl.item<double>();
  check_finite_loss(name(), epoch, step, "edl", r.parts["edl"]);
  if (any_clean) {
    // RDH on tanh(s), summed over the clean pairs (`loss_rdh[c_idx].sum() * self.lambda1`).
    Tensor rdh = decl::robust_dynamic_hinge(tanh(raw), decl_.margin, k);
    if (!warm) rdh = mul(rdh, to(to(from_vector(clean_mask, {n}), kit_.dtype()), kit_.device()));
    const Tensor l_rdh = mul(sum(rdh), decl_.lambda1);
    r.parts["rdh"] = l_rdh.item<double>();
    check_finite_loss(name(), epoch, step, "rdh", r.parts["rdh"]);
    loss = add(loss, l_rdh);
  } else {
    r.parts["rdh"] = 0.0;
  }
  r.loss = loss.item<double>();
  kit_.update(net_, loss, epoch, step);
  step_count_ = step_no;
  r.pairs = n;
  return r;
}

void DeclMethod::save_state(TrainingState& s) const {
  save_pairs_state(s, net_, gens_, epoch_);
  s.put_int("decl.step", step_count_);
  s.put_int_vector("decl.clean", std::vector<int64_t>(clean_.begin(), clean_.end()));
  for (const auto& [k, v] : epoch_info_.stats) s.put_double("decl.stat." + k, v);
}

void DeclMethod::load_state(const TrainingState& s) {
  epoch_ = load_pairs_state(s, net_, gens_);
  step_count_ = s.get_int("decl.step");
  REMATCH_CHECK(step_count_ >= 0, s.source(), ": 'decl.step' is ", step_count_);
  const std::vector<int64_t> clean = s.get_int_vector("decl.clean");
  clean_.assign(clean.begin(), clean.end());
  if (epoch_ < 0) return;
  if (warmup(epoch_)) {
    plan_ = kit_.all_pairs_plan(epoch_);
    epoch_info_ = EpochInfo{"warmup", static_cast<int64_t>(plan_.size()), {}};
    return;
  }
  const std::vector<uint8_t>& truth = kit_.correspondence().clean;
  REMATCH_CHECK(clean_.size() == truth.size(), s.source(), ": 'decl.clean' has ", clean_.size(), " entries for ",
                truth.size(), " training captions");
  plan_ = main_plan(epoch_);
  quality_ = data::split_quality(clean_, truth);
  epoch_info_ = EpochInfo{"main", static_cast<int64_t>(plan_.size()), {}};
  for (const auto& [key, value] : s.entries())
    if (key.rfind("decl.stat.", 0) == 0) epoch_info_.stats[key.substr(10)] = s.get_double(key);
}

std::optional<viz::EpochSplit> DeclMethod::epoch_split(int64_t epoch) const {
  if (warmup(epoch) || clean_.empty()) return std::nullopt;
  return viz::EpochSplit{epoch, "decl", viz::SplitKind::kept, {clean_.begin(), clean_.end()}};
}

std::string DeclMethod::results_notes() const {
  if (clean_.empty()) return "The best validated state is from the warm-up: no evidential split yet.\n";
  std::ostringstream s;
  s << "Last split (argmax of the normalised evidence, train.py: get_correspondence): "
    << epoch_info_.stats.at("clean_size") << " pairs clean; clean-set precision " << quality_.clean_precision
    << ", recall " << quality_.clean_recall << ", noisy recall " << quality_.noisy_recall << ", accuracy "
    << quality_.accuracy << " against the injected noise.\n";
  return s.str();
}

const MethodSpec& decl_method_spec() {
  static const MethodSpec spec = [] {
    MethodSpec s;
    s.name = "decl";
    s.summary = "DECL, deep evidential learning with noisy correspondence (ACM MM'22), on SGR/SAF";
    s.doc = "docs/methods/decl.md";
    s.layout = DataLayout::Precomp;
    s.presets = {"f30k", "coco", "cc152k"};
    s.tables = {&decl_pairs_flags(), &decl_flags()};
    s.defaults = decl_defaults();
    s.check = check_decl;
    s.data_parallel = true;
    s.demo.warmup_epochs = 2;
    s.demo.split_stat = "clean_precision";
    s.make = make_pairs_method<DeclMethod, DeclOptions>(false);
    return s;
  }();
  return spec;
}

}  // namespace rematch::train
