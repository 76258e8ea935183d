#include "train/methods/dscmr/dscmr_method.h"

#include <algorithm>
#include <iomanip>
#include <ostream>
#include <sstream>

#include "parallel/gather_op.h"
#include "train/methods/data_parallel.h"
#include "train/methods/dscmr/dscmr_losses.h"
#include "train/methods/kit/labeled_eval.h"
#include "train/methods/kit/noisy_labels.h"
#include "train/methods/uotrcl/uotrcl_losses.h"

namespace rematch::train {
DscmrMethod::DscmrMethod(const CommonOptions& common, const DscmrOptions& options, data::LabeledDataset data,
                         std::ostream& log)
    : common_(common), options_(options), device_(common.device.device()), data_(std::move(data)), log_(log),
      num_classes_(data_.num_classes) {
  const int64_t n = data_.train.size();
  REMATCH_CHECK(n > 0 && num_classes_ > 0, "dscmr: ", data_.source, " has ", n, " training pairs and ",
                num_classes_, " classes; at least 1 of each is needed");
  REMATCH_CHECK(data_.valid.size() > 0 && data_.test.size() > 0, "dscmr: ", data_.source,
                " needs non-empty valid and test splits (valid ", data_.valid.size(), ", test ", data_.test.size(),
                ")");
  REMATCH_CHECK(options_.dtype == DType::Float32 || options_.dtype == DType::Float64,
                "dscmr: the model dtype must be float32 or float64");
  noisy_ = noisy_training_labels(common_, data_, "dscmr");
  train_images_ = kernels::cast(kernels::to_device(data_.train.images, device_), options_.dtype);
  train_texts_ = kernels::cast(kernels::to_device(data_.train.texts, device_), options_.dtype);
  // load_data.py: ind2vec(labels), one-hot rows; MRL's out-of-range label K (--noise_mode mrl) is a zero row.
  one_hot_v_ = uotrcl::one_hot_labels(noisy_.image_labels, num_classes_, options_.dtype, device_);
  one_hot_t_ = uotrcl::one_hot_labels(noisy_.text_labels, num_classes_, options_.dtype, device_);

  models::DscmrConfig mc;
  mc.img_dim = train_images_.size(1);
  mc.txt_dim = train_texts_.size(1);
  mc.hidden_dim = options_.hidden_dim;
  mc.common_dim = options_.common_dim;
  mc.num_classes = num_classes_;
  Generator init_gen(common_.seed);
  model_ = std::make_unique<models::DscmrModel>(mc, options_.dtype, &init_gen);
  model_->to(device_);
  // main.py: optim.Adam(list(model_ft.parameters()), lr=lr, betas=(0.5, 0.999)), no weight decay.
  optimizer_ = std::make_unique<nn::Adam>(model_->parameters(), common_.learning_rate, nn::AdamBetas{0.5, 0.999});

  std::ostringstream line;
  line << std::setprecision(4) << "dscmr: " << data_.source << ": " << n << " training pairs, " << num_classes_
       << " classes, dims " << mc.img_dim << "/" << mc.txt_dim << "; training labels " << noisy_.source << ", "
       << label_agreement(noisy_.image_labels, data_.train.image_labels) << " of the image labels correct; alpha "
       << options_.alpha << ", beta " << options_.beta << " on " << device_.str() << "\n";
  log_ << line.str();
}

EpochInfo DscmrMethod::epoch_info() const {
  EpochInfo info;
  info.phase = "main";
  info.steps = (data_.train.size() + common_.batch_size - 1) / common_.batch_size;
  info.stats["noisy_accuracy"] = noisy_label_accuracy(noisy_, data_.train);
  return info;
}

EpochInfo DscmrMethod::begin_epoch(int64_t epoch) {
  REMATCH_CHECK(epoch >= 0 && epoch < common_.num_epochs, "dscmr: epoch ", epoch, " is outside 0..",
                common_.num_epochs - 1);
  epoch_ = epoch;
  info_ = epoch_info();
  return info_;
}

StepResult DscmrMethod::train_step(int64_t epoch, int64_t step) {
  REMATCH_CHECK(epoch == epoch_, "dscmr: train_step for epoch ", epoch, " but epoch ", epoch_,
                " is in progress (call begin_epoch or load_state first)");
  const int64_t n = data_.train.size(), B = common_.batch_size, start = step * B;
  REMATCH_CHECK(step >= 0 && start < n, "dscmr: step ", step, " is past the ", (n + B - 1) / B,
                " steps of the epoch");
  const int64_t b = std::min(B, n - start);  // load_data.py: DataLoader(shuffle=False), the last batch kept
  model_->train();
  // Under mpirun each rank encodes its rows of the batch and every rank computes the whole loss from the gathered
  // features and predictions, whose backward keeps each rank's rows; the gradients are summed over ranks.
  parallel::Communicator& comm = parallel::world();
  const bool shared = comm.world_size() > 1 && b >= comm.world_size();
  const parallel::RowRange mine = shared ? batch_share(comm, b) : parallel::RowRange{0, b};
  const auto whole = [&](const Tensor& x) {
    return shared ? parallel::all_gather_rows(comm, x, parallel::GatherBackward::OwnRows) : x;
  };
  const Tensor my_u = model_->encode_images(narrow(train_images_, 0, start + mine.begin, mine.end - mine.begin));
  const Tensor my_v = model_->encode_texts(narrow(train_texts_, 0, start + mine.begin, mine.end - mine.begin));
  const Tensor u = whole(my_u), v = whole(my_v);
  const Tensor pred_u = whole(model_->classify(my_u)), pred_v = whole(model_->classify(my_v));
  const Tensor y_v = narrow(one_hot_v_, 0, start, b), y_t = narrow(one_hot_t_, 0, start, b);
  // calc_loss: im_loss = term1 + alpha * term2 + beta * term3
  const Tensor term1 = dscmr::label_space_loss(pred_u, pred_v, y_v, y_t);
  const Tensor term2 = dscmr::common_space_loss(u, v, y_v, y_t);
  const Tensor term3 = dscmr::invariance_loss(u, v);
  const Tensor loss = add(add(term1, mul(term2, options_.alpha)), mul(term3, options_.beta));
  StepResult result;
  result.pairs = b;
  result.parts["label_space"] = term1.item<double>();
  result.parts["common_space"] = term2.item<double>();
  result.parts["invariance"] = term3.item<double>();
  result.loss = loss.item<double>();
  check_finite_loss(name(), epoch, step, "loss", result.loss);
  optimizer_->zero_grad();
  backward(loss);
  if (shared) all_reduce_gradients(comm, model_->parameters());
  clip_checked_gradients(name(), epoch, step, model_->parameters(), common_.grad_clip);
  optimizer_->step();
  return result;
}

void DscmrMethod::end_epoch(int64_t epoch) {
  REMATCH_CHECK(epoch == epoch_, "dscmr: end_epoch(", epoch, ") but epoch ", epoch_, " is in progress");
}

EvalResult DscmrMethod::evaluate(const data::LabeledSplit& split, const std::string& name) {
  model_->eval();
  const auto prepare = [this](const Tensor& x) {
    return kernels::cast(kernels::to_device(x, device_), options_.dtype);
  };
  // evaluate.py: fx_calc_map_label(view1_feature, view2_feature, label) on the common-space features, cosine.
  return evaluate_labeled_split(
      split, common_.eval_batch, [&](const Tensor& x) { return model_->encode_images(prepare(x)); },
      [&](const Tensor& x) { return model_->encode_texts(prepare(x)); }, "dscmr", name);
}

EvalResult DscmrMethod::validate() { return evaluate(data_.valid, "valid"); }

EvalResult DscmrMethod::test() { return evaluate(data_.test, "test"); }

void DscmrMethod::save_state(TrainingState& state) const {
  state.put_module("model.", *model_);
  state.put_optimizer("optim.", *optimizer_);
  state.put_int("dscmr.epoch", epoch_);
  put_noisy_labels(state, "dscmr", noisy_);
}

void DscmrMethod::load_state(const TrainingState& state) {
  check_noisy_labels(state, "dscmr", noisy_);
  state.get_module("model.", *model_);
  state.get_optimizer("optim.", *optimizer_);
  epoch_ = state.get_int("dscmr.epoch");
  info_ = epoch_info();
}

void DscmrMethod::write_run_files(const std::string& dir) { data::save_label_noise(noisy_, dir); }

const MethodSpec& dscmr_method_spec() {
  static const MethodSpec spec = [] {
    MethodSpec s;
    s.name = "dscmr";
    s.summary = "DSCMR, deep supervised cross-modal retrieval (Zhen et al., CVPR 2019), a baseline under noisy labels";
    s.doc = "docs/methods/dscmr.md";
    s.layout = DataLayout::Labelled;
    s.presets = {"wiki", "nus", "xmedianet"};
    s.tables = {&dscmr_flags()};
    s.defaults = dscmr_defaults();
    s.check = check_dscmr;
    // Under mpirun (docs/distributed.md §4): each rank encodes its share of a batch's rows; the loss, whose term2
    // couples every pair of the batch, runs on every rank from the gathered features and predictions.
    s.data_parallel = true;
    s.make = make_with<DscmrOptions, data::LabeledDataset>(
        [](const CommonOptions& c, const DscmrOptions&, std::ostream&) {
          return data::load_labeled(c.data_path, c.valid_len);
        },
        [](const CommonOptions& c, const DscmrOptions& o, data::LabeledDataset data,
           std::ostream& log) -> std::unique_ptr<Method> {
          return std::make_unique<DscmrMethod>(c, o, std::move(data), log);
        });
    return s;
  }();
  return spec;
}

}  // namespace rematch::train
