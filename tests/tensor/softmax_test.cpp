// kernels::softmax / log_softmax / their backwards / lp_normalize against naive per-lane loops in double:
// last dim (row path), dim 0 and middle dims (lane-block path, including partial blocks), non-contiguous
// inputs, sizes large enough to run threaded, and the IEEE corner cases.
#include <cmath>
#include <functional>
#include <limits>

#include "test_util.h"

namespace rematch {
namespace {

using test::all_close;
using test::random_tensor;
using test::values_equal;

// Applies f to every lane along dim (in double, on the logical values) and returns the result.
Tensor per_lane(const Tensor& x, int64_t dim, const std::function<void(std::vector<double>&)>& f) {
  Tensor xc = kernels::contiguous(kernels::cast(x, DType::Float64));
  std::vector<double> v = xc.to_vector<double>();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (d < dim) outer *= x.size(d);
    if (d > dim) inner *= x.size(d);
  }
  const int64_t n = x.size(dim);
  std::vector<double> lane(static_cast<size_t>(n));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t j = 0; j < n; ++j) lane[j] = v[(o * n + j) * inner + i];
      f(lane);
      for (int64_t j = 0; j < n; ++j) v[(o * n + j) * inner + i] = lane[j];
    }
  return from_vector(v, x.sizes());
}

void softmax_ref(std::vector<double>& l) {
  double m = -INFINITY, s = 0;
  for (double v : l) m = std::max(m, v);
  for (double& v : l) s += (v = std::exp(v - m));
  for (double& v : l) v /= s;
}

void log_softmax_ref(std::vector<double>& l) {
  double m = -INFINITY, s = 0;
  for (double v : l) m = std::max(m, v);
  for (double v : l) s += std::exp(v - m);
  for (double& v : l) v -= m + std::log(s);
}

double tol(DType t) { return t == DType::Float32 ? 2e-6 : 1e-12; }

// Shapes and dims covering the row path, the lane-block path with a partial block (inner 70 > 64 lanes),
// a middle dim, and sizes above the threading threshold.
struct Case {
  Shape shape;
  int64_t dim;
};
const std::vector<Case> kCases = {{{4, 7}, -1}, {{4, 7}, 0},       {{3, 5, 70}, 1},
                                  {{2, 3, 4}, 1}, {{300, 130}, 1}, {{300, 130}, 0}};

TEST(Softmax, HandValuesLastDim) {
  Tensor y = kernels::softmax(from_vector<double>({0, std::log(3.0), 5, 5}, {2, 2}), -1);
  EXPECT_TRUE(values_equal(y, {0.25, 0.75, 0.5, 0.5}, 1e-15));
}

TEST(Softmax, MatchesReferenceAllPathsBothDtypes) {
  for (DType dt : {DType::Float32, DType::Float64})
    for (const Case& c : kCases) {
      Tensor x = random_tensor(c.shape, dt, 1, -5, 5);
      const int64_t d = wrap_dim(c.dim, x.dim(), "test");
      EXPECT_TRUE(all_close(kernels::softmax(x, c.dim), per_lane(x, d, softmax_ref), tol(dt), tol(dt)))
          << shape_str(c.shape) << " dim " << c.dim;
      EXPECT_TRUE(all_close(kernels::log_softmax(x, c.dim), per_lane(x, d, log_softmax_ref), 4 * tol(dt), tol(dt)))
          << shape_str(c.shape) << " dim " << c.dim;
    }
}

TEST(Softmax, TransposedInput) {
  Tensor x = kernels::transpose(random_tensor({6, 9}, DType::Float32, 2, -3, 3), 0, 1);
  ASSERT_FALSE(x.is_contiguous());
  EXPECT_TRUE(all_close(kernels::softmax(x, 1), per_lane(x, 1, softmax_ref), 2e-6, 2e-6));
  EXPECT_TRUE(all_close(kernels::log_softmax(x, 0), per_lane(x, 0, log_softmax_ref), 1e-5, 2e-6));
}

TEST(Softmax, LargeLogitsDoNotOverflow) {
  Tensor x = from_vector<float>({1000, 1001, -1000, 0}, {1, 4});
  EXPECT_TRUE(all_close(kernels::softmax(x, 1), per_lane(x, 1, softmax_ref), 1e-6, 1e-6));
  EXPECT_TRUE(all_close(kernels::log_softmax(x, 1), per_lane(x, 1, log_softmax_ref), 1e-4, 1e-6));
}

TEST(Softmax, NegInfEntriesGetZeroAndAllNegInfRowIsNaN) {
  // Documented choice, as in PyTorch: a row of only -inf has no softmax and gives NaN.
  const float inf = std::numeric_limits<float>::infinity();
  Tensor x = from_vector<float>({-inf, 0, -inf, -inf}, {2, 2});
  EXPECT_TRUE(values_equal(kernels::softmax(x, 1), {0, 1, NAN, NAN}));
  EXPECT_TRUE(values_equal(kernels::log_softmax(x, 1), {-INFINITY, 0, NAN, NAN}));
  // Over dim 0 (the lane-block path) column 0 is the all -inf one.
  EXPECT_TRUE(values_equal(kernels::softmax(x, 0), {NAN, 1, NAN, 0}));
}

TEST(Softmax, NaNMakesTheRowNaN) {
  Tensor x = from_vector<double>({1, NAN, 2, 3, 4, 5}, {2, 3});
  std::vector<double> y = kernels::softmax(x, 1).to_vector<double>();
  for (int j = 0; j < 3; ++j) EXPECT_TRUE(std::isnan(y[j]));
  for (int j = 3; j < 6; ++j) EXPECT_FALSE(std::isnan(y[j]));
}

TEST(Softmax, ZeroDimAndEmpty) {
  EXPECT_TRUE(values_equal(kernels::softmax(scalar_tensor(3.0), 0), {1}));
  EXPECT_EQ(kernels::softmax(zeros({0, 3}), 1).sizes(), (Shape{0, 3}));
}

// Row sums broadcast back over the row, in double.
Tensor lane_sums(const Tensor& x, int64_t dim) {
  return per_lane(x, dim, [](std::vector<double>& l) {
    double s = 0;
    for (double v : l) s += v;
    for (double& v : l) v = s;
  });
}

TEST(SoftmaxBackward, MatchesFormulaAllPaths) {
  using kernels::BinaryOp;
  auto f64 = [](const Tensor& t) { return kernels::cast(t, DType::Float64); };
  for (DType dt : {DType::Float32, DType::Float64})
    for (const Case& c : kCases) {
      const int64_t d = wrap_dim(c.dim, static_cast<int64_t>(c.shape.size()), "test");
      Tensor x = random_tensor(c.shape, dt, 3, -2, 2), g = random_tensor(c.shape, dt, 4);
      Tensor y = kernels::softmax(x, d), ly = kernels::log_softmax(x, d);
      // y * (g - sum(g * y)) and g - exp(ly) * sum(g), in double from the kernels' own forward outputs.
      Tensor gd = f64(g), yd = f64(y);
      Tensor want = kernels::binary(
          BinaryOp::Mul, yd, kernels::binary(BinaryOp::Sub, gd, lane_sums(kernels::binary(BinaryOp::Mul, gd, yd), d)));
      EXPECT_TRUE(all_close(kernels::softmax_backward(g, y, d), want, 1e-6, 1e-4)) << shape_str(c.shape);
      Tensor lwant = kernels::binary(
          BinaryOp::Sub, gd,
          kernels::binary(BinaryOp::Mul, kernels::unary(kernels::UnaryOp::Exp, f64(ly)), lane_sums(gd, d)));
      EXPECT_TRUE(all_close(kernels::log_softmax_backward(g, ly, d), lwant, 1e-5, 1e-4)) << shape_str(c.shape);
    }
}

TEST(SoftmaxBackward, NonContiguousGradient) {
  Tensor y = kernels::softmax(random_tensor({5, 4}, DType::Float64, 5), 1);
  Tensor g = kernels::transpose(random_tensor({4, 5}, DType::Float64, 6), 0, 1);
  EXPECT_TRUE(all_close(kernels::softmax_backward(g, y, 1), kernels::softmax_backward(kernels::contiguous(g), y, 1)));
}

TEST(SoftmaxErrors, DtypeAndShape) {
  EXPECT_THROWS_WITH(kernels::softmax(zeros({2}, DType::Int64), 0), "softmax", "int64");
  EXPECT_THROWS_WITH(kernels::softmax(zeros({2, 2}), 2), "softmax", "dim 2");
  EXPECT_THROWS_WITH(kernels::softmax_backward(zeros({2, 3}), zeros({3, 2}), 1), "softmax_backward",
                     "[2, 3]", "[3, 2]");
}

TEST(LpNormalize, MatchesReferenceAllPaths) {
  const double eps = 1e-3;
  for (DType dt : {DType::Float32, DType::Float64})
    for (const Case& c : kCases) {
      const int64_t d = wrap_dim(c.dim, static_cast<int64_t>(c.shape.size()), "test");
      Tensor x = random_tensor(c.shape, dt, 7);
      for (int p : {1, 2}) {
        Tensor want = per_lane(x, d, [p, eps](std::vector<double>& l) {
          double s = 0;
          for (double v : l) s += p == 1 ? std::fabs(v) : v * v;
          const double den = (p == 1 ? s : std::sqrt(s)) + eps;
          for (double& v : l) v /= den;
        });
        EXPECT_TRUE(all_close(kernels::lp_normalize(x, c.dim, p, eps), want, 1e-6, 1e-5))
            << shape_str(c.shape) << " dim " << c.dim << " p " << p;
      }
    }
}

TEST(LpNormalize, HandValuesAndZeroRow) {
  Tensor x = from_vector<double>({3, 4, 0, 0}, {2, 2});
  EXPECT_TRUE(values_equal(kernels::lp_normalize(x, 1, 2, 0.0), {0.6, 0.8, NAN, NAN}, 1e-15));
  EXPECT_TRUE(values_equal(kernels::lp_normalize(x, 1, 2, 1e-8), {3 / (5 + 1e-8), 4 / (5 + 1e-8), 0, 0}, 1e-15));
  EXPECT_TRUE(values_equal(kernels::lp_normalize(x, 1, 1, 1e-8), {3 / (7 + 1e-8), 4 / (7 + 1e-8), 0, 0}, 1e-15));
}

TEST(LpNormalizeErrors, BadPAndDtype) {
  EXPECT_THROWS_WITH(kernels::lp_normalize(zeros({2}), 0, 3, 1e-8), "lp_normalize", "p must be 1 or 2");
  EXPECT_THROWS_WITH(kernels::lp_normalize(zeros({2}, DType::Int32), 0, 2, 1e-8), "lp_normalize", "int32");
}

}  // namespace
}  // namespace rematch
