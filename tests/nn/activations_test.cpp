// nn/activations.h: each activation module computes its op, passes a float64 gradcheck, and chains in a
// Sequential with PyTorch's child names.
#include "nn/nn.h"
#include "test_util.h"

namespace rematch {
namespace {

using test::random_tensor;

// Away from 0, where ReLU and LeakyReLU have their kink.
Tensor rnd(uint32_t seed) {
  Tensor x = random_tensor({3, 4}, DType::Float64, seed, 0.1, 2);
  return mul(x, sign(random_tensor({3, 4}, DType::Float64, seed + 100)));
}

TEST(Activations, ForwardIsTheOp) {
  Tensor x = rnd(1);
  EXPECT_TRUE(test::all_close(nn::ReLU()(x), relu(x), 0, 0));
  EXPECT_TRUE(test::all_close(nn::LeakyReLU(0.1)(x), leaky_relu(x, 0.1), 0, 0));
  EXPECT_TRUE(test::all_close(nn::LeakyReLU()(x), leaky_relu(x, 0.01), 0, 0));
  EXPECT_TRUE(test::all_close(nn::Tanh()(x), tanh(x), 0, 0));
  EXPECT_TRUE(test::all_close(nn::Sigmoid()(x), sigmoid(x), 0, 0));
  EXPECT_EQ(nn::LeakyReLU().negative_slope(), 0.01);
}

TEST(ActivationsGrad, EveryModule) {
  std::vector<std::shared_ptr<nn::UnaryModule>> modules{std::make_shared<nn::ReLU>(),
                                                        std::make_shared<nn::LeakyReLU>(0.1),
                                                        std::make_shared<nn::Tanh>(), std::make_shared<nn::Sigmoid>()};
  uint32_t seed = 2;
  for (auto& m : modules) EXPECT_GRADCHECK([&](const TensorList& t) { return m->forward(t[0]); }, {rnd(seed++)});
}

TEST(Activations, ChainInSequential) {
  nn::Sequential mlp({std::make_shared<nn::Linear>(4, 3, true, DType::Float64), std::make_shared<nn::LeakyReLU>(0.1),
                      std::make_shared<nn::Linear>(3, 2, true, DType::Float64), std::make_shared<nn::Tanh>()});
  const nn::StateDict sd = mlp.state_dict();
  ASSERT_EQ(sd.size(), 4u);
  EXPECT_EQ(sd[0].first, "0.weight");
  EXPECT_EQ(sd[3].first, "2.bias");
  Tensor x = rnd(10);
  const auto& l0 = std::static_pointer_cast<nn::Linear>(mlp[0]);
  const auto& l2 = std::static_pointer_cast<nn::Linear>(mlp[2]);
  Tensor want = tanh(nn::linear(leaky_relu(nn::linear(x, l0->weight(), l0->bias()), 0.1), l2->weight(), l2->bias()));
  EXPECT_TRUE(test::all_close(mlp(x), want, 0, 0));
}

}  // namespace
}  // namespace rematch
