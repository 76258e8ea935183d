#include "train/methods/mscn/meta_sim.h"

namespace rematch::train {

MetaHiddenLayer::MetaHiddenLayer(int64_t in, int64_t out, DType dtype, Generator* gen) {
  fc_ = register_module("fc", std::make_shared<nn::Linear>(in, out, true, dtype, gen));
}

Tensor MetaHiddenLayer::forward(const Tensor& x) { return relu(fc_->forward(x)); }

MetaSim::MetaSim(int64_t sim_dim, int64_t hidden, DType dtype, Generator* gen) : sim_dim_(sim_dim) {
  REMATCH_CHECK(sim_dim > 0 && hidden > 0, "Meta_Sim: sim_dim ", sim_dim, " and hidden size ", hidden,
                " must be positive");
  first_hidden_layer_ = register_module("first_hidden_layer", std::make_shared<MetaHiddenLayer>(sim_dim, hidden, dtype, gen));
  output_layer_ = register_module("output_layer", std::make_shared<nn::Linear>(hidden, 1, true, dtype, gen));
}

Tensor MetaSim::forward(const Tensor& z) {
  REMATCH_CHECK(z.defined() && z.dim() >= 1 && z.size(-1) == sim_dim_, "Meta_Sim: expected similarity vectors [..., ",
                sim_dim_, "], got ", z.defined() ? z.describe() : "undefined");
  return sigmoid(output_layer_->forward(first_hidden_layer_->forward(z)));
}

}  // namespace rematch::train
