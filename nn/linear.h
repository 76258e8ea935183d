// Linear: y = x Wᵀ + b over the last dim (docs/backbones.md §1: W stored [out][in], PyTorch layout, so converted
// checkpoints load without transposes). `linear()` is the functional form with the parameters passed in; the
// module holds `weight` [out, in] and `bias` [out] and calls it.
#pragma once

#include "nn/module.h"

namespace rematch::nn {

// x [..., in], weight [out, in], bias [out] or undefined -> [..., out]. `who` names the caller in the error
// when x's last dim does not match the weight.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias, const char* who = "linear");

class Linear : public UnaryModule {
 public:
  // PyTorch's default initialisation (default_linear_init): weight and bias ~ U(-1/√in, 1/√in).
  Linear(int64_t in_features, int64_t out_features, bool bias = true, DType dtype = DType::Float32,
         Generator* gen = nullptr);

  Tensor forward(const Tensor& x) override;

  int64_t in_features() const { return in_; }
  int64_t out_features() const { return out_; }
  const Tensor& weight() const { return weight_; }
  const Tensor& bias() const { return bias_; }  // undefined without bias
  bool has_bias() const { return bias_.defined(); }

 private:
  int64_t in_, out_;
  std::string name_;  // "Linear(in_features=4, out_features=3)", for errors
  Tensor weight_, bias_;
};

}  // namespace rematch::nn
