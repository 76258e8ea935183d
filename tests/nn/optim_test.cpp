// SGD, Adam and AdamW against PyTorch 1.13 (fixtures from tests/reference/optim_reference.py), plus the
// optimizer bookkeeping: skipped parameters, param groups, set_lr, state save/restore and its errors.
#include "nn/optim.h"

#include <memory>
#include <string>

#include "test_util.h"

namespace rematch::nn {
namespace {

using test::all_close;

// Why 1e-12 and not bit equality: PyTorch's CPU kernels evaluate a.add(b, alpha) as a fused multiply-add in
// their vectorised loop and as a + alpha·b in the scalar tail, divide or multiply in their own order in
// reductions, and we do neither identically. Each such difference is one rounding (~1e-16 relative in
// float64); five steps on O(1) values accumulate a few of them, far below 1e-12, while any mistake in a
// formula or its order (bias correction, where weight decay enters, eps inside or outside the sqrt, the first
// momentum step) moves the parameters by more than 1e-6.
constexpr double kTol = 1e-12;
constexpr int kSteps = 5;

Tensor fixture(const std::string& name) {
  return load_npy(std::string(REMATCH_FIXTURES) + "/optim/" + name + ".npy");
}

Tensor leaf(const Tensor& value) {
  Tensor t = kernels::clone(value);
  t.requires_grad_(true);
  return t;
}

// The configurations of optim_reference.py's OPTIMIZERS, with the same hyperparameters.
std::unique_ptr<Optimizer> make(const std::string& name, const Tensor& w, const Tensor& b) {
  if (name == "sgd") return std::make_unique<SGD>(std::vector<Tensor>{w, b}, 0.1, 0.9, 0, 1e-4);
  if (name == "sgd_nesterov") return std::make_unique<SGD>(std::vector<Tensor>{w, b}, 0.1, 0.9, 0, 1e-4, true);
  if (name == "sgd_dampening") return std::make_unique<SGD>(std::vector<Tensor>{w, b}, 0.1, 0.9, 0.5);
  if (name == "adam") return std::make_unique<Adam>(std::vector<Tensor>{w, b}, 0.01);
  if (name == "adam_l2") return std::make_unique<Adam>(std::vector<Tensor>{w, b}, 0.01, AdamBetas{}, 1e-8, 1e-2);
  if (name == "adamw") return std::make_unique<AdamW>(std::vector<Tensor>{w, b}, 0.01, AdamBetas{}, 1e-8, 1e-2);
  if (name == "adam_groups")
    return std::make_unique<Adam>(std::vector<ParamGroup>{{{w}, {}, {}}, {{b}, 0.05, 0.1}}, 0.01);
  ADD_FAILURE() << "unknown configuration " << name;
  return nullptr;
}

Tensor row(const Tensor& stacked, int64_t t) { return kernels::clone(kernels::select(stacked, 0, t)); }

class OptimReference : public ::testing::TestWithParam<std::string> {};

// The gradients PyTorch computed are fed in as they were, so only the update rule is under test.
TEST_P(OptimReference, ReplayedGradientsGiveTorchParameters) {
  const std::string name = GetParam();
  Tensor w = leaf(fixture("init_w")), b = leaf(fixture("init_b"));
  auto opt = make(name, w, b);
  const Tensor gw = fixture(name + "_grad_w"), gb = fixture(name + "_grad_b");
  const Tensor want_w = fixture(name + "_w"), want_b = fixture(name + "_b");
  for (int64_t t = 0; t < kSteps; ++t) {
    w.set_grad(row(gw, t));
    b.set_grad(row(gb, t));
    opt->step();
    EXPECT_TRUE(all_close(w, row(want_w, t), kTol, 0)) << name << " step " << t + 1 << " (w)";
    EXPECT_TRUE(all_close(b, row(want_b, t), kTol, 0)) << name << " step " << t + 1 << " (b)";
  }
  EXPECT_EQ(opt->step_count(0), kSteps);
}

// The same problem end to end: our autograd computes loss and gradients, the optimizer steps.
TEST_P(OptimReference, TrainingTheReferenceProblemMatchesTorch) {
  const std::string name = GetParam();
  const Tensor x = fixture("problem_x"), y = fixture("problem_y");
  Tensor w = leaf(fixture("init_w")), b = leaf(fixture("init_b"));
  auto opt = make(name, w, b);
  const Tensor loss_want = fixture(name + "_loss");
  for (int64_t t = 0; t < kSteps; ++t) {
    opt->zero_grad();
    const Tensor loss = mean(square(matmul(x, transpose(w, 0, 1)) + b - y));
    backward(loss);
    EXPECT_NEAR(loss.item<double>(), loss_want.to_vector<double>()[t], kTol) << name << " step " << t + 1;
    EXPECT_TRUE(all_close(w.grad(), row(fixture(name + "_grad_w"), t), kTol, 0)) << name << " step " << t + 1;
    opt->step();
    EXPECT_TRUE(all_close(w, row(fixture(name + "_w"), t), kTol, 0)) << name << " step " << t + 1;
    EXPECT_TRUE(all_close(b, row(fixture(name + "_b"), t), kTol, 0)) << name << " step " << t + 1;
  }
}

INSTANTIATE_TEST_SUITE_P(Torch, OptimReference,
                         ::testing::Values("sgd", "sgd_nesterov", "sgd_dampening", "adam", "adam_l2", "adamw",
                                           "adam_groups"));

// float32 parameters take the same path with scalars rounded to float32; they follow the float64 trajectory
// to float32 accuracy.
TEST(Optim, Float32FollowsTheFloat64Trajectory) {
  Tensor w = leaf(kernels::cast(fixture("init_w"), DType::Float32));
  Tensor b = leaf(kernels::cast(fixture("init_b"), DType::Float32));
  AdamW opt(std::vector<Tensor>{w, b}, 0.01, AdamBetas{}, 1e-8, 1e-2);
  const Tensor gw = fixture("adamw_grad_w"), gb = fixture("adamw_grad_b");
  for (int64_t t = 0; t < kSteps; ++t) {
    w.set_grad(kernels::cast(row(gw, t), DType::Float32));
    b.set_grad(kernels::cast(row(gb, t), DType::Float32));
    opt.step();
  }
  EXPECT_EQ(w.dtype(), DType::Float32);
  EXPECT_TRUE(all_close(w, row(fixture("adamw_w"), kSteps - 1), 1e-6, 0));
}

TEST(Optim, ParametersWithoutGradientAreSkipped) {
  Tensor w = leaf(fixture("init_w")), b = leaf(fixture("init_b"));
  Adam opt(std::vector<Tensor>{w, b}, 0.01);
  w.set_grad(row(fixture("adam_grad_w"), 0));
  opt.step();
  EXPECT_TRUE(all_close(b, fixture("init_b"), 0, 0));
  EXPECT_EQ(opt.step_count(0), 1);
  EXPECT_EQ(opt.step_count(1), 0);
  EXPECT_EQ(opt.state_dict().buffers.size(), 2u);  // exp_avg and exp_avg_sq of w only
  opt.zero_grad();
  EXPECT_FALSE(w.grad().defined());
}

TEST(Optim, GroupsAndSetLr) {
  Tensor w = leaf(fixture("init_w")), b = leaf(fixture("init_b"));
  SGD opt(std::vector<ParamGroup>{{{w}, {}, {}}, {{b}, 0.5, {}}}, 0.1, 0, 0, 1e-3);
  ASSERT_EQ(opt.group_count(), 2u);
  EXPECT_EQ(opt.lr(0), 0.1);
  EXPECT_EQ(opt.lr(1), 0.5);
  EXPECT_EQ(*opt.group(1).weight_decay, 1e-3);
  opt.set_lr(1, 0.25);
  EXPECT_EQ(opt.lr(1), 0.25);
  opt.set_lr(0.125);
  EXPECT_EQ(opt.lr(0), 0.125);
  EXPECT_EQ(opt.lr(1), 0.125);
  EXPECT_THROWS_WITH(opt.lr(2), "no parameter group 2");
  EXPECT_THROWS_WITH(opt.set_lr(-1.0), "invalid learning rate");
}

TEST(Optim, StateRoundTripContinuesBitForBit) {
  for (const std::string name : {"sgd_nesterov", "adam_groups", "adamw"}) {
    Tensor w1 = leaf(fixture("init_w")), b1 = leaf(fixture("init_b"));
    auto first = make(name, w1, b1);
    const Tensor gw = fixture(name + "_grad_w"), gb = fixture(name + "_grad_b");
    for (int64_t t = 0; t < 2; ++t) {
      w1.set_grad(row(gw, t));
      b1.set_grad(row(gb, t));
      first->step();
    }
    first->set_lr(0, 0.003);
    Tensor w2 = leaf(w1), b2 = leaf(b1);
    auto second = make(name, w2, b2);
    second->load_state_dict(first->state_dict());
    EXPECT_EQ(second->lr(0), 0.003);
    for (int64_t t = 2; t < kSteps; ++t) {
      for (const Tensor& p : {w1, w2}) p.set_grad(row(gw, t));
      for (const Tensor& p : {b1, b2}) p.set_grad(row(gb, t));
      first->step();
      second->step();
    }
    EXPECT_TRUE(all_close(w2, w1, 0, 0)) << name;
    EXPECT_TRUE(all_close(b2, b1, 0, 0)) << name;
    EXPECT_EQ(second->step_count(1), kSteps);
  }
}

TEST(Optim, LoadStateConvertsToTheParameterDtype) {
  Tensor w = leaf(fixture("init_w")), b = leaf(fixture("init_b"));
  Adam opt(std::vector<Tensor>{w, b}, 0.01);
  w.set_grad(row(fixture("adam_grad_w"), 0));
  b.set_grad(row(fixture("adam_grad_b"), 0));
  opt.step();
  OptimizerState state = opt.state_dict();
  for (auto& [n, t] : state.buffers) t = kernels::cast(t, DType::Float32);
  Adam other(std::vector<Tensor>{leaf(w), leaf(b)}, 0.01);
  other.load_state_dict(state);
  for (const auto& [n, t] : other.state_dict().buffers) EXPECT_EQ(t.dtype(), DType::Float64) << n;
}

TEST(Optim, LoadStateErrorsNameTheProblem) {
  Tensor w = leaf(fixture("init_w")), b = leaf(fixture("init_b"));
  Adam opt(std::vector<Tensor>{w, b}, 0.01);
  w.set_grad(row(fixture("adam_grad_w"), 0));
  b.set_grad(row(fixture("adam_grad_b"), 0));
  opt.step();
  const OptimizerState good = opt.state_dict();
  Adam other(std::vector<Tensor>{leaf(w), leaf(b)}, 0.01);

  OptimizerState s = good;
  s.kind = "SGD";
  EXPECT_THROWS_WITH(other.load_state_dict(s), "Adam.load_state_dict", "belongs to a SGD optimizer");
  s = good;
  s.lrs.push_back(0.1);
  EXPECT_THROWS_WITH(other.load_state_dict(s), "2 parameter groups, this optimizer 1");
  s = good;
  s.steps.pop_back();
  EXPECT_THROWS_WITH(other.load_state_dict(s), "1 parameters, this optimizer 2");
  s = good;
  s.buffers.erase(s.buffers.begin());
  EXPECT_THROWS_WITH(other.load_state_dict(s), "missing buffer '0.exp_avg'");
  s = good;
  s.buffers.emplace_back("1.momentum_buffer", zeros({3}, DType::Float64));
  s.buffers.emplace_back("7.exp_avg", zeros({3}, DType::Float64));
  EXPECT_THROWS_WITH(other.load_state_dict(s), "unexpected buffer '1.momentum_buffer'", "unexpected buffer '7.exp_avg'");
  s = good;
  s.buffers[1].second = zeros({4, 3}, DType::Float64);
  EXPECT_THROWS_WITH(other.load_state_dict(s), "buffer '0.exp_avg_sq' is float64[4, 3]", "parameter 0 is float64[3, 4]");
  s = good;
  s.steps[0] = -1;
  s.lrs[0] = -0.5;
  EXPECT_THROWS_WITH(other.load_state_dict(s), "step count -1", "learning rate");
  // Nothing was taken from the rejected states.
  EXPECT_EQ(other.step_count(0), 0);
  EXPECT_EQ(other.lr(), 0.01);
}

TEST(Optim, ConstructorValidatesItsArguments) {
  Tensor w = leaf(fixture("init_w"));
  EXPECT_THROWS_WITH(SGD(std::vector<Tensor>{}, 0.1), "empty parameter list");
  EXPECT_THROWS_WITH(SGD(std::vector<Tensor>{w, w}, 0.1), "appears more than once");
  EXPECT_THROWS_WITH(SGD(std::vector<Tensor>{mul(w, 2.0)}, 0.1), "is not a leaf");
  EXPECT_THROWS_WITH(SGD(std::vector<Tensor>{zeros({2}, DType::Int64)}, 0.1), "must be a floating tensor");
  EXPECT_THROWS_WITH(SGD(std::vector<Tensor>{w}, -0.1), "invalid learning rate");
  EXPECT_THROWS_WITH(SGD(std::vector<Tensor>{w}, 0.1, 0, 0, 0, true), "Nesterov momentum requires");
  EXPECT_THROWS_WITH(Adam(std::vector<Tensor>{w}, 0.1, AdamBetas{1.0, 0.999}), "invalid beta1");
  EXPECT_THROWS_WITH(AdamW(std::vector<Tensor>{w}, 0.1, AdamBetas{}, -1), "invalid eps");
  EXPECT_THROWS_WITH(Adam(std::vector<ParamGroup>{{{w}, -1.0, {}}}, 0.1), "group 0: invalid learning rate");
}

TEST(Optim, GradientShapeMismatchIsAnError) {
  Tensor w = leaf(fixture("init_w"));
  SGD opt(std::vector<Tensor>{w}, 0.1);
  w.autograd_meta().grad = zeros({4, 3}, DType::Float64);  // set_grad would refuse it; step must too
  EXPECT_THROWS_WITH(opt.step(), "SGD.step: parameter 0 is float64[3, 4]", "gradient is float64[4, 3]");
}

}  // namespace
}  // namespace rematch::nn
