// Dropout: inverted dropout (docs/backbones.md §1, p = 0.4 in the backbones). In training each element is kept
// with probability 1 - p and scaled by 1/(1 - p), so the expected value is unchanged and eval mode is the
// identity. The keep mask comes from the Philox generator (a given Generator, else default_generator()), so
// a seed reproduces the same mask on CPU and CUDA.
#pragma once

#include "nn/module.h"

namespace rematch::nn {

// Functional form: x itself when !training or p == 0; zeros (still connected to x) when p == 1.
Tensor dropout(const Tensor& x, double p, bool training, Generator* gen = nullptr);

class Dropout : public UnaryModule {
 public:
  // `gen` must outlive the module; nullptr means default_generator().
  explicit Dropout(double p = 0.5, Generator* gen = nullptr);

  Tensor forward(const Tensor& x) override;
  double p() const { return p_; }

 private:
  double p_;
  Generator* gen_;
};

}  // namespace rematch::nn
