// SGR (docs/backbones.md §4.5): names per step, one step against its formula, padded pairs equal to each
// caption's unpadded nodes, the node-0-only last step equal to the full step, and float64 gradients.
#include "models/sgr.h"

#include "model_test_util.h"
#include "models/padding.h"

namespace rematch::models {
namespace {

TEST(SGR, StateDictNamesPerStep) {
  SimilarityGraphReasoning sgr(4, 3);
  std::vector<std::string> names;
  for (const auto& [n, t] : sgr.state_dict()) names.push_back(n);
  ASSERT_EQ(names.size(), 18u);
  EXPECT_EQ(names[0], "0.graph_query_w.weight");
  EXPECT_EQ(names[2], "0.graph_key_w.weight");
  EXPECT_EQ(names[4], "0.sim_graph_w.weight");
  EXPECT_EQ(names[17], "2.sim_graph_w.bias");
  EXPECT_EQ(sgr.parameter_count(), 3 * 3 * (16 + 4));
  EXPECT_EQ(sgr.steps(), 3);
  EXPECT_THROWS_WITH(SimilarityGraphReasoning(4, 0), "sgr_step");
}

TEST(SGR, OneStepIsTheFormula) {
  GraphReasoning step(3, DType::Float64);
  const Tensor s = test::random_tensor({2, 4, 3}, DType::Float64, 1);
  const Tensor none = zeros({1, 1, 4}, DType::Bool);
  const auto sd = step.state_dict();
  const Tensor q = nn::linear(s, sd[0].second, sd[1].second), k = nn::linear(s, sd[2].second, sd[3].second);
  const Tensor a = softmax(bmm(q, transpose(k, 1, 2)), -1);                     // no 1/sqrt(d)
  const Tensor want = relu(nn::linear(bmm(a, s), sd[4].second, sd[5].second));  // no residual
  EXPECT_TRUE(test::all_close(step.forward(s, none), want, 1e-14, 0));
  EXPECT_TRUE(test::all_close(step.forward_first(s, none), select(want, 1, 0), 1e-14, 0));
}

TEST(SGR, PaddedPairsEqualUnpaddedNodes) {
  SimilarityGraphReasoning sgr(3, 3, DType::Float64);
  const std::vector<int64_t> len = {4, 1, 2};  // words; nodes = words + 1
  const Tensor nodes = test::random_tensor({2, 3, 5, 3}, DType::Float64, 2, 0, 1);
  const Tensor batched = sgr(nodes, node_mask(test::lengths_tensor(len), 4));
  ASSERT_EQ(batched.sizes(), (Shape{2, 3, 3}));
  for (int64_t c = 0; c < 3; ++c) {
    const Tensor alone = narrow(narrow(nodes, 1, c, 1), 2, 0, len[c] + 1);
    const Tensor want = sgr(alone, node_mask(test::lengths_tensor({len[c]}), len[c]));
    EXPECT_TRUE(test::all_close(narrow(batched, 1, c, 1), want, 1e-14, 0)) << "caption " << c;
  }
}

TEST(SGR, Gradcheck) {
  SimilarityGraphReasoning sgr(2, 3, DType::Float64);
  const Tensor mask = node_mask(test::lengths_tensor({3, 1}), 3);
  auto f = [&](const TensorList& t) { return sgr(t[0], mask); };
  EXPECT_GRADCHECK(test::over_parameters(sgr, f, 1),
                   test::with_parameters(sgr, {test::random_tensor({2, 2, 4, 2}, DType::Float64, 3, 0, 1)}));
}

}  // namespace
}  // namespace rematch::models
