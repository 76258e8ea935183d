// MSCN's meta similarity network (`MSCN/models.py: Meta_Sim`, docs/methods/mscn.md §1): the score of a pair
// from its similarity vector z (the SGR/SAF output, models/similarity_encoder.h `vectors`),
//   s = sigmoid(W_2 · relu(W_1 z + b_1) + b_2),   W_1 [hidden, sim_dim], W_2 [1, hidden],
// in place of SGRAF's sigmoid(w_e · z + b_e). State-dict names are the official ones:
// first_hidden_layer.fc.{weight,bias}, output_layer.{weight,bias}; both layers have PyTorch's default
// nn.Linear initialisation, U(−1/√in, 1/√in).
#pragma once

#include <memory>

#include "nn/linear.h"
#include "nn/module.h"

namespace rematch::train {

// `HiddenLayer`: relu(fc(x)).
class MetaHiddenLayer : public nn::UnaryModule {
 public:
  MetaHiddenLayer(int64_t in, int64_t out, DType dtype, Generator* gen);
  Tensor forward(const Tensor& x) override;

 private:
  std::shared_ptr<nn::Linear> fc_;
};

class MetaSim : public nn::UnaryModule {
 public:
  // Meta_Sim(input_size = sim_dim, hidden_size = 64, num_layers = 1): `hidden` is the official 64.
  MetaSim(int64_t sim_dim, int64_t hidden, DType dtype, Generator* gen);
  // z [..., sim_dim] -> scores [..., 1] in (0, 1).
  Tensor forward(const Tensor& z) override;

 private:
  int64_t sim_dim_;
  std::shared_ptr<MetaHiddenLayer> first_hidden_layer_;
  std::shared_ptr<nn::Linear> output_layer_;
};

}  // namespace rematch::train
