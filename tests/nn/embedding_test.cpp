// nn::Embedding: shape and N(0, 1) initialisation, lookup of int32/int64 ids of any shape, the float64
// gradient w.r.t. the table (repeated ids accumulate), PyTorch's nn.Embedding (tests/fixtures/nn_layers/
// embedding) in float64 and float32, and the errors that name the module.
#include <cmath>

#include "nn/nn.h"
#include "nn_layers_fixture.h"

namespace rematch {
namespace {

using nn::Embedding;
using test::nn_fixture;

TEST(Embedding, DefaultInitIsStandardNormal) {
  Generator gen(3);
  Embedding table(200, 50, DType::Float32, &gen);
  EXPECT_EQ(table.weight().sizes(), (Shape{200, 50}));
  EXPECT_EQ(table.state_dict()[0].first, "weight");
  std::vector<double> v = table.weight().to_vector<double>();
  double m = 0, sq = 0;
  for (double e : v) m += e, sq += e * e;
  m /= static_cast<double>(v.size());
  const double sd = std::sqrt(sq / static_cast<double>(v.size()) - m * m);
  // 10,000 draws: the standard errors of the mean and the std are 0.01 and 0.007.
  EXPECT_NEAR(m, 0.0, 0.04);
  EXPECT_NEAR(sd, 1.0, 0.03);
}

TEST(Embedding, ForwardGathersRowsForAnyIdShape) {
  Embedding table(5, 3, DType::Float64);
  Tensor ids = from_vector<int32_t>({4, 0, 4, 2, 1, 3}, {2, 3});
  Tensor y = table(ids);
  EXPECT_EQ(y.sizes(), (Shape{2, 3, 3}));
  EXPECT_TRUE(test::all_close(y, embedding(table.weight(), ids), 0, 0));
  std::vector<double> w = table.weight().to_vector<double>(), got = y.to_vector<double>();
  const int idv[6] = {4, 0, 4, 2, 1, 3};
  for (int i = 0; i < 6; ++i)
    for (int d = 0; d < 3; ++d) EXPECT_EQ(got[i * 3 + d], w[idv[i] * 3 + d]);
}

TEST(EmbeddingGrad, TableWithRepeatedIds) {
  const Tensor ids = from_vector<int64_t>({1, 3, 1, 0, 1, 2}, {3, 2});
  EXPECT_GRADCHECK([&](const TensorList& t) { return embedding(t[0], ids); },
                   {test::random_tensor({4, 3}, DType::Float64, 1)});
}

TEST(EmbeddingGrad, ModuleSendsGradientToItsWeight) {
  Embedding table(4, 2, DType::Float64);
  backward(sum(table(from_vector<int64_t>({3, 3, 0}))));
  // Row 3 was read twice, row 0 once, rows 1 and 2 never.
  EXPECT_TRUE(test::values_equal(table.weight().grad(), {1, 1, 0, 0, 0, 0, 2, 2}));
}

void check_golden(DType dtype, double atol, double rtol) {
  Embedding table(6, 3, dtype);
  table.load_state_dict({{"weight", nn_fixture("embedding", "weight")}});
  Tensor y = table(nn_fixture("embedding", "ids"));
  EXPECT_TRUE(test::all_close(y, nn_fixture("embedding", "y"), atol, rtol));
  backward(sum(mul(y, nn_fixture("embedding", "r", dtype))));
  EXPECT_TRUE(test::all_close(table.weight().grad(), nn_fixture("embedding", "grad_weight"), atol, rtol));
}

TEST(EmbeddingGolden, MatchesTorchFloat64) { check_golden(DType::Float64, 1e-15, 1e-15); }

// float32: the lookup copies rounded values (relative error ≤ 2^-24) and a gradient row sums at most 3 of
// them, so a relative 1e-6 (plus 1e-7 absolute for near-zero sums) bounds it.
TEST(EmbeddingGolden, MatchesTorchFloat32) { check_golden(DType::Float32, 1e-7, 1e-6); }

TEST(Embedding, ErrorsNameTheModule) {
  Embedding table(6, 3);
  EXPECT_THROWS_WITH(table(zeros({2})), "Embedding(6, 3)", "int32 or int64", "float32[2]");
  EXPECT_THROWS_WITH(table(from_vector<int64_t>({1, 6})), "Embedding(6, 3)", "6", "out of range");
}

}  // namespace
}  // namespace rematch
