#include "train/methods/kit/sgraf_net.h"

#include <cmath>

namespace rematch::train {

SgrafNet::SgrafNet(const models::SgrafConfig& config, DType dtype, Device device, Generator& gen,
                   const NetOptimizer& optimizer)
    : model_(std::make_unique<models::SgrafModel>(config, dtype, &gen)) {
  model_->to(device);
  if (optimizer.adamw_weight_decay)
    optimizer_ = std::make_unique<nn::AdamW>(model_->parameters(), optimizer.learning_rate, nn::AdamBetas{}, 1e-8,
                                             *optimizer.adamw_weight_decay);
  else
    optimizer_ = std::make_unique<nn::Adam>(model_->parameters(), optimizer.learning_rate);
}

void SgrafNet::save(TrainingState& s, const std::string& model_prefix, const std::string& optim_prefix) const {
  s.put_module(model_prefix, *model_);
  s.put_optimizer(optim_prefix, *optimizer_);
}

void SgrafNet::load(const TrainingState& s, const std::string& model_prefix, const std::string& optim_prefix) {
  s.get_module(model_prefix, *model_);
  s.get_optimizer(optim_prefix, *optimizer_);
}

double step_decay_lr(double base, int64_t epoch, int64_t warmup, int64_t lr_update) {
  const int64_t main_epoch = epoch - warmup;
  if (main_epoch < 0 || lr_update <= 0) return base;
  return base * std::pow(0.1, static_cast<double>(main_epoch / lr_update));
}

}  // namespace rematch::train
