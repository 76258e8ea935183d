// The fused local similarity node (models/local_similarity.h): equal to the same formula written with ops
// (values and every gradient), independent of the chunk size, zero and gradient-free at padded words, and
// float64 gradcheck and gradgradcheck of all five inputs (chunked, so the recorded backward concatenates); the
// backward without a graph (formed in place) gives the bits of the recorded one and holds at most three
// chunk-sized temporaries.
#include "models/local_similarity.h"

#include <cstring>
#include <string>

#include "tensor/memory.h"

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

// Inputs that require grad, of `dtype`: alpha, regions, words, weight, bias.
TensorList leaves_of(const Inputs& in, DType dtype) {
  TensorList leaves;
  for (const Tensor& t : {in.alpha, in.regions, in.words, in.weight, in.bias}) {
    Tensor leaf = kernels::cast(kernels::clone(t), dtype);
    leaf.requires_grad_(true);
    leaves.push_back(leaf);
  }
  return leaves;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.sizes() != b.sizes() || a.dtype() != b.dtype()) return false;
  const Tensor x = kernels::contiguous(a), y = kernels::contiguous(b);
  return std::memcmp(x.raw_data(), y.raw_data(), static_cast<size_t>(x.numel()) * dtype_size(x.dtype())) == 0;
}

TEST(LocalSimilarity, BackwardInPlaceGivesTheBitsOfTheRecordedBackward) {
  // Three chunks of two images; gradients for every input, then for words and weight alone (raw is dropped).
  const Inputs in = make_inputs(6, 3, 5, 4, 8, 3, {5, 2, 4});
  for (DType dt : {DType::Float32, DType::Float64}) {
    for (bool all_inputs : {true, false}) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + (all_inputs ? ", every input" : ", words and weight"));
      TensorList x = leaves_of(in, dt);
      if (!all_inputs) x[0] = x[0].detach(), x[1] = x[1].detach(), x[4] = x[4].detach();
      const TensorList wrt = all_inputs ? x : TensorList{x[2], x[3]};
      const Tensor r = kernels::cast(test::random_tensor({6, 3, 5, 3}, DType::Float64, 5), dt);
      const Tensor y = local_similarity(x[0], x[1], x[2], in.mask, x[3], x[4], 2 * 3 * 5 * 8);
      GradOptions plain, recorded;
      plain.retain_graph = true;
      recorded.create_graph = true;  // the op-by-op backward, recorded
      const TensorList got = grad({y}, wrt, {r}, plain);
      const TensorList want = grad({y}, wrt, {r}, recorded);
      for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(same_bits(got[i], want[i])) << "input " << i;
    }
  }
}

TEST(LocalSimilarity, BackwardHoldsAtMostThreeChunkSizedTemporaries) {
  // Chunks of two images, each 2·8·16·256 doubles = 512 KiB; the gradients returned are smaller than one.
  const Inputs in = make_inputs(6, 8, 16, 4, 256, 8, std::vector<int64_t>(8, 16));
  const int64_t chunk_elements = 2 * 8 * 16 * 256;
  const double chunk_bytes = chunk_elements * 8.0;
  const TensorList x = leaves_of(in, DType::Float64);
  const Tensor y = local_similarity(x[0], x[1], x[2], in.mask, x[3], x[4], chunk_elements);
  const Tensor r = test::random_tensor(y.sizes(), DType::Float64, 6);
  const MemoryStats before = memory_stats(Device::cpu());
  reset_peak_memory_stats(Device::cpu());
  const TensorList g = grad({y}, x, {r});
  const double extra = static_cast<double>(memory_stats(Device::cpu()).live_peak_bytes - before.live_bytes);
  double returned = 0;
  for (const Tensor& t : g) returned += static_cast<double>(t.numel()) * 8.0;
  // Three chunks, the gradients being built and the masked incoming gradient (as large as r); the op-by-op
  // backward held seven chunks.
  EXPECT_LE(extra, 3 * chunk_bytes + returned + static_cast<double>(r.numel()) * 8.0 + 64 * 1024) << extra / chunk_bytes;
  EXPECT_GE(extra, 3 * chunk_bytes);  // the bound is not met by measuring nothing
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
