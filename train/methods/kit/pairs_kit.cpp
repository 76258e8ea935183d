#include "train/methods/kit/pairs_kit.h"

#include "autograd/autograd.h"
#include "parallel/gather_op.h"
#include "train/eval/sgraf_scoring.h"
#include "train/methods/data_parallel.h"

namespace rematch::train {

PairsGenerators::PairsGenerators(uint64_t seed) : model(seed), sample(seed ^ 0x5a5a5a5a5a5a5a5aull) {}

void PairsGenerators::save(TrainingState& s) const {
  s.put_generator("rng.model", model);
  s.put_generator("rng.sample", sample);
}

void PairsGenerators::load(const TrainingState& s) {
  s.get_generator("rng.model", model);
  s.get_generator("rng.sample", sample);
}

void save_pairs_state(TrainingState& s, const SgrafNet& net, const PairsGenerators& gens, int64_t epoch) {
  net.save(s, "model.", "optim.");
  s.put_entry("model_config", models::to_json(net.model().config()));  // models/sgraf_checkpoint.h reads it
  gens.save(s);
  s.put_int("epoch", epoch);
}

int64_t load_pairs_state(const TrainingState& s, SgrafNet& net, PairsGenerators& gens) {
  net.load(s, "model.", "optim.");
  gens.load(s);
  return s.get_int("epoch");
}

PairsKit::PairsKit(const CommonOptions& common, PairsData data, DType dtype)
    : common_(common),
      data_(std::move(data)),
      device_(common.device.device()),
      dtype_(dtype),
      comm_(parallel::world()) {
  data::BatcherOptions o;
  o.batch_size = common_.batch_size;
  o.seed = common_.seed;
  all_pairs_ = std::make_unique<data::Batcher>(*data_.train, o, data_.correspondence.caption_to_row);
}

models::SgrafConfig PairsKit::model_config(const PairsOptions& o) const {
  models::SgrafConfig m;
  m.module = o.module_name;
  m.vocab_size = data_.vocab.size();
  m.img_dim = data_.train->feature_dim();
  m.num_regions = data_.train->num_regions();
  m.word_dim = o.word_dim;
  m.embed_size = o.embed_size;
  m.sim_dim = o.sim_dim;
  m.sgr_step = o.sgr_step;
  m.dropout = o.dropout;
  models::validate(m);
  return m;
}

SgrafNet PairsKit::new_net(const models::SgrafConfig& config, Generator& gen, const NetOptimizer& optimizer) const {
  return SgrafNet(config, dtype_, device_, gen, optimizer);
}

std::string PairsKit::describe(const SgrafNet& net) const {
  return "model: " + models::describe(net.model().config()) + ", " + std::to_string(net.model().parameter_count()) +
         " parameters on " + device_.str();
}

std::vector<std::vector<int64_t>> PairsKit::all_pairs_plan(int64_t epoch) const {
  std::vector<std::vector<int64_t>> plan;
  for (auto& b : all_pairs_->epoch_plan(epoch))
    if (b.size() >= 2) plan.push_back(std::move(b));
  return plan;
}

data::Batcher PairsKit::loader(uint64_t seed_offset, bool drop_last, std::vector<int64_t> captions) const {
  data::BatcherOptions o;
  o.batch_size = common_.batch_size;
  o.drop_last = drop_last;
  o.seed = common_.seed + seed_offset;
  return data::Batcher(*data_.train, o, data_.correspondence.caption_to_row, std::move(captions));
}

data::Batch PairsKit::on_device(data::Batch b) const {
  if (b.regions.dtype() != dtype_) b.regions = to(b.regions, dtype_);
  if (!device_.is_cpu()) {
    b.regions = to(b.regions, device_);
    b.captions = to(b.captions, device_);
  }
  return b;
}

data::Batch PairsKit::batch(const std::vector<int64_t>& captions) const {
  return on_device(all_pairs_->make_batch(captions));
}

Tensor PairsKit::training_scores(models::SgrafModel& m, const data::Batch& b, ScoreKind kind) {
  shared_step_ = comm_.world_size() > 1 && b.size() >= comm_.world_size();
  if (!shared_step_)
    return kind == ScoreKind::Logits ? m.logits(b.regions, b.captions, b.lengths) : m(b.regions, b.captions, b.lengths);
  const parallel::RowRange mine = batch_share(comm_, b.size());
  models::SgrafModel::ColumnShare share;
  share.begin = mine.begin;
  share.end = mine.end;
  share.logits = kind == ScoreKind::Logits;
  share.gather = [this](const Tensor& x) { return parallel::all_gather_rows(comm_, x); };
  share.gather_values = [this](const Tensor& x) { return comm_.all_gather(x); };
  const Tensor columns = m.forward_columns(b.regions, b.captions, b.lengths, share);  // [B, n_r]
  // Rows of S^T in rank order, then S: each rank's backward keeps its own columns' gradient.
  return transpose(parallel::all_gather_rows(comm_, transpose(columns, 0, 1), parallel::GatherBackward::OwnRows), 0, 1);
}

void PairsKit::update(SgrafNet& net, const Tensor& loss, int64_t epoch, int64_t step) {
  nn::Adam& optimizer = net.optimizer();
  const std::vector<Tensor> params = net.model().parameters();
  optimizer.zero_grad();
  backward(loss);
  if (shared_step_) all_reduce_gradients(comm_, params);  // before the clip: the global norm
  shared_step_ = false;
  clip_checked_gradients(common_.method, epoch, step, params, common_.grad_clip);
  optimizer.step();
}

std::vector<std::vector<double>> PairsKit::per_caption(
    const data::Batcher& loader, int64_t epoch, size_t count,
    const std::function<std::vector<std::vector<double>>(const data::Batch&)>& of_batch) const {
  const size_t n = static_cast<size_t>(data_.train->num_captions());
  std::vector<std::vector<double>> out(count, std::vector<double>(n, 0.0));
  {
    NoGradGuard no_grad;
    const std::vector<std::vector<int64_t>> batches = loader.epoch_plan(epoch);
    for (size_t i = 0; i < batches.size(); ++i) {
      if (static_cast<int>(i % static_cast<size_t>(comm_.world_size())) != comm_.rank()) continue;
      const data::Batch b = batch(batches[i]);
      const std::vector<std::vector<double>> values = of_batch(b);
      const std::vector<int64_t> order = b.caption_index.to_vector<int64_t>();
      for (size_t k = 0; k < count; ++k)
        for (size_t j = 0; j < order.size(); ++j) out[k][static_cast<size_t>(order[j])] = values[k][j];
    }
  }
  if (comm_.world_size() == 1) return out;
  std::vector<double> all;
  for (const std::vector<double>& v : out) all.insert(all.end(), v.begin(), v.end());
  all = comm_.all_reduce_sum(from_vector(all, {static_cast<int64_t>(all.size())})).to_vector<double>();
  for (size_t k = 0; k < count; ++k)
    out[k].assign(all.begin() + static_cast<std::ptrdiff_t>(k * n), all.begin() + static_cast<std::ptrdiff_t>((k + 1) * n));
  return out;
}

std::vector<std::vector<double>> PairsKit::per_caption_losses(std::vector<SgrafNet>& nets, int64_t epoch,
                                                              const std::function<Tensor(const Tensor&)>& loss) const {
  for (SgrafNet& n : nets) n.model().eval();
  std::vector<std::vector<double>> out = per_caption(loader(1, false), epoch, nets.size(), [&](const data::Batch& b) {
    std::vector<std::vector<double>> losses_of_nets;
    for (SgrafNet& n : nets) {
      const Tensor S = n.model()(b.regions, b.captions, b.lengths);
      losses_of_nets.push_back(to(to(loss(S), Device::cpu()), DType::Float64).to_vector<double>());
    }
    return losses_of_nets;
  });
  for (SgrafNet& n : nets) n.model().train();
  return out;
}

Tensor PairsKit::split_scores(const data::PrecompDataset& split, models::SgrafModel& m) const {
  const eval::BlockSize block{common_.eval_batch, common_.eval_batch};
  if (comm_.world_size() == 1) return eval::score_precomp_split({&m}, split, block);
  const int64_t n_img = split.num_captions() / split.captions_per_image();
  const parallel::RowRange rows = parallel::block_rows(n_img, block.images, comm_.rank(), comm_.world_size());
  m.eval();  // as score_precomp_rows leaves it, on a rank without rows too
  const Tensor mine = rows.begin < rows.end ? eval::score_precomp_rows({&m}, split, rows.begin, rows.end, block)
                                            : zeros({0, split.num_captions()}, m.parameters().front().dtype());
  return comm_.all_gather(mine);
}

EvalResult PairsKit::validate(models::SgrafModel& m) const {
  const Tensor sims = split_scores(*data_.dev, m);
  m.train();
  return eval_result(eval::retrieval_metrics(sims, data_.dev->captions_per_image()), "dev");
}

EvalResult PairsKit::test(models::SgrafModel& m) const {
  const Tensor sims = split_scores(*data_.test, m);
  m.train();
  return test_result(sims, data_.test->captions_per_image(), common_);
}

void PairsKit::write_run_files(const std::string& dir) const { data::save_noise(data_.correspondence, dir); }

std::vector<PlanSplit> two_nets_plan_splits(const std::string& method, int64_t epoch, const std::vector<uint8_t>& clean_a,
                                            const std::vector<uint8_t>& clean_b) {
  const auto flags = [&](const std::vector<uint8_t>& c) {
    return viz::EpochSplit{epoch, method, viz::SplitKind::kept, {c.begin(), c.end()}};
  };
  return {PlanSplit{"net A's clean flags", flags(clean_a)}, PlanSplit{"net B's clean flags", flags(clean_b)}};
}

}  // namespace rematch::train
