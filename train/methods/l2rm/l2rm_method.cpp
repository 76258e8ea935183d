#include "train/methods/l2rm/l2rm_method.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <sstream>

#include "autograd/autograd.h"
#include "ot/ot.h"
#include "tensor/kernels.h"
#include "train/losses/retrieval_losses.h"
#include "viz/plots.h"

namespace rematch::train {
namespace {

// The noisy loader's batches of pass `cycle` through the noisy set in epoch `epoch` (it cycles when the clean
// loader has more batches, docs/methods/l2rm.md §1.1): a plan index of its own per (epoch, cycle).
int64_t noisy_plan_index(int64_t epoch, int64_t cycle) { return epoch * 4096 + cycle; }

// resolve_defaults turns --mask_positives auto into on or off by one rule (on iff noise is injected,
// l2rm_options.cpp, docs/methods/l2rm.md §1.5 step 4); the method only reads the result.
bool positives_masked(const L2rmOptions& o) {
  REMATCH_CHECK(o.mask_positives != MaskPositives::Auto,
                "l2rm: --mask_positives is auto, expected on or off (resolve_defaults resolves auto)");
  return o.mask_positives == MaskPositives::On;
}

}  // namespace

L2rmMethod::L2rmMethod(const CommonOptions& common, const L2rmOptions& options, PairsData data, std::ostream& log)
    : log_(log),
      l2rm_(options),
      mask_positives_(positives_masked(options)),
      gens_(common.seed),
      kit_(common, std::move(data), options.dtype),
      net_(kit_.new_net(kit_.model_config(options), gens_.model, NetOptimizer{common.learning_rate, {}})) {
  log << kit_.describe(net_) << "\n";
  // f_c's width is the number of captions of a batch (§1.4): the batch size is baked into it.
  const int64_t B = common.batch_size;
  cost_net_ = std::make_unique<models::CostNet>(B, kit_.dtype());
  cost_net_->to(kit_.device());
  cost_optimizer_ = std::make_unique<nn::Adam>(cost_net_->parameters(), l2rm_.cost_lr);
  const data::PrecompDataset& train = kit_.train_split();
  REMATCH_CHECK(train.num_images() >= B, "l2rm: the image queue needs --batch_size (", B,
                ") training images, the data set has ", train.num_images());
  // The queue starts as batch_size random training images (§1.4).
  const Tensor rows = randperm(train.num_images(), Device::cpu(), &gens_.sample);
  std::vector<int64_t> first = rows.to_vector<int64_t>();
  first.resize(static_cast<size_t>(B));
  queue_ = to(to(train.images(first), kit_.dtype()), kit_.device());
  log << "l2rm: positives mask " << (mask_positives_ ? "on" : "off") << ", ε = " << l2rm_.reg << ", ρ = " << l2rm_.rho
      << ", dummy costs " << (l2rm_.dummy_costs == ot::DummyCost::L2RM ? "l2rm" : "shifted") << "\n";
}

std::vector<double> L2rmMethod::per_sample_losses(int64_t epoch) {
  // Eval mode, no graph, shuffled batches with the last partial batch kept (§1.3).
  models::SgrafModel& m = net_.model();
  m.eval();
  const std::vector<std::vector<double>> l = kit_.per_caption(kit_.loader(1, false), epoch, 1, [&](const data::Batch& b) {
    const Tensor losses = losses::per_sample_split_loss(m(b.regions, b.captions, b.lengths), l2rm_.margin, l2rm_.split_loss);
    return std::vector<std::vector<double>>{to(losses, DType::Float64).to_vector<double>()};
  });
  m.train();
  return l.front();
}

void L2rmMethod::build_loaders(int64_t epoch) {
  std::vector<int64_t> clean, noisy;
  for (int64_t j = 0; j < static_cast<int64_t>(clean_.size()); ++j) (clean_[j] ? clean : noisy).push_back(j);
  clean_loader_ = std::make_unique<data::Batcher>(kit_.loader(2, true, clean));
  noisy_loader_ = std::make_unique<data::Batcher>(kit_.loader(3, true, noisy));
  plan_ = clean_loader_->epoch_plan(epoch);
  noisy_plan_ = noisy_loader_->num_batches() > 0 ? noisy_loader_->epoch_plan(noisy_plan_index(epoch, noisy_cycle_))
                                                 : std::vector<std::vector<int64_t>>{};
}

EpochInfo L2rmMethod::begin_epoch(int64_t epoch) {
  const CommonOptions& c = kit_.common();
  epoch_ = epoch;
  net_.set_lr(step_decay_lr(c.learning_rate, epoch, c.warmup_epoch, c.lr_update));
  if (warmup(epoch)) {
    plan_ = kit_.all_pairs_plan(epoch);
    clean_.clear();
    epoch_info_ = EpochInfo{"warmup", static_cast<int64_t>(plan_.size()), {}};
    return epoch_info_;
  }
  cost_optimizer_->set_lr(step_decay_lr(l2rm_.cost_lr, epoch, c.warmup_epoch, c.lr_update));
  // (1) the split of the whole training set by the Beta mixture over the per-sample losses (§1.3).
  mixture_ = mixture::fit_beta_mixture(per_sample_losses(epoch), c.seed + static_cast<uint64_t>(epoch));
  clean_ = mixture_.clean;
  quality_ = data::split_quality(clean_, kit_.correspondence().clean);
  noisy_cycle_ = 0;
  noisy_cursor_ = 0;
  build_loaders(epoch);
  const int64_t n_clean = std::count(clean_.begin(), clean_.end(), 1);
  epoch_info_ = EpochInfo{"main", static_cast<int64_t>(plan_.size()),
                          {{"clean_size", static_cast<double>(n_clean)},
                           {"noisy_size", static_cast<double>(clean_.size()) - static_cast<double>(n_clean)},
                           {"clean_precision", quality_.clean_precision},
                           {"clean_recall", quality_.clean_recall},
                           {"split_accuracy", quality_.accuracy}}};
  if (noisy_plan_.empty())
    log_ << "l2rm: epoch " << epoch << ": fewer than " << c.batch_size
         << " pairs were split off as mismatched; the rematch loss is skipped this epoch\n";
  return epoch_info_;
}
std::vector<int64_t> L2rmMethod::next_noisy_batch() {
  if (noisy_cursor_ == static_cast<int64_t>(noisy_plan_.size())) {
    ++noisy_cycle_;
    noisy_cursor_ = 0;
    noisy_plan_ = noisy_loader_->epoch_plan(noisy_plan_index(epoch_, noisy_cycle_));
  }
  return noisy_plan_[static_cast<size_t>(noisy_cursor_++)];
}

double L2rmMethod::cost_update(const data::Batch& clean, const data::Batch& noisy) {
  // Reconstructed pairs (§1.4): k ~ U{1..max_reserved} clean images J go into queue slots Q of a copy of the
  // queue; π^sup[Q_t, J_t] = 1.
  const int64_t B = kit_.common().batch_size;
  const int64_t k = 1 + randint(0, l2rm_.max_reserved, {1}, DType::Int64, Device::cpu(), &gens_.sample).item<int64_t>();
  const std::vector<int64_t> J = randperm(B, Device::cpu(), &gens_.sample).to_vector<int64_t>();
  const std::vector<int64_t> Q = randperm(B, Device::cpu(), &gens_.sample).to_vector<int64_t>();
  // keys: the queue with slot Q_t holding clean image J_t (t < k), one gather from [queue; clean images] on
  // the device the queue lives on.
  std::vector<int64_t> source(static_cast<size_t>(B));
  std::iota(source.begin(), source.end(), int64_t{0});
  Tensor sup = zeros({B, B}, DType::Float32);
  float* sup_data = sup.data<float>();
  for (int64_t t = 0; t < k; ++t) {
    source[static_cast<size_t>(Q[t])] = B + J[t];
    sup_data[Q[t] * B + J[t]] = 1.0f;
  }
  const Tensor keys =
      kernels::index_select(kernels::cat({queue_, clean.regions}, 0), 0, from_vector(source, {B}, kit_.device()));
  Tensor key_scores;
  {
    models::SgrafModel& m = net_.model();
    m.eval();
    NoGradGuard no_grad;
    key_scores = m(keys, clean.captions, clean.lengths);
    m.train();
  }
  // L_OT = Σ π^sup ⊙ f_c(S^key), one Adam step on f_c only.
  const Tensor loss = sum(to(to(sup, kit_.dtype()), kit_.device()) * cost_net_->forward(key_scores));
  const double value = loss.item<double>();
  check_finite_loss(name(), epoch_, -1, "cost", value);
  cost_optimizer_->zero_grad();
  backward(loss);
  cost_optimizer_->step();
  // The queue now holds this step's noisy images (queue_length = batch size: a FIFO of one batch).
  queue_ = noisy.regions;
  return value;
}

Tensor L2rmMethod::rematch_costs(const Tensor& S) {
  NoGradGuard no_grad;
  if (l2rm_.cost_function == CostFunction::Cosine) return clamp_min(rsub(1.0, S.detach()), 1e-10);
  return clamp_min(cost_net_->forward(S.detach()), 1e-10);
}

Tensor L2rmMethod::rematch_plan(const Tensor& S) {
  // §1.5: C = max(f_c(S), 1e-10) with f_c's current weights, no graph.
  NoGradGuard no_grad;
  Tensor C = rematch_costs(S);
  const int64_t B = S.size(0);
  ot::SinkhornOptions o;
  o.epsilon = l2rm_.reg;
  o.max_iter = l2rm_.ot_max_iter;
  o.tol = l2rm_.ot_tol;
  o.stop = ot::StopRule::PotentialChange;
  // The reference solves in float64 on the CPU; on a GPU the fused float32 kernel with the shifted dummies.
  if (kit_.device().is_cpu()) C = to(C, DType::Float64);
  if (mask_positives_) o.mask = logical_not(to(eye(B, B, DType::Float32, C.device()), DType::Bool));
  ot::DummyOptions d;
  d.costs = l2rm_.dummy_costs;
  const ot::SinkhornResult r = l2rm_.rematch_ot == RematchOt::Full
                                    ? ot::sinkhorn(C, Tensor(), Tensor(), o)
                                    : ot::partial_sinkhorn(C, Tensor(), Tensor(), l2rm_.rho, o, d);
  return to(to(r.plan, S.dtype()), kit_.device());
}

StepResult L2rmMethod::warmup_step(int64_t epoch, int64_t step) {
  // §1.2: 0.5·(InfoNCE + RCE) on all pairs.
  net_.model().train();
  const data::Batch b = kit_.batch(plan_[static_cast<size_t>(step)]);
  const Tensor loss = losses::l2rm_warmup_loss(kit_.training_scores(net_.model(), b), l2rm_.tau, l2rm_.rce_label);
  StepResult r;
  r.loss = loss.item<double>();
  r.parts["warmup"] = r.loss;
  check_finite_loss(name(), epoch, step, "warmup", r.loss);
  kit_.update(net_, loss, epoch, step);
  r.pairs = b.size();
  return r;
}

StepResult L2rmMethod::train_step(int64_t epoch, int64_t step) {
  check_step_in_epoch(name(), epoch, step, epoch_, plan_.size());
  if (warmup(epoch)) return warmup_step(epoch, step);
  const data::Batch clean = kit_.batch(plan_[static_cast<size_t>(step)]);
  StepResult r;
  std::optional<data::Batch> noisy;
  if (!noisy_plan_.empty()) {
    noisy = kit_.batch(next_noisy_batch());
    // (a) the cost function learns from reconstructed pairs, before the rematch; --cost_function cosine has
    // no learnable cost, so nothing to update (the draws it would take come from the sample stream alone).
    if (l2rm_.cost_function != CostFunction::Cosine) r.parts["cost"] = cost_update(clean, *noisy);
  }
  // In main_L2RM.py's train() order: net.train(), the clean batch's forward, then the noisy batch's. The order
  // matters beyond the sum: each training-mode forward updates VisualSA's BatchNorm statistics (and draws dropout).
  models::SgrafModel& m = net_.model();
  m.train();
  // (b) the clean batch's summed hardest-negative triplet (§1.7).
  // Under mpirun both batches hold --batch_size pairs (drop_last), so both are shared or neither is.
  const Tensor l_trip = nn::hardest_negative_triplet(kit_.training_scores(m, clean), l2rm_.margin, true);
  r.parts["trip"] = l_trip.item<double>();
  check_finite_loss(name(), epoch, step, "trip", r.parts["trip"]);
  Tensor loss = l_trip;
  r.pairs += clean.size();
  if (noisy) {
    // (c) rematch the noisy batch: plan by masked partial OT, symmetric KL to the model's softmax; L = L_trip +
    // L_re (§1.5-1.7).
    const Tensor S_noisy = kit_.training_scores(m, *noisy);
    last_plan_ = rematch_plan(S_noisy);
    const Tensor l_re = losses::rematch_kl_loss(S_noisy, last_plan_, l2rm_.tau, l2rm_.rematch_loss);
    r.parts["rematch"] = l_re.item<double>();
    check_finite_loss(name(), epoch, step, "rematch", r.parts["rematch"]);
    loss = loss + l_re;
    r.pairs += noisy->size();
  }
  r.loss = loss.item<double>();
  kit_.update(net_, loss, epoch, step);
  return r;
}

void L2rmMethod::save_state(TrainingState& s) const {
  save_pairs_state(s, net_, gens_, epoch_);
  s.put_module("cost_net.", *cost_net_);
  s.put_optimizer("cost_optim.", *cost_optimizer_);
  s.put_tensor("l2rm.queue", queue_);
  s.put_int_vector("l2rm.clean", std::vector<int64_t>(clean_.begin(), clean_.end()));
  s.put_int("l2rm.noisy_cycle", noisy_cycle_);
  s.put_int("l2rm.noisy_cursor", noisy_cursor_);
  for (const auto& [k, v] : epoch_info_.stats) s.put_double("l2rm.stat." + k, v);
}

void L2rmMethod::load_state(const TrainingState& s) {
  epoch_ = load_pairs_state(s, net_, gens_);
  s.get_module("cost_net.", *cost_net_);
  s.get_optimizer("cost_optim.", *cost_optimizer_);
  // Sizes and positions are checked against this run: a damaged checkpoint must not index past the data.
  const Tensor queue = s.get_tensor("l2rm.queue");
  REMATCH_CHECK(queue.sizes() == queue_.sizes() && queue.dtype() == queue_.dtype(), s.source(), ": 'l2rm.queue' is ",
                queue.describe(), ", this run's image queue is ", queue_.describe());
  queue_ = to(queue, kit_.device());
  const std::vector<int64_t> clean = s.get_int_vector("l2rm.clean");
  clean_.assign(clean.begin(), clean.end());
  noisy_cycle_ = s.get_int("l2rm.noisy_cycle");
  noisy_cursor_ = s.get_int("l2rm.noisy_cursor");
  if (epoch_ < 0) return;
  if (warmup(epoch_)) {
    plan_ = kit_.all_pairs_plan(epoch_);
    epoch_info_ = EpochInfo{"warmup", static_cast<int64_t>(plan_.size()), {}};
    return;
  }
  const std::vector<uint8_t>& truth = kit_.correspondence().clean;
  REMATCH_CHECK(clean_.size() == truth.size(), s.source(), ": 'l2rm.clean' has ", clean_.size(), " entries for ",
                truth.size(), " training captions");
  build_loaders(epoch_);  // the noisy plan of the saved cycle, the clean plan of the epoch
  REMATCH_CHECK(noisy_cursor_ >= 0 && noisy_cursor_ <= static_cast<int64_t>(noisy_plan_.size()), s.source(),
                ": 'l2rm.noisy_cursor' is ", noisy_cursor_, ", outside the ", noisy_plan_.size(),
                " batches of the mismatched pairs' plan");
  epoch_info_ = EpochInfo{"main", static_cast<int64_t>(plan_.size()), {}};
  for (const auto& [key, value] : s.entries())
    if (key.rfind("l2rm.stat.", 0) == 0) epoch_info_.stats[key.substr(10)] = s.get_double(key);
  quality_ = data::split_quality(clean_, truth);
}

// The Beta mixture's split of begin_epoch (docs/methods/l2rm.md §1.3): kept = 1 for the clean set.
std::optional<viz::EpochSplit> L2rmMethod::epoch_split(int64_t epoch) const {
  if (warmup(epoch) || clean_.empty()) return std::nullopt;
  return viz::EpochSplit{epoch, "l2rm", viz::SplitKind::kept, {clean_.begin(), clean_.end()}};
}

void L2rmMethod::write_plots(const std::string& dir, int64_t epoch) {
  if (!mixture_.x.empty() && mixture_.fitted) {
    // The histogram's tallest bar (density units), so a component density that diverges at 0 or 1 (a Beta
    // with a < 1 or b < 1) is drawn cut at 1.5 times it instead of flattening the bars.
    constexpr int kBins = 50;
    const auto [lo, hi] = std::minmax_element(mixture_.x.begin(), mixture_.x.end());
    const double width = std::max(*hi - *lo, 1e-12) / kBins;
    std::vector<double> counts(kBins, 0.0);
    for (double x : mixture_.x) counts[std::min<size_t>(kBins - 1, static_cast<size_t>((x - *lo) / width))] += 1;
    const double cap = 1.5 * *std::max_element(counts.begin(), counts.end()) /
                       (static_cast<double>(mixture_.x.size()) * width);
    std::vector<double> xs, clean_pdf, noisy_pdf;
    const mixture::BetaComponent& c = mixture_.components[mixture_.clean_component];
    const mixture::BetaComponent& n = mixture_.components[1 - mixture_.clean_component];
    for (int i = 0; i <= 200; ++i) {
      const double x = i / 200.0;
      xs.push_back(x);
      clean_pdf.push_back(std::min(cap, c.weight * c.pdf(x)));
      noisy_pdf.push_back(std::min(cap, n.weight * n.pdf(x)));
    }
    // The split threshold: the first grid point where the clean posterior is no longer above 0.5.
    std::vector<run::VerticalMarker> markers;
    for (size_t i = 0; i < xs.size(); ++i)
      if (c.weight * c.pdf(xs[i]) <= n.weight * n.pdf(xs[i])) {
        markers.push_back({"split (posterior 0.5)", xs[i], std::nullopt});
        break;
      }
    run::histogram_plot(dir + "/loss_histogram.png",
                        "per-sample loss and Beta mixture, epoch " + std::to_string(epoch + 1) +
                            " (clean-set precision " + std::to_string(quality_.clean_precision).substr(0, 5) + ")",
                        "normalised per-sample loss", mixture_.x, kBins,
                        {{"clean component", xs, clean_pdf, std::nullopt},
                         {"mismatched component", xs, noisy_pdf, std::nullopt}},
                        markers);
  }
  if (last_plan_.defined()) {
    const Tensor p = to(to(last_plan_, Device::cpu()), DType::Float64);
    std::vector<run::MatrixCell> diagonal;
    for (int64_t i = 0; i < std::min(p.size(0), p.size(1)); ++i) diagonal.push_back({i, i});
    run::heatmap_plot(dir + "/transport_plan.png",
                      "rematch plan of the last noisy batch, epoch " + std::to_string(epoch + 1), "caption",
                      "image", p.to_vector<double>(), p.size(0), p.size(1), std::nullopt, diagonal);
  }
}
std::string L2rmMethod::results_notes() const {
  if (clean_.empty()) return "The best validated state is from the warm-up: no clean/mismatched split yet.\n";
  std::ostringstream s;
  s << "Last split (Beta mixture over per-sample losses): " << epoch_info_.stats.at("clean_size")
    << " pairs clean; clean-set precision " << quality_.clean_precision << ", recall " << quality_.clean_recall
    << ", accuracy " << quality_.accuracy << " against the injected noise.\n";
  return s.str();
}

const MethodSpec& l2rm_method_spec() {
  static const MethodSpec spec = [] {
    MethodSpec s;
    s.name = "l2rm";
    s.summary = "L2RM, learning to rematch mismatched pairs by partial OT (CVPR'24), on SGR/SAF";
    s.doc = "docs/methods/l2rm.md";
    s.layout = DataLayout::Precomp;
    s.presets = {"f30k", "coco", "cc152k"};
    s.tables = {&l2rm_pairs_flags(), &l2rm_flags()};
    s.defaults = l2rm_defaults();
    s.check = check_l2rm;
    s.data_parallel = true;
    s.demo.warmup_epochs = 5;
    s.demo.split_stat = "clean_precision";
    s.demo.report = true;
    s.make = make_pairs_method<L2rmMethod, L2rmOptions>(false);
    return s;
  }();
  return spec;
}

}  // namespace rematch::train
