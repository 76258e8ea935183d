// Every differentiable module and loss of nn/ as a small float64 function of its input and parameters:
// tests/nn/gradgrad_test.cpp runs gradcheck and gradgradcheck on each, tests/nn/cuda_gradgrad_test.cpp compares
// each second derivative on CUDA with the CPU. Constants (ids, targets, running statistics) are built on the
// inputs' device; GRU lengths stay on the host, as nn::gru takes them.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "nn/nn.h"
#include "test_util.h"

namespace rematch::test {

struct ModuleCase {
  std::string name;
  std::function<Tensor(const TensorList&)> f;
  TensorList inputs;  // float64, on the host
};

inline Tensor draw(Shape s, uint32_t seed, double lo = -1, double hi = 1) {
  return random_tensor(s, DType::Float64, seed, lo, hi);
}

// A GRU layer's input and parameters (PyTorch's init, from a fixed generator) as gradgradcheck inputs.
inline TensorList gru_inputs(int64_t batch, int64_t steps, int64_t input, int64_t hidden, bool bidirectional,
                             uint32_t seed) {
  Generator gen(seed);
  nn::GRU gru(input, hidden, bidirectional, DType::Float64, &gen);
  TensorList in{draw({batch, steps, input}, seed)};
  for (const Tensor& p : gru.parameters()) in.push_back(kernels::clone(p));
  return in;
}

inline Tensor gru_outputs(const TensorList& in, const std::vector<int64_t>& lengths) {
  const nn::GRUOutput r = nn::gru(in[0], from_vector(lengths), TensorList(in.begin() + 1, in.end()));
  return cat({flatten(r.output), flatten(r.h_n)}, 0);
}

inline std::vector<ModuleCase> module_cases() {
  const Tensor probs = softmax(draw({3, 4}, 20), 1);
  return {
      {"linear", [](const TensorList& x) { return tanh(nn::linear(x[0], x[1], x[2])); },
       {draw({2, 3, 4}, 1), draw({2, 4}, 2), draw({2}, 3)}},
      {"linear_without_bias", [](const TensorList& x) { return square(nn::linear(x[0], x[1], Tensor())); },
       {draw({3, 4}, 4), draw({2, 4}, 5)}},
      {"activation_modules",
       [](const TensorList& x) {
         nn::ReLU relu;
         nn::LeakyReLU leaky(0.2);
         nn::Tanh th;
         nn::Sigmoid sg;
         return mul(add(mul(relu.forward(x[0]), leaky.forward(x[0])), th.forward(x[0])), sg.forward(x[0]));
       },
       {draw({6}, 6)}},
      {"dropout",
       [](const TensorList& x) {
         Generator gen(9);  // a fresh generator per evaluation: the same mask every time
         return square(nn::dropout(x[0], 0.3, true, &gen));
       },
       {draw({3, 4}, 7)}},
      {"batch_norm_training_nc",
       [](const TensorList& x) { return tanh(nn::batch_norm(x[0], x[1], x[2], Tensor(), Tensor(), true)); },
       {draw({4, 3}, 8), draw({3}, 9, 0.5, 1.5), draw({3}, 10)}},
      {"batch_norm_training_ncl",
       [](const TensorList& x) { return tanh(nn::batch_norm(x[0], x[1], x[2], Tensor(), Tensor(), true)); },
       {draw({2, 3, 2}, 11), draw({3}, 12, 0.5, 1.5), draw({3}, 13)}},
      {"batch_norm_training_without_affine",
       [](const TensorList& x) {
         return square(nn::batch_norm(transpose(x[0], 0, 1), Tensor(), Tensor(), Tensor(), Tensor(), true));
       },
       {draw({3, 4}, 14)}},
      {"batch_norm_eval",
       [](const TensorList& x) {
         const Tensor mean = from_vector<double>({0.1, -0.2, 0.3}, {3}, x[0].device());
         const Tensor var = from_vector<double>({0.5, 1.5, 0.9}, {3}, x[0].device());
         return tanh(nn::batch_norm(x[0], x[1], x[2], mean, var, false));
       },
       {draw({4, 3}, 15), draw({3}, 16, 0.5, 1.5), draw({3}, 17)}},
      {"gru_unidirectional", [](const TensorList& x) { return gru_outputs(x, {3, 1, 2}); },
       gru_inputs(3, 3, 2, 2, false, 18)},
      {"gru_bidirectional", [](const TensorList& x) { return gru_outputs(x, {2, 3}); },
       gru_inputs(2, 3, 2, 2, true, 19)},
      {"gru_input_transposed",
       [](const TensorList& x) {
         TensorList in = x;
         in[0] = transpose(x[0], 0, 1);
         return gru_outputs(in, {1, 2});
       },
       gru_inputs(2, 2, 2, 2, true, 21)},
      {"cross_entropy",
       [](const TensorList& x) {
         return nn::cross_entropy(x[0], from_vector<int64_t>({2, 0, 3}, {3}, x[0].device()), nn::Reduction::Sum);
       },
       {draw({3, 4}, 22)}},
      {"cross_entropy_soft", [](const TensorList& x) { return nn::cross_entropy_soft(x[0], x[1]); },
       {draw({3, 4}, 23), probs}},
      {"kl_div", [](const TensorList& x) { return nn::kl_div(x[0], x[1], nn::Reduction::None); },
       {log_softmax(draw({3, 4}, 24), 1), probs}},
      {"kl_div_of_probabilities_on_both_sides",
       [](const TensorList& x) { return nn::kl_div(log_softmax(x[0], 1), softmax(x[0], 0)); }, {draw({3, 4}, 25)}},
      {"cosine_similarity_matrix", [](const TensorList& x) { return nn::cosine_similarity_matrix(x[0], x[1]); },
       {draw({3, 4}, 26), draw({2, 4}, 27)}},
      {"hinge", [](const TensorList& x) { return mul(nn::hinge(x[0], 0.3), x[0]); }, {draw({4, 3}, 28)}},
      {"triplet_hardest_negative",
       [](const TensorList& x) { return nn::hardest_negative_triplet(exp(x[0]), 0.2, true); },
       {draw({4, 4}, 29, 0, 1)}},
      {"triplet_sum_of_negatives",
       [](const TensorList& x) { return nn::hardest_negative_triplet(exp(x[0]), 0.2, false); },
       {draw({4, 4}, 30, 0, 1)}},
  };
}

}  // namespace rematch::test
