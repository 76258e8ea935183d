// Helpers of the models tests: gradchecks over a module's parameters, and small random inputs.
//
// gradcheck differentiates a function of its input list. To check a module's parameter gradients too,
// over_parameters() appends the parameters' values to the inputs and, inside f, makes each module
// parameter an alias of gradcheck's leaf: the same storage (so the finite differences perturb what the module
// computes with) and the same autograd record (so the backward pass accumulates into the leaf gradcheck
// reads). The module is left aliased to the last leaves; tests throw it away afterwards.
#pragma once

#include <functional>
#include <vector>

#include "autograd/autograd.h"
#include "nn/nn.h"
#include "test_util.h"

namespace rematch::test {

// Every parameter of `module` (float64 modules only) plus a random offset in [-0.25, 0.25), appended to
// `inputs`. The offset moves the zero-initialised biases off 0: with all of them at 0 a small ReLU layer can
// sit exactly at its kink, where the analytic gradient (0) and a central difference (slope 1/2) disagree.
inline TensorList with_parameters(const nn::Module& module, TensorList inputs, uint32_t seed = 99) {
  for (const Tensor& p : module.parameters())
    inputs.push_back(kernels::binary(kernels::BinaryOp::Add, p.detach(),
                                     random_tensor(p.sizes(), DType::Float64, seed++, -0.25, 0.25)));
  return inputs;
}

// f over (inputs..., parameters...): the first `n_inputs` leaves go to f, the rest become the parameters.
inline std::function<Tensor(const TensorList&)> over_parameters(const nn::Module& module,
                                                                std::function<Tensor(const TensorList&)> f,
                                                                size_t n_inputs) {
  return [&module, f, n_inputs](const TensorList& leaves) {
    const std::vector<Tensor> params = module.parameters();
    EXPECT_EQ(leaves.size(), n_inputs + params.size());
    for (size_t i = 0; i < params.size(); ++i) *params[i].impl() = *leaves[n_inputs + i].impl();
    return f(TensorList(leaves.begin(), leaves.begin() + static_cast<std::ptrdiff_t>(n_inputs)));
  };
}

// Unit vectors along the last dim (what the encoders produce), float64.
inline Tensor unit_rows(const Shape& shape, uint32_t seed) {
  return kernels::lp_normalize(random_tensor(shape, DType::Float64, seed), -1, 2, 0);
}

inline Tensor lengths_tensor(const std::vector<int64_t>& lengths) { return from_vector(lengths); }

}  // namespace rematch::test
