#include "test_util.h"

#include <stdlib.h>

#include <cmath>
#include <random>
#include <sstream>

namespace rematch::test {

Tensor random_tensor(const Shape& shape, DType dtype, uint32_t seed, double lo, double hi) {
  std::mt19937 gen(seed * 7919u + 17u);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(static_cast<size_t>(shape_numel(shape)));
  for (double& x : v) x = dist(gen);
  if (!is_floating(dtype))
    for (double& x : v) x = std::floor(x);
  return kernels::cast(from_vector(v, shape), dtype);
}

Tensor random_index(const Shape& shape, int64_t high, uint32_t seed, DType dtype) {
  std::mt19937 gen(seed * 104729u + 3u);
  std::uniform_int_distribution<int64_t> dist(0, high - 1);
  std::vector<int64_t> v(static_cast<size_t>(shape_numel(shape)));
  for (int64_t& x : v) x = dist(gen);
  return kernels::cast(from_vector(v, shape), dtype);
}

::testing::AssertionResult all_close(const Tensor& got, const Tensor& want, double atol, double rtol) {
  if (got.sizes() != want.sizes())
    return ::testing::AssertionFailure() << "shape " << got.shape_str() << " vs expected " << want.shape_str();
  std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i) {
    const bool both_nan = std::isnan(g[i]) && std::isnan(w[i]);
    const bool same_inf = std::isinf(g[i]) && g[i] == w[i];
    if (both_nan || same_inf) continue;
    if (!(std::fabs(g[i] - w[i]) <= atol + rtol * std::fabs(w[i])))
      return ::testing::AssertionFailure() << "element " << i << ": got " << g[i] << ", expected " << w[i]
                                           << " (atol " << atol << ", rtol " << rtol << ")";
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult values_equal(const Tensor& got, const std::vector<double>& want, double atol) {
  std::vector<double> g = got.to_vector<double>();
  if (g.size() != want.size())
    return ::testing::AssertionFailure() << got.numel() << " values, expected " << want.size();
  for (size_t i = 0; i < g.size(); ++i)
    if (g[i] != want[i] && !(std::fabs(g[i] - want[i]) <= atol) && !(std::isnan(g[i]) && std::isnan(want[i])))
      return ::testing::AssertionFailure() << "element " << i << ": got " << g[i] << ", expected " << want[i];
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult passes_gradcheck(const std::function<Tensor(const TensorList&)>& f,
                                            const TensorList& inputs, GradcheckOptions options) {
  GradcheckResult r = gradcheck(f, inputs, options);
  if (r.ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << r.message;
}

::testing::AssertionResult passes_gradgradcheck(const std::function<Tensor(const TensorList&)>& f,
                                                const TensorList& inputs, GradcheckOptions options) {
  GradcheckResult r = gradgradcheck(f, inputs, options);
  if (r.ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "gradgradcheck: " << r.message;
}

namespace {
// Random float64 values of exactly `shape` (random_tensor reads an empty shape as "one value", [1]; a 0-d output
// needs a 0-d gradient).
Tensor random_of_shape(const Shape& shape, uint32_t seed) {
  return kernels::reshape(random_tensor(shape, DType::Float64, seed), shape);
}
}  // namespace

TensorList second_derivatives(const std::function<Tensor(const TensorList&)>& f, const TensorList& inputs,
                              Device device, uint32_t seed) {
  TensorList x;
  for (const Tensor& t : inputs) x.push_back(kernels::to_device(t, device).requires_grad_(true));
  const Tensor y = f(x);
  Tensor v = kernels::to_device(random_of_shape(y.sizes(), seed), device);
  v.requires_grad_(true);
  GradOptions first;
  first.create_graph = true;
  first.allow_unused = true;
  const TensorList g = grad({y}, x, {v}, first);
  Tensor s;
  for (size_t k = 0; k < g.size(); ++k) {
    if (!g[k].defined()) continue;
    const Tensor w = kernels::to_device(random_of_shape(g[k].sizes(), seed + 1 + static_cast<uint32_t>(k)), device);
    const Tensor term = sum(mul(g[k], w));
    s = s.defined() ? add(s, term) : term;
  }
  TensorList wrt = x;
  wrt.push_back(v);
  GradOptions second;
  second.allow_unused = true;
  TensorList h = grad({s}, wrt, {}, second);
  for (Tensor& t : h)
    if (t.defined()) t = kernels::to_device(t, Device::cpu());
  return h;
}

::testing::AssertionResult cuda_second_derivatives_match(const std::function<Tensor(const TensorList&)>& f,
                                                         const TensorList& inputs, uint32_t seed, double atol,
                                                         double rtol) {
  const TensorList cpu = second_derivatives(f, inputs, Device::cpu(), seed);
  const TensorList gpu = second_derivatives(f, inputs, Device::cuda(0), seed);
  for (size_t k = 0; k < cpu.size(); ++k) {
    if (cpu[k].defined() != gpu[k].defined())
      return ::testing::AssertionFailure() << "input " << k << ": a second derivative on one device only";
    if (!cpu[k].defined()) continue;
    ::testing::AssertionResult close = all_close(gpu[k], cpu[k], atol, rtol);
    if (!close) return ::testing::AssertionFailure() << "input " << k << ": " << close.message();
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult throws_with(const std::function<void()>& f, const std::vector<std::string>& parts) {
  try {
    f();
  } catch (const Error& e) {
    const std::string msg = e.what();
    for (const std::string& p : parts)
      if (msg.find(p) == std::string::npos)
        return ::testing::AssertionFailure() << "message \"" << msg << "\" does not mention \"" << p << "\"";
    return ::testing::AssertionSuccess();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw a non-rematch exception: " << e.what();
  }
  return ::testing::AssertionFailure() << "did not throw";
}

void TempDirTest::SetUp() {
  // mkdtemp replaces the six trailing X characters with a unique suffix.
  std::string tmpl = (std::filesystem::temp_directory_path() / ("rematch_test_" + std::string(6, 'X'))).string();
  ASSERT_NE(::mkdtemp(tmpl.data()), nullptr) << "cannot create a temporary directory";
  dir_ = tmpl;
}

void TempDirTest::TearDown() { std::filesystem::remove_all(dir_); }

}  // namespace rematch::test
