// Parameter initialisers. Each writes into an existing tensor in place (the `_` suffix, as in kernels:: and
// torch.nn.init), under NoGradGuard, on the tensor's device and in its dtype, with random numbers from the
// given Philox generator (default_generator() when nullptr); the tensor's handle, and so any optimizer that
// holds it, stays valid. They return the tensor for chaining.
#pragma once

#include "nn/module.h"

namespace rematch::nn {

class Linear;

// U(a, b).
const Tensor& uniform_(const Tensor& t, double a = 0, double b = 1, Generator* gen = nullptr);
// N(mean, std²).
const Tensor& normal_(const Tensor& t, double mean = 0, double std = 1, Generator* gen = nullptr);
const Tensor& constant_(const Tensor& t, double value);
const Tensor& zeros_(const Tensor& t);
// Glorot & Bengio (2010): U(-a, a), a = gain·√(6 / (fan_in + fan_out)); fan_in = size(1)·receptive,
// fan_out = size(0)·receptive, receptive = product of dims 2.. (torch.nn.init). Needs at least 2 dims.
const Tensor& xavier_uniform_(const Tensor& t, double gain = 1, Generator* gen = nullptr);
// Saxe et al. (2014), as torch.nn.init.orthogonal_: t viewed as [size(0), numel/size(0)] becomes gain · the Q
// of the QR factorisation of a standard Gaussian matrix (of the transpose when rows < cols), with the signs
// of Q's columns chosen so that R has a non-negative diagonal; rows (or columns) are then orthonormal.
const Tensor& orthogonal_(const Tensor& t, double gain = 1, Generator* gen = nullptr);

// PyTorch's nn.Linear.reset_parameters: kaiming_uniform(a = √5) on the weight, which is U(-1/√in, 1/√in),
// and the same bound for the bias.
void default_linear_init(Linear& layer, Generator* gen = nullptr);
// PyTorch's nn.GRU default (docs/backbones.md §1, not re-initialised by the backbones): every parameter of
// `module` (recursively) ~ U(-1/√hidden, 1/√hidden).
void default_gru_init(Module& module, int64_t hidden, Generator* gen = nullptr);

}  // namespace rematch::nn
