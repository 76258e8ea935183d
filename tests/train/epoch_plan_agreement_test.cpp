// Under mpirun the ranks compare each epoch's plan (train/methods/data_parallel.h, docs/distributed.md §4.2):
// its step count and its split's decisions, so ranks that would split differently stop with a message instead of
// training different batches or waiting for each other forever.
#include <gtest/gtest.h>

#include "test_util.h"
#include "train/methods/data_parallel.h"

namespace rematch::train {
namespace {

viz::EpochSplit split_of(viz::SplitKind kind, std::vector<double> values) {
  viz::EpochSplit s;
  s.kind = kind;
  s.values = std::move(values);
  return s;
}

TEST(EpochPlanAgreement, TheDigestFollowsTheDecisionsOnly) {
  const auto kept = [](std::vector<double> v) { return epoch_plan_digest(12, split_of(viz::SplitKind::kept, v)); };
  const auto weight = [](std::vector<double> v) { return epoch_plan_digest(12, split_of(viz::SplitKind::weight, v)); };
  const auto label = [](std::vector<double> v) { return epoch_plan_digest(12, split_of(viz::SplitKind::label, v)); };
  EXPECT_EQ(kept({1, 0, 1}).split, kept({1, 0, 1}).split);
  EXPECT_NE(kept({1, 0, 1}).split, kept({1, 1, 0}).split);
  EXPECT_NE(kept({1, 0, 1}).split, kept({1, 0, 1, 1}).split);
  // NCR's weights: a weight that moves in its last bits keeps its side of 0.5, and so the digest; one that crosses
  // it changes the digest.
  EXPECT_EQ(weight({0.9, 0.2, 0.70000001}).split, weight({0.9, 0.2, 0.7}).split);
  EXPECT_NE(weight({0.9, 0.2, 0.7}).split, weight({0.9, 0.2, 0.4}).split);
  EXPECT_NE(label({0, 3, 2}).split, label({0, 2, 2}).split);
  // Without a split only the steps count.
  EXPECT_EQ(epoch_plan_digest(7, std::nullopt).split, 0);
  EXPECT_EQ(epoch_plan_digest(7, std::nullopt).steps, 7);
}

TEST(EpochPlanAgreement, RanksThatPlannedDifferentlyStopWithTheEpochAndTheRank) {
  const EpochPlanDigest a{12, 99}, b{12, 99};
  check_epoch_plans_agree({a, b, a}, 4);  // agreement passes
  check_epoch_plans_agree({a}, 0);
  EXPECT_THROWS_WITH(check_epoch_plans_agree({a, b, EpochPlanDigest{13, 99}}, 4), "epoch 5", "rank 2 planned 13 steps",
                     "rank 0 (12 steps)", "machines of one kind", "OMP_NUM_THREADS", "one process");
  EXPECT_THROWS_WITH(check_epoch_plans_agree({a, EpochPlanDigest{12, 98}}, 0), "epoch 1",
                     "rank 1 planned another split of the pairs");
}

}  // namespace
}  // namespace rematch::train
