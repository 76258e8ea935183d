// Forward values of the elementwise family against std:: math, over contiguous, strided, broadcast and empty
// inputs, in float32 and float64; the dtype rules of every row of the op table (tensor/elementwise_ops.h).
#include <cfloat>
#include <cmath>
#include <functional>
#include <limits>
#include <set>
#include <string>

#include "tensor/cpu/fast_exp.h"
#include "test_util.h"

namespace rematch {
namespace {

using test::all_close;
using test::random_tensor;
using test::values_equal;

// Applies f to every value of x on the host, in double.
template <typename F> Tensor reference_map(const Tensor& x, F f) {
  std::vector<double> v = x.to_vector<double>();
  for (double& e : v) e = f(e);
  return kernels::cast(from_vector(v, x.sizes()), x.dtype());
}

TEST(Elementwise, UnaryMatchesStdMath) {
  for (DType dt : {DType::Float32, DType::Float64}) {
    Tensor x = random_tensor({37, 19}, dt, 1, 0.1, 3.0);
    const double tol = dt == DType::Float32 ? 1e-6 : 1e-14;
    EXPECT_TRUE(all_close(exp(x), reference_map(x, [](double v) { return std::exp(v); }), 0, 4 * tol));
    EXPECT_TRUE(all_close(log(x), reference_map(x, [](double v) { return std::log(v); }), tol, tol));
    EXPECT_TRUE(all_close(log1p(x), reference_map(x, [](double v) { return std::log1p(v); }), tol, tol));
    EXPECT_TRUE(all_close(sqrt(x), reference_map(x, [](double v) { return std::sqrt(v); }), tol, tol));
    EXPECT_TRUE(all_close(rsqrt(x), reference_map(x, [](double v) { return 1 / std::sqrt(v); }), tol, tol));
    EXPECT_TRUE(all_close(reciprocal(x), reference_map(x, [](double v) { return 1 / v; }), tol, tol));
    EXPECT_TRUE(all_close(tanh(x), reference_map(x, [](double v) { return std::tanh(v); }), tol, tol));
    EXPECT_TRUE(all_close(sigmoid(x), reference_map(x, [](double v) { return 1 / (1 + std::exp(-v)); }), tol, 4 * tol));
    EXPECT_TRUE(all_close(pow(x, 1.7), reference_map(x, [](double v) { return std::pow(v, 1.7); }), tol, tol));
    EXPECT_TRUE(all_close(square(x), reference_map(x, [](double v) { return v * v; }), tol, tol));
  }
}

TEST(Elementwise, FastExpEdgeCases) {
  Tensor x = from_vector<float>({0.f, -INFINITY, INFINITY, NAN, -100.f, 100.f, 88.f, -87.f, 1e-7f});
  std::vector<float> got = exp(x).to_vector<float>();
  EXPECT_EQ(got[0], 1.f);
  EXPECT_EQ(got[1], 0.f);  // masked softmax entries rely on exp(-inf) being exactly 0
  EXPECT_TRUE(std::isinf(got[2]));
  EXPECT_TRUE(std::isnan(got[3]));
  EXPECT_EQ(got[4], 0.f);
  EXPECT_TRUE(std::isinf(got[5]));
  EXPECT_NEAR(got[6] / std::exp(88.f), 1.f, 1e-6);
  EXPECT_NEAR(got[7] / std::exp(-87.f), 1.f, 1e-6);
  EXPECT_FLOAT_EQ(got[8], 1.f + 1e-7f);
}

// Every kind of float through the vectorised loop (each special value at several lanes and in the tail) and the
// scalar function. Under UBSan (the sanitizer build in CI) this also shows that no input reaches undefined
// behaviour: a NaN once reached a float-to-int conversion and a left shift of a negative value.
TEST(Elementwise, FastExpOfNanInfAndHugeValues) {
  const std::vector<float> special = {NAN, -NAN, INFINITY, -INFINITY, FLT_MAX, -FLT_MAX, 1e30f, -1e30f, 200.f,
                                      -200.f, 88.72283f, 88.7229f, -87.33654f, -87.3366f, FLT_MIN, -FLT_MIN,
                                      std::numeric_limits<float>::denorm_min(), -0.f, 1.f};
  std::vector<float> v;
  for (int rep = 0; rep < 4; ++rep) {
    v.insert(v.end(), special.begin(), special.end());
    v.push_back(0.5f * static_cast<float>(rep));  // shifts the values to other lanes next time round
  }
  const std::vector<float> got = exp(from_vector(v)).to_vector<float>();
  for (size_t i = 0; i < v.size(); ++i) {
    const float x = v[i], scalar = cpu::fast_expf(x);
    if (std::isnan(x)) {
      EXPECT_TRUE(std::isnan(got[i]) && std::isnan(scalar)) << "x = " << x;
      continue;
    }
    EXPECT_EQ(got[i], scalar) << "x = " << x;
    if (x > 88.72283f)
      EXPECT_EQ(got[i], INFINITY) << "x = " << x;
    else if (x < -87.33654f)
      EXPECT_EQ(got[i], 0.f) << "x = " << x;
    else
      EXPECT_NEAR(got[i] / std::exp(static_cast<double>(x)), 1.0, 3e-7) << "x = " << x;
  }
}

// 2^n for n = 128 has no exponent bits of its own; exp once returned +inf on [88.38, 88.72], where it is finite.
TEST(Elementwise, FastExpIsFiniteUpToTheTopOfTheFloatRange) {
  std::vector<float> v;
  for (float t = 88.3f; t <= 88.72283f; t += 1e-4f) v.push_back(t);
  v.push_back(88.72283f);
  const std::vector<float> got = exp(from_vector(v)).to_vector<float>();
  for (size_t i = 0; i < v.size(); ++i) {
    ASSERT_TRUE(std::isfinite(got[i])) << "x = " << v[i];
    ASSERT_NEAR(got[i] / std::exp(static_cast<double>(v[i])), 1.0, 3e-7) << "x = " << v[i];
  }
}

TEST(Elementwise, FastExpAccuracyOverRange) {
  std::vector<float> v;
  for (float t = -87.f; t < 88.f; t += 0.0137f) v.push_back(t);
  std::vector<float> got = exp(from_vector(v)).to_vector<float>();
  for (size_t i = 0; i < v.size(); ++i) {
    const double want = std::exp(static_cast<double>(v[i]));
    ASSERT_NEAR(got[i] / want, 1.0, 3e-7) << "x = " << v[i];
  }
}

TEST(Elementwise, SignAbsReluLeakyClamp) {
  Tensor x = from_vector<double>({-2, -0.5, 0, 0.5, 3});
  EXPECT_TRUE(values_equal(sign(x), {-1, -1, 0, 1, 1}));
  EXPECT_TRUE(values_equal(abs(x), {2, 0.5, 0, 0.5, 3}));
  EXPECT_TRUE(values_equal(relu(x), {0, 0, 0, 0.5, 3}));
  EXPECT_TRUE(values_equal(leaky_relu(x, 0.1), {-0.2, -0.05, 0, 0.5, 3}, 1e-15));
  EXPECT_TRUE(values_equal(clamp(x, -1, 1), {-1, -0.5, 0, 0.5, 1}));
  EXPECT_TRUE(values_equal(clamp_min(x, 0.25), {0.25, 0.25, 0.25, 0.5, 3}));
  EXPECT_TRUE(values_equal(clamp_max(x, 0.25), {-2, -0.5, 0, 0.25, 0.25}));
  EXPECT_TRUE(values_equal(neg(x), {2, 0.5, 0, -0.5, -3}));
}

TEST(Elementwise, BinaryBroadcastsLikeNumPy) {
  Tensor a = from_vector<double>({1, 2, 3}, {3, 1});
  Tensor b = from_vector<double>({10, 20}, {1, 2});
  EXPECT_EQ(add(a, b).sizes(), (Shape{3, 2}));
  EXPECT_TRUE(values_equal(add(a, b), {11, 21, 12, 22, 13, 23}));
  EXPECT_TRUE(values_equal(sub(a, b), {-9, -19, -8, -18, -7, -17}));
  EXPECT_TRUE(values_equal(mul(a, b), {10, 20, 20, 40, 30, 60}));
  EXPECT_TRUE(values_equal(div(b, a), {10, 20, 5, 10, 10.0 / 3, 20.0 / 3}, 1e-14));
  EXPECT_TRUE(values_equal(maximum(a, from_vector<double>({2}, {1})), {2, 2, 3}));
  EXPECT_TRUE(values_equal(minimum(a, from_vector<double>({2}, {1})), {1, 2, 2}));
  // A 0-d operand against a 3-d one.
  Tensor c = random_tensor({2, 3, 4}, DType::Float32, 3);
  EXPECT_TRUE(all_close(add(c, scalar_tensor(1.5)), add(c, 1.5)));
}

TEST(Elementwise, NonContiguousInputs) {
  Tensor a = random_tensor({64, 48}, DType::Float32, 4);
  Tensor b = random_tensor({48, 64}, DType::Float32, 5);
  Tensor at = kernels::transpose(b, 0, 1);  // [64, 48], strides (1, 64)
  EXPECT_FALSE(at.is_contiguous());
  EXPECT_TRUE(all_close(add(a, at), add(a, kernels::contiguous(at)), 0, 0));
  Tensor every_other = kernels::slice(a, 1, 0, 48, 2);
  EXPECT_TRUE(all_close(exp(every_other), exp(kernels::contiguous(every_other)), 0, 0));
}

TEST(Elementwise, LargeTensorsSplitAcrossThreadsGiveTheSameResult) {
  Tensor a = random_tensor({1000, 333}, DType::Float32, 6);
  Tensor b = random_tensor({333}, DType::Float32, 7);
  std::vector<float> got = add(a, b).to_vector<float>();
  std::vector<float> va = a.to_vector<float>(), vb = b.to_vector<float>();
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], va[i] + vb[i % 333]) << i;
}

TEST(Elementwise, EmptyTensors) {
  Tensor e = zeros({0, 3});
  EXPECT_EQ(add(e, ones({3})).sizes(), (Shape{0, 3}));
  EXPECT_EQ(exp(e).numel(), 0);
}

TEST(Elementwise, ComparisonsAndLogic) {
  Tensor a = from_vector<double>({1, 2, 3});
  Tensor b = from_vector<double>({3, 2, 1});
  EXPECT_EQ(eq(a, b).dtype(), DType::Bool);
  EXPECT_TRUE(values_equal(eq(a, b), {0, 1, 0}));
  EXPECT_TRUE(values_equal(ne(a, b), {1, 0, 1}));
  EXPECT_TRUE(values_equal(lt(a, b), {1, 0, 0}));
  EXPECT_TRUE(values_equal(le(a, b), {1, 1, 0}));
  EXPECT_TRUE(values_equal(gt(a, b), {0, 0, 1}));
  EXPECT_TRUE(values_equal(ge(a, b), {0, 1, 1}));
  EXPECT_TRUE(values_equal(gt(a, 1.5), {0, 1, 1}));
  Tensor p = gt(a, 1.5), q = lt(a, 2.5);
  EXPECT_TRUE(values_equal(logical_and(p, q), {0, 1, 0}));
  EXPECT_TRUE(values_equal(logical_or(p, q), {1, 1, 1}));
  EXPECT_TRUE(values_equal(logical_not(p), {1, 0, 0}));
}

TEST(Elementwise, WhereAndMaskedFill) {
  Tensor c = from_vector<bool>({true, false, true});
  Tensor a = from_vector<double>({1, 2, 3});
  EXPECT_TRUE(values_equal(where(c, a, full({1}, -1.0, DType::Float64)), {1, -1, 3}));
  Tensor m = from_vector<bool>({false, true}, {2, 1});
  Tensor x = zeros({2, 3}, DType::Float64);
  EXPECT_TRUE(values_equal(masked_fill(x, m, -INFINITY), {0, 0, 0, -INFINITY, -INFINITY, -INFINITY}));
}

TEST(Elementwise, IntegerArithmetic) {
  Tensor a = from_vector<int64_t>({1, -2, 3});
  EXPECT_TRUE(values_equal(add(a, a), {2, -4, 6}));
  EXPECT_TRUE(values_equal(mul(a, 3.0), {3, -6, 9}));
  EXPECT_TRUE(values_equal(abs(a), {1, 2, 3}));
}

TEST(Elementwise, CastAndCopy) {
  Tensor x = from_vector<double>({1.5, -2.5, 0});
  EXPECT_TRUE(values_equal(to(x, DType::Int32), {1, -2, 0}));
  EXPECT_TRUE(values_equal(to(x, DType::Bool), {1, 1, 0}));
  Tensor dst = zeros({2, 3}, DType::Float32);
  kernels::copy_(dst, x);  // broadcast along rows, converted to float32
  EXPECT_TRUE(values_equal(dst, {1.5, -2.5, 0, 1.5, -2.5, 0}));
}

const DType kAllDtypes[] = {DType::Float32, DType::Float64, DType::Int32, DType::Int64, DType::UInt8, DType::Bool};

// The message of the rematch::Error f throws ("" when it does not throw).
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// The refusal that the Accepts column of the table (tensor/elementwise_ops.h) promises for an op named `name` and
// a nonempty `x`; "" when the op takes x's dtype.
std::string refusal(const char* name, kernels::Accepts accepts, const Tensor& x, const char* bool_refusal) {
  const std::string dt = dtype_name(x.dtype());
  if (kernels::accepts_dtype(accepts, x.dtype())) return "";
  if (accepts == kernels::Accepts::Bool) return std::string(name) + bool_refusal + x.describe();
  if (x.dtype() == DType::Bool)
    return std::string(name) + ": dtype bool is not supported (expected a numeric dtype (not bool))";
  if (accepts == kernels::Accepts::Division)
    return std::string(name) + ": integer division is not supported (" + dt + "); cast to a floating dtype first";
  return std::string(name) + ": dtype " + dt + " is not supported";
}

template <typename Op, size_t N> void expect_unique_names(const Op (&ops)[N]) {
  std::set<std::string> names;
  for (Op op : ops) {
    EXPECT_STREQ(kernels::op_name(op), kernels::op_info(op).name);
    EXPECT_FALSE(std::string(kernels::op_name(op)).empty());
    EXPECT_TRUE(names.insert(kernels::op_name(op)).second) << kernels::op_name(op);
  }
}

// Every op of the table, in every dtype: the result dtype of its row, or the refusal of its row (the same
// message whichever backend would have run it). With nothing to compute only the bool-only ops refuse.
TEST(Elementwise, EveryOpOfTheTableTakesItsDtypesAndRefusesTheOthers) {
  expect_unique_names(kernels::kUnaryOps);
  expect_unique_names(kernels::kScalarOps);
  expect_unique_names(kernels::kBinaryOps);
  EXPECT_EQ(std::size(kernels::kUnaryOps), 18u);  // lgamma, digamma, trigamma: DECL (docs/methods/decl.md §3)
  EXPECT_EQ(std::size(kernels::kScalarOps), 15u);  // polygamma: the derivatives of trigamma (autograd)
  EXPECT_EQ(std::size(kernels::kBinaryOps), 14u);
  for (DType dt : kAllDtypes) {
    SCOPED_TRACE(dtype_name(dt));
    const Tensor x = kernels::cast(from_vector<double>({2, 0, 1}), dt), empty_x = zeros({0, 2}, dt);
    auto check = [&](const kernels::OpInfo& info, const char* bool_refusal, auto run) {
      SCOPED_TRACE(info.name);
      const std::string want = refusal(info.name, info.accepts, x, bool_refusal);
      EXPECT_EQ(error_of([&] { run(x); }), want);
      const bool refuses_empty = !want.empty() && info.accepts == kernels::Accepts::Bool;
      EXPECT_EQ(error_of([&] { run(empty_x); }).empty(), !refuses_empty);
      if (!want.empty()) return;
      const DType out = info.result == kernels::Result::Bool ? DType::Bool : dt;
      EXPECT_EQ(run(x).dtype(), out);
      EXPECT_EQ(run(empty_x).dtype(), out);
      EXPECT_EQ(run(empty_x).sizes(), (Shape{0, 2}));
    };
    for (kernels::UnaryOp op : kernels::kUnaryOps)
      check(kernels::op_info(op), ": expected a bool tensor, got ",
            [&](const Tensor& t) { return kernels::unary(op, t); });
    for (kernels::ScalarOp op : kernels::kScalarOps)
      check(kernels::op_info(op), ": expected a bool tensor, got ",
            [&](const Tensor& t) { return kernels::scalar_op(op, t, 2.0); });
    for (kernels::BinaryOp op : kernels::kBinaryOps)
      check(kernels::op_info(op), ": expected bool tensors, got ",
            [&](const Tensor& t) { return kernels::binary(op, t, t); });
  }
}

}  // namespace
}  // namespace rematch
