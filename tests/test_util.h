// Shared helpers of the GoogleTest suites: random inputs (std::mt19937, independent of the engine's RNG),
// closeness checks with the tolerance model |got - want| <= atol + rtol·|want|, gradcheck assertions, and the
// list of devices a test runs on.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "autograd/autograd.h"

namespace rematch::test {

// Uniform values in [lo, hi) of the given dtype (integers: floor of them).
Tensor random_tensor(const Shape& shape, DType dtype = DType::Float64, uint32_t seed = 0, double lo = -1,
                     double hi = 1);
// Integer tensor of values in [0, high).
Tensor random_index(const Shape& shape, int64_t high, uint32_t seed = 0, DType dtype = DType::Int64);

::testing::AssertionResult all_close(const Tensor& got, const Tensor& want, double atol = 1e-6, double rtol = 1e-5);
::testing::AssertionResult values_equal(const Tensor& got, const std::vector<double>& want, double atol = 0);
::testing::AssertionResult passes_gradcheck(const std::function<Tensor(const TensorList&)>& f,
                                            const TensorList& inputs, GradcheckOptions options = {});
// gradgradcheck (autograd/gradcheck.h): f's gradient, with a random upstream gradient, against differences.
::testing::AssertionResult passes_gradgradcheck(const std::function<Tensor(const TensorList&)>& f,
                                                const TensorList& inputs, GradcheckOptions options = {});

// Second derivatives of f at `inputs` (moved to `device`), for comparing devices: with an upstream gradient v of
// f's output shape and weights w_k of each gradient's shape (random, from `seed`), the gradient of
// Σ_k <∂f/∂x_k(v), w_k> w.r.t. every input and v, returned on the host (undefined where zero by construction).
TensorList second_derivatives(const std::function<Tensor(const TensorList&)>& f, const TensorList& inputs,
                              Device device, uint32_t seed = 0);
// second_derivatives on cuda:0 against the CPU's, entry by entry within atol + rtol·|CPU|.
::testing::AssertionResult cuda_second_derivatives_match(const std::function<Tensor(const TensorList&)>& f,
                                                         const TensorList& inputs, uint32_t seed,
                                                         double atol = 1e-10, double rtol = 1e-9);

// Runs f and checks it throws rematch::Error whose message contains every one of `parts`.
::testing::AssertionResult throws_with(const std::function<void()>& f, const std::vector<std::string>& parts);

// A fixture with a fresh directory under the system temp folder, removed with its contents afterwards.
class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;
};

}  // namespace rematch::test

#define EXPECT_GRADCHECK(f, ...) EXPECT_TRUE(::rematch::test::passes_gradcheck(f, __VA_ARGS__))
#define EXPECT_GRADGRADCHECK(f, ...) EXPECT_TRUE(::rematch::test::passes_gradgradcheck(f, __VA_ARGS__))
#define EXPECT_THROWS_WITH(stmt, ...) \
  EXPECT_TRUE(::rematch::test::throws_with([&] { stmt; }, {__VA_ARGS__}))
// The first line of every test that needs a CUDA device: without one it skips, saying why. tools/gpu_check.sh
// fails a run in which "needs a CUDA device" appears on a machine whose nvidia-smi lists a GPU, so keep the
// phrase.
#define SKIP_WITHOUT_CUDA()                                                                             \
  if (!::rematch::cuda_available())                                                                     \
  GTEST_SKIP() << "needs a CUDA device: " << ::rematch::cuda_unavailable_reason()
