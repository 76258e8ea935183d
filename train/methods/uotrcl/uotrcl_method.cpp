#include "train/methods/uotrcl/uotrcl_method.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "parallel/gather_op.h"
#include "tensor/json_depth.h"
#include "train/eval/map_metric.h"
#include "train/methods/data_parallel.h"
#include "train/methods/kit/noisy_labels.h"
#include "viz/plots.h"

namespace rematch::train {
namespace {

// Share of rows whose argmax equals the label ([N, K] host values, ties: the lower class).
double argmax_accuracy(const Tensor& rows, const std::vector<int64_t>& labels) {
  const int64_t n = rows.size(0), K = rows.size(1);
  const std::vector<double> v = rows.to_vector<double>();
  int64_t hits = 0;
  for (int64_t i = 0; i < n; ++i) {
    const auto row = v.begin() + i * K;
    hits += std::max_element(row, row + K) - row == labels[static_cast<size_t>(i)];
  }
  return n > 0 ? static_cast<double>(hits) / static_cast<double>(n) : 0.0;
}

std::string stats_json(const EpochInfo& info) {
  nlohmann::json j;
  j["phase"] = info.phase;
  j["steps"] = info.steps;
  j["stats"] = info.stats;
  return j.dump();
}

EpochInfo stats_from_json(const std::string& text, const std::string& source) {
  EpochInfo info;
  io::require_shallow_json(text, source);
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    info.phase = j.at("phase").get<std::string>();
    info.steps = j.at("steps").get<int64_t>();
    info.stats = j.at("stats").get<Scalars>();
  } catch (const nlohmann::json::exception& e) {
    REMATCH_FAIL(source, ": entry uotrcl.epoch_info is malformed (", e.what(), ")");
  }
  return info;
}

}  // namespace

UotrclMethod::UotrclMethod(const CommonOptions& common, const UotrclOptions& options, data::LabeledDataset data,
                           std::ostream& log)
    : common_(common), options_(options), noise_mode_(label_noise_mode(common, "uotrcl")),
      noise_seed_(common.noise_seed < 0 ? common.seed : static_cast<uint64_t>(common.noise_seed)),
      knn_(options.knn), device_(common.device.device()), data_(std::move(data)), log_(log),
      num_classes_(data_.num_classes), shuffle_gen_(common.seed + 1) {
  label_correction_.epsilon = options_.lc_eps;
  label_correction_.max_iter = options_.lc_iters;
  label_correction_.relative = options_.lc_eps_scale == EpsilonScale::Mean;
  label_correction_.corner = options_.lc_corner;
  label_correction_.tol = options_.lc_tol;
  relation_.epsilon = options_.rel_eps;
  relation_.max_iter = options_.rel_iters;
  relation_.normalize_cost = options_.rel_cost_norm == CostNorm::Mean;
  relation_.tol = options_.rel_tol;
  const int64_t n = data_.train.size();
  REMATCH_CHECK(n > 1 && num_classes_ > 0, "uotrcl: ", data_.source, " has ", n, " training pairs and ",
                num_classes_, " classes; at least 2 pairs and 1 class are needed");
  // 𝒦 ≈ 5 % of the training set (UOT-RCL §V-B: 10 / 200 / 150) unless given.
  if (knn_ == -1) knn_ = std::max<int64_t>(1, std::llround(0.05 * static_cast<double>(n)));
  REMATCH_CHECK(knn_ >= 1 && knn_ < n, "uotrcl: --knn = ", knn_,
                " neighbours need 1..N-1 with N = ", n, " training pairs (", data_.source, ")");
  REMATCH_CHECK(common_.warmup_epoch >= 0 && common_.warmup_epoch <= common_.num_epochs,
                "uotrcl: warm-up epochs ", common_.warmup_epoch, " must lie in 0..num_epochs = ",
                common_.num_epochs);
  REMATCH_CHECK(data_.valid.size() > 0 && data_.test.size() > 0, "uotrcl: ", data_.source,
                " needs non-empty valid and test splits (valid ", data_.valid.size(), ", test ", data_.test.size(),
                ")");
  if (!common_.noise_file.empty()) {
    noisy_ = data::load_label_noise_file(common_.noise_file, data_.train, num_classes_, noise_mode_);
  } else {
    noisy_ = data::inject_label_noise(data_.train, num_classes_, common_.noise_ratio, noise_mode_,
                                      noise_seed_);
  }
  const Device dev = device_;
  REMATCH_CHECK(options_.dtype == DType::Float32 || options_.dtype == DType::Float64,
                "uotrcl: the model dtype must be float32 or float64");
  train_images_ = kernels::cast(kernels::to_device(data_.train.images, dev), options_.dtype);
  train_texts_ = kernels::cast(kernels::to_device(data_.train.texts, dev), options_.dtype);
  noisy_one_hot_v_ = uotrcl::one_hot_labels(noisy_.image_labels, num_classes_, options_.dtype, dev);
  noisy_one_hot_t_ = uotrcl::one_hot_labels(noisy_.text_labels, num_classes_, options_.dtype, dev);
  // Eq. (9) starts from the noisy one-hot labels; with one label per pair both rows agree (with MRL's
  // per-modality draw the start is their average).
  targets_ = kernels::scalar_op(kernels::ScalarOp::Mul,
                                kernels::binary(kernels::BinaryOp::Add, noisy_one_hot_v_, noisy_one_hot_t_), 0.5);

  models::MlpPrototypeConfig mc;
  mc.img_dim = train_images_.size(1);
  mc.txt_dim = train_texts_.size(1);
  mc.hidden_dim = options_.hidden_dim;
  mc.output_dim = options_.output_dim;
  mc.num_classes = num_classes_;
  Generator init_gen(common_.seed);
  model_ = std::make_unique<models::MlpPrototypeModel>(mc, options_.dtype, &init_gen);
  model_->to(dev);
  optimizer_ = std::make_unique<nn::Adam>(model_->parameters(), common_.learning_rate);

  std::ostringstream line;  // formatted apart, so the caller's stream keeps its own precision
  line << std::setprecision(4) << "uotrcl: " << data_.source << ": " << n << " training pairs, " << num_classes_
       << " classes, dims " << mc.img_dim << "/" << mc.txt_dim << "; training labels " << noisy_.source << ", "
       << label_agreement(noisy_.image_labels, clean_labels()) << " of them correct; " << common_.warmup_epoch
       << " warm-up epochs of " << common_.num_epochs << " on " << dev.str() << "\n";
  log_ << line.str();
}

Tensor UotrclMethod::batch_rows(int64_t step) const {
  const int64_t n = static_cast<int64_t>(order_.size()), B = common_.batch_size;
  const int64_t start = step * B;
  REMATCH_CHECK(step >= 0 && start < n, "uotrcl: step ", step, " is past the ", (n + B - 1) / B,
                " steps of the epoch");
  const std::vector<int64_t> rows(order_.begin() + start, order_.begin() + std::min(n, start + B));
  return kernels::to_device(from_vector(rows), device_);
}

UotrclMethod::Embeddings UotrclMethod::embed(const data::LabeledSplit& split) {
  NoGradGuard no_grad;
  const Device dev = device_;
  const int64_t n = split.size(), block = common_.eval_batch;
  TensorList zv, zt;
  for (int64_t r0 = 0; r0 < n; r0 += block) {
    const int64_t b = std::min(block, n - r0);
    zv.push_back(model_->encode_images(
        kernels::cast(kernels::to_device(kernels::narrow(split.images, 0, r0, b), dev), options_.dtype)));
    zt.push_back(model_->encode_texts(
        kernels::cast(kernels::to_device(kernels::narrow(split.texts, 0, r0, b), dev), options_.dtype)));
  }
  return {kernels::cat(zv, 0), kernels::cat(zt, 0)};
}

void UotrclMethod::correct_labels(int64_t epoch) {
  NoGradGuard no_grad;
  const Embeddings e = embed(data_.train);
  const Tensor p_v = model_->class_probs(e.z_v, options_.tau1), p_t = model_->class_probs(e.z_t, options_.tau1);
  const double s = uotrcl::transported_mass(epoch, common_.warmup_epoch, common_.num_epochs, options_.s_start,
                                            options_.s_end);
  // Steps a–d of docs/methods/uotrcl.md §4.3 with the targets as they stand, then the Eq. (9) update for next epoch.
  // 𝒢 by JSD (Eq. 5), or with --confident_set random as many pairs drawn uniformly (the ablation), from a
  // stream of their own per epoch so that nothing else the run draws moves.
  std::vector<int64_t> G = uotrcl::confident_set(p_v, p_t, options_.confident_per_class);
  if ((options_.confident_set == ConfidentSet::Random)) {
    Generator gen(common_.seed ^ 0xC0F1DE47C0F1DE47ull);
    gen.set_state({gen.seed(), static_cast<uint64_t>(epoch) << 40});
    G = uotrcl::random_confident_set(e.z_v.size(0), static_cast<int64_t>(G.size()), gen);
  }
  const uotrcl::ConsistentCost cc = uotrcl::cross_modal_consistent_cost(e.z_v, e.z_t, targets_, G, knn_);
  const uotrcl::LabelCorrection lc = uotrcl::correct_labels(cc.cost, s, label_correction_);
  corrected_ = lc.corrected;
  confident_ = cc.confident;
  if (options_.target_update == TargetUpdate::Epoch)
    targets_ = uotrcl::update_targets(targets_, e.z_v, e.z_t, model_->prototypes(), options_.gamma);

  const std::vector<int64_t>& clean = clean_labels();
  int64_t confident_hits = 0;
  const std::vector<int64_t> predicted = argmax(add(p_v, p_t), 1).to_vector<int64_t>();
  for (int64_t g : confident_) confident_hits += predicted[static_cast<size_t>(g)] == clean[static_cast<size_t>(g)];
  Scalars& st = info_.stats;
  st["s"] = s;
  st["lc_epsilon"] = lc.epsilon;
  st["lc_mass"] = lc.mass;
  st["lc_cost_shift"] = lc.cost_shift;
  st["lc_iterations"] = static_cast<double>(lc.iterations);
  st["lc_converged"] = lc.converged ? 1.0 : 0.0;
  st["lc_clamped_share"] = static_cast<double>(cc.clamped_ratios) / static_cast<double>(clean.size());
  st["confident_size"] = static_cast<double>(confident_.size());
  st["confident_precision"] = static_cast<double>(confident_hits) / static_cast<double>(confident_.size());
  st["label_accuracy"] = argmax_accuracy(corrected_, clean);
  st["target_accuracy"] = argmax_accuracy(targets_, clean);
  st["prediction_accuracy"] = label_agreement(predicted, clean);
  std::ostringstream line;
  line << std::setprecision(4) << "uotrcl: epoch " << epoch << ": s = " << s << ", label-correction OT eps "
       << lc.epsilon << ", " << lc.iterations << " iterations" << (lc.converged ? "" : " (not converged)")
       << ", mass " << lc.mass << "; corrected labels " << st["label_accuracy"] << " accurate (noisy "
       << st["noisy_accuracy"] << ", targets " << st["target_accuracy"] << ")\n";
  log_ << line.str();
}

EpochInfo UotrclMethod::begin_epoch(int64_t epoch) {
  REMATCH_CHECK(epoch >= 0 && epoch < common_.num_epochs, "uotrcl: epoch ", epoch, " is outside 0..",
                common_.num_epochs - 1);
  epoch_ = epoch;
  const int64_t n = data_.train.size();
  order_ = randperm(n, Device::cpu(), &shuffle_gen_).to_vector<int64_t>();  // MRL: shuffle, keep the last batch
  // --lr_update: ×0.1 every lr_update epochs (0 = constant, UOT-RCL states no schedule).
  if (common_.lr_update > 0)
    optimizer_->set_lr(common_.learning_rate * std::pow(0.1, static_cast<double>(epoch / common_.lr_update)));
  info_ = EpochInfo();
  info_.steps = (n + common_.batch_size - 1) / common_.batch_size;
  info_.stats["noisy_accuracy"] = 0.5 * (label_agreement(noisy_.image_labels, clean_labels()) +
                                         label_agreement(noisy_.text_labels, data_.train.text_labels));
  if (epoch < common_.warmup_epoch) {
    info_.phase = "warmup";
  } else {
    info_.phase = "main";
    correct_labels(epoch);
  }
  return info_;
}

StepResult UotrclMethod::train_step(int64_t epoch, int64_t step) {
  REMATCH_CHECK(epoch == epoch_, "uotrcl: train_step for epoch ", epoch, " but epoch ", epoch_,
                " is in progress (call begin_epoch or load_state first)");
  const Tensor rows = batch_rows(step);
  const int64_t b = rows.size(0);
  model_->train();
  // Under mpirun each rank encodes its rows of the batch (no BatchNorm, no dropout: rows are independent) and
  // every rank computes the whole loss from the gathered embeddings and logits, whose backward keeps each rank's
  // rows; the gradients are summed over ranks before the clip. A batch smaller than the world runs whole.
  parallel::Communicator& comm = parallel::world();
  const bool shared = comm.world_size() > 1 && b >= comm.world_size();
  const parallel::RowRange mine = shared ? batch_share(comm, b) : parallel::RowRange{0, b};
  const Tensor my_rows = shared ? narrow(rows, 0, mine.begin, mine.end - mine.begin) : rows;
  const auto whole = [&](const Tensor& x) {
    return shared ? parallel::all_gather_rows(comm, x, parallel::GatherBackward::OwnRows) : x;
  };
  const Tensor my_z_v = model_->encode_images(index_select(train_images_, 0, my_rows));
  const Tensor my_z_t = model_->encode_texts(index_select(train_texts_, 0, my_rows));
  const Tensor z_v = whole(my_z_v), z_t = whole(my_z_t);
  const Tensor logits_v = whole(model_->logits(my_z_v, options_.tau1));
  const Tensor logits_t = whole(model_->logits(my_z_t, options_.tau1));

  StepResult result;
  result.pairs = b;
  Tensor loss;
  const bool warmup = epoch < common_.warmup_epoch;  // begin_epoch's phase: "warmup", else "main"
  if (warmup) {
    loss = uotrcl::warmup_ce_loss(logits_v, logits_t, index_select(noisy_one_hot_v_, 0, rows),
                                  index_select(noisy_one_hot_t_, 0, rows));
    result.parts["ce"] = loss.item<double>();
  } else {
    // Eq. (19) L = L_PLC + λ L_BHG, less the term an ablation drops (--no_plc, --no_bhg).
    Tensor plc, plan;
    if (!options_.no_plc) plc = uotrcl::plc_loss(logits_v, logits_t, index_select(corrected_, 0, rows));
    if (!options_.no_bhg) {
      // The relation plan is a fixed target (Eqs. 16–17): the batch against the current embeddings of G.
      NoGradGuard no_grad;
      const Tensor G = kernels::to_device(from_vector(confident_), device_);
      const Tensor g_v = model_->encode_images(index_select(train_images_, 0, G));
      const Tensor g_t = model_->encode_texts(index_select(train_texts_, 0, G));
      const Tensor cost = uotrcl::relation_cost(uotrcl::relation_vectors(z_v.detach(), g_v, options_.tau2),
                                                uotrcl::relation_vectors(z_t.detach(), g_t, options_.tau2));
      plan = uotrcl::relation_plan(cost, relation_).plan;
    }
    if (plc.defined()) {
      loss = plc;
      result.parts["plc"] = plc.item<double>();
      check_finite_loss(name(), epoch, step, "plc", result.parts["plc"]);
    }
    if (plan.defined()) {
      const Tensor bhg = uotrcl::bhg_loss(z_v, z_t, plan, options_.tau3);
      loss = loss.defined() ? add(loss, mul(bhg, options_.lambda_bhg)) : mul(bhg, options_.lambda_bhg);
      result.parts["bhg"] = bhg.item<double>();
      check_finite_loss(name(), epoch, step, "bhg", result.parts["bhg"]);
    }
  }
  result.loss = loss.item<double>();
  check_finite_loss(name(), epoch, step, "loss", result.loss);

  if (!warmup && options_.target_update == TargetUpdate::Batch) {
    // Eq. (9) for the batch's pairs, from the embeddings of this forward (before the update).
    NoGradGuard no_grad;
    const Tensor old_rows = index_select(targets_, 0, rows);
    const Tensor new_rows =
        uotrcl::update_targets(old_rows, z_v.detach(), z_t.detach(), model_->prototypes(), options_.gamma);
    targets_ = kernels::index_add(targets_, 0, rows, kernels::binary(kernels::BinaryOp::Sub, new_rows, old_rows));
  }
  optimizer_->zero_grad();
  backward(loss);
  if (shared) all_reduce_gradients(comm, model_->parameters());
  clip_checked_gradients(name(), epoch, step, model_->parameters(), common_.grad_clip);
  optimizer_->step();
  // MRL renormalises the prototype columns at the top of every batch; doing it right after each update gives
  // the same iterates and leaves the parameters untouched until the loss has passed the finite check.
  model_->renormalize_prototypes();
  return result;
}

void UotrclMethod::end_epoch(int64_t epoch) {
  REMATCH_CHECK(epoch == epoch_, "uotrcl: end_epoch(", epoch, ") but epoch ", epoch_, " is in progress");
}

EvalResult UotrclMethod::evaluate(const data::LabeledSplit& split, const std::string& name) {
  model_->eval();
  const Embeddings e = embed(split);
  // The mAP runs in float64 on the host (MRL: scipy cdist), next to the host labels.
  const eval::CrossModalMap m =
      eval::cross_modal_map(kernels::to_device(e.z_v, Device::cpu()), from_vector(split.image_labels),
                            kernels::to_device(e.z_t, Device::cpu()), from_vector(split.text_labels));
  EvalResult r;
  r.score = m.average();
  r.metrics = {{"map_i2t", m.img2txt}, {"map_t2i", m.txt2img}, {"map_avg", m.average()}};
  std::ostringstream table;
  table << std::fixed << std::setprecision(4) << "| " << name << " | Img→Txt mAP | Txt→Img mAP | average |\n"
        << "|---|---|---|---|\n"
        << "| uotrcl | " << m.img2txt << " | " << m.txt2img << " | " << m.average() << " |\n";
  r.table = table.str();
  return r;
}

EvalResult UotrclMethod::validate() { return evaluate(data_.valid, "valid"); }

EvalResult UotrclMethod::test() { return evaluate(data_.test, "test"); }

void UotrclMethod::save_state(TrainingState& state) const {
  state.put_module("model.", *model_);
  state.put_optimizer("optim.", *optimizer_);
  state.put_generator("uotrcl.shuffle", shuffle_gen_);
  state.put_int("uotrcl.epoch", epoch_);
  state.put_entry("uotrcl.epoch_info", stats_json(info_));
  state.put_int_vector("uotrcl.order", order_);
  state.put_int_vector("uotrcl.confident", confident_);
  state.put_tensor("uotrcl.targets", targets_);
  if (corrected_.defined()) state.put_tensor("uotrcl.corrected", corrected_);
  put_noisy_labels(state, "uotrcl", noisy_);
}

void UotrclMethod::load_state(const TrainingState& state) {
  check_noisy_labels(state, "uotrcl", noisy_);
  state.get_module("model.", *model_);
  state.get_optimizer("optim.", *optimizer_);
  state.get_generator("uotrcl.shuffle", shuffle_gen_);
  epoch_ = state.get_int("uotrcl.epoch");
  info_ = stats_from_json(state.get_entry("uotrcl.epoch_info"), state.source());
  order_ = state.get_int_vector("uotrcl.order");
  confident_ = state.get_int_vector("uotrcl.confident");
  REMATCH_CHECK(static_cast<int64_t>(order_.size()) == data_.train.size() || order_.empty(), "uotrcl: ",
                state.source(), " holds a batch order of ", order_.size(), " rows for ", data_.train.size(),
                " training pairs");
  targets_ = kernels::to_device(kernels::cast(state.get_tensor("uotrcl.targets"), options_.dtype), device_);
  corrected_ = state.has_tensor("uotrcl.corrected")
                   ? kernels::to_device(kernels::cast(state.get_tensor("uotrcl.corrected"), options_.dtype),
                                        device_)
                   : Tensor();
}

void UotrclMethod::write_plots(const std::string& dir, int64_t epoch) {
  if (!corrected_.defined()) return;
  // Rows: clean class; columns: argmax of Ŷ (UOT-RCL Fig. 8 shows the same as row-normalised heatmaps).
  const int64_t K = num_classes_;
  const std::vector<double> v = corrected_.to_vector<double>();
  const std::vector<int64_t>& clean = clean_labels();
  std::vector<int64_t> predicted(clean.size());
  for (size_t i = 0; i < clean.size(); ++i) {
    const auto row = v.begin() + static_cast<std::ptrdiff_t>(i) * K;
    predicted[i] = std::max_element(row, row + K) - row;
  }
  // Never K × K counts beyond what the plot draws (viz/plots.h): sparse class ids keep only the classes in use.
  const run::ConfusionCounts c = run::confusion_counts(clean, predicted, K);
  if (!c.drawable) {
    if (!plot_left_out_said_)
      log_ << "uotrcl: plots/corrected_labels.png is left out: " << c.k << " classes are in use, more than the "
           << run::kMaxConfusionClasses << " a confusion matrix is drawn with\n";
    plot_left_out_said_ = true;
    return;
  }
  run::confusion_matrix_plot(dir + "/corrected_labels.png",
                             "corrected labels (argmax of N·T) vs clean labels, epoch " + std::to_string(epoch + 1),
                             c.counts, c.k, c.labels);
}

// The labels begin_epoch corrected (docs/methods/uotrcl.md §4.3): the class of each training pair, argmax of
// Ŷ's row; the report compares them with the clean labels.
std::optional<viz::EpochSplit> UotrclMethod::epoch_split(int64_t epoch) const {
  if (epoch < common_.warmup_epoch || !corrected_.defined()) return std::nullopt;
  const int64_t K = num_classes_;
  const std::vector<double> v = corrected_.to_vector<double>();
  viz::EpochSplit s{epoch, "uotrcl", viz::SplitKind::label, {}};
  for (size_t i = 0; i + static_cast<size_t>(K) <= v.size(); i += static_cast<size_t>(K)) {
    const auto row = v.begin() + static_cast<std::ptrdiff_t>(i);
    s.values.push_back(static_cast<double>(std::max_element(row, row + K) - row));
  }
  return s;
}

std::string UotrclMethod::results_notes() const {
  if (info_.phase != "main") return "";
  std::ostringstream s;
  s << std::fixed << std::setprecision(4) << "UOT-RCL label correction (epoch " << epoch_
    << "): corrected-label accuracy " << info_.stats.at("label_accuracy") << ", targets "
    << info_.stats.at("target_accuracy") << ", noisy labels " << info_.stats.at("noisy_accuracy")
    << " (argmax of Ŷ = N·T and of y against the clean training labels); s = " << info_.stats.at("s") << "\n";
  return s.str();
}

void UotrclMethod::write_run_files(const std::string& dir) { data::save_label_noise(noisy_, dir); }

const MethodSpec& uotrcl_method_spec() {
  static const MethodSpec spec = [] {
    MethodSpec s;
    s.name = "uotrcl";
    s.summary = "UOT-RCL, unified optimal transport for retrieval with noisy labels, on an MLP with class prototypes";
    s.doc = "docs/methods/uotrcl.md";
    s.layout = DataLayout::Labelled;
    s.presets = {"wiki", "nus", "xmedianet"};
    s.tables = {&uotrcl_flags()};
    s.defaults = uotrcl_defaults();
    s.check = check_uotrcl;
    // Under mpirun (docs/distributed.md §4): each rank encodes its share of a batch's rows; the label correction,
    // the relation plan and the loss run on every rank from the gathered embeddings and logits.
    s.data_parallel = true;
    s.make = make_with<UotrclOptions, data::LabeledDataset>(
        [](const CommonOptions& c, const UotrclOptions&, std::ostream&) {
          return data::load_labeled(c.data_path, c.valid_len);
        },
        [](const CommonOptions& c, const UotrclOptions& o, data::LabeledDataset data,
           std::ostream& log) -> std::unique_ptr<Method> {
          return std::make_unique<UotrclMethod>(c, o, std::move(data), log);
        });
    return s;
  }();
  return spec;
}

}  // namespace rematch::train
