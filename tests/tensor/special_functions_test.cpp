// lgamma, digamma, trigamma and polygamma (tensor/elementwise_ops.h; the autograd ops lgamma, digamma and their
// derivatives, DECL's evidential KL term, docs/methods/decl.md §3) against PyTorch itself and the exact values
// (tests/reference/special_functions_reference.py, fixtures in tests/fixtures/special/): torch.lgamma and
// torch.digamma in float64 and float32, torch.polygamma(1, 2 and 3, x) (trigamma, digamma's gradient, and its
// derivatives), and mpmath's log|Γ|, ψ, ψ', ψ'' and ψ‴ at 50 digits, at tiny, small, large and negative arguments,
// the poles (±0, negative integers) and ±inf/NaN. Poles and specials must give torch's non-finite value.
//
// Near the negative poles torch is itself inexact (its reflection rounds π·x: up to 1e-12 relative in float64,
// 2e-4 in float32, where rematch reduces x to its distance from the nearest integer first). So: everywhere at
// least as close to the exact value as torch (up to the dtype's rounding slack), and within that slack of torch
// wherever torch is within it of the exact value — which the test checks is almost every argument.
#include <cmath>
#include <string>

#include "tensor/npy.h"
#include "test_util.h"

namespace rematch {
namespace {

using kernels::UnaryOp;

Tensor fixture(const std::string& name) { return load_npy(std::string(REMATCH_FIXTURES) + "/special/" + name + ".npy"); }
std::vector<double> values(const Tensor& t) { return kernels::cast(t, DType::Float64).to_vector<double>(); }

// `name` (lgamma | digamma) in `dtype` ("64" | "32") against torch and the exact values; the largest relative
// error from exact seen (away from the zeros of the function, where only the absolute error means anything).
double expect_as_torch(UnaryOp op, const std::string& name, const std::string& dtype, double atol, double rtol) {
  const Tensor x = fixture("x" + dtype);
  const std::vector<double> got = values(kernels::unary(op, x)), torch = values(fixture(name + dtype));
  const std::vector<double> exact = values(fixture("exact_" + name + dtype)), a = values(x);
  int64_t near_torch = 0;
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const std::string what = name + dtype + "(" + std::to_string(a[i]) + ")";
    if (!std::isfinite(torch[i]) || !std::isfinite(exact[i])) {
      const bool same = std::isnan(torch[i]) ? std::isnan(got[i]) : got[i] == torch[i];
      EXPECT_TRUE(same) << what << " = " << got[i] << ", torch says " << torch[i];
      continue;
    }
    const double slack = atol + rtol * std::fabs(exact[i]);
    EXPECT_LE(std::fabs(got[i] - exact[i]), std::fabs(torch[i] - exact[i]) + slack)
        << what << " = " << got[i] << ", exact " << exact[i] << ", torch " << torch[i];
    if (std::fabs(torch[i] - exact[i]) <= slack) {
      EXPECT_NEAR(got[i], torch[i], 2 * slack) << what;
      ++near_torch;
    }
    if (std::fabs(exact[i]) > 1e-6) worst = std::max(worst, std::fabs(got[i] - exact[i]) / std::fabs(exact[i]));
  }
  EXPECT_GE(near_torch, 85) << name << dtype << ": torch is close to exact at almost every one of the arguments";
  return worst;
}

TEST(SpecialFunctions, Float64AsTorchAndExact) {
  // glibc's lgamma on both sides (torch's CPU kernel calls std::lgamma); digamma is torch's algorithm.
  const double lg = expect_as_torch(UnaryOp::Lgamma, "lgamma", "64", 1e-15, 1e-14);
  const double dg = expect_as_torch(UnaryOp::Digamma, "digamma", "64", 1e-15, 1e-14);
  std::printf("[ special ] float64 largest relative error from exact: lgamma %.3g, digamma %.3g\n", lg, dg);
}

TEST(SpecialFunctions, Float32AsTorchAndExact) {
  expect_as_torch(UnaryOp::Lgamma, "lgamma", "32", 1e-6, 2e-6);
  expect_as_torch(UnaryOp::Digamma, "digamma", "32", 1e-6, 2e-6);
}

TEST(SpecialFunctions, TrigammaIsTorchs) {
  // Digamma's gradient: PyTorch's calc_trigamma, so that gradients through digamma are torch's (DECL's golden
  // step). Equal to torch.polygamma(1, x) to rounding everywhere (its non-finite values too), and within torch's
  // truncation error (1e-8 relative) of the exact value at the positive arguments.
  const Tensor x = fixture("x64");
  const std::vector<double> got = values(kernels::unary(UnaryOp::Trigamma, x)), torch = values(fixture("trigamma64"));
  const std::vector<double> exact = values(fixture("exact_trigamma64")), a = values(x);
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(torch[i])) {
      EXPECT_TRUE(std::isnan(torch[i]) ? std::isnan(got[i]) : got[i] == torch[i]) << "trigamma(" << a[i] << ")";
      continue;
    }
    EXPECT_NEAR(got[i], torch[i], 1e-300 + 1e-15 * std::fabs(torch[i])) << "trigamma(" << a[i] << ")";
    if (a[i] > 0 && std::isfinite(exact[i])) {
      EXPECT_NEAR(got[i], exact[i], 1e-300 + 1e-8 * std::fabs(exact[i])) << "trigamma(" << a[i] << ") vs exact";
      worst = std::max(worst, std::fabs(got[i] - exact[i]) / std::fabs(exact[i]));
    }
  }
  std::printf("[ special ] trigamma (torch's) largest relative error from exact at x > 0: %.3g\n", worst);
}

TEST(SpecialFunctions, PolygammaAsTorchAndExact) {
  // ψ'' and ψ‴ (the derivatives of trigamma): torch's algorithm (Cephes' Hurwitz zeta), so as close to the exact
  // value as torch is, and within rounding of torch wherever torch is close to exact; torch's non-finite values
  // at the poles and ±inf.
  const Tensor x = fixture("x64");
  const std::vector<double> a = values(x);
  for (int n : {2, 3}) {
    const std::string name = "polygamma" + std::to_string(n) + "_64";
    const std::vector<double> got = values(kernels::scalar_op(kernels::ScalarOp::Polygamma, x, n));
    const std::vector<double> torch = values(fixture(name)), exact = values(fixture("exact_" + name));
    int64_t near_torch = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      const std::string what = name + "(" + std::to_string(a[i]) + ")";
      if (!std::isfinite(torch[i]) || !std::isfinite(exact[i])) {
        EXPECT_TRUE(std::isnan(torch[i]) ? std::isnan(got[i]) : got[i] == torch[i])
            << what << " = " << got[i] << ", torch says " << torch[i];
        continue;
      }
      const double slack = 1e-300 + 1e-14 * std::fabs(exact[i]);
      EXPECT_LE(std::fabs(got[i] - exact[i]), std::fabs(torch[i] - exact[i]) + slack)
          << what << " = " << got[i] << ", exact " << exact[i] << ", torch " << torch[i];
      if (std::fabs(torch[i] - exact[i]) <= slack) {
        EXPECT_NEAR(got[i], torch[i], 2 * slack) << what;
        ++near_torch;
      }
    }
    EXPECT_GE(near_torch, 85) << name;
  }
  // Order 1 is trigamma itself; an order that is not a whole number gives NaN.
  const std::vector<double> order1 = values(kernels::scalar_op(kernels::ScalarOp::Polygamma, x, 1));
  const std::vector<double> tg = values(kernels::unary(UnaryOp::Trigamma, x));
  for (size_t i = 0; i < tg.size(); ++i)
    EXPECT_TRUE(std::isnan(tg[i]) ? std::isnan(order1[i]) : order1[i] == tg[i]) << "polygamma(1, " << a[i] << ")";
  const std::vector<double> half = values(kernels::scalar_op(kernels::ScalarOp::Polygamma, x, 1.5));
  EXPECT_TRUE(std::isnan(half[0]) && std::isnan(half[20]));
}

TEST(SpecialFunctions, IntegersAreRefusedByName) {
  const Tensor i = from_vector(std::vector<int64_t>{1, 2, 3}, {3});
  EXPECT_THROWS_WITH(kernels::unary(UnaryOp::Lgamma, i), "lgamma", "int64");
  EXPECT_THROWS_WITH(kernels::unary(UnaryOp::Digamma, i), "digamma", "int64");
}

TEST(SpecialFunctions, KnownValues) {
  // Γ(5) = 24, ψ(1) = −γ, ψ(1/2) = −γ − 2 log 2, ψ'(1) = π²/6, ψ'(1/2) = π²/2.
  const double gamma = 0.57721566490153286061;
  const Tensor x = from_vector(std::vector<double>{5.0, 1.0, 0.5}, {3});
  const std::vector<double> lg = values(kernels::unary(UnaryOp::Lgamma, x));
  const std::vector<double> dg = values(kernels::unary(UnaryOp::Digamma, x));
  const std::vector<double> tg = values(kernels::unary(UnaryOp::Trigamma, x));
  EXPECT_NEAR(lg[0], std::log(24.0), 1e-15);
  EXPECT_NEAR(dg[1], -gamma, 1e-15);
  EXPECT_NEAR(dg[2], -gamma - 2 * std::log(2.0), 1e-15);
  EXPECT_NEAR(tg[1], M_PI * M_PI / 6, 1e-8);  // torch's trigamma: 1e-8 (TrigammaIsTorchs)
  EXPECT_NEAR(tg[2], M_PI * M_PI / 2, 1e-8);
}

}  // namespace
}  // namespace rematch
