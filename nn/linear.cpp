#include "nn/linear.h"

#include "nn/init.h"

namespace rematch::nn {

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias, const char* who) {
  REMATCH_CHECK(x.defined() && weight.defined(), who, ": undefined input or weight");
  REMATCH_CHECK(weight.dim() == 2, who, ": weight must be [out_features, in_features], got ", weight.describe());
  const int64_t in = weight.size(1), out = weight.size(0);
  REMATCH_CHECK(x.dim() >= 1 && x.size(-1) == in, who, ": input ", x.describe(), " must end in in_features = ",
                in, " (weight ", weight.describe(), ")");
  REMATCH_CHECK(!bias.defined() || bias.sizes() == Shape{out}, who, ": bias must be [", out, "], got ",
                bias.describe());
  REMATCH_CHECK(x.dtype() == weight.dtype() && (!bias.defined() || bias.dtype() == weight.dtype()), who,
                ": input ", x.describe(), " and parameters ", weight.describe(),
                bias.defined() ? " / " + bias.describe() : std::string(), " must share a dtype");
  const Tensor wt = transpose(weight, 0, 1);
  Tensor y;
  if (x.dim() <= 2) {
    y = matmul(x, wt);
  } else {
    // Leading dims flattened into rows: one [rows, in] x [in, out] product forward and one per operand back.
    Shape out_shape = x.sizes();
    out_shape.back() = out;
    y = reshape(matmul(reshape(x, {-1, in}), wt), out_shape);
  }
  return bias.defined() ? add(y, bias) : y;
}

Linear::Linear(int64_t in_features, int64_t out_features, bool bias, DType dtype, Generator* gen)
    : in_(in_features), out_(out_features) {
  name_ = "Linear(in_features=" + std::to_string(in_) + ", out_features=" + std::to_string(out_) + ")";
  REMATCH_CHECK(in_ > 0 && out_ > 0, name_, ": feature counts must be positive");
  REMATCH_CHECK(is_floating(dtype), name_, ": dtype must be float32 or float64, got ", dtype_name(dtype));
  weight_ = register_parameter("weight", empty({out_, in_}, dtype));
  if (bias) bias_ = register_parameter("bias", empty({out_}, dtype));
  default_linear_init(*this, gen);
}

Tensor Linear::forward(const Tensor& x) { return linear(x, weight_, bias_, name_.c_str()); }

}  // namespace rematch::nn
