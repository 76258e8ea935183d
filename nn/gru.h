// nn::GRU: one layer of torch.nn.GRU(batch_first=True), uni- or bidirectional, run on padded batches with
// per-sequence lengths and PyTorch's packed-sequence semantics (docs/backbones.md §3.3): the forward direction
// runs t = 0 .. len-1, the reverse direction starts at each sequence's last real token, outputs at t >= len are
// 0 and h_n holds each direction's state after its last real step. Gate order r, z, n with the reset gate
// applied after the recurrent product:
//   n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn)),  h' = (1 − z) ⊙ n + z ⊙ h,  initial state 0.
// One autograd node covers the whole layer (kernels in nn/cpu/gru.cpp and nn/cuda/gru.cu). CPU or CUDA
// tensors, float32 or float64; the lengths stay on the host. It does not do multiple layers, dropout between
// layers or a given initial state.
#pragma once

#include <string>

#include "nn/module.h"

namespace rematch::nn {

struct GRUOutput {
  Tensor output;  // [B, T, D·H]: the directions concatenated (forward first), zeros at t >= length
  Tensor h_n;     // [D, B, H]: the final state of each direction
};

// The functional form. x [B, T, I]; lengths int64 [B] on the host, each in 1..T; `weights` holds per
// direction {weight_ih [3H, I], weight_hh [3H, H], bias_ih [3H], bias_hh [3H]} (4 or 8 tensors), all of
// x's dtype and on x's device. Differentiable w.r.t. x and every weight. `who` names the caller in error
// messages.
GRUOutput gru(const Tensor& x, const Tensor& lengths, const TensorList& weights, const std::string& who = "gru");

class GRU : public Module {
 public:
  // Parameters weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0 (then the same with "_reverse" when
  // bidirectional), drawn like PyTorch's default: U(−1/√H, 1/√H), from `gen` (the default generator when null).
  GRU(int64_t input_size, int64_t hidden_size, bool bidirectional = false, DType dtype = DType::Float32,
      Generator* gen = nullptr);

  GRUOutput forward(const Tensor& x, const Tensor& lengths) const;
  GRUOutput operator()(const Tensor& x, const Tensor& lengths) const { return forward(x, lengths); }

  int64_t input_size() const { return input_size_; }
  int64_t hidden_size() const { return hidden_size_; }
  bool bidirectional() const { return bidirectional_; }
  int64_t num_directions() const { return bidirectional_ ? 2 : 1; }
  // "nn::GRU(300, 1024, bidirectional)": how errors name this module.
  std::string describe() const;

 private:
  int64_t input_size_;
  int64_t hidden_size_;
  bool bidirectional_;
  TensorList weights_;  // in PyTorch's order, as gru() takes them
};

}  // namespace rematch::nn
