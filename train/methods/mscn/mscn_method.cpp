#include "train/methods/mscn/mscn_method.h"

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <sstream>

#include "autograd/autograd.h"
#include "train/methods/data_parallel.h"
#include "train/methods/mscn/mscn_scores.h"
#include "train/methods/mscn/virtual_step.h"

namespace rematch::train {

const char* MscnMethod::net_name(int k) { return k == 0 ? "A" : "B"; }

namespace {


// `split_data`'s clamp: ≥ 1 → 1 − 1e-3, ≤ 0 → 1e-3 (the code's `10e-4`).
double clamp_score(double s) {
  if (s >= 1) return 1 - 1e-3;
  if (s <= 0) return 1e-3;
  return s;
}

// Streams of the meta set's draws, mixed with --seed and the draw's index.
constexpr uint64_t kNoiseStream = 0x6d73636e6e6f6973ull;  // "mscnnois"
constexpr uint64_t kPassStream = 0x6d73636e70617373ull;   // "mscnpass"
constexpr uint64_t kMetaPickStream = 0x6d73636e7069636bull;

void set_requires_grad(const nn::Module& m, bool on) {
  for (Tensor p : m.parameters()) p.requires_grad_(on);
}

}  // namespace

MscnSplit mscn_split(const std::vector<double>& meta_scores, const std::vector<double>& meta_labels,
                     const std::vector<double>& train_scores) {
  REMATCH_CHECK(meta_scores.size() == meta_labels.size(), "mscn split: ", meta_scores.size(), " meta scores for ",
                meta_labels.size(), " labels");
  std::vector<double> noise, clean;
  for (size_t i = 0; i < meta_scores.size(); ++i) (meta_labels[i] < 0.5 ? noise : clean).push_back(clamp_score(meta_scores[i]));
  REMATCH_CHECK(!noise.empty() && !clean.empty(), "mscn split: the meta set needs clean and drawn pairs, got ",
                clean.size(), " and ", noise.size());
  MscnSplit s;
  // `TrueBetaDistribution.from_samples` of each part; `GeneralMixtureModel([BM_noise, BM_clean])`: equal weights.
  const std::array<double, 2> n = mixture::beta_method_of_moments(noise), c = mixture::beta_method_of_moments(clean);
  s.initial = {mixture::BetaComponent{n[0], n[1], 0.5}, mixture::BetaComponent{c[0], c[1], 0.5}};
  std::vector<double> x(train_scores.size());
  for (size_t i = 0; i < x.size(); ++i) x[i] = clamp_score(train_scores[i]);
  s.mixture = mixture::refit_beta_mixture(s.initial, x, 10, 1e-2);
  s.probability = s.mixture.posterior;
  s.clean.resize(x.size());
  for (size_t i = 0; i < x.size(); ++i) s.clean[i] = s.probability[i] > 0.5 ? 1 : 0;
  return s;
}

MscnMethod::MscnMethod(const CommonOptions& common, const MscnOptions& options, PairsData data, std::ostream& log)
    : log_(log), mscn_(options), gens_(common.seed), kit_(common, std::move(data), options.dtype) {
  const models::SgrafConfig config = kit_.model_config(options);
  // `main`: net_A, meta_net_A, net_B, meta_net_B, in this order.
  for (int k = 0; k < 2; ++k) {
    nets_.push_back(kit_.new_net(config, gens_.model, NetOptimizer{common.learning_rate, {}}));
    meta_.push_back(std::make_unique<MetaSim>(config.sim_dim, options.meta_hidden, options.dtype, &gens_.model));
    meta_.back()->to(kit_.device());
    meta_optim_.push_back(std::make_unique<nn::Adam>(meta_.back()->parameters(), common.learning_rate));
  }
  for (int k = 0; k < 2; ++k) {
    shadows_.push_back(std::make_unique<models::SgrafModel>(config, options.dtype, &gens_.model));
    shadows_.back()->to(kit_.device());
  }
  // The meta set (docs/methods/mscn.md §4).
  const data::PrecompDataset& train = kit_.train_split();
  std::vector<int64_t> clean;
  const data::PrecompDataset* source = nullptr;
  switch (options.meta_source) {
    case MetaSource::Split: {
      check_meta_split(common.data_path, common.data_name);
      meta_split_ = std::make_unique<data::PrecompDataset>(common.data_path, common.data_name, "meta", kit_.data().vocab);
      source = meta_split_.get();
      break;
    }
    case MetaSource::Dev: {
      source = kit_.data().dev.get();
      REMATCH_CHECK(options.meta_size <= source->num_captions(), "--meta_size ", options.meta_size,
                    " with --meta_source dev: the dev split has only ", source->num_captions(), " captions");
      Generator gen = draw_generator(0, kMetaPickStream);
      const std::vector<int64_t> perm = randperm(source->num_captions(), Device::cpu(), &gen).to_vector<int64_t>();
      clean.assign(perm.begin(), perm.begin() + options.meta_size);
      break;
    }
    case MetaSource::Train: {
      source = &train;
      const int64_t images = train.num_images();
      REMATCH_CHECK(options.meta_size < images, "--meta_size ", options.meta_size,
                    " with --meta_source train: the training split has only ", images, " images");
      Generator gen = draw_generator(0, kMetaPickStream);
      const std::vector<int64_t> perm = randperm(images, Device::cpu(), &gen).to_vector<int64_t>();
      std::vector<uint8_t> is_meta(static_cast<size_t>(images), 0);
      for (int64_t i = 0; i < options.meta_size; ++i) is_meta[static_cast<size_t>(perm[static_cast<size_t>(i)])] = 1;
      for (int64_t j = 0; j < train.num_captions(); ++j)
        (is_meta[static_cast<size_t>(train.image_index(j))] ? clean : train_captions_).push_back(j);
      break;
    }
  }
  if (train_captions_.empty()) {
    train_captions_.resize(static_cast<size_t>(train.num_captions()));
    std::iota(train_captions_.begin(), train_captions_.end(), int64_t{0});
  }
  meta_set_ = std::make_unique<MetaSet>(*source, clean, train, train_captions_);
  // `train` cycles the meta loader (batch_size, shuffled, no drop_last): a pass ending with one pair would feed
  // VisualSA's BatchNorm a single image in training mode, where PyTorch's stops the official code as ours would
  // mid-epoch. Refused here, before any training.
  REMATCH_CHECK(meta_set_->size() % common.batch_size != 1, "mscn: the meta set holds ", meta_set_->size(),
                " pairs (", meta_set_->num_clean(), " clean and as many drawn), so each pass over it in batches of "
                "--batch_size ", common.batch_size, " ends with a batch of one pair, which the meta step cannot take "
                "(VisualSA's BatchNorm needs two images in training mode; the official code stops there too): change "
                "--batch_size, or the meta set's size (--meta_size, or the meta split)");
  log_ << kit_.describe(nets_[0]) << "\n";
  log_ << "mscn: nets A and B (" << net(1).parameter_count() << " parameters each) with meta nets ("
       << meta(0).parameter_count() << " parameters each); meta set " << meta_set_->num_clean()
       << " clean pairs from " << source->captions_path() << " and as many drawn non-correspondences; "
       << train_captions_.size() << " training captions; meta_interval " << mscn_.meta_interval << ", meta_lr "
       << mscn_.meta_lr << "\n";
}

Generator MscnMethod::draw_generator(int64_t index, uint64_t stream) const {
  return Generator((kit_.common().seed ^ stream) + 0x9e3779b97f4a7c15ull * static_cast<uint64_t>(index + 1));
}

MscnMethod::Phase MscnMethod::phase(int64_t epoch) const {
  const int64_t w = kit_.common().warmup_epoch;
  Phase p;
  if (epoch < w) {
    p.warmup = true;
    return p;
  }
  p.round = (epoch - w) / 2;
  p.trained = (epoch - w) % 2 == 0 ? 1 : 0;  // A's split trains B first (`main`)
  return p;
}

bool MscnMethod::best_candidate(int64_t epoch) const {
  const int64_t w = kit_.common().warmup_epoch;
  // `main` validates (and may save model_best) after the whole warm-up and after each epoch's two halves.
  if (epoch < w) return epoch == w - 1;
  return (epoch - w) % 2 == 1;
}

void MscnMethod::restart_optimizers() {
  for (int k = 0; k < 2; ++k) {
    nn::Adam& o = optimizer(k);
    o.load_state_dict(nn::Adam(o.params(), kit_.common().learning_rate).state_dict());
    nn::Adam& m = meta_optimizer(k);
    m.load_state_dict(nn::Adam(m.params(), mscn_.meta_lr).state_dict());
  }
}

std::vector<double> MscnMethod::training_scores_of(int k, int64_t epoch) {
  net(k).eval();
  meta(k).eval();
  const data::Batcher loader = kit_.loader(1, false, train_captions_);
  std::vector<std::vector<double>> out = kit_.per_caption(loader, epoch, 1, [&](const data::Batch& b) {
    const Tensor s = mscn_pair_scores(net(k), meta(k), b.regions, b.captions, b.lengths);
    return std::vector<std::vector<double>>{to(to(s, Device::cpu()), DType::Float64).to_vector<double>()};
  });
  net(k).train();
  meta(k).train();
  return std::move(out[0]);
}

std::vector<double> MscnMethod::meta_scores_of(int k) {
  net(k).eval();
  meta(k).eval();
  std::vector<double> out(static_cast<size_t>(meta_set_->size()));
  {
    NoGradGuard no_grad;
    const int64_t bs = std::max<int64_t>(kit_.common().batch_size, 1);
    // Under mpirun rank r scores batches r, r + W, ... and the ranks' values are summed (each item's is non-zero on
    // one rank only, so the sum is that value exactly), as PairsKit::per_caption deals the training pairs.
    parallel::Communicator& comm = kit_.comm();
    for (int64_t i0 = static_cast<int64_t>(comm.rank()) * bs; i0 < meta_set_->size(); i0 += bs * comm.world_size()) {
      std::vector<int64_t> items;
      for (int64_t i = i0; i < std::min(meta_set_->size(), i0 + bs); ++i) items.push_back(i);
      const MetaBatch mb = meta_set_->batch(items, kit_.dtype(), kit_.device());
      const std::vector<double> s =
          to(to(mscn_pair_scores(net(k), meta(k), mb.regions, mb.captions, mb.lengths), Device::cpu()), DType::Float64)
              .to_vector<double>();
      for (size_t i = 0; i < items.size(); ++i) out[static_cast<size_t>(items[i])] = s[i];
    }
    if (comm.world_size() > 1)
      out = comm.all_reduce_sum(from_vector(out, {static_cast<int64_t>(out.size())})).to_vector<double>();
  }
  net(k).train();
  meta(k).train();
  return out;
}

void MscnMethod::build_split(int64_t epoch) {
  const Phase p = phase(epoch);
  const int y = 1 - p.trained;
  // The meta set as `split_data` finds it: the draw of the previous `train` call (the first one's: the data set's
  // own, made at its construction).
  Generator noise_gen = draw_generator(epoch - 1, kNoiseStream);
  meta_set_->draw_non_correspondences(noise_gen);
  const std::vector<double> meta_scores = meta_scores_of(y);
  std::vector<double> labels(meta_scores.size());
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = meta_set_->label(static_cast<int64_t>(i));
  const std::vector<double> all = training_scores_of(y, epoch);
  std::vector<double> scores;
  for (int64_t j : train_captions_) scores.push_back(all[static_cast<size_t>(j)]);
  last_split_ = mscn_split(meta_scores, labels, scores);
  const size_t n = static_cast<size_t>(kit_.train_split().num_captions());
  prob_.assign(n, 0.0);
  clean_.assign(n, 0);
  std::vector<uint8_t> truth, predicted;
  for (size_t i = 0; i < train_captions_.size(); ++i) {
    const size_t j = static_cast<size_t>(train_captions_[i]);
    prob_[j] = last_split_.probability[i];
    clean_[j] = last_split_.clean[i];
    predicted.push_back(clean_[j]);
    truth.push_back(kit_.correspondence().clean[j]);
  }
  quality_ = data::split_quality(predicted, truth);
  double clean_mean = 0, drawn_mean = 0;
  for (size_t i = 0; i < meta_scores.size(); ++i) (labels[i] > 0.5 ? clean_mean : drawn_mean) += meta_scores[i];
  clean_mean /= static_cast<double>(meta_set_->num_clean());
  drawn_mean /= static_cast<double>(meta_set_->num_clean());
  const auto& c = last_split_.mixture.components;
  log_ << "mscn: epoch " << epoch << ": net " << net_name(y) << "'s split: meta scores clean " << clean_mean
       << ", drawn " << drawn_mean << "; Beta(" << c[0].alpha << ", " << c[0].beta << ") w " << c[0].weight
       << " and Beta(" << c[1].alpha << ", " << c[1].beta << ") w " << c[1].weight << " after "
       << last_split_.mixture.iterations << " EM steps; " << std::count(predicted.begin(), predicted.end(), 1)
       << " of " << predicted.size() << " pairs clean\n";
}

void MscnMethod::build_plans(int64_t epoch) {
  steps_.clear();
  meta_batches_.clear();
  const Phase p = phase(epoch);
  const CommonOptions& c = kit_.common();
  if (p.warmup) {
    // `warmup(A)` then `warmup(B)`, each a pass of its own over the loader of 2 × batch_size, which stops at a batch
    // of one pair.
    data::BatcherOptions o;
    o.batch_size = 2 * c.batch_size;
    o.seed = c.seed;
    const data::Batcher loader(kit_.train_split(), o, kit_.correspondence().caption_to_row, train_captions_);
    for (int k = 0; k < 2; ++k)
      for (auto& b : loader.epoch_plan(2 * epoch + k)) {
        if (b.size() < 2) break;
        steps_.emplace_back(k, std::move(b));
      }
    meta_batches_.resize(steps_.size());
    return;
  }
  std::vector<int64_t> clean;
  for (int64_t j : train_captions_)
    if (clean_[static_cast<size_t>(j)]) clean.push_back(j);
  if (!clean.empty()) {
    const data::Batcher loader = kit_.loader(2 + static_cast<uint64_t>(p.trained), false, clean);
    for (auto& b : loader.epoch_plan(epoch)) {
      if (b.size() < 2) break;  // `train`: "drop last batch if only one sample"
      steps_.emplace_back(p.trained, std::move(b));
    }
  }
  // `train`: fresh non-correspondences, then the meta loader cycled (a new shuffle per pass).
  Generator noise_gen = draw_generator(epoch, kNoiseStream);
  meta_set_->draw_non_correspondences(noise_gen);
  Generator pass_gen = draw_generator(epoch, kPassStream);
  std::vector<std::vector<int64_t>> pass;
  size_t cursor = 0;
  meta_batches_.resize(steps_.size());
  for (size_t i = 0; i < steps_.size(); ++i) {
    if ((static_cast<int64_t>(i) + 1) % mscn_.meta_interval != 0) continue;
    if (cursor == pass.size()) {
      pass = meta_set_->pass(pass_gen, c.batch_size);
      cursor = 0;
    }
    meta_batches_[i] = pass[cursor++];
  }
}

EpochInfo MscnMethod::epoch_info(int64_t epoch) const {
  const Phase p = phase(epoch);
  EpochInfo info{p.warmup ? "warmup" : std::string("train ") + net_name(p.trained),
                 static_cast<int64_t>(steps_.size()), {}};
  if (p.warmup) return info;
  info.stats["clean_size"] = static_cast<double>(std::count(clean_.begin(), clean_.end(), 1));
  info.stats["clean_precision"] = quality_.clean_precision;
  info.stats["clean_recall"] = quality_.clean_recall;
  info.stats["split_accuracy"] = quality_.accuracy;
  return info;
}

EpochInfo MscnMethod::begin_epoch(int64_t epoch) {
  epoch_ = epoch;
  const Phase p = phase(epoch);
  const CommonOptions& c = kit_.common();
  if (p.warmup) {
    // `warmup`: the nets' and meta nets' Adams at --learning_rate.
    for (int k = 0; k < 2; ++k) {
      nets_[static_cast<size_t>(k)].set_lr(c.learning_rate);
      meta_optimizer(k).set_lr(c.learning_rate);
    }
  } else {
    if (epoch == c.warmup_epoch) restart_optimizers();
    // `train`: lr = base · 0.1^⌊epoch / lr_update⌋ for the trained net's Adam and its meta net's.
    const double decay = c.lr_update > 0 ? std::pow(0.1, static_cast<double>(p.round / c.lr_update)) : 1.0;
    nets_[static_cast<size_t>(p.trained)].set_lr(c.learning_rate * decay);
    meta_optimizer(p.trained).set_lr(mscn_.meta_lr * decay);
    build_split(epoch);
  }
  build_plans(epoch);
  epoch_info_ = epoch_info(epoch);
  if (!p.warmup && steps_.empty())
    log_ << "mscn: epoch " << epoch << ": net " << net_name(1 - p.trained)
         << "'s split left fewer than two clean pairs; no step for net " << net_name(p.trained) << "\n";
  return epoch_info_;
}

double MscnMethod::train_iteration(int x, const data::Batch& b, const MetaBatch* meta_batch, double* meta_loss,
                                   int64_t step) {
  models::SgrafModel& X = net(x);
  MetaSim& M = meta(x);
  const double margin = mscn_.margin;
  const double lr = nets_[static_cast<size_t>(x)].lr();
  parallel::Communicator& comm = kit_.comm();
  X.train();
  M.train();
  if (meta_batch != nullptr) {
    // W_hat(t) <- W(t): the virtual step (virtual_step.h), the meta net taking part in its graph. Under mpirun each
    // rank's gradient is its share of the batch's, summed over ranks inside the graph (docs/distributed.md §4.1).
    set_requires_grad(M, true);
    std::vector<Tensor> stepped;
    bool shared = false;
    {
      const BufferSnapshot buffers(X);
      const Tensor pseudo_loss = mscn_adaptive_margin_loss(mscn_training_scores(comm, X, M, b, shared), margin);
      std::function<std::vector<Tensor>(const std::vector<Tensor>&)> sum;
      if (shared) sum = [&comm](const std::vector<Tensor>& g) { return sum_over_ranks_in_graph(comm, g); };
      stepped = virtual_sgd_step(pseudo_loss, X.parameters(), lr, gru_parameters(X), sum);
      buffers.restore();
    }
    models::SgrafModel& shadow = *shadows_[static_cast<size_t>(x)];
    shadow.train();
    install_parameters(shadow, stepped);
    // theta(t+1) <- theta(t): BCE of the stepped copy's pair scores on the meta batch, one Adam step of the meta net.
    // The meta loss is computed whole on every rank. Its gradient for the meta net has a direct part (the meta net
    // scoring the shadow's vectors, the same on every rank) and a part through θ' (each rank's share, through the
    // sum's identity backward): ranks other than 0 score with a detached copy of the meta net, so the all-reduce
    // below counts the direct part once and sums the shares.
    MetaSim* scorer = shared && comm.rank() != 0 ? detached_meta(x) : &M;
    const Tensor out = mscn_pair_scores(shadow, *scorer, meta_batch->regions, meta_batch->captions, meta_batch->lengths);
    const Tensor loss = binary_cross_entropy(out, meta_batch->labels);
    const std::vector<Tensor> params = M.parameters();
    GradOptions unused;
    unused.allow_unused = shared;  // a rank's share may not reach every parameter; all_reduce_gradients counts it 0
    const TensorList g = grad({loss}, params, {}, unused);
    nn::Adam& mo = meta_optimizer(x);
    mo.zero_grad();
    for (size_t k = 0; k < params.size(); ++k) params[k].set_grad(g[k]);
    if (shared) all_reduce_gradients(comm, params);
    if (meta_loss != nullptr) *meta_loss = loss.item<double>();
    check_finite_loss(name(), epoch_, step, std::string("meta_") + net_name(x), loss.item<double>());
    mo.step();
    // Let the graph of the virtual step go.
    std::vector<Tensor> detached;
    for (const Tensor& t : stepped) detached.push_back(t.detach());
    install_parameters(shadow, detached);
  }
  // W(t+1) <- W(t): the meta net frozen.
  set_requires_grad(M, false);
  bool shared = false;
  const Tensor loss = mscn_adaptive_margin_loss(mscn_training_scores(comm, X, M, b, shared), margin);
  const double value = loss.item<double>();
  check_finite_loss(name(), epoch_, step, std::string("train_") + net_name(x), value);
  step_net(x, loss, shared, false, epoch_, step);
  return value;
}

void MscnMethod::step_net(int x, const Tensor& loss, bool shared, bool with_meta, int64_t epoch, int64_t step) {
  // PairsKit::update's steps (zero_grad, backward, the sum over ranks before the clip, clip, Adam), with the meta
  // net's gradients summed in the same all-reduce when it learns from this loss (the warm-up).
  SgrafNet& net = nets_[static_cast<size_t>(x)];
  const std::vector<Tensor> params = net.model().parameters();
  net.optimizer().zero_grad();
  backward(loss);
  if (shared) {
    std::vector<Tensor> summed = params;
    if (with_meta)
      for (const Tensor& p : meta(x).parameters()) summed.push_back(p);
    all_reduce_gradients(kit_.comm(), summed);  // before the clips: the global norms
  }
  clip_checked_gradients(name(), epoch, step, params, kit_.common().grad_clip);
  net.optimizer().step();
}

MetaSim* MscnMethod::detached_meta(int x) {
  auto& copy = meta_copies_[static_cast<size_t>(x)];
  if (!copy) {
    // Its own generator: the copy's initial values are overwritten at once, and the run's draws stay one process's.
    copy = std::make_unique<MetaSim>(kit_.model_config(mscn_).sim_dim, mscn_.meta_hidden, kit_.dtype(), &copy_gen_);
    copy->to(kit_.device());
  }
  std::vector<Tensor> values;
  for (const Tensor& p : meta(x).parameters()) values.push_back(p.detach());
  install_parameters(*copy, values);
  copy->train();
  return copy.get();
}

StepResult MscnMethod::train_step(int64_t epoch, int64_t step) {
  check_step_in_epoch(name(), epoch, step, epoch_, steps_.size());
  const auto& [x, captions] = steps_[static_cast<size_t>(step)];
  const data::Batch b = kit_.batch(captions);
  StepResult r;
  r.pairs = b.size();
  if (phase(epoch).warmup) {
    // `warmup`: net and meta net stepped on the mean-hinge loss, each clipped to --grad_clip.
    models::SgrafModel& X = net(x);
    MetaSim& M = meta(x);
    X.train();
    M.train();
    set_requires_grad(M, true);
    meta_optimizer(x).zero_grad();
    bool shared = false;
    const Tensor loss = mscn_warmup_loss(mscn_training_scores(kit_.comm(), X, M, b, shared), mscn_.margin);
    r.loss = loss.item<double>();
    r.parts[std::string("warmup_") + net_name(x)] = r.loss;
    check_finite_loss(name(), epoch, step, std::string("warmup_") + net_name(x), r.loss);
    step_net(x, loss, shared, true, epoch, step);
    clip_checked_gradients(name(), epoch, step, M.parameters(), kit_.common().grad_clip);
    meta_optimizer(x).step();
    return r;
  }
  const std::vector<int64_t>& items = meta_batches_[static_cast<size_t>(step)];
  double meta_loss = 0;
  MetaBatch mb;
  if (!items.empty()) mb = meta_set_->batch(items, kit_.dtype(), kit_.device());
  r.loss = train_iteration(x, b, items.empty() ? nullptr : &mb, &meta_loss, step);
  r.parts[std::string("train_") + net_name(x)] = r.loss;
  if (!items.empty()) r.parts[std::string("meta_") + net_name(x)] = meta_loss;
  return r;
}

std::optional<viz::EpochSplit> MscnMethod::epoch_split(int64_t epoch) const {
  if (phase(epoch).warmup || clean_.empty()) return std::nullopt;
  return viz::EpochSplit{epoch, "mscn", viz::SplitKind::kept, {clean_.begin(), clean_.end()}};
}

std::string MscnMethod::results_notes() const {
  if (clean_.empty()) return "The best validated state is from the warm-up: no split yet.\n";
  std::ostringstream s;
  s << "Last split (Beta mixture initialised on the meta set, refined on the training pairs' meta-net scores): "
    << std::count(clean_.begin(), clean_.end(), 1) << " pairs clean; clean-set precision " << quality_.clean_precision
    << ", recall " << quality_.clean_recall << ", accuracy " << quality_.accuracy << " against the injected noise.\n";
  return s.str();
}

const MethodSpec& mscn_method_spec() {
  static const MethodSpec spec = [] {
    MethodSpec s;
    s.name = "mscn";
    s.summary = "MSCN, meta similarity correction of two SGR/SAF nets through a virtual step (CVPR'23)";
    s.doc = "docs/methods/mscn.md";
    s.layout = DataLayout::Precomp;
    s.presets = {"f30k", "coco", "cc152k"};
    s.tables = {&mscn_pairs_flags(), &mscn_flags()};
    s.defaults = mscn_defaults();
    s.check = check_mscn;
    s.data_files = mscn_data_files;
    s.data_parallel = true;  // docs/distributed.md §4.1, MSCN's item
    s.demo.warmup_epochs = 3;
    s.demo.split_stat = "clean_precision";
    s.make = make_pairs_method<MscnMethod, MscnOptions>(false);
    return s;
  }();
  return spec;
}

}  // namespace rematch::train
