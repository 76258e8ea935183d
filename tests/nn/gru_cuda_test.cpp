// nn::GRU on a CUDA device against the CPU path (nn/cuda/gru.cu vs nn/cpu/gru.cpp): the output, h_n and the
// gradient of x and of every weight for the loss (output·go).sum() + (h_n·gh).sum() on the same inputs;
// uni- and bidirectional, mixed lengths (ties, length 1, every sequence shorter than the padded T), B = 1, no
// padding at all, odd hidden sizes, float32 and float64; gradients of only some inputs; a forward without a
// graph; a module moved to the device; repeatability; device mismatches. Skipped without a device.
// The suite is named GRUCuda so the GPU check's `--gtest_filter=*Cuda*:*CUDA*` selects it.
#include <cmath>
#include <string>
#include <vector>

#include "nn/gru.h"
#include "test_util.h"

namespace rematch {
namespace {

using nn::GRUOutput;
using test::all_close;
using test::random_tensor;

class GRUCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    SKIP_WITHOUT_CUDA();
  }
};

const Device kCuda = Device::cuda(0);
const char* const kWeightNames[4] = {"weight_ih", "weight_hh", "bias_ih", "bias_hh"};

struct Case {
  int64_t steps, input, hidden;
  bool bidirectional;
  std::vector<int64_t> lengths;
  DType dtype;
  uint32_t seed;
};

// The layer's weights as PyTorch draws them, U(-1/√H, 1/√H), on the host.
TensorList weights_for(const Case& c) {
  const int64_t G = 3 * c.hidden;
  const double k = 1.0 / std::sqrt(static_cast<double>(c.hidden));
  const Shape shapes[4] = {{G, c.input}, {G, c.hidden}, {G}, {G}};
  TensorList w;
  for (int64_t i = 0; i < (c.bidirectional ? 8 : 4); ++i)
    w.push_back(random_tensor(shapes[i % 4], c.dtype, c.seed + 1 + static_cast<uint32_t>(i), -k, k));
  return w;
}

// A fresh leaf on `device` holding t's values.
Tensor leaf_on(const Tensor& t, Device device, bool requires_grad) {
  Tensor copy = device.is_cpu() ? kernels::clone(t) : kernels::to_device(t, device);
  copy.requires_grad_(requires_grad);
  return copy;
}

struct Outcome {
  GRUOutput out;
  Tensor grad_x;
  TensorList grad_w;  // undefined where the weight did not require grad
};

// Forward and backward of case c on `device`; x and the weights require grad as asked.
Outcome run_on(const Case& c, Device device, bool x_grad = true, bool weight_grad = true) {
  const int64_t B = static_cast<int64_t>(c.lengths.size()), D = c.bidirectional ? 2 : 1;
  const Tensor x = leaf_on(random_tensor({B, c.steps, c.input}, c.dtype, c.seed), device, x_grad);
  TensorList w;
  for (const Tensor& t : weights_for(c)) w.push_back(leaf_on(t, device, weight_grad));
  // Non-zero upstream gradients at the padding too: they must not reach anything.
  const Tensor go = leaf_on(random_tensor({B, c.steps, D * c.hidden}, c.dtype, c.seed + 20), device, false);
  const Tensor gh = leaf_on(random_tensor({D, B, c.hidden}, c.dtype, c.seed + 21), device, false);
  Outcome r;
  r.out = nn::gru(x, from_vector(c.lengths), w);
  backward(add(sum(mul(r.out.output, go)), sum(mul(r.out.h_n, gh))));
  if (x_grad) r.grad_x = x.grad();
  for (const Tensor& t : w) r.grad_w.push_back(weight_grad ? t.grad() : Tensor());
  return r;
}

std::string weight_name(size_t k) { return std::string(kWeightNames[k % 4]) + (k < 4 ? "_l0" : "_l0_reverse"); }

// Tolerances. float64: the same equations in the same precision, only the summation order of the GEMMs and
// column sums differs, so 1e-12 (1e-11 where gradient entries reach 20). float32: each side carries float32
// rounding of GEMMs over up to 3H terms through every step, and the CPU's fast_expf (a few 1e-8) meets CUDA's
// expf; gradient entries are sums over all steps and rows. The bound is twenty times the largest
// float32-vs-float64 error of the CPU path itself on these cases (measured: 2.6e-7 of 1 + |value| on the small
// ones, 2e-6 on LargerBatchOddSizes): each side errs about that much, in its own direction, and a wrong index
// or formula shows up at 1e-2 and above.
void compare(const Case& c, double atol, double rtol) {
  const Outcome cpu = run_on(c, Device::cpu());
  const Outcome gpu = run_on(c, kCuda);
  ASSERT_EQ(gpu.out.output.device(), kCuda);
  ASSERT_EQ(gpu.out.h_n.device(), kCuda);
  EXPECT_TRUE(all_close(gpu.out.output, cpu.out.output, atol, rtol)) << "output";
  EXPECT_TRUE(all_close(gpu.out.h_n, cpu.out.h_n, atol, rtol)) << "h_n";
  ASSERT_TRUE(gpu.grad_x.defined());
  EXPECT_EQ(gpu.grad_x.device(), kCuda);
  EXPECT_TRUE(all_close(gpu.grad_x, cpu.grad_x, atol, rtol)) << "grad x";
  for (size_t k = 0; k < cpu.grad_w.size(); ++k) {
    ASSERT_TRUE(gpu.grad_w[k].defined()) << weight_name(k);
    EXPECT_EQ(gpu.grad_w[k].device(), kCuda) << weight_name(k);
    EXPECT_TRUE(all_close(gpu.grad_w[k], cpu.grad_w[k], atol, rtol)) << "grad " << weight_name(k);
  }
}

TEST_F(GRUCuda, UnidirectionalMixedLengthsFloat32) {
  compare({7, 6, 9, false, {7, 3, 1, 7, 5}, DType::Float32, 100}, 5e-6, 5e-6);
}

TEST_F(GRUCuda, BidirectionalMixedLengthsFloat32) {
  compare({7, 6, 9, true, {7, 3, 1, 7, 5}, DType::Float32, 110}, 5e-6, 5e-6);
}

TEST_F(GRUCuda, BidirectionalFloat64) {
  compare({6, 5, 7, true, {4, 2, 4, 1, 3, 6}, DType::Float64, 120}, 1e-12, 1e-12);
  compare({6, 5, 7, false, {4, 2, 4, 1, 3, 6}, DType::Float64, 125}, 1e-12, 1e-12);
}

TEST_F(GRUCuda, SingleSequenceShorterThanThePadding) {
  // B = 1 and steps 3..4 empty: no launch may cover a step without rows.
  compare({5, 4, 5, true, {3}, DType::Float32, 130}, 5e-6, 5e-6);
  compare({5, 4, 5, false, {3}, DType::Float64, 131}, 1e-12, 1e-12);
}

TEST_F(GRUCuda, OneStepOnly) {
  // T = 1: the state never leaves 0, so dW_hh is exactly zero.
  compare({1, 3, 5, true, {1, 1}, DType::Float32, 140}, 5e-6, 5e-6);
  compare({1, 3, 5, false, {1}, DType::Float64, 141}, 1e-12, 1e-12);
}

TEST_F(GRUCuda, NoPaddingAnywhere) {
  compare({5, 8, 33, true, {5, 5, 5, 5}, DType::Float32, 150}, 5e-6, 5e-6);
}

TEST_F(GRUCuda, LargerBatchOddSizes) {
  // Several blocks per step (H = 67 is no multiple of the warp), 37 sequences of random lengths 1..12.
  std::vector<int64_t> lengths;
  for (int64_t b = 0; b < 37; ++b) lengths.push_back(1 + (b * 7 + b / 5) % 12);
  compare({12, 40, 67, true, lengths, DType::Float32, 160}, 4e-5, 4e-5);
  compare({12, 40, 67, true, lengths, DType::Float64, 161}, 1e-11, 1e-11);
}

TEST_F(GRUCuda, GradientsOfOnlySomeInputs) {
  const Case c{6, 4, 7, true, {6, 2, 5}, DType::Float64, 170};
  const Outcome cpu = run_on(c, Device::cpu());
  // Only x: no weight gradient is computed or returned.
  const Outcome x_only = run_on(c, kCuda, true, false);
  EXPECT_TRUE(all_close(x_only.grad_x, cpu.grad_x, 1e-12, 1e-12));
  // Only the weights: x has no gradient.
  const Outcome w_only = run_on(c, kCuda, false, true);
  EXPECT_FALSE(w_only.grad_x.defined());
  for (size_t k = 0; k < cpu.grad_w.size(); ++k)
    EXPECT_TRUE(all_close(w_only.grad_w[k], cpu.grad_w[k], 1e-12, 1e-12)) << weight_name(k);
}

TEST_F(GRUCuda, ForwardWithoutAGraphAndModuleOnTheDevice) {
  Generator gen(9);
  nn::GRU gru(3, 5, true, DType::Float32, &gen);
  const Tensor x = random_tensor({4, 3, 3}, DType::Float32, 18);
  const Tensor lengths = from_vector(std::vector<int64_t>{3, 1, 2, 3});
  const GRUOutput on_cpu = gru(x, lengths);
  gru.to(kCuda);
  const Tensor x_dev = kernels::to_device(x, kCuda);
  const GRUOutput with_graph = gru(x_dev, lengths);
  EXPECT_TRUE(with_graph.output.requires_grad());
  EXPECT_TRUE(all_close(with_graph.output, on_cpu.output, 5e-6, 5e-6));
  NoGradGuard guard;
  const GRUOutput without = gru(x_dev, lengths);
  EXPECT_FALSE(without.output.requires_grad());
  // The same kernels with or without saving the gates: bitwise equal.
  EXPECT_TRUE(all_close(without.output, with_graph.output, 0, 0));
  EXPECT_TRUE(all_close(without.h_n, with_graph.h_n, 0, 0));
}

TEST_F(GRUCuda, RepeatedRunsAreBitwiseEqual) {
  // No atomics anywhere: the same inputs give the same bits.
  const Case c{9, 16, 31, true, {9, 4, 9, 1, 7, 7, 2}, DType::Float32, 180};
  const Outcome a = run_on(c, kCuda), b = run_on(c, kCuda);
  EXPECT_TRUE(all_close(a.out.output, b.out.output, 0, 0));
  EXPECT_TRUE(all_close(a.grad_x, b.grad_x, 0, 0));
  for (size_t k = 0; k < a.grad_w.size(); ++k) EXPECT_TRUE(all_close(a.grad_w[k], b.grad_w[k], 0, 0)) << k;
}

TEST_F(GRUCuda, DeviceMismatchesAreErrors) {
  nn::GRU gru(3, 2, true);
  const Tensor lengths = from_vector(std::vector<int64_t>{4, 2});
  const Tensor x = random_tensor({2, 4, 3}, DType::Float32, 19);
  EXPECT_THROWS_WITH(gru(kernels::to_device(x, kCuda), lengths), "nn::GRU(3, 2, bidirectional)", "cuda:0",
                     "weight_ih_l0", "cpu", "one device");
  TensorList w = gru.parameters();
  w[5] = kernels::to_device(w[5], kCuda);
  EXPECT_THROWS_WITH(nn::gru(x, lengths, w), "gru", "weight_hh_l0_reverse", "cuda:0", "one device");
  gru.to(kCuda);
  EXPECT_THROWS_WITH(gru(kernels::to_device(x, kCuda), kernels::to_device(lengths, kCuda)), "lengths",
                     "on the host", "cuda:0");
}

}  // namespace
}  // namespace rematch
