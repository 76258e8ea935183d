// The differentiable ops of autograd/ops.h, family by family, each as a small float64 function with its inputs:
// tests/autograd/gradgrad_test.cpp runs gradcheck and gradgradcheck on each (first and second derivatives
// against finite differences), tests/autograd/cuda_gradgrad_test.cpp compares each second derivative on CUDA
// with the CPU. A function builds every constant it needs (indices, masks) on its inputs' device, so the same
// case runs on both. Inputs stay away from kinks and poles by more than the finite-difference step.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "test_util.h"

namespace rematch::test {

struct OpCase {
  std::string name;  // the test's name: the op and what the case covers
  std::function<Tensor(const TensorList&)> f;
  TensorList inputs;  // float64, on the host
};

inline Tensor uniform(Shape s, uint32_t seed, double lo = -1, double hi = 1) {
  return random_tensor(s, DType::Float64, seed, lo, hi);
}
inline Tensor positive(Shape s, uint32_t seed) { return uniform(s, seed, 0.2, 2.0); }

// An int64 index tensor on `like`'s device.
inline Tensor index_on(const Tensor& like, std::vector<int64_t> v, Shape s) {
  return from_vector(v, s, like.device());
}

inline std::vector<OpCase> elementwise_cases() {
  using F = std::function<Tensor(const TensorList&)>;
  auto unary = [](std::string name, F f, Tensor x) { return OpCase{std::move(name), std::move(f), {std::move(x)}}; };
  return {
      {"add_broadcast", [](const TensorList& x) { return add(x[0], x[1]); },
       {uniform({3, 1, 4}, 1), uniform({2, 1}, 2)}},
      {"sub_broadcast", [](const TensorList& x) { return sub(x[0], x[1]); }, {uniform({4}, 3), uniform({3, 4}, 4)}},
      {"mul_broadcast_transposed", [](const TensorList& x) { return mul(transpose(x[0], 0, 1), x[1]); },
       {uniform({4, 3}, 5), uniform({1, 4}, 6)}},
      {"mul_same_operand", [](const TensorList& x) { return mul(x[0], x[0]); }, {uniform({5}, 7)}},
      {"div_broadcast", [](const TensorList& x) { return div(x[0], x[1]); }, {uniform({2, 3}, 8), positive({3}, 9)}},
      unary("scalar_add_mul_sub", [](const TensorList& x) { return sub(add(mul(x[0], 2.5), 1.0), 0.5); },
            uniform({5}, 10)),
      unary("rsub_div_scalar", [](const TensorList& x) { return rsub(3.0, div(x[0], 4.0)); }, uniform({5}, 11)),
      unary("rdiv_scalar", [](const TensorList& x) { return rdiv(2.0, x[0]); }, positive({5}, 12)),
      unary("neg", [](const TensorList& x) { return neg(mul(x[0], x[0])); }, uniform({6}, 13)),
      unary("abs", [](const TensorList& x) { return mul(abs(x[0]), x[0]); }, uniform({6}, 14)),
      unary("exp", [](const TensorList& x) { return exp(x[0]); }, uniform({6}, 15)),
      unary("log", [](const TensorList& x) { return log(x[0]); }, positive({6}, 16)),
      unary("log1p", [](const TensorList& x) { return log1p(x[0]); }, positive({6}, 17)),
      unary("sqrt", [](const TensorList& x) { return sqrt(x[0]); }, positive({6}, 18)),
      unary("rsqrt", [](const TensorList& x) { return rsqrt(x[0]); }, positive({6}, 19)),
      unary("pow_fractional", [](const TensorList& x) { return pow(x[0], 2.7); }, positive({6}, 20)),
      unary("pow_cube_of_negatives", [](const TensorList& x) { return pow(x[0], 3.0); }, uniform({6}, 21)),
      unary("pow_zero", [](const TensorList& x) { return add(pow(x[0], 0.0), square(x[0])); }, uniform({3}, 22)),
      unary("square", [](const TensorList& x) { return square(x[0]); }, uniform({6}, 23)),
      unary("reciprocal", [](const TensorList& x) { return reciprocal(x[0]); }, positive({6}, 24)),
      unary("tanh", [](const TensorList& x) { return tanh(x[0]); }, uniform({6}, 25, -2, 2)),
      unary("sigmoid", [](const TensorList& x) { return sigmoid(x[0]); }, uniform({6}, 26, -3, 3)),
      unary("relu", [](const TensorList& x) { return mul(relu(x[0]), x[0]); }, uniform({8}, 27)),
      unary("leaky_relu", [](const TensorList& x) { return mul(leaky_relu(x[0], 0.1), x[0]); }, uniform({8}, 28)),
      unary("clamp", [](const TensorList& x) { return square(clamp(x[0], -0.5, 0.5)); }, uniform({8}, 29)),
      unary("clamp_min_max", [](const TensorList& x) { return mul(clamp_min(x[0], 0.1), clamp_max(x[0], 0.2)); },
            uniform({8}, 30)),
      unary("sign", [](const TensorList& x) { return mul(sign(x[0]), square(x[0])); }, uniform({8}, 31)),
      {"maximum_minimum", [](const TensorList& x) { return mul(maximum(x[0], x[1]), minimum(x[0], x[1])); },
       {uniform({3, 4}, 32), uniform({4}, 33)}},
      {"where",
       [](const TensorList& x) { return square(where(gt(x[0], 0.0), mul(x[0], x[1]), exp(x[1]))); },
       {uniform({3, 4}, 34), uniform({4}, 35)}},
      unary("masked_fill", [](const TensorList& x) { return square(masked_fill(x[0], lt(x[0], 0.0), 2.0)); },
            uniform({8}, 36)),
      unary("clone_contiguous", [](const TensorList& x) { return square(contiguous(transpose(clone(x[0]), 0, 1))); },
            uniform({2, 3}, 37)),
  };
}

inline std::vector<OpCase> special_cases() {
  auto unary = [](std::string name, std::function<Tensor(const TensorList&)> f, Tensor x) {
    return OpCase{std::move(name), std::move(f), {std::move(x)}};
  };
  return {
      unary("lgamma", [](const TensorList& x) { return lgamma(x[0]); }, uniform({6}, 40, 0.3, 6)),
      unary("lgamma_negative", [](const TensorList& x) { return lgamma(x[0]); }, uniform({4}, 41, -2.9, -2.1)),
      unary("digamma", [](const TensorList& x) { return digamma(x[0]); }, uniform({6}, 42, 0.3, 14)),
      unary("trigamma", [](const TensorList& x) { return trigamma(x[0]); }, uniform({6}, 43, 0.3, 14)),
      unary("polygamma_2", [](const TensorList& x) { return polygamma(2, x[0]); }, uniform({6}, 44, 0.3, 14)),
      unary("polygamma_3_negative", [](const TensorList& x) { return polygamma(3, x[0]); },
            uniform({4}, 45, -1.8, -1.2)),
      unary("decl_kl_shape",
            [](const TensorList& x) {
              const Tensor s = sum(x[0], {1}, true);
              return sum(mul(sub(x[0], 1.0), sub(digamma(x[0]), digamma(s))), {1}, true) + lgamma(s) -
                     sum(lgamma(x[0]), {1}, true);
            },
            uniform({3, 3}, 46, 1.0, 20.0)),
  };
}

inline std::vector<OpCase> reduce_cases() {
  auto unary = [](std::string name, std::function<Tensor(const TensorList&)> f, Tensor x) {
    return OpCase{std::move(name), std::move(f), {std::move(x)}};
  };
  // Distinct values, so the extremes have no ties.
  const Tensor distinct = from_vector<double>({0.3, -0.8, 0.55, 0.9, -0.1, 0.2, -0.45, 0.7, 0.05, -0.6, 0.35, 0.15},
                                              {3, 4});
  return {
      unary("sum_all", [](const TensorList& x) { return square(sum(square(x[0]))); }, uniform({2, 3}, 50)),
      unary("sum_dims_keepdim", [](const TensorList& x) { return mul(sum(x[0], {0, 2}, true), x[0]); },
            uniform({2, 3, 2}, 51)),
      unary("mean", [](const TensorList& x) { return square(mean(x[0], {1})); }, uniform({3, 4}, 52)),
      unary("amax_amin", [](const TensorList& x) { return mul(amax(x[0], {1}, true), amin(x[0], {0}, true)); },
            distinct),
      unary("max_min_along_dim",
            [](const TensorList& x) { return mul(max(x[0], 1).first, square(min(x[0], 1, true).first)); }, distinct),
      unary("logsumexp", [](const TensorList& x) { return logsumexp(mul(x[0], 2.0), {1}); }, uniform({3, 4}, 53)),
      unary("logsumexp_all_keepdim", [](const TensorList& x) { return logsumexp(x[0], {0, 1}, true); },
            uniform({2, 3}, 54)),
      unary("var", [](const TensorList& x) { return var(x[0], {1}); }, uniform({3, 4}, 55)),
      unary("var_biased", [](const TensorList& x) { return var(x[0], {}, 0); }, uniform({5}, 56)),
      unary("norm_2", [](const TensorList& x) { return norm(x[0], 2, {1}); }, uniform({3, 4}, 57)),
      unary("norm_1", [](const TensorList& x) { return square(norm(x[0], 1, {0}, true)); }, uniform({3, 4}, 58)),
  };
}

inline std::vector<OpCase> matmul_cases() {
  return {
      {"matmul_2d_2d", [](const TensorList& x) { return matmul(x[0], x[1]); },
       {uniform({3, 4}, 60), uniform({4, 2}, 61)}},
      {"matmul_square_of_itself", [](const TensorList& x) { return matmul(x[0], transpose(x[0], 0, 1)); },
       {uniform({3, 2}, 62)}},
      {"matmul_1d_2d", [](const TensorList& x) { return matmul(x[0], x[1]); }, {uniform({4}, 63), uniform({4, 3}, 64)}},
      {"matmul_2d_1d", [](const TensorList& x) { return matmul(x[0], x[1]); }, {uniform({3, 4}, 65), uniform({4}, 66)}},
      {"matmul_1d_1d", [](const TensorList& x) { return matmul(x[0], x[1]); }, {uniform({4}, 67), uniform({4}, 68)}},
      {"matmul_3d_weight", [](const TensorList& x) { return matmul(x[0], x[1]); },
       {uniform({2, 3, 4}, 69), uniform({4, 2}, 70)}},
      {"matmul_batch_broadcast", [](const TensorList& x) { return matmul(x[0], transpose(x[1], 1, 2)); },
       {uniform({1, 3, 4}, 71), uniform({2, 2, 4}, 72)}},
      {"bmm", [](const TensorList& x) { return bmm(x[0], x[1]); }, {uniform({2, 3, 4}, 73), uniform({2, 4, 2}, 74)}},
  };
}

inline std::vector<OpCase> shape_cases() {
  auto unary = [](std::string name, std::function<Tensor(const TensorList&)> f, Tensor x) {
    return OpCase{std::move(name), std::move(f), {std::move(x)}};
  };
  return {
      unary("reshape_view", [](const TensorList& x) { return square(view(reshape(x[0], {3, 2}), {6})); },
            uniform({2, 3}, 80)),
      unary("transpose_permute",
            [](const TensorList& x) {
              const Tensor p = permute(x[0], {2, 0, 1});
              return mul(p, transpose(p, 1, 2));
            },
            uniform({2, 2, 3}, 81)),
      unary("narrow", [](const TensorList& x) { return square(narrow(x[0], 1, 1, 2)); }, uniform({3, 4}, 82)),
      unary("slice_stepped", [](const TensorList& x) { return exp(slice(x[0], 1, 0, 5, 2)); }, uniform({2, 5}, 83)),
      unary("select", [](const TensorList& x) { return mul(select(x[0], 0, 1), select(x[0], 1, 2)); },
            uniform({3, 3}, 84)),
      unary("squeeze_unsqueeze_flatten",
            [](const TensorList& x) { return square(flatten(unsqueeze(squeeze(x[0], 1), 0))); },
            uniform({2, 1, 3}, 85)),
      unary("expand", [](const TensorList& x) { return mul(expand(x[0], {3, 4}), expand(x[0], {3, 4})); },
            uniform({3, 1}, 86)),
      {"cat_stack",
       [](const TensorList& x) { return square(cat({x[0], stack({x[1], x[1]}, 0)}, 0)); },
       {uniform({1, 3}, 87), uniform({3}, 88)}},
      unary("split_chunk",
            [](const TensorList& x) {
              const TensorList parts = split(x[0], std::vector<int64_t>{1, 3}, 1);
              const TensorList halves = chunk(x[0], 2, 0);
              return add(mul(sum(parts[0]), sum(square(parts[1]))), sum(exp(halves[1])));
            },
            uniform({2, 4}, 89)),
      unary("split_unused_piece", [](const TensorList& x) { return square(split(x[0], 2, 0)[1]); }, uniform({4}, 90)),
      unary("pad", [](const TensorList& x) { return exp(pad(x[0], 1, 1, 2, 0.5)); }, uniform({2, 2}, 91)),
  };
}

inline std::vector<OpCase> index_cases() {
  return {
      {"index_select_repeated",
       [](const TensorList& x) { return square(index_select(x[0], 0, index_on(x[0], {2, 0, 2}, {3}))); },
       {uniform({3, 2}, 100)}},
      {"index_add",
       [](const TensorList& x) { return square(index_add(x[0], 1, index_on(x[0], {1, 1, 0}, {3}), x[1])); },
       {uniform({2, 3}, 101), uniform({2, 3}, 102)}},
      {"gather", [](const TensorList& x) { return exp(gather(x[0], 1, index_on(x[0], {0, 2, 2, 1}, {2, 2}))); },
       {uniform({2, 3}, 103)}},
      {"scatter_add",
       [](const TensorList& x) {
         return square(scatter_add(x[0], 1, index_on(x[0], {0, 2, 0, 1, 1, 1}, {2, 3}), x[1]));
       },
       {uniform({2, 3}, 104), uniform({2, 3}, 105)}},
      {"scatter_add_larger_source",
       [](const TensorList& x) { return square(scatter_add(x[0], 0, index_on(x[0], {1, 0, 0, 1}, {2, 2}), x[1])); },
       {uniform({2, 3}, 106), uniform({3, 3}, 107)}},
      {"embedding",
       [](const TensorList& x) { return square(embedding(x[0], index_on(x[0], {1, 3, 1, 0}, {2, 2}))); },
       {uniform({4, 3}, 108)}},
  };
}

inline std::vector<OpCase> fused_cases() {
  auto unary = [](std::string name, std::function<Tensor(const TensorList&)> f, Tensor x) {
    return OpCase{std::move(name), std::move(f), {std::move(x)}};
  };
  return {
      unary("softmax_last_dim", [](const TensorList& x) { return softmax(x[0], 1); }, uniform({3, 4}, 110)),
      unary("softmax_dim0_transposed", [](const TensorList& x) { return softmax(transpose(x[0], 0, 1), 0); },
            uniform({3, 4}, 111)),
      unary("log_softmax_last_dim", [](const TensorList& x) { return log_softmax(x[0], -1); }, uniform({3, 4}, 112)),
      unary("log_softmax_dim0", [](const TensorList& x) { return log_softmax(x[0], 0); }, uniform({2, 3, 2}, 113)),
      unary("l2_normalize", [](const TensorList& x) { return l2_normalize(x[0], 1); }, uniform({3, 4}, 114)),
      unary("l2_normalize_dim0", [](const TensorList& x) { return l2_normalize(transpose(x[0], 0, 1), 0); },
            uniform({3, 4}, 115)),
      unary("l1_normalize", [](const TensorList& x) { return l1_normalize(x[0], 1); }, uniform({3, 4}, 116)),
  };
}

inline std::vector<OpCase> sort_cases() {
  auto unary = [](std::string name, std::function<Tensor(const TensorList&)> f, Tensor x) {
    return OpCase{std::move(name), std::move(f), {std::move(x)}};
  };
  return {
      unary("sort", [](const TensorList& x) { return square(sort(x[0], 1, true).first); }, uniform({3, 5}, 120)),
      unary("sort_dim0", [](const TensorList& x) { return exp(sort(x[0], 0).first); }, uniform({4, 2}, 121)),
      unary("topk", [](const TensorList& x) { return square(topk(x[0], 2, 1).first); }, uniform({3, 5}, 122)),
      unary("topk_smallest", [](const TensorList& x) { return exp(topk(x[0], 3, 0, false).first); },
            uniform({5, 2}, 123)),
  };
}

}  // namespace rematch::test
