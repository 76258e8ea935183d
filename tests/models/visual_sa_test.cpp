// VisualSA (docs/backbones.md §4.1): state-dict names, BatchNorm over region slots with one running-statistics
// update per call, the formula by hand in eval mode, the region-count error, and float64 gradients in both
// modes.
#include "models/visual_sa.h"

#include "model_test_util.h"

namespace rematch::models {
namespace {

std::vector<std::string> names(const nn::Module& m) {
  std::vector<std::string> out;
  for (const auto& [n, t] : m.state_dict()) out.push_back(n);
  return out;
}

TEST(VisualSA, StateDictNamesFollowTheSequentials) {
  VisualSA sa(8, 5);
  EXPECT_EQ(
      names(sa),
      (std::vector<std::string>{
          "embedding_local.0.weight", "embedding_local.0.bias", "embedding_local.1.weight", "embedding_local.1.bias",
          "embedding_local.1.running_mean", "embedding_local.1.running_var", "embedding_local.1.num_batches_tracked",
          "embedding_global.0.weight", "embedding_global.0.bias", "embedding_global.1.weight",
          "embedding_global.1.bias", "embedding_global.1.running_mean", "embedding_global.1.running_var",
          "embedding_global.1.num_batches_tracked", "embedding_common.0.weight", "embedding_common.0.bias"}));
  EXPECT_EQ(sa.state_dict()[2].second.sizes(), (Shape{5}));  // BN over the 5 region slots
  EXPECT_EQ(sa.state_dict()[9].second.sizes(), (Shape{8}));  // BN over the 8 features
  EXPECT_EQ(sa.state_dict()[14].second.sizes(), (Shape{1, 8}));
}

TEST(VisualSA, EvalModeByHand) {
  VisualSA sa(4, 3, 0.4, DType::Float64);
  sa.eval();
  const auto sd = sa.state_dict();
  auto p = [&](const std::string& n) {
    for (const auto& [name, t] : sd)
      if (name == n) return t;
    return Tensor();
  };
  kernels::copy_(p("embedding_local.1.running_mean"), test::random_tensor({3}, DType::Float64, 4, -0.2, 0.2));
  kernels::copy_(p("embedding_global.1.running_var"), test::random_tensor({4}, DType::Float64, 5, 0.5, 1.5));
  const Tensor v = test::unit_rows({2, 3, 4}, 1);
  auto bn = [&](const Tensor& x, const std::string& pre, const Shape& s) {
    return add(
        mul(div(sub(x, reshape(p(pre + ".running_mean"), s)), sqrt(add(reshape(p(pre + ".running_var"), s), 1e-5))),
            reshape(p(pre + ".weight"), s)),
        reshape(p(pre + ".bias"), s));
  };
  const Tensor local = tanh(
      bn(nn::linear(v, p("embedding_local.0.weight"), p("embedding_local.0.bias")), "embedding_local.1", {1, 3, 1}));
  const Tensor global = tanh(bn(nn::linear(mean(v, {1}), p("embedding_global.0.weight"), p("embedding_global.0.bias")),
                                "embedding_global.1", {1, 4}));
  const Tensor logits = squeeze(
      nn::linear(mul(local, unsqueeze(global, 1)), p("embedding_common.0.weight"), p("embedding_common.0.bias")), 2);
  const Tensor want = l2_normalize(sum(mul(unsqueeze(softmax(logits, 1), 2), v), {1}), -1);
  EXPECT_TRUE(test::all_close(sa(v), want, 1e-14, 0));
}

TEST(VisualSA, TrainingUpdatesRunningStatisticsOncePerCall) {
  VisualSA sa(4, 3, 0.0, DType::Float64);
  sa.train();
  sa(test::unit_rows({5, 3, 4}, 2));
  const auto sd = sa.state_dict();
  EXPECT_EQ(sd[6].second.item<int64_t>(), 1);   // embedding_local.1.num_batches_tracked
  EXPECT_EQ(sd[13].second.item<int64_t>(), 1);  // embedding_global.1.num_batches_tracked
  EXPECT_FALSE(test::all_close(sd[4].second, zeros({3}, DType::Float64), 1e-12, 0));
}

TEST(VisualSA, RegionCountIsFixedByTheModel) {
  VisualSA sa(4, 3);
  EXPECT_THROWS_WITH(sa(zeros({2, 5, 4})), "VisualSA", "[B_img, 3, 4]", "[2, 5, 4]", "region slots");
}

TEST(VisualSA, GradcheckTrainingAndEval) {
  for (bool training : {true, false}) {
    VisualSA sa(3, 2, 0.0, DType::Float64);
    sa.train(training);
    auto f = [&](const TensorList& t) { return sa(t[0]); };
    EXPECT_GRADCHECK(test::over_parameters(sa, f, 1), test::with_parameters(sa, {test::unit_rows({3, 2, 3}, 3)}))
        << (training ? "training" : "eval");
  }
}

}  // namespace
}  // namespace rematch::models
