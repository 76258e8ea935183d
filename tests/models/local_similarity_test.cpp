// The fused local similarity node (models/local_similarity.h): equal to the same formula written with ops
// (values and every gradient), independent of the chunk size, zero and gradient-free at padded words, and
// float64 gradcheck and gradgradcheck of all five inputs (chunked, so the recorded backward concatenates).
#include "models/local_similarity.h"

#include "model_test_util.h"
#include "models/attention.h"
#include "models/padding.h"

namespace rematch::models {
namespace {

struct Inputs {
  Tensor alpha, regions, words, mask, weight, bias;
};

Inputs make_inputs(int64_t n_img, int64_t n_cap, int64_t L, int64_t R, int64_t d, int64_t m,
                   const std::vector<int64_t>& len) {
  Inputs in;
  in.regions = test::unit_rows({n_img, R, d}, 1);
  in.words = test::unit_rows({n_cap, L, d}, 2);
  in.mask = word_mask(test::lengths_tensor(len), L);
  in.alpha = attention_weights(in.regions, in.words, in.mask);
  in.weight = test::random_tensor({m, d}, DType::Float64, 3);
  in.bias = test::random_tensor({m}, DType::Float64, 4);
  return in;
}

// §4.4 with ops: W (attended − w)² + b, masked.
Tensor unfused(const Tensor& alpha, const Tensor& regions, const Tensor& words, const Tensor& mask,
               const Tensor& weight, const Tensor& bias) {
  const Tensor y = nn::linear(square(sub(attended_regions(alpha, regions), words)), weight, bias);
  return mul(y, unsqueeze(rematch::to(mask, y.dtype()), 2));
}

TEST(LocalSimilarity, EqualsTheUnfusedFormulaWithGradients) {
  const Inputs in = make_inputs(3, 4, 5, 3, 6, 4, {5, 2, 3, 1});
  const Tensor r = test::random_tensor({3, 4, 5, 4}, DType::Float64, 5);
  TensorList fused_grads, plain_grads;
  for (bool fused : {true, false}) {
    TensorList leaves;
    for (const Tensor& t : {in.alpha, in.regions, in.words, in.weight, in.bias}) {
      Tensor leaf = kernels::clone(t);
      leaf.requires_grad_(true);
      leaves.push_back(leaf);
    }
    const Tensor y = fused ? local_similarity(leaves[0], leaves[1], leaves[2], in.mask, leaves[3], leaves[4], 1)
                           : unfused(leaves[0], leaves[1], leaves[2], in.mask, leaves[3], leaves[4]);
    backward(sum(mul(y, r)));
    for (const Tensor& l : leaves) (fused ? fused_grads : plain_grads).push_back(l.grad());
    if (fused) {
      EXPECT_TRUE(test::all_close(y, unfused(in.alpha, in.regions, in.words, in.mask, in.weight, in.bias), 1e-14, 0));
    }
  }
  // Padded word rows of α and w get no gradient from either form.
  for (size_t i = 0; i < fused_grads.size(); ++i)
    EXPECT_TRUE(test::all_close(fused_grads[i], plain_grads[i], 1e-13, 1e-12)) << "input " << i;
}

TEST(LocalSimilarity, ChunkSizeChangesNothing) {
  const Inputs in = make_inputs(5, 2, 3, 2, 4, 3, {3, 2});
  const Tensor all = local_similarity(in.alpha, in.regions, in.words, in.mask, in.weight, in.bias);
  for (int64_t chunk : {1, 24, 48, 1000})
    EXPECT_TRUE(test::all_close(local_similarity(in.alpha, in.regions, in.words, in.mask, in.weight, in.bias, chunk),
                                all, 1e-15, 0))
        << chunk;
  const std::vector<double> v = select(select(all, 1, 1), 1, 2).to_vector<double>();  // caption 1, word 2: padding
  for (double x : v) EXPECT_EQ(x, 0.0);
}

TEST(LocalSimilarity, Errors) {
  const Inputs in = make_inputs(2, 2, 3, 2, 4, 3, {3, 2});
  EXPECT_THROWS_WITH(local_similarity(in.alpha, in.regions, in.words, in.mask, transpose(in.weight, 0, 1), in.bias),
                     "local_similarity", "do not agree");
  EXPECT_THROWS_WITH(
      local_similarity(in.alpha, in.regions, in.words, word_mask(test::lengths_tensor({1}), 3), in.weight, in.bias),
      "word_mask", "[2, 3]");
  EXPECT_THROWS_WITH(local_similarity(in.alpha, in.regions, in.words, in.mask, in.weight, in.bias, 0), "chunk");
}

TEST(LocalSimilarity, Gradcheck) {
  const Inputs in = make_inputs(2, 2, 3, 2, 3, 2, {3, 2});
  auto f = [&](const TensorList& t) { return local_similarity(t[0], t[1], t[2], in.mask, t[3], t[4], 9); };
  EXPECT_GRADCHECK(f, {in.alpha, in.regions, in.words, in.weight, in.bias});
}

TEST(LocalSimilarity, Gradgradcheck) {
  const Inputs in = make_inputs(2, 2, 3, 2, 3, 2, {3, 2});
  auto f = [&](const TensorList& t) { return local_similarity(t[0], t[1], t[2], in.mask, t[3], t[4], 9); };
  EXPECT_GRADGRADCHECK(f, {in.alpha, in.regions, in.words, in.weight, in.bias});
}

}  // namespace
}  // namespace rematch::models
