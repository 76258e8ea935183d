// nn/init.h: ranges and moments of uniform_/normal_, constant_/zeros_, Xavier bounds (2-D and with a
// receptive field), orthogonal_ (orthonormal rows or columns for square, tall, wide and 4-D tensors, and the
// sign convention of torch.nn.init.orthogonal_: R = Qᵀ·G upper triangular with a positive diagonal), in-place
// writes without graph, reproducibility from a seed, the Linear and GRU defaults, and errors.
#include <algorithm>
#include <cmath>

#include "nn/nn.h"
#include "test_util.h"

namespace rematch {
namespace {

struct Moments {
  double min, max, mean, sd;
};

Moments moments(const Tensor& t) {
  std::vector<double> v = t.to_vector<double>();
  Moments m{v[0], v[0], 0, 0};
  double sq = 0;
  for (double e : v) m.min = std::min(m.min, e), m.max = std::max(m.max, e), m.mean += e, sq += e * e;
  m.mean /= static_cast<double>(v.size());
  m.sd = std::sqrt(sq / static_cast<double>(v.size()) - m.mean * m.mean);
  return m;
}

TEST(Init, UniformRangeAndMoments) {
  Generator gen(1);
  Tensor t = zeros({100, 100});
  nn::uniform_(t, -0.5, 1.5, &gen);
  const Moments m = moments(t);
  EXPECT_GE(m.min, -0.5);
  EXPECT_LT(m.max, 1.5);
  // 10,000 draws of U(-0.5, 1.5): mean 0.5 and sd 2/√12 ≈ 0.577, standard errors ~0.006.
  EXPECT_NEAR(m.mean, 0.5, 0.03);
  EXPECT_NEAR(m.sd, 2 / std::sqrt(12.0), 0.02);
}

TEST(Init, NormalMoments) {
  Generator gen(2);
  Tensor t = zeros({100, 100}, DType::Float64);
  nn::normal_(t, 3, 0.5, &gen);
  const Moments m = moments(t);
  EXPECT_NEAR(m.mean, 3, 0.02);
  EXPECT_NEAR(m.sd, 0.5, 0.02);
}

TEST(Init, ConstantAndZeros) {
  Tensor t = ones({2, 3}, DType::Float64);
  nn::constant_(t, 0.25);
  EXPECT_TRUE(test::values_equal(t, std::vector<double>(6, 0.25)));
  nn::zeros_(t);
  EXPECT_TRUE(test::values_equal(t, std::vector<double>(6, 0.0)));
}

TEST(Init, WritesInPlaceWithoutRecordingAndReproducesFromASeed) {
  nn::Linear layer(5, 4);
  const Tensor w = layer.weight();
  const void* data = w.raw_data();
  Generator a(42), b(42);
  nn::xavier_uniform_(w, 1, &a);
  EXPECT_EQ(w.raw_data(), data);
  EXPECT_TRUE(w.is_leaf());
  EXPECT_TRUE(w.requires_grad());
  Tensor other = zeros({4, 5});
  nn::xavier_uniform_(other, 1, &b);
  EXPECT_TRUE(test::all_close(w, other, 0, 0));
}

TEST(Init, XavierUniformBounds) {
  Generator gen(3);
  Tensor t = zeros({30, 20});
  nn::xavier_uniform_(t, 2.0, &gen);
  const double a = 2.0 * std::sqrt(6.0 / 50.0);
  Moments m = moments(t);
  EXPECT_GE(m.min, -a);
  EXPECT_LT(m.max, a);
  EXPECT_GT(m.max, 0.9 * a);
  // [8, 6, 5]: receptive field 5, fan_in 30, fan_out 40.
  Tensor conv = zeros({8, 6, 5}, DType::Float64);
  nn::xavier_uniform_(conv, 1, &gen);
  const double ac = std::sqrt(6.0 / 70.0);
  m = moments(conv);
  EXPECT_GE(m.min, -ac);
  EXPECT_LT(m.max, ac);
  EXPECT_GT(m.max, 0.85 * ac);
}

// max |A − I| for A = rows·rowsᵀ (by_rows) or colsᵀ·cols of the [r, c] matrix t.
double orthonormal_error(const Tensor& t, double gain, bool by_rows) {
  Tensor m = kernels::cast(reshape(t, {t.size(0), -1}), DType::Float64);
  m = div(m, gain);
  Tensor gram = by_rows ? matmul(m, transpose(m, 0, 1)) : matmul(transpose(m, 0, 1), m);
  return amax(abs(sub(gram, eye(gram.size(0), -1, DType::Float64)))).item<double>();
}

TEST(Init, OrthogonalRowsOrColumnsAreOrthonormal) {
  Generator gen(4);
  Tensor square = zeros({6, 6}, DType::Float64), tall = zeros({8, 3}, DType::Float64),
         wide = zeros({3, 8}), four_d = zeros({4, 2, 1, 3});
  nn::orthogonal_(square, 1, &gen);
  nn::orthogonal_(tall, 1, &gen);
  nn::orthogonal_(wide, 1.5, &gen);
  nn::orthogonal_(four_d, 1, &gen);
  EXPECT_LT(orthonormal_error(square, 1, true), 1e-13);
  EXPECT_LT(orthonormal_error(square, 1, false), 1e-13);
  EXPECT_LT(orthonormal_error(tall, 1, false), 1e-13);
  EXPECT_LT(orthonormal_error(wide, 1.5, true), 1e-6);  // float32 storage
  EXPECT_LT(orthonormal_error(four_d, 1, true), 1e-6);
}

// With G the Gaussian matrix orthogonal_ drew (same seed), torch's result Q satisfies G = Q·R with R upper
// triangular and diag(R) > 0 — that pins Q down uniquely, so it is the check against torch's convention.
// Wide tensors factor Gᵀ instead, so R = Q·Gᵀ there.
void expect_torch_sign_convention(const Shape& shape) {
  Generator gen(99), replay(99);
  Tensor q = zeros(shape, DType::Float64);
  nn::orthogonal_(q, 1, &gen);
  const int64_t rows = shape[0], cols = q.numel() / rows;
  Tensor g = randn({rows, cols}, DType::Float64, Device::cpu(), &replay);
  Tensor q2 = reshape(q, {rows, cols});
  Tensor r = rows >= cols ? matmul(transpose(q2, 0, 1), g) : matmul(q2, transpose(g, 0, 1));
  const int64_t n = std::min(rows, cols);
  std::vector<double> rv = r.to_vector<double>();
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_GT(rv[i * n + i], 0) << shape_str(shape) << " diagonal " << i;
    for (int64_t j = 0; j < i; ++j)
      EXPECT_NEAR(rv[i * n + j], 0, 1e-12) << shape_str(shape) << " (" << i << "," << j << ")";
  }
}

TEST(Init, OrthogonalFollowsTorchSignConvention) {
  expect_torch_sign_convention({5, 5});
  expect_torch_sign_convention({7, 4});
  expect_torch_sign_convention({3, 7});
}

TEST(Init, DefaultLinearInit) {
  nn::Linear layer(25, 10, true, DType::Float64);
  nn::zeros_(layer.weight());
  nn::zeros_(layer.bias());
  Generator gen(5);
  nn::default_linear_init(layer, &gen);
  for (const Tensor& p : {layer.weight(), layer.bias()}) {
    const Moments m = moments(p);
    EXPECT_GE(m.min, -0.2);
    EXPECT_LT(m.max, 0.2);
    EXPECT_GT(m.max - m.min, 0.2);
  }
}

TEST(Init, DefaultGruInitCoversEveryParameterRecursively) {
  nn::Sequential seq({std::make_shared<nn::Linear>(8, 8), std::make_shared<nn::Linear>(8, 3)});
  Generator gen(6);
  nn::default_gru_init(seq, 16, &gen);
  for (const Tensor& p : seq.parameters()) {
    const Moments m = moments(p);
    EXPECT_GE(m.min, -0.25);
    EXPECT_LT(m.max, 0.25);
  }
  EXPECT_GT(moments(seq[0]->parameter("weight")).max, 0.2);
}

TEST(Init, Errors) {
  EXPECT_THROWS_WITH(nn::xavier_uniform_(zeros({4}), 1), "xavier_uniform_", "at least 2 dims", "[4]");
  EXPECT_THROWS_WITH(nn::orthogonal_(zeros({4}), 1), "orthogonal_", "[4]");
  EXPECT_THROWS_WITH(nn::uniform_(zeros({2}, DType::Int64), 0, 1), "uniform_", "floating", "int64");
  EXPECT_THROWS_WITH(nn::uniform_(zeros({2}), 1, 0), "uniform_", "above");
  EXPECT_THROWS_WITH(nn::default_gru_init(*std::make_shared<nn::Linear>(2, 2), 0), "default_gru_init", "positive");
}

}  // namespace
}  // namespace rematch
