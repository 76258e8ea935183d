// Learning-rate schedules against PyTorch's closed forms (fixtures from tests/reference/optim_reference.py),
// and schedule state save/restore.
#include "nn/lr_schedule.h"

#include <string>

#include "test_util.h"

namespace rematch::nn {
namespace {

constexpr int kEpochs = 21;

Tensor fixture(const std::string& name) {
  return load_npy(std::string(REMATCH_FIXTURES) + "/optim/" + name + ".npy");
}

// Two groups with base lrs 0.1 and 0.02, as in the reference.
struct TwoGroups {
  Tensor p = zeros({1}, DType::Float32), q = zeros({1}, DType::Float32);
  SGD opt{std::vector<ParamGroup>{{{p}, {}, {}}, {{q}, 0.02, {}}}, 0.1};
};

// The closed forms use the same C library pow and cos as CPython, in the same order of operations, so the
// learning rates agree exactly.
void expect_matches_torch(LRSchedule& schedule, Optimizer& opt, const std::string& name) {
  const std::vector<double> want = fixture("sched_" + name).to_vector<double>();
  for (int epoch = 0; epoch < kEpochs; ++epoch) {
    if (epoch > 0) schedule.step();
    EXPECT_EQ(schedule.last_epoch(), epoch);
    EXPECT_EQ(opt.lr(0), want[2 * epoch]) << name << " epoch " << epoch;
    EXPECT_EQ(opt.lr(1), want[2 * epoch + 1]) << name << " epoch " << epoch;
  }
}

TEST(LRSchedule, StepLRMatchesTorch) {
  TwoGroups g;
  StepLR s(g.opt, 3, 0.5);
  expect_matches_torch(s, g.opt, "step");
}

TEST(LRSchedule, MultiStepLRMatchesTorch) {
  TwoGroups g;
  MultiStepLR s(g.opt, {9, 5, 2, 5}, 0.1);  // unsorted, 5 twice: it counts twice, as in PyTorch's Counter
  expect_matches_torch(s, g.opt, "multistep");
}

TEST(LRSchedule, CosineAnnealingLRMatchesTorch) {
  TwoGroups g;
  CosineAnnealingLR s(g.opt, 7, 0.001);
  expect_matches_torch(s, g.opt, "cosine");
}

TEST(LRSchedule, StateRestoresEpochAndRates) {
  TwoGroups a;
  StepLR sa(a.opt, 2, 0.1);
  for (int i = 0; i < 5; ++i) sa.step();
  const ScheduleState state = sa.state();
  EXPECT_EQ(state.kind, "StepLR");
  EXPECT_EQ(state.last_epoch, 5);
  EXPECT_EQ(state.base_lrs, (std::vector<double>{0.1, 0.02}));

  TwoGroups b;
  StepLR sb(b.opt, 2, 0.1);
  sb.load_state(state);
  EXPECT_EQ(b.opt.lr(0), a.opt.lr(0));
  EXPECT_EQ(b.opt.lr(1), a.opt.lr(1));
  sa.step();
  sb.step();
  EXPECT_EQ(sb.last_epoch(), 6);
  EXPECT_EQ(b.opt.lr(0), a.opt.lr(0));
  EXPECT_EQ(sb.lrs_at(6), sa.lrs_at(6));
}

TEST(LRSchedule, BaseLrsComeFromTheOptimizerAtConstruction) {
  TwoGroups g;
  g.opt.set_lr(0, 0.4);
  CosineAnnealingLR s(g.opt, 10);
  EXPECT_EQ(s.base_lrs(), (std::vector<double>{0.4, 0.02}));
  EXPECT_EQ(s.lrs_at(10)[0], 0.0);
}

TEST(LRSchedule, ErrorsNameTheProblem) {
  TwoGroups g;
  EXPECT_THROWS_WITH(StepLR(g.opt, 0), "StepLR: step_size must be > 0");
  EXPECT_THROWS_WITH(CosineAnnealingLR(g.opt, 0), "T_max must be > 0");
  EXPECT_THROWS_WITH(MultiStepLR(g.opt, {1}, -0.5), "invalid gamma");
  StepLR s(g.opt, 2);
  EXPECT_THROWS_WITH(s.load_state({"CosineAnnealingLR", 1, {0.1, 0.02}}), "belongs to a CosineAnnealingLR schedule");
  EXPECT_THROWS_WITH(s.load_state({"StepLR", 1, {0.1}}), "1 base lrs, the optimizer 2 parameter groups");
  EXPECT_THROWS_WITH(s.load_state({"StepLR", -1, {0.1, 0.02}}), "invalid epoch -1");
  EXPECT_THROWS_WITH(s.lrs_at(-2), "epoch must be >= 0");
}

}  // namespace
}  // namespace rematch::nn
