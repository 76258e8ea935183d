#include "train/methods/rcsl/rcsl_method.h"

#include <algorithm>
#include <numeric>
#include <sstream>

#include "autograd/autograd.h"
#include "parallel/gather_op.h"
#include "models/augment.h"
#include "train/data/batcher.h"
#include "train/data/semi_paired.h"
#include "train/eval/retrieval_metrics.h"
#include "train/losses/retrieval_losses.h"
#include "train/methods/data_parallel.h"
#include "train/methods/kit/retrieval_result.h"
#include "train/methods/rcsl/rcsl_losses.h"
#include "train/methods/rcsl/vse_encoding.h"
#include "train/methods/rcsl/word_vectors.h"
#include "train/mixture/beta_mixture.h"

namespace rematch::train {
namespace {

// The per-epoch random draws each come from their own Philox stream (key = a seed derived from the run seed and
// the stream), at an offset fixed by the epoch, so any epoch can be replayed alone and streams never overlap.
enum Stream : uint64_t { kKeepStream = 1, kPlanStream = 2, kSplitStream = 3, kMixtureStream = 4, kAugmentStream = 5 };
constexpr int kEpochOffsetBits = 40;  // as data/batcher.cpp

uint64_t stream_seed(uint64_t seed, uint64_t stream) {
  // splitmix64 of the pair: nearby run seeds give unrelated streams.
  uint64_t z = seed + stream * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Padded word ids [B, L_max] and lengths [B] of the given captions, in the given order.
std::pair<Tensor, Tensor> caption_batch(const data::PrecompDataset& ds, const std::vector<int64_t>& captions) {
  std::vector<int64_t> lengths;
  for (int64_t c : captions) lengths.push_back(ds.caption_length(c));
  const int64_t longest = *std::max_element(lengths.begin(), lengths.end());
  std::vector<int64_t> ids(captions.size() * static_cast<size_t>(longest), data::Vocabulary::kPad);
  for (size_t i = 0; i < captions.size(); ++i)
    std::copy_n(ds.caption_ids(captions[i]), lengths[i], ids.begin() + static_cast<std::ptrdiff_t>(i) * longest);
  return {from_vector(ids, {static_cast<int64_t>(captions.size()), longest}), from_vector(lengths)};
}

Tensor full_lengths(int64_t batch, int64_t regions) {
  return full({batch}, static_cast<double>(regions), DType::Int64);
}

}  // namespace

RcslMethod::RcslMethod(const CommonOptions& common, const RcslOptions& options, bool noisy, PairsData data,
                       std::ostream& log)
    : common_(common),
      options_(options),
      noisy_(noisy),
      split_seed_(common.noise_seed >= 0 ? static_cast<uint64_t>(common.noise_seed) : 123),
      warmup_epochs_(noisy_ ? common.warmup_epoch : 0),
      rcm_t_(!options.no_rcm && !options.no_rcm_t),
      rcm_v_(!options.no_rcm && !options.no_rcm_v),
      log_(log),
      data_(std::move(data)),
      device_(common.device.device()),
      model_gen_(common.seed),
      augment_gen_(stream_seed(common.seed, kAugmentStream)) {
  const data::PrecompDataset& train = *data_.train;
  if (noisy_) {
    correspondence_ = data_.correspondence;
    log_ << "rcsl-nc: " << warmup_epochs_ << " warm-up epochs on all pairs as paired, then each epoch a "
         << "Beta-mixture split of the per-sample losses (--split_loss "
         << (options_.split_loss == losses::SplitLoss::Hardest ? "hardest" : "mean")
         << "): clean => paired, noisy => unpaired\n";
  } else {
    const data::SemiPairedSplit split =
        data::semi_paired_split(train.num_images(), train.im_div(), options_.paired_length, split_seed_);
    correspondence_ = split.correspondence;
    log_ << "rcsl: semi-paired split (" << correspondence_.source << "): " << split.paired_captions.size()
         << " paired / " << split.unpaired_captions.size() << " unpaired training captions\n";
  }
  mask_id_ = options_.word_vectors.empty() ? data_.vocab.id("<mask>") : data::Vocabulary::kUnk;

  models::VseConfig mc;
  mc.vocab_size = data_.vocab.size();
  mc.img_dim = train.feature_dim();
  mc.word_dim = options_.word_dim;
  mc.embed_size = options_.embed_size;
  mc.text_dropout = options_.text_dropout;
  model_ = std::make_unique<models::VseModel>(mc, options_.dtype, &model_gen_);
  if (options_.word_vectors.empty()) {
    log_ << "word vectors: none given (--word_vectors); the word embedding keeps its uniform U(-0.1, 0.1) "
            "initialisation, as the official code without GloVe (the official runs use GloVe 840B-300d)\n";
  } else {
    // As the official code with GloVe: N(0, 1) (nn.Embedding's default) where the file has no vector.
    const rcsl::WordVectorStats s = rcsl::init_from_word_vectors(options_.word_vectors, data_.vocab,
                                                                 model_->txt_enc().word_embeddings(), model_gen_);
    log_ << "word vectors: " << s.found << " of " << s.vocabulary << " vocabulary words found in "
         << options_.word_vectors << " (" << s.file_words << " vectors); the others keep nn.Embedding's N(0, 1), "
         << "as the official code\n";
  }
  model_->to(device_);
  new_optimizer(Stage::Learning);
  log_ << "model: VSE embed " << mc.embed_size << ", word_dim " << mc.word_dim << ", vocabulary " << mc.vocab_size
       << ", " << model_->parameter_count() << " parameters on " << device_.str() << "\n";
}

bool RcslMethod::mining(int64_t epoch) const { return !options_.paired_only_triplet && epoch >= options_.mine_epoch; }

bool RcslMethod::best_candidate(int64_t epoch) const { return !mining(common_.num_epochs - 1) || mining(epoch); }

// The stage's schedule counts epochs from 1 at the stage's first epoch and is stepped once here, so a milestone
// falling on that first epoch applies to it, as adjust_learning_rate does right after the optimizer reset; each
// end_epoch steps it to the next epoch. lr(e) = lr₀ · 0.1^#{milestones m : stage start <= m <= e}.
void RcslMethod::new_optimizer(Stage stage) {
  const int64_t start = stage == Stage::Mining ? options_.mine_epoch : 0;
  std::vector<int64_t> milestones;
  for (int64_t m : options_.lr_milestones)
    if (m >= start) milestones.push_back(m - start + 1);
  schedule_.reset();
  optimizer_ = std::make_unique<nn::AdamW>(model_->parameters(), common_.learning_rate, nn::AdamBetas{}, 1e-8,
                                           options_.weight_decay);
  schedule_ = std::make_unique<nn::MultiStepLR>(*optimizer_, milestones, 0.1);
  schedule_->step();
  stage_ = stage;
}

Tensor RcslMethod::encode_train_images() {
  std::vector<int64_t> rows(static_cast<size_t>(data_.train->num_images()));
  std::iota(rows.begin(), rows.end(), 0);
  return rcsl::encode_image_rows(*model_, *data_.train, rows, common_.eval_batch);
}

std::vector<uint8_t> RcslMethod::split_labels(int64_t epoch, const Tensor& image_embs, const Tensor& caption_embs) {
  // L2RM's per-sample loss (§1.3) on shuffled batches; in eval mode an embedding does not depend on its batch,
  // so the batches' similarity matrices come from the whole-set encodings.
  data::BatcherOptions o;
  o.batch_size = common_.batch_size;
  o.seed = stream_seed(common_.seed, kSplitStream);
  const data::Batcher loader(*data_.train, o, correspondence_.caption_to_row);
  const losses::SplitLoss kind = options_.split_loss;
  std::vector<double> per_sample(static_cast<size_t>(data_.train->num_captions()), 0.0);
  NoGradGuard no_grad;
  for (const std::vector<int64_t>& captions : loader.epoch_plan(epoch)) {
    std::vector<int64_t> rows;
    for (int64_t c : captions) rows.push_back(correspondence_.caption_to_row[static_cast<size_t>(c)]);
    const Tensor S =
        matmul(index_select(image_embs, 0, from_vector(rows, {}, image_embs.device())),
               transpose(index_select(caption_embs, 0, from_vector(captions, {}, image_embs.device())), 0, 1));
    const std::vector<double> l =
        to(losses::per_sample_split_loss(S, options_.margin, kind), DType::Float64).to_vector<double>();
    for (size_t i = 0; i < captions.size(); ++i) per_sample[static_cast<size_t>(captions[i])] = l[i];
  }
  const mixture::BetaMixtureResult mix =
      mixture::fit_beta_mixture(per_sample, stream_seed(common_.seed, kMixtureStream) + static_cast<uint64_t>(epoch));
  const data::SplitQuality q = data::split_quality(mix.clean, correspondence_.clean);
  const int64_t n_clean = std::count(mix.clean.begin(), mix.clean.end(), 1);
  epoch_info_.stats["clean_size"] = static_cast<double>(n_clean);
  epoch_info_.stats["clean_precision"] = q.clean_precision;
  epoch_info_.stats["clean_recall"] = q.clean_recall;
  epoch_info_.stats["split_accuracy"] = q.accuracy;
  return mix.clean;
}

std::vector<std::vector<int64_t>> RcslMethod::epoch_plan(int64_t epoch) const {
  const int64_t n_cap = data_.train->num_captions();
  const bool keep_all_unpaired = mining(epoch) || options_.unpaired_keep >= 1;
  std::vector<double> u;
  if (!options_.paired_only_triplet && !keep_all_unpaired) {
    // re_sort: each unpaired caption kept with probability unpaired_keep (the code: random() > 0.8).
    Generator gen(stream_seed(common_.seed, kKeepStream));
    gen.set_state({gen.seed(), static_cast<uint64_t>(epoch) << kEpochOffsetBits});
    u = rand({n_cap}, DType::Float64, Device::cpu(), &gen).to_vector<double>();
  }
  std::vector<int64_t> captions;
  for (int64_t c = 0; c < n_cap; ++c) {
    const bool paired = labels_[static_cast<size_t>(c)] != 0;
    if (paired ||
        (!options_.paired_only_triplet && (keep_all_unpaired || u[static_cast<size_t>(c)] < options_.unpaired_keep)))
      captions.push_back(c);
  }
  if (captions.empty()) return {};
  data::BatcherOptions o;
  o.batch_size = common_.batch_size;
  o.seed = stream_seed(common_.seed, kPlanStream);
  std::vector<std::vector<int64_t>> plan =
      data::Batcher(*data_.train, o, correspondence_.caption_to_row, captions).epoch_plan(epoch);
  // train_emb sorts each batch paired-first (tindex + findex).
  for (auto& batch : plan)
    std::stable_partition(batch.begin(), batch.end(), [&](int64_t c) { return labels_[static_cast<size_t>(c)] != 0; });
  return plan;
}

EpochInfo RcslMethod::begin_epoch(int64_t epoch) {
  REMATCH_CHECK(epoch >= 0 && epoch < common_.num_epochs, name(), ": epoch ", epoch, " is outside [0, ",
                common_.num_epochs, ")");
  epoch_ = epoch;
  epoch_info_ = EpochInfo{};
  const bool warmup = noisy_ && epoch < warmup_epochs_;
  epoch_info_.phase = warmup ? "warmup" : stage_name(stage_of(epoch));
  // train.py: at MineEpoch the optimizer is re-created (lr back to the base rate, moments reset).
  if (stage_of(epoch) != stage_) new_optimizer(stage_of(epoch));

  // --no_rcm (Table 4's "RCSL w/o RCM"): nothing uses the bank, so none is built.
  const bool build_bank =
      mining(epoch) && mines_pairs() && (bank_.empty() || (options_.bank_refresh == BankRefresh::Epoch));
  Tensor image_embs, caption_embs;
  if ((noisy_ && !warmup) || build_bank) {
    image_embs = encode_train_images();
    caption_embs = rcsl::encode_all_captions(*model_, *data_.train, common_.eval_batch);
  }
  if (!noisy_)
    labels_ = correspondence_.clean;
  else if (warmup)
    labels_.assign(static_cast<size_t>(data_.train->num_captions()), 1);
  else
    labels_ = split_labels(epoch, image_embs, caption_embs);

  if (build_bank) {
    const rcsl::BankPairing pairing =
        rcsl::bank_pairing(correspondence_.caption_to_row, labels_, data_.train->num_images());
    bank_ = rcsl::build_memory_bank(image_embs, caption_embs, pairing, options_.bank_block);
    const rcsl::BankAccuracy a = rcsl::bank_accuracy(bank_, pairing, data_.train->im_div());
    auto ratio = [](int64_t x, int64_t n) { return n == 0 ? 0.0 : static_cast<double>(x) / static_cast<double>(n); };
    epoch_info_.stats["bank_i2t_accuracy"] = ratio(a.image_correct, a.image_total);
    epoch_info_.stats["bank_t2i_accuracy"] = ratio(a.caption_correct, a.caption_total);
    log_ << name() << ": memory bank built at epoch " << epoch + 1 << ": " << a.image_correct << " of " << a.image_total
         << " unpaired images and " << a.caption_correct << " of " << a.caption_total
         << " unpaired captions mined their true partner\n";
  }

  plan_ = epoch_plan(epoch);
  int64_t n_paired = 0, n_epoch = 0;
  for (const auto& batch : plan_) {
    n_epoch += static_cast<int64_t>(batch.size());
    for (int64_t c : batch) n_paired += labels_[static_cast<size_t>(c)];
  }
  epoch_info_.steps = static_cast<int64_t>(plan_.size());
  epoch_info_.stats["paired_captions"] = static_cast<double>(n_paired);
  epoch_info_.stats["epoch_captions"] = static_cast<double>(n_epoch);
  return epoch_info_;
}

namespace {

// A view's embeddings. Shared (under mpirun, a batch of at least as many pairs as ranks; docs/distributed.md §4):
// the image encoder runs on the whole batch on every rank (its BatchNorm takes statistics over the batch's region
// rows), the word embeddings and their dropout too (the mask one process draws), and each rank runs its rows of
// the captions through the Bi-GRU and the pooling; each rank's rows of both are gathered with the backward
// GatherBackward::OwnRows (every rank computes the whole loss), so each rank's parameter gradients are its rows'
// share, summed over ranks before the clip.
models::VseEmbeddings embed_view(models::VseModel& model, parallel::Communicator& comm, bool shared, const Tensor& images,
                                 const Tensor& image_lengths, const Tensor& ids, const Tensor& lengths) {
  if (!shared) return model.forward(images, image_lengths, ids, lengths);
  const parallel::RowRange mine = batch_share(comm, images.size(0));
  const int64_t n = mine.end - mine.begin;
  const Tensor all_images = model.encode_images(images, image_lengths);
  const Tensor words = model.txt_enc().embed_words(ids, lengths);
  const Tensor my_captions =
      model.txt_enc().encode_words(narrow(words, 0, mine.begin, n), contiguous(narrow(lengths, 0, mine.begin, n)));
  return {parallel::all_gather_rows(comm, narrow(all_images, 0, mine.begin, n), parallel::GatherBackward::OwnRows),
          parallel::all_gather_rows(comm, my_captions, parallel::GatherBackward::OwnRows)};
}

}  // namespace

StepResult RcslMethod::train_step(int64_t epoch, int64_t step) {
  REMATCH_CHECK(epoch == epoch_ && step >= 0 && step < static_cast<int64_t>(plan_.size()), name(), ": step ", step,
                " of epoch ", epoch, " is outside the epoch in progress (", epoch_, ", ", plan_.size(), " steps)");
  const data::PrecompDataset& train = *data_.train;
  const std::vector<int64_t>& captions = plan_[static_cast<size_t>(step)];
  const int64_t batch = static_cast<int64_t>(captions.size());
  int64_t num_paired = 0;
  std::vector<int64_t> rows;
  for (int64_t c : captions) {
    num_paired += labels_[static_cast<size_t>(c)];
    rows.push_back(correspondence_.caption_to_row[static_cast<size_t>(c)]);
  }

  // View 0: the batch's pairs, augmented (§3.1).
  Tensor regions = to(train.images(rows), options_.dtype), region_lengths = full_lengths(batch, train.num_regions());
  auto [ids, lengths] = caption_batch(train, captions);
  if (!options_.no_augment) {
    const models::PaddedBatch r = models::augment_region_batch(regions, Tensor(), augment_gen_);
    const models::PaddedBatch t =
        models::augment_caption_batch(ids, lengths, data_.vocab.size(), mask_id_, augment_gen_);
    regions = r.data;
    region_lengths = r.lengths;
    ids = t.data;
    lengths = t.lengths;
  }
  model_->train();
  parallel::Communicator& comm = parallel::world();
  const bool shared = comm.world_size() > 1 && batch >= comm.world_size();
  const models::VseEmbeddings view0 =
      embed_view(*model_, comm, shared, to(regions, device_), region_lengths, to(ids, device_), lengths);

  StepResult result;
  result.pairs = batch;
  result.parts["paired"] = static_cast<double>(num_paired);
  std::vector<std::pair<std::string, Tensor>> terms;
  if (num_paired > 0) {
    if (!options_.no_trl)
      terms.emplace_back("trl", rcsl::paired_triplet_loss(models::VseModel::similarity(view0.images, view0.captions),
                                                          num_paired, options_.margin));
    if (!options_.paired_only_triplet && !options_.no_reg)
      terms.emplace_back("reg", rcsl::regularization_loss(view0.images, view0.captions, num_paired));
  }
  if (mining(epoch) && mines_pairs()) {
    REMATCH_CHECK(!bank_.empty(), name(), ": epoch ", epoch, " mines pseudo pairs but no memory bank was built");
    // View 1: the mined image of each caption and the mined caption of each image row, un-augmented (§3.4).
    std::vector<int64_t> mined_rows, mined_captions;
    for (size_t i = 0; i < captions.size(); ++i) {
      mined_rows.push_back(bank_.caption_to_image[static_cast<size_t>(captions[i])]);
      mined_captions.push_back(bank_.image_to_caption[static_cast<size_t>(rows[i])]);
    }
    const auto [mined_ids, mined_lengths] = caption_batch(train, mined_captions);
    const models::VseEmbeddings view1 =
        embed_view(*model_, comm, shared, to(to(train.images(mined_rows), options_.dtype), device_),
                   full_lengths(batch, train.num_regions()), to(mined_ids, device_), mined_lengths);
    const rcsl::RcmTerms rcm =
        rcsl::rcm_terms(view0.images, view0.captions, view1.images, view1.captions, num_paired, options_.tau);
    if (rcm_t_) terms.emplace_back("rcm_t", rcm.t);
    if (rcm_v_) terms.emplace_back("rcm_v", rcm.v);
  }
  if (terms.empty()) return result;  // no paired sample and no mining: train_emb skips the update

  Tensor loss;
  for (const auto& [term, value] : terms) {
    const double v = value.item<double>();
    check_finite_loss(name(), epoch, step, term, v);
    result.parts[term] = v;
    loss = loss.defined() ? add(loss, value) : value;
  }
  if (result.parts.count("rcm_t") || result.parts.count("rcm_v"))  // L_rcm (Eq. 11), of the terms kept
    result.parts["rcm"] = (result.parts.count("rcm_t") ? result.parts["rcm_t"] : 0.0) +
                          (result.parts.count("rcm_v") ? result.parts["rcm_v"] : 0.0);
  result.loss = loss.item<double>();
  check_finite_loss(name(), epoch, step, "total", result.loss);
  optimizer_->zero_grad();
  backward(loss);
  if (shared) all_reduce_gradients(comm, model_->parameters());
  clip_checked_gradients(name(), epoch, step, model_->parameters(), common_.grad_clip);
  optimizer_->step();
  return result;
}

void RcslMethod::end_epoch(int64_t epoch) {
  REMATCH_CHECK(epoch == epoch_, name(), ": end_epoch(", epoch, ") but the epoch in progress is ", epoch_);
  schedule_->step();
}

EvalResult RcslMethod::validate() {
  const data::PrecompDataset& dev = *data_.dev;
  const Tensor sims = rcsl::split_similarities(*model_, dev, common_.eval_batch);
  return eval_result(eval::retrieval_metrics(sims, dev.captions_per_image()), "dev");
}

EvalResult RcslMethod::test() {
  const data::PrecompDataset& t = *data_.test;
  const Tensor sims = rcsl::split_similarities(*model_, t, common_.eval_batch);
  return test_result(sims, t.captions_per_image(), common_);
}

void RcslMethod::write_run_files(const std::string& dir) { data::save_noise(correspondence_, dir); }

// RCSL-NC's split after its warm-up (docs/methods/rcsl.md §3.6): kept = 1 for the pairs it trains as paired.
// RCSL's own labels are the semi-paired data's, known before training: nothing it decides.
std::optional<viz::EpochSplit> RcslMethod::epoch_split(int64_t epoch) const {
  if (!noisy_ || epoch < warmup_epochs_ || labels_.empty()) return std::nullopt;
  return viz::EpochSplit{epoch, name(), viz::SplitKind::kept, {labels_.begin(), labels_.end()}};
}

std::string RcslMethod::results_notes() const {
  std::ostringstream s;
  if (noisy_)
    s << "- rcsl-nc: " << correspondence_.source << "; " << warmup_epochs_
      << " warm-up epochs, then a per-epoch Beta-mixture split (clean => paired, our reading of the paper)\n";
  else
    s << "- semi-paired split: " << correspondence_.source << ", "
      << correspondence_.num_captions() - correspondence_.num_noisy() << " paired / " << correspondence_.num_noisy()
      << " unpaired training captions\n";
  return s.str();
}

std::vector<EpochStat> RcslMethod::epoch_stats() const {
  // rcsl-nc's split quality (the clean set's precision on the epoch line and plotted) and the bank's accuracy,
  // each in results.md.
  return {{"clean_precision", 3, true, true, true},
          {"clean_recall", 3, false, false, true},
          {"split_accuracy", 3, false, false, true},
          {"bank_i2t_accuracy", 3, false, false, true},
          {"bank_t2i_accuracy", 3, false, false, true}};
}

namespace {

// rcsl or rcsl-nc: the precomp data, with <mask> appended to the vocabulary unless the embedding comes from GloVe
// (<unk> masks then, §3.1).
MethodSpec rcsl_spec(bool noisy) {
  MethodSpec s;
  s.name = noisy ? "rcsl-nc" : "rcsl";
  s.summary = noisy ? "RCSL on noisy correspondence: a per-epoch Beta-mixture split makes the semi-paired labels "
                      "(our reading of the paper's paragraph)"
                    : "RCSL, robust cross-modal semi-paired learning (AAAI'26), on a VSE model";
  s.doc = "docs/methods/rcsl.md";
  s.layout = DataLayout::Precomp;
  s.presets = {"f30k", "coco", "cc152k"};
  s.tables = {&rcsl_flags()};
  s.defaults = rcsl_defaults(noisy);
  s.require = [noisy](const TrainConfig& c) { require_rcsl(c, noisy); };
  s.check = [noisy](const TrainConfig& c) { check_rcsl(c, noisy); };
  s.data_parallel = true;
  s.make = make_with<RcslOptions, PairsData>(
      [](const CommonOptions& c, const RcslOptions& o, std::ostream& log) {
        return load_pairs_data(c, o.word_vectors.empty(), log);
      },
      [noisy](const CommonOptions& c, const RcslOptions& o, PairsData data,
              std::ostream& log) -> std::unique_ptr<Method> {
        return std::make_unique<RcslMethod>(c, o, noisy, std::move(data), log);
      });
  return s;
}

}  // namespace

const MethodSpec& rcsl_method_spec() {
  static const MethodSpec spec = rcsl_spec(false);
  return spec;
}

const MethodSpec& rcsl_nc_method_spec() {
  static const MethodSpec spec = rcsl_spec(true);
  return spec;
}


}  // namespace rematch::train
