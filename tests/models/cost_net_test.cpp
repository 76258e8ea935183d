// L2RM's cost net f_c (models/cost_net.h, docs/methods/l2rm.md §1.4): state-dict names, the initial identity
// f_c(S) = max(1 − S, 0) (docs/methods/l2rm.md §1.11), the row-wise linear map after a weight change, the
// gradient of the self-supervised loss Σ π^sup ⊙ f_c(S), a float64 gradcheck, and errors.
#include "models/cost_net.h"
#include "test_util.h"

namespace rematch {
namespace {

using models::CostNet;
using test::all_close;
using test::random_tensor;

TEST(CostNet, StateDictNamesAndInitialWeights) {
  CostNet net(4);
  const nn::StateDict sd = net.state_dict();
  ASSERT_EQ(sd.size(), 2u);
  EXPECT_EQ(sd[0].first, "fc.weight");
  EXPECT_EQ(sd[1].first, "fc.bias");
  EXPECT_TRUE(all_close(sd[0].second, kernels::scalar_op(kernels::ScalarOp::Mul, eye(4), -1.0), 0, 0));
  EXPECT_TRUE(test::values_equal(sd[1].second, {1, 1, 1, 1}));
  EXPECT_EQ(CostNet().parameter_count(), 128 * 128 + 128);  // the official batch size 128
}

TEST(CostNet, InitiallyOneMinusSimilarityClampedAtZero) {
  // docs/methods/l2rm.md §1.11: f_c(S) == max(1 − S, 0) element-wise for any S, here in [-1, 2] so both branches occur.
  for (DType dtype : {DType::Float32, DType::Float64}) {
    CostNet net(16, dtype);
    const Tensor s = kernels::cast(random_tensor({16, 16}, DType::Float64, 1, -1, 2), dtype);
    const Tensor one_minus = kernels::scalar_op(kernels::ScalarOp::RSub, s, 1);
    const Tensor want = kernels::scalar_op(kernels::ScalarOp::ClampMin, one_minus, 0);
    // Exact: the product with −I adds only exact zeros to −S, and −S + 1 rounds as 1 − S does.
    EXPECT_TRUE(all_close(net(s), want, 0, 0));
  }
  // The default generator is left alone by the construction.
  const uint64_t before = default_generator().offset();
  CostNet untouched(8);
  EXPECT_EQ(default_generator().offset(), before);
}

TEST(CostNet, AppliesOneLinearMapToEveryRow) {
  // C_ij = ReLU(Σ_k W_jk S_ik + b_j) with a hand-set W and b: N = 3 rows of width B = 2.
  CostNet net(2, DType::Float64);
  nn::Module& m = net;
  m.load_state_dict({{"fc.weight", from_vector<double>({1, 2, -1, 0.5}, {2, 2})},
                     {"fc.bias", from_vector<double>({0.5, -1})}});
  const Tensor s = from_vector<double>({1, 0, 0, 1, 2, -2}, {3, 2});
  // Row (1, 0): (1 + 0.5, -1 - 1) -> (1.5, 0); row (0, 1): (2.5, 0.5 - 1) -> (2.5, 0); row (2, -2): (-1.5, -4) -> 0.
  EXPECT_TRUE(test::values_equal(net(s), {1.5, 0, 2.5, 0, 0, 0}, 1e-15));
}

TEST(CostNet, GradientOfTheSupervisedCostLoss) {
  // L_OT = Σ_ij π^sup_ij · f_c(S)_ij at initialisation: with every 1 − S_ij > 0, dL/db_j = Σ_i π_ij and
  // dL/dW_jk = Σ_i π_ij S_ik (only the positive entries are pushed, docs/methods/l2rm.md §1.4).
  CostNet net(3, DType::Float64);
  const Tensor s = random_tensor({3, 3}, DType::Float64, 2, -0.5, 0.5);
  const Tensor pi = from_vector<double>({0, 1, 0, 0, 0, 0, 1, 0, 1}, {3, 3});
  backward(sum(mul(pi, net(s))));
  EXPECT_TRUE(test::values_equal(net.fc().bias().grad(), {1, 1, 1}, 1e-15));
  const Tensor want_w = matmul(transpose(pi, 0, 1), s);
  EXPECT_TRUE(all_close(net.fc().weight().grad(), want_w, 1e-15, 0));
}

TEST(CostNet, Gradcheck) {
  // Pre-activations kept away from the ReLU kink: S in [0.1, 0.4] with W = −I, b = 1 plus small noise.
  const Tensor s = random_tensor({4, 3}, DType::Float64, 3, 0.1, 0.4);
  const Tensor w = kernels::binary(kernels::BinaryOp::Add,
                                   kernels::scalar_op(kernels::ScalarOp::Mul, eye(3, 3, DType::Float64), -1.0),
                                   random_tensor({3, 3}, DType::Float64, 4, -0.05, 0.05));
  EXPECT_GRADCHECK([](const TensorList& in) { return models::cost_function(in[0], in[1], in[2]); },
                   {s, w, ones({3}, DType::Float64)});
}

TEST(CostNet, RejectsWrongWidths) {
  CostNet net(4);
  EXPECT_THROWS_WITH(net(zeros({4, 3})), "CostNet fc", "in_features = 4");
  EXPECT_THROWS_WITH(net(zeros({4})), "CostNet", "[N, B]");
  EXPECT_THROWS_WITH(CostNet bad(0), "size must be positive");
}

}  // namespace
}  // namespace rematch
