// Backward passes on cuda:0 against the same passes on the CPU: composite differentiable functions built from
// the elementwise, reduction, view and fused row ops (no matmul or index ops), run forward and backward on both
// devices from the same inputs; losses and every input's gradient must agree, in float64 (tightly) and in
// float32. Also a graph that crosses devices through to(). Skipped without a CUDA device.
#include <functional>
#include <string>

#include "tensor/creation.h"
#include "test_util.h"

namespace rematch {
namespace {

using test::all_close;

const Device kGpu = Device::cuda(0);

using Function = std::function<Tensor(const TensorList&)>;

// Loss and input gradients of f at `inputs` (host tensors), computed on `device`.
std::pair<Tensor, TensorList> loss_and_grads(const Function& f, const TensorList& inputs, Device device) {
  TensorList leaves;
  for (const Tensor& x : inputs) {
    Tensor leaf = kernels::clone(kernels::to_device(x, device));
    leaf.requires_grad_();
    leaves.push_back(leaf);
  }
  Tensor loss = f(leaves);
  backward(loss);
  TensorList grads;
  for (const Tensor& leaf : leaves) grads.push_back(leaf.grad());
  return {loss.detach(), grads};
}

// f on both devices, in float64 and float32, from the same random inputs of the given shapes.
void expect_same_backward(const std::string& name, const Function& f, const std::vector<Shape>& shapes) {
  for (DType dt : {DType::Float64, DType::Float32}) {
    SCOPED_TRACE(name + " " + dtype_name(dt));
    TensorList inputs;
    for (size_t i = 0; i < shapes.size(); ++i)
      inputs.push_back(test::random_tensor(shapes[i], dt, static_cast<uint32_t>(17 + i), -2, 2));
    const auto [loss_cpu, grads_cpu] = loss_and_grads(f, inputs, Device::cpu());
    const auto [loss_gpu, grads_gpu] = loss_and_grads(f, inputs, kGpu);
    // float32 sums run in different orders (and float32 exp differs by an ulp or two) on the two devices.
    const double atol = dt == DType::Float64 ? 1e-11 : 1e-4, rtol = dt == DType::Float64 ? 1e-10 : 1e-4;
    EXPECT_EQ(loss_gpu.device(), kGpu);
    EXPECT_TRUE(all_close(loss_gpu, loss_cpu, atol, rtol));
    for (size_t i = 0; i < inputs.size(); ++i) {
      SCOPED_TRACE("gradient of input " + std::to_string(i));
      ASSERT_TRUE(grads_gpu[i].defined());
      EXPECT_EQ(grads_gpu[i].device(), kGpu);
      EXPECT_TRUE(all_close(grads_gpu[i], grads_cpu[i], atol, rtol));
    }
  }
}

TEST(CudaBackward, ElementwiseChainWithBroadcasting) {
  SKIP_WITHOUT_CUDA();
  // a [7, 33], b [33] and c [7, 1] broadcast together; gradients are summed back to each input's shape.
  expect_same_backward(
      "elementwise",
      [](const TensorList& x) {
        const Tensor &a = x[0], &b = x[1], &c = x[2];
        Tensor t = tanh(a * b + c) * sigmoid(a) - exp(-square(a)) / (abs(b) + 1.0);
        t = t + relu(a - 0.2) * leaky_relu(c, 0.1) + log1p(abs(a)) * sqrt(square(b) + 1.0);
        t = t + rsqrt(square(c) + 0.5) - reciprocal(abs(a) + 2.0) + pow(abs(b) + 0.5, 1.7);
        t = t + maximum(a, b) * 0.5 - minimum(a, c) + clamp(a, -0.5, 0.7) + 2.0 / (square(a) + 1.0);
        return sum(t);
      },
      {{7, 33}, {33}, {7, 1}});
}

TEST(CudaBackward, ReductionsOverEveryKindOfDim) {
  SKIP_WITHOUT_CUDA();
  expect_same_backward(
      "reductions",
      [](const TensorList& x) {
        const Tensor& a = x[0];  // [5, 64, 3]
        Tensor loss = sum(mean(a, {1}) * 3.0) + sum(amax(a, {0, 2})) + mean(amin(a, {1}));
        loss = loss + sum(var(a, {1})) + sum(norm(a, 2, {2})) + sum(norm(a, 1, {0}));
        loss = loss + sum(logsumexp(a, {1})) + mean(sum(a, {0, 2}, true) * sum(a, {}));
        return loss;
      },
      {{5, 64, 3}});
}

TEST(CudaBackward, FusedRowOpsAlongEachDim) {
  SKIP_WITHOUT_CUDA();
  expect_same_backward(
      "fused",
      [](const TensorList& x) {
        const Tensor &a = x[0], &w = x[1];  // [9, 130] each
        Tensor loss = sum(softmax(a, 1) * w) + sum(log_softmax(a * 2.0, 0) * w);
        loss = loss + sum(l2_normalize(a, 1) * w) + sum(l1_normalize(transpose(a, 0, 1), 0) * transpose(w, 0, 1));
        loss = loss + sum(softmax(reshape(a, {9, 10, 13}), 1) * reshape(w, {9, 10, 13}));
        return loss;
      },
      {{9, 130}, {9, 130}});
}

TEST(CudaBackward, ViewsMasksAndSelects) {
  SKIP_WITHOUT_CUDA();
  expect_same_backward(
      "views",
      [](const TensorList& x) {
        const Tensor& a = x[0];  // [6, 40]
        const Tensor stepped = slice(a, 1, 1, 40, 3);                  // [6, 13]
        const Tensor row = select(a, 0, 2);                            // [40]
        const Tensor wide = expand(unsqueeze(row, 0), {6, 40});
        const Tensor masked = masked_fill(a, gt(a, 0.5), 0.0);
        const Tensor narrowed = narrow(transpose(a, 0, 1), 0, 5, 10);  // [10, 6]
        Tensor loss = sum(square(stepped)) + sum(wide * masked) + sum(exp(narrowed) * 0.1);
        loss = loss + sum(where(lt(a, 0.0), a * 3.0, square(a)));
        loss = loss + sum(flatten(permute(reshape(a, {2, 3, 40}), {2, 0, 1})) * 0.25);
        return loss;
      },
      {{6, 40}});
}

// A leaf on the host, the computation on the device: the gradient comes back to the host leaf.
TEST(CudaBackward, GradientFlowsBackAcrossDevices) {
  SKIP_WITHOUT_CUDA();
  Tensor x = test::random_tensor({4, 50}, DType::Float64, 3, -1, 1);
  x.requires_grad_();
  backward(sum(softmax(to(x, kGpu), 1) * to(x, kGpu)));
  ASSERT_TRUE(x.grad().defined());
  EXPECT_TRUE(x.grad().device().is_cpu());
  Tensor y = kernels::clone(x.detach());
  y.requires_grad_();
  backward(sum(softmax(y, 1) * y));
  EXPECT_TRUE(all_close(x.grad(), y.grad(), 1e-12, 1e-12));
}

}  // namespace
}  // namespace rematch
