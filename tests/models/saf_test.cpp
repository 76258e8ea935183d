// SAF (docs/backbones.md §4.6): names, training-mode BatchNorm statistics per caption over its images × real
// nodes with the running statistics updated once per caption in caption order — checked against the
// official per-caption loop run on unpadded nodes —, eval mode with running statistics, and float64
// gradients in both modes.
#include "models/saf.h"

#include <cmath>

#include "model_test_util.h"
#include "models/padding.h"

namespace rematch::models {
namespace {

// By value: named_buffers() returns a new list each call, so a reference into it would dangle.
Tensor buffer(const nn::Module& m, const std::string& name) {
  for (const auto& [n, t] : m.named_buffers())
    if (n == name) return t;
  throw std::runtime_error("no buffer " + name);
}

void randomise_bn(AttentionFiltration& saf) {
  for (const auto& [n, t] : saf.named_parameters())
    if (n == "bn.weight")
      kernels::fill_(t, 1.3);
    else if (n == "bn.bias")
      kernels::fill_(t, -0.2);
  kernels::fill_(buffer(saf, "bn.running_mean"), 0.15);
  kernels::fill_(buffer(saf, "bn.running_var"), 0.8);
}

TEST(SAF, StateDictNames) {
  AttentionFiltration saf(4);
  std::vector<std::string> names;
  for (const auto& [n, t] : saf.state_dict()) names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"attn_sim_w.weight", "attn_sim_w.bias", "bn.weight", "bn.bias",
                                             "bn.running_mean", "bn.running_var", "bn.num_batches_tracked"}));
  EXPECT_EQ(saf.parameter_count(), 4 + 1 + 2);
}

TEST(SAF, BatchedTrainingEqualsThePerCaptionLoop) {
  const std::vector<int64_t> len = {4, 1, 2, 4};
  const Tensor nodes = l2_normalize(test::random_tensor({3, 4, 5, 3}, DType::Float64, 1), -1);
  AttentionFiltration batched(3, DType::Float64), looped(3, DType::Float64);
  looped.load_state_dict(batched.state_dict());
  randomise_bn(batched);
  randomise_bn(looped);
  const Tensor z = batched(nodes, node_mask(test::lengths_tensor(len), 4));
  for (int64_t c = 0; c < 4; ++c) {
    const Tensor alone = narrow(narrow(nodes, 1, c, 1), 2, 0, len[c] + 1);
    const Tensor want = looped(alone, node_mask(test::lengths_tensor({len[c]}), len[c]));
    EXPECT_TRUE(test::all_close(narrow(z, 1, c, 1), want, 1e-14, 0)) << "caption " << c;
  }
  for (const char* b : {"bn.running_mean", "bn.running_var"})
    EXPECT_TRUE(test::all_close(buffer(batched, b), buffer(looped, b), 1e-15, 1e-14)) << b;
  EXPECT_EQ(buffer(batched, "bn.num_batches_tracked").item<int64_t>(), 4);  // once per caption
}

TEST(SAF, EvalModeUsesRunningStatistics) {
  AttentionFiltration saf(3, DType::Float64);
  randomise_bn(saf);
  saf.eval();
  const Tensor nodes = test::random_tensor({2, 1, 3, 3}, DType::Float64, 2);
  const auto sd = saf.state_dict();
  const Tensor u = squeeze(nn::linear(nodes, sd[0].second, sd[1].second), 3);
  const Tensor u_hat = add(mul(div(sub(u, 0.15), std::sqrt(0.8 + 1e-5)), 1.3), -0.2);
  const Tensor beta = l1_normalize(sigmoid(u_hat), -1);
  const Tensor want = l2_normalize(squeeze(matmul(unsqueeze(select(beta, 1, 0), 1), select(nodes, 1, 0)), 1), -1);
  const Tensor z = saf(nodes, node_mask(test::lengths_tensor({2}), 2));
  EXPECT_TRUE(test::all_close(select(z, 1, 0), want, 1e-14, 0));
  EXPECT_EQ(buffer(saf, "bn.num_batches_tracked").item<int64_t>(), 0);
}

TEST(SAF, GradcheckTrainingAndEval) {
  for (bool training : {true, false}) {
    AttentionFiltration saf(2, DType::Float64);
    randomise_bn(saf);
    saf.train(training);
    const Tensor mask = node_mask(test::lengths_tensor({3, 1}), 3);
    auto f = [&](const TensorList& t) { return saf(t[0], mask); };
    EXPECT_GRADCHECK(test::over_parameters(saf, f, 1),
                     test::with_parameters(saf, {test::random_tensor({2, 2, 4, 2}, DType::Float64, 3)}))
        << (training ? "training" : "eval");
  }
}

}  // namespace
}  // namespace rematch::models
