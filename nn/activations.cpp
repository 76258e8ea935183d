#include "nn/activations.h"

namespace rematch::nn {

Tensor ReLU::forward(const Tensor& x) { return relu(x); }

LeakyReLU::LeakyReLU(double negative_slope) : slope_(negative_slope) {}
Tensor LeakyReLU::forward(const Tensor& x) { return leaky_relu(x, slope_); }

Tensor Tanh::forward(const Tensor& x) { return tanh(x); }

Tensor Sigmoid::forward(const Tensor& x) { return sigmoid(x); }

}  // namespace rematch::nn
