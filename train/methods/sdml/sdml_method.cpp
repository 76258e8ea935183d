#include "train/methods/sdml/sdml_method.h"

#include <algorithm>
#include <iomanip>
#include <ostream>
#include <sstream>

#include "parallel/gather_op.h"
#include "train/methods/data_parallel.h"
#include "train/methods/kit/labeled_eval.h"
#include "train/methods/kit/noisy_labels.h"
#include "train/methods/uotrcl/uotrcl_losses.h"

namespace rematch::train {
namespace {

// criterion = lambda x, y: (((x - y) ** 2).sum(1).sqrt()).mean()
Tensor mean_row_distance(const Tensor& a, const Tensor& b) { return mean(sqrt(sum(square(sub(a, b)), {1}))); }

}  // namespace

SdmlMethod::SdmlMethod(const CommonOptions& common, const SdmlOptions& options, data::LabeledDataset data,
                       std::ostream& log)
    : common_(common), options_(options), device_(common.device.device()), data_(std::move(data)), log_(log),
      num_classes_(data_.num_classes), shuffle_gen_(common.seed + 1) {
  const int64_t n = data_.train.size();
  REMATCH_CHECK(num_classes_ > 0 && n >= common_.batch_size, "sdml: ", data_.source, " has ", n,
                " training pairs and ", num_classes_, " classes; SDML trains full batches only (--batch_size ",
                common_.batch_size, ")");
  REMATCH_CHECK(num_classes_ <= options_.output_dim, "sdml: --output_dim ", options_.output_dim, " cannot hold the ",
                num_classes_, " classes of ", data_.source, " (W = orthogonal(L×L)[:, :K] needs K <= L)");
  REMATCH_CHECK(data_.valid.size() > 0 && data_.test.size() > 0, "sdml: ", data_.source,
                " needs non-empty valid and test splits");
  REMATCH_CHECK(options_.dtype == DType::Float32 || options_.dtype == DType::Float64,
                "sdml: the model dtype must be float32 or float64");
  noisy_ = noisy_training_labels(common_, data_, "sdml");
  train_images_ = kernels::cast(kernels::to_device(data_.train.images, device_), options_.dtype);
  train_texts_ = kernels::cast(kernels::to_device(data_.train.texts, device_), options_.dtype);
  // Solver.to_one_hot; MRL's out-of-range label K (--noise_mode mrl) is a zero row, left out of L_d as SDML leaves
  // out its unlabelled rows (`labeled_inx = train_y.sum(1) > 0`).
  one_hot_v_ = uotrcl::one_hot_labels(noisy_.image_labels, num_classes_, options_.dtype, device_);
  one_hot_t_ = uotrcl::one_hot_labels(noisy_.text_labels, num_classes_, options_.dtype, device_);

  models::SdmlConfig mc;
  mc.img_dim = train_images_.size(1);
  mc.txt_dim = train_texts_.size(1);
  mc.hidden_dim = options_.hidden_dim;
  mc.output_dim = options_.output_dim;
  mc.num_classes = num_classes_;
  Generator init_gen(common_.seed);
  model_ = std::make_unique<models::SdmlModel>(mc, options_.dtype, &init_gen);
  model_->to(device_);
  // train_view: optim.Adam(Net + AE params, self.lr[view_id], [beta1, beta2]) with beta1 0.5, beta2 0.999.
  img_optimizer_ =
      std::make_unique<nn::Adam>(model_->img().parameters(), common_.learning_rate, nn::AdamBetas{0.5, 0.999});
  txt_optimizer_ = std::make_unique<nn::Adam>(model_->txt().parameters(), options_.text_lr, nn::AdamBetas{0.5, 0.999});

  std::ostringstream line;
  line << std::setprecision(4) << "sdml: " << data_.source << ": " << n << " training pairs, " << num_classes_
       << " classes, dims " << mc.img_dim << "/" << mc.txt_dim << "; training labels " << noisy_.source << ", "
       << label_agreement(noisy_.image_labels, data_.train.image_labels) << " of the image labels correct; alpha "
       << options_.alpha << " on " << device_.str() << "\n";
  log_ << line.str();
}

EpochInfo SdmlMethod::epoch_info() const {
  EpochInfo info;
  info.phase = "main";
  info.steps = data_.train.size() / common_.batch_size;  // batch_count = int(N / batch_size): full batches only
  info.stats["noisy_accuracy"] = noisy_label_accuracy(noisy_, data_.train);
  return info;
}

EpochInfo SdmlMethod::begin_epoch(int64_t epoch) {
  REMATCH_CHECK(epoch >= 0 && epoch < common_.num_epochs, "sdml: epoch ", epoch, " is outside 0..",
                common_.num_epochs - 1);
  epoch_ = epoch;
  order_ = randperm(data_.train.size(), Device::cpu(), &shuffle_gen_).to_vector<int64_t>();
  info_ = epoch_info();
  return info_;
}

SdmlMethod::ViewLoss SdmlMethod::view_loss(models::SdmlView& view, const Tensor& x, const Tensor& y,
                                           const Tensor& labelled) {
  // Under mpirun each rank encodes (and decodes) its rows of the batch; the codes and reconstructions are gathered
  // with the backward that keeps each rank's rows, every rank computes the whole loss, and the gradients are summed
  // over ranks. A batch smaller than the world runs whole.
  parallel::Communicator& comm = parallel::world();
  const int64_t b = x.size(0);
  const bool shared = comm.world_size() > 1 && b >= comm.world_size();
  const parallel::RowRange mine = shared ? batch_share(comm, b) : parallel::RowRange{0, b};
  const auto whole = [&](const Tensor& t) {
    return shared ? parallel::all_gather_rows(comm, t, parallel::GatherBackward::OwnRows) : t;
  };
  // out_net = Net(train_x)[-1]; pred = out_net.mm(W); ae_pred = AE(out_net)[-1]
  const Tensor my_z = view.net().forward(shared ? narrow(x, 0, mine.begin, mine.end - mine.begin) : x);
  const Tensor pred = matmul(whole(my_z), model_->W());
  const Tensor ae_pred = whole(view.ae().forward(my_z));
  ViewLoss l;
  l.ae = mul(mean_row_distance(ae_pred, x), options_.alpha);  // criterion(ae_pred, ae_data) * alpha
  // criterion(pred[labeled_inx], train_y[labeled_inx]) * (1 - alpha); no labelled row: no term
  if (labelled.size(0) > 0)
    l.d = mul(mean_row_distance(index_select(pred, 0, labelled), index_select(y, 0, labelled)), 1.0 - options_.alpha);
  return l;
}

StepResult SdmlMethod::train_step(int64_t epoch, int64_t step) {
  REMATCH_CHECK(epoch == epoch_, "sdml: train_step for epoch ", epoch, " but epoch ", epoch_,
                " is in progress (call begin_epoch or load_state first)");
  const int64_t B = common_.batch_size, steps = data_.train.size() / B;
  REMATCH_CHECK(step >= 0 && step < steps, "sdml: step ", step, " is past the ", steps, " steps of the epoch");
  const std::vector<int64_t> host_rows(order_.begin() + step * B, order_.begin() + (step + 1) * B);
  const Tensor rows = kernels::to_device(from_vector(host_rows), device_);
  model_->train();
  const auto labelled = [&](const std::vector<int64_t>& labels) {
    std::vector<int64_t> in_batch;
    for (int64_t i = 0; i < B; ++i)
      if (labels[static_cast<size_t>(host_rows[static_cast<size_t>(i)])] < num_classes_) in_batch.push_back(i);
    return kernels::to_device(from_vector(in_batch), device_);
  };
  const ViewLoss img = view_loss(model_->img(), index_select(train_images_, 0, rows),
                                 index_select(one_hot_v_, 0, rows), labelled(noisy_.image_labels));
  const ViewLoss txt = view_loss(model_->txt(), index_select(train_texts_, 0, rows), index_select(one_hot_t_, 0, rows),
                                 labelled(noisy_.text_labels));
  // loss = ae_loss + d_loss per view; the views share no parameter, so one backward of their sum gives each its own.
  const Tensor loss_img = img.d.defined() ? add(img.ae, img.d) : img.ae;
  const Tensor loss_txt = txt.d.defined() ? add(txt.ae, txt.d) : txt.ae;
  const Tensor loss = add(loss_img, loss_txt);
  StepResult result;
  result.pairs = B;
  result.parts["ae_img"] = img.ae.item<double>();
  result.parts["d_img"] = img.d.defined() ? img.d.item<double>() : 0.0;
  result.parts["ae_txt"] = txt.ae.item<double>();
  result.parts["d_txt"] = txt.d.defined() ? txt.d.item<double>() : 0.0;
  result.loss = loss.item<double>();
  check_finite_loss(name(), epoch, step, "loss", result.loss);
  img_optimizer_->zero_grad();
  txt_optimizer_->zero_grad();
  backward(loss);
  if (parallel::world().world_size() > 1 && B >= parallel::world().world_size())
    all_reduce_gradients(parallel::world(), model_->parameters());
  clip_checked_gradients(name(), epoch, step, model_->parameters(), common_.grad_clip);
  img_optimizer_->step();
  txt_optimizer_->step();
  return result;
}

void SdmlMethod::end_epoch(int64_t epoch) {
  REMATCH_CHECK(epoch == epoch_, "sdml: end_epoch(", epoch, ") but epoch ", epoch_, " is in progress");
}

EvalResult SdmlMethod::evaluate(const data::LabeledSplit& split, const std::string& name) {
  model_->eval();
  const auto prepare = [this](const Tensor& x) {
    return kernels::cast(kernels::to_device(x, device_), options_.dtype);
  };
  // valid_pre / test_pre = Net(x)[-1]: the encoders' unit rows in the predefined space.
  return evaluate_labeled_split(
      split, common_.eval_batch, [&](const Tensor& x) { return model_->img().net().forward(prepare(x)); },
      [&](const Tensor& x) { return model_->txt().net().forward(prepare(x)); }, "sdml", name);
}

EvalResult SdmlMethod::validate() { return evaluate(data_.valid, "valid"); }

EvalResult SdmlMethod::test() { return evaluate(data_.test, "test"); }

void SdmlMethod::save_state(TrainingState& state) const {
  state.put_module("model.", *model_);
  state.put_optimizer("optim_img.", *img_optimizer_);
  state.put_optimizer("optim_txt.", *txt_optimizer_);
  state.put_generator("sdml.shuffle", shuffle_gen_);
  state.put_int("sdml.epoch", epoch_);
  state.put_int_vector("sdml.order", order_);
  put_noisy_labels(state, "sdml", noisy_);
}

void SdmlMethod::load_state(const TrainingState& state) {
  check_noisy_labels(state, "sdml", noisy_);
  state.get_module("model.", *model_);
  state.get_optimizer("optim_img.", *img_optimizer_);
  state.get_optimizer("optim_txt.", *txt_optimizer_);
  state.get_generator("sdml.shuffle", shuffle_gen_);
  epoch_ = state.get_int("sdml.epoch");
  order_ = state.get_int_vector("sdml.order");
  REMATCH_CHECK(static_cast<int64_t>(order_.size()) == data_.train.size() || order_.empty(), "sdml: ",
                state.source(), " holds a batch order of ", order_.size(), " rows for ", data_.train.size(),
                " training pairs");
  info_ = epoch_info();
}

void SdmlMethod::write_run_files(const std::string& dir) { data::save_label_noise(noisy_, dir); }

const MethodSpec& sdml_method_spec() {
  static const MethodSpec spec = [] {
    MethodSpec s;
    s.name = "sdml";
    s.summary = "SDML, scalable deep multimodal learning on a predefined common space (Hu et al., SIGIR 2019)";
    s.doc = "docs/methods/sdml.md";
    s.layout = DataLayout::Labelled;
    s.presets = {"wiki", "nus", "xmedianet"};
    s.tables = {&sdml_flags()};
    s.defaults = sdml_defaults();
    s.check = check_sdml;
    // Under mpirun (docs/distributed.md §4): each rank encodes and decodes its share of a batch's rows; the loss
    // runs on every rank from the gathered codes and reconstructions. (The official code parallelises over views.)
    s.data_parallel = true;
    s.make = make_with<SdmlOptions, data::LabeledDataset>(
        [](const CommonOptions& c, const SdmlOptions&, std::ostream&) {
          return data::load_labeled(c.data_path, c.valid_len);
        },
        [](const CommonOptions& c, const SdmlOptions& o, data::LabeledDataset data,
           std::ostream& log) -> std::unique_ptr<Method> {
          return std::make_unique<SdmlMethod>(c, o, std::move(data), log);
        });
    return s;
  }();
  return spec;
}

}  // namespace rematch::train
