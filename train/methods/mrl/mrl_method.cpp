#include "train/methods/mrl/mrl_method.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <ostream>
#include <sstream>

#include "nn/functional.h"
#include "parallel/gather_op.h"
#include "train/methods/data_parallel.h"
#include "train/methods/kit/labeled_eval.h"
#include "train/methods/kit/noisy_labels.h"
#include "train/methods/mrl/mrl_losses.h"
#include "train/methods/uotrcl/uotrcl_losses.h"

namespace rematch::train {
double mrl_learning_rate(double base, int64_t epoch, int64_t num_epochs, MrlSchedule schedule) {
  REMATCH_CHECK(epoch >= 0 && num_epochs > 0, "mrl_learning_rate: epoch ", epoch, " of ", num_epochs);
  const int64_t last = std::max<int64_t>(epoch - 1, 0);  // main_noisy.py: train(epoch); lr_schedu.step(epoch)
  if (schedule == MrlSchedule::MultiStep) return base * std::pow(0.1, (last >= 200) + (last >= 400));
  // CosineAnnealingLR._get_closed_form_lr with eta_min = 0 and T_max = --max_epochs.
  return base * 0.5 * (1.0 + std::cos(M_PI * static_cast<double>(last) / static_cast<double>(num_epochs)));
}

MrlMethod::MrlMethod(const CommonOptions& common, const MrlOptions& options, data::LabeledDataset data,
                     std::ostream& log)
    : common_(common), options_(options), device_(common.device.device()), data_(std::move(data)), log_(log),
      num_classes_(data_.num_classes), shuffle_gen_(common.seed + 1) {
  const int64_t n = data_.train.size();
  REMATCH_CHECK(n > 0 && num_classes_ > 0, "mrl: ", data_.source, " has ", n, " training pairs and ", num_classes_,
                " classes; at least 1 of each is needed");
  REMATCH_CHECK(data_.valid.size() > 0 && data_.test.size() > 0, "mrl: ", data_.source,
                " needs non-empty valid and test splits (valid ", data_.valid.size(), ", test ", data_.test.size(),
                ")");
  REMATCH_CHECK(options_.tau > 0, "mrl: --tau must be positive, got ", options_.tau);
  REMATCH_CHECK(options_.dtype == DType::Float32 || options_.dtype == DType::Float64,
                "mrl: the model dtype must be float32 or float64");
  noisy_ = noisy_training_labels(common_, data_, "mrl");
  train_images_ = kernels::cast(kernels::to_device(data_.train.images, device_), options_.dtype);
  train_texts_ = kernels::cast(kernels::to_device(data_.train.texts, device_), options_.dtype);
  // MeanClusteringError.to_onehot: eye(K)[target]; MRL's out-of-range label K (--noise_mode mrl) is a zero row.
  one_hot_v_ = uotrcl::one_hot_labels(noisy_.image_labels, num_classes_, options_.dtype, device_);
  one_hot_t_ = uotrcl::one_hot_labels(noisy_.text_labels, num_classes_, options_.dtype, device_);

  models::MlpPrototypeConfig mc;
  mc.img_dim = train_images_.size(1);
  mc.txt_dim = train_texts_.size(1);
  mc.hidden_dim = options_.hidden_dim;
  mc.output_dim = options_.output_dim;
  mc.num_classes = num_classes_;
  mc.norm_eps = 0;  // nets/ImageNet.py, nets/TextNet.py: x / torch.norm(x, dim=1, keepdim=True)
  Generator init_gen(common_.seed);
  model_ = std::make_unique<models::MlpPrototypeModel>(mc, options_.dtype, &init_gen);
  model_->to(device_);
  // main_noisy.py: optim.Adam([C] + params of each view, lr, betas=[0.5, 0.999], weight_decay=args.wd = 0).
  optimizer_ = std::make_unique<nn::Adam>(model_->parameters(), common_.learning_rate, nn::AdamBetas{0.5, 0.999});

  std::ostringstream line;
  line << std::setprecision(4) << "mrl: " << data_.source << ": " << n << " training pairs, " << num_classes_
       << " classes, dims " << mc.img_dim << "/" << mc.txt_dim << "; training labels " << noisy_.source << ", "
       << label_agreement(noisy_.image_labels, data_.train.image_labels) << " of the image labels correct; "
       << (options_.label_loss == MrlLabelLoss::Mce ? "MCE" : "CE") << ", beta " << options_.beta << ", tau "
       << options_.tau << " on " << device_.str() << "\n";
  log_ << line.str();
}

EpochInfo MrlMethod::begin_epoch(int64_t epoch) {
  REMATCH_CHECK(epoch >= 0 && epoch < common_.num_epochs, "mrl: epoch ", epoch, " is outside 0..",
                common_.num_epochs - 1);
  epoch_ = epoch;
  const int64_t n = data_.train.size();
  order_ = randperm(n, Device::cpu(), &shuffle_gen_).to_vector<int64_t>();  // DataLoader(shuffle=True, drop_last=False)
  optimizer_->set_lr(mrl_learning_rate(common_.learning_rate, epoch, common_.num_epochs, options_.ls));
  info_ = EpochInfo();
  info_.phase = "main";
  info_.steps = (n + common_.batch_size - 1) / common_.batch_size;
  info_.stats["noisy_accuracy"] = noisy_label_accuracy(noisy_, data_.train);
  return info_;
}

StepResult MrlMethod::train_step(int64_t epoch, int64_t step) {
  REMATCH_CHECK(epoch == epoch_, "mrl: train_step for epoch ", epoch, " but epoch ", epoch_,
                " is in progress (call begin_epoch or load_state first)");
  const int64_t n = static_cast<int64_t>(order_.size()), B = common_.batch_size, start = step * B;
  REMATCH_CHECK(step >= 0 && start < n, "mrl: step ", step, " is past the ", (n + B - 1) / B, " steps of the epoch");
  const std::vector<int64_t> host_rows(order_.begin() + start, order_.begin() + std::min(n, start + B));
  const Tensor rows = kernels::to_device(from_vector(host_rows), device_);
  model_->train();
  // Under mpirun each rank encodes its rows of the batch (rows are independent: no BatchNorm, no dropout) and
  // every rank computes the whole loss from the gathered embeddings and logits, whose backward keeps each rank's
  // rows; the gradients are summed over ranks before the update. A batch smaller than the world runs whole.
  parallel::Communicator& comm = parallel::world();
  const int64_t b = rows.size(0);
  const bool shared = comm.world_size() > 1 && b >= comm.world_size();
  const parallel::RowRange mine = shared ? batch_share(comm, b) : parallel::RowRange{0, b};
  const Tensor my_rows = shared ? narrow(rows, 0, mine.begin, mine.end - mine.begin) : rows;
  const auto whole = [&](const Tensor& x) {
    return shared ? parallel::all_gather_rows(comm, x, parallel::GatherBackward::OwnRows) : x;
  };
  // main_noisy.py train(): outputs = [net_v(x_v)]; preds = [outputs[v].mm(C)]; losses = [criterion(preds[v], t_v)]
  const Tensor my_z_v = model_->encode_images(index_select(train_images_, 0, my_rows));
  const Tensor my_z_t = model_->encode_texts(index_select(train_texts_, 0, my_rows));
  const Tensor z_v = whole(my_z_v), z_t = whole(my_z_t);
  const Tensor logits_v = whole(model_->logits(my_z_v)), logits_t = whole(model_->logits(my_z_t));
  const Tensor q_v = index_select(one_hot_v_, 0, rows), q_t = index_select(one_hot_t_, 0, rows);
  Tensor label_v, label_t;
  if (options_.label_loss == MrlLabelLoss::Mce) {
    label_v = mrl::mean_clustering_error(logits_v, q_v, options_.tau);
    label_t = mrl::mean_clustering_error(logits_t, q_t, options_.tau);
  } else {  // torch.nn.CrossEntropyLoss() on the raw z·C
    label_v = nn::cross_entropy_soft(logits_v, q_v);
    label_t = nn::cross_entropy_soft(logits_t, q_t);
  }
  const Tensor contrastive = mrl::multimodal_contrastive_loss(z_v, z_t, options_.tau);
  // loss = beta * sum(losses) + (1 - beta) * cross_modal_contrastive_ctriterion(outputs, tau)
  const Tensor loss =
      add(mul(add(label_v, label_t), options_.beta), mul(contrastive, 1.0 - options_.beta));
  StepResult result;
  result.pairs = static_cast<int64_t>(host_rows.size());
  const char* label_name = options_.label_loss == MrlLabelLoss::Mce ? "mce" : "ce";
  result.parts[std::string(label_name) + "_img"] = label_v.item<double>();
  result.parts[std::string(label_name) + "_txt"] = label_t.item<double>();
  result.parts["contrastive"] = contrastive.item<double>();
  result.loss = loss.item<double>();
  check_finite_loss(name(), epoch, step, "loss", result.loss);
  optimizer_->zero_grad();
  backward(loss);
  if (shared) all_reduce_gradients(comm, model_->parameters());
  clip_checked_gradients(name(), epoch, step, model_->parameters(), common_.grad_clip);
  optimizer_->step();
  // main_noisy.py renormalises C's columns at the top of every batch (C.data = C / C.norm(dim=0)); doing it right
  // after each update gives the same iterates (the constructor leaves them unit length).
  model_->renormalize_prototypes();
  return result;
}

void MrlMethod::end_epoch(int64_t epoch) {
  REMATCH_CHECK(epoch == epoch_, "mrl: end_epoch(", epoch, ") but epoch ", epoch_, " is in progress");
}

EvalResult MrlMethod::evaluate(const data::LabeledSplit& split, const std::string& name) {
  model_->eval();
  const auto prepare = [this](const Tensor& x) {
    return kernels::cast(kernels::to_device(x, device_), options_.dtype);
  };
  return evaluate_labeled_split(
      split, common_.eval_batch, [&](const Tensor& x) { return model_->encode_images(prepare(x)); },
      [&](const Tensor& x) { return model_->encode_texts(prepare(x)); }, "mrl", name);
}

EvalResult MrlMethod::validate() { return evaluate(data_.valid, "valid"); }

EvalResult MrlMethod::test() { return evaluate(data_.test, "test"); }

void MrlMethod::save_state(TrainingState& state) const {
  state.put_module("model.", *model_);
  state.put_optimizer("optim.", *optimizer_);
  state.put_generator("mrl.shuffle", shuffle_gen_);
  state.put_int("mrl.epoch", epoch_);
  state.put_int("mrl.steps", info_.steps);
  state.put_int_vector("mrl.order", order_);
  put_noisy_labels(state, "mrl", noisy_);
}

void MrlMethod::load_state(const TrainingState& state) {
  check_noisy_labels(state, "mrl", noisy_);
  state.get_module("model.", *model_);
  state.get_optimizer("optim.", *optimizer_);
  state.get_generator("mrl.shuffle", shuffle_gen_);
  epoch_ = state.get_int("mrl.epoch");
  order_ = state.get_int_vector("mrl.order");
  REMATCH_CHECK(static_cast<int64_t>(order_.size()) == data_.train.size() || order_.empty(), "mrl: ",
                state.source(), " holds a batch order of ", order_.size(), " rows for ", data_.train.size(),
                " training pairs");
  info_ = EpochInfo();
  info_.phase = "main";
  info_.steps = state.get_int("mrl.steps");
  info_.stats["noisy_accuracy"] = noisy_label_accuracy(noisy_, data_.train);
}

void MrlMethod::write_run_files(const std::string& dir) { data::save_label_noise(noisy_, dir); }

const MethodSpec& mrl_method_spec() {
  static const MethodSpec spec = [] {
    MethodSpec s;
    s.name = "mrl";
    s.summary = "MRL, robust clustering + multimodal contrastive learning under noisy labels (Hu et al., CVPR 2021)";
    s.doc = "docs/methods/mrl.md";
    s.layout = DataLayout::Labelled;
    s.presets = {"wiki", "nus", "xmedianet"};
    s.tables = {&mrl_flags()};
    s.defaults = mrl_defaults();
    s.check = check_mrl;
    // Under mpirun (docs/distributed.md §4): each rank encodes its share of a batch's rows; the losses, which
    // couple every pair of the batch (L_c), run on every rank from the gathered embeddings and logits.
    s.data_parallel = true;
    s.make = make_with<MrlOptions, data::LabeledDataset>(
        [](const CommonOptions& c, const MrlOptions&, std::ostream&) {
          return data::load_labeled(c.data_path, c.valid_len);
        },
        [](const CommonOptions& c, const MrlOptions& o, data::LabeledDataset data,
           std::ostream& log) -> std::unique_ptr<Method> {
          return std::make_unique<MrlMethod>(c, o, std::move(data), log);
        });
    return s;
  }();
  return spec;
}

}  // namespace rematch::train
