// nn::Dropout and nn::dropout: identity in eval mode and for p = 0, inverted scaling and keep rate in
// training, masks that come from the Philox generator (given or default) exactly, the float64 gradient
// through a fixed mask, p = 1, and bad p.
#include "nn/nn.h"
#include "test_util.h"

namespace rematch {
namespace {

using nn::Dropout;
using test::random_tensor;

TEST(Dropout, EvalModeAndZeroPAreIdentity) {
  Tensor x = random_tensor({4, 5}, DType::Float32, 1);
  Dropout drop(0.4);
  drop.eval();
  EXPECT_TRUE(drop(x).same(x));
  EXPECT_TRUE(nn::dropout(x, 0.0, true).same(x));
}

TEST(Dropout, TrainingKeepsWithProbabilityOneMinusPAndScales) {
  const double p = 0.4;
  Tensor x = random_tensor({100, 100}, DType::Float64, 2, 0.5, 1.5);
  Generator gen(5);
  Dropout drop(p, &gen);
  std::vector<double> xv = x.to_vector<double>(), yv = drop(x).to_vector<double>();
  int64_t kept = 0;
  for (size_t i = 0; i < xv.size(); ++i) {
    if (yv[i] == 0) continue;
    ++kept;
    EXPECT_NEAR(yv[i], xv[i] / (1 - p), 1e-15);
  }
  // 10,000 Bernoulli(0.6) draws: standard error 0.005.
  EXPECT_NEAR(static_cast<double>(kept) / 1e4, 1 - p, 0.02);
}

TEST(Dropout, MaskIsThePhiloxBernoulliOfTheGivenGenerator) {
  Tensor x = ones({6, 7}, DType::Float32);
  Generator gen(77), reference(77);
  Tensor y = nn::dropout(x, 0.25, true, &gen);
  Tensor keep = bernoulli({6, 7}, 0.75, Device::cpu(), &reference);
  EXPECT_TRUE(test::all_close(y, mul(kernels::cast(keep, DType::Float32), 1 / 0.75), 0, 1e-7));
  EXPECT_EQ(gen.offset(), reference.offset());  // one counter per element, as bernoulli claims
}

TEST(Dropout, DefaultGeneratorWhenNoneIsGiven) {
  Tensor x = ones({3, 8}, DType::Float64);
  manual_seed(123);
  Tensor y = Dropout(0.5)(x);
  Generator same(123);
  EXPECT_TRUE(test::all_close(y, nn::dropout(x, 0.5, true, &same), 0, 0));
}

TEST(DropoutGrad, ThroughAFixedMask) {
  // A fresh generator per evaluation keeps the mask fixed across gradcheck's calls.
  EXPECT_GRADCHECK(
      [](const TensorList& t) {
        Generator gen(9);
        return nn::dropout(t[0], 0.3, true, &gen);
      },
      {random_tensor({3, 4}, DType::Float64, 3)});
}

TEST(Dropout, POneDropsEverythingAndPassesZeroGradient) {
  Tensor x = random_tensor({2, 3}, DType::Float64, 4);
  x.requires_grad_(true);
  Tensor y = nn::dropout(x, 1.0, true);
  EXPECT_TRUE(test::values_equal(y, std::vector<double>(6, 0.0)));
  backward(sum(y));
  EXPECT_TRUE(test::values_equal(x.grad(), std::vector<double>(6, 0.0)));
}

TEST(Dropout, RejectsPOutsideZeroOne) {
  EXPECT_THROWS_WITH(Dropout(1.5), "Dropout", "[0, 1]", "1.5");
  EXPECT_THROWS_WITH(nn::dropout(zeros({2}), -0.1, true), "Dropout", "[0, 1]");
  EXPECT_THROWS_WITH(nn::dropout(zeros({2}, DType::Int64), 0.5, true), "Dropout", "floating", "int64");
}

}  // namespace
}  // namespace rematch
