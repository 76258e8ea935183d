// Under mpirun the ranks compare each epoch's plan (train/methods/data_parallel.h, docs/distributed.md §4.2):
// its step count and every vector of decisions that chose its batches (Method::plan_splits: each net's clean
// flags for NCR and BiCro, the clean/hard/noisy sets for CREAM), so ranks that would split differently stop with a
// message instead of training different batches or waiting for each other forever.
#include <gtest/gtest.h>

#include "test_util.h"
#include "train/methods/data_parallel.h"
#include "train/methods/kit/pairs_kit.h"

namespace rematch::train {
namespace {

viz::EpochSplit split_of(viz::SplitKind kind, std::vector<double> values) {
  viz::EpochSplit s;
  s.kind = kind;
  s.values = std::move(values);
  return s;
}

TEST(EpochPlanAgreement, TheDigestFollowsTheDecisionsOnly) {
  const auto kept = [](std::vector<double> v) { return split_digest(split_of(viz::SplitKind::kept, v)); };
  const auto weight = [](std::vector<double> v) { return split_digest(split_of(viz::SplitKind::weight, v)); };
  const auto label = [](std::vector<double> v) { return split_digest(split_of(viz::SplitKind::label, v)); };
  EXPECT_EQ(kept({1, 0, 1}), kept({1, 0, 1}));
  EXPECT_NE(kept({1, 0, 1}), kept({1, 1, 0}));
  EXPECT_NE(kept({1, 0, 1}), kept({1, 0, 1, 1}));
  // NCR's weights: a weight that moves in its last bits keeps its side of 0.5, and so the digest; one that crosses
  // it changes the digest.
  EXPECT_EQ(weight({0.9, 0.2, 0.70000001}), weight({0.9, 0.2, 0.7}));
  EXPECT_NE(weight({0.9, 0.2, 0.7}), weight({0.9, 0.2, 0.4}));
  EXPECT_NE(label({0, 3, 2}), label({0, 2, 2}));
  // One digest per vector, in the method's order; without a split only the steps count.
  const EpochPlanDigest two = epoch_plan_digest(
      12, {PlanSplit{"a", split_of(viz::SplitKind::kept, {1, 0})}, PlanSplit{"b", split_of(viz::SplitKind::kept, {0, 1})}});
  ASSERT_EQ(two.splits.size(), 2u);
  EXPECT_EQ(two.splits[0], kept({1, 0}));
  EXPECT_EQ(two.splits[1], kept({0, 1}));
  EXPECT_TRUE(epoch_plan_digest(7, {}).splits.empty());
  EXPECT_EQ(epoch_plan_digest(7, {}).steps, 7);
}

TEST(EpochPlanAgreement, RanksThatPlannedDifferentlyStopWithTheEpochAndTheRank) {
  const EpochPlanDigest a{12, {99}}, b{12, {99}};
  const std::vector<std::string> what{"the epoch's split"};
  check_epoch_plans_agree({a, b, a}, what, 4);  // agreement passes
  check_epoch_plans_agree({a}, what, 0);
  EXPECT_THROWS_WITH(check_epoch_plans_agree({a, b, EpochPlanDigest{13, {99}}}, what, 4), "epoch 5",
                     "rank 2 planned 13 steps", "rank 0 (12 steps)", "machines of one kind", "OMP_NUM_THREADS",
                     "one process");
  EXPECT_THROWS_WITH(check_epoch_plans_agree({a, EpochPlanDigest{12, {98}}}, what, 0), "epoch 1",
                     "rank 1 planned another split of the pairs", "the epoch's split differ");
  EXPECT_THROWS_WITH(check_epoch_plans_agree({a, EpochPlanDigest{12, {99, 3}}}, what, 2), "epoch 3", "rank 1 reported 2",
                     "rank 0 1");
}

// NCR and BiCro: net B's split chooses A's batches. Rank 1 agrees with rank 0 on net A's clean flags and the step
// count but flips one pair of B's: before the trainer compared both nets' flags this trained other batches.
TEST(EpochPlanAgreement, ARankThatDisagreesOnNetBsSplitIsCaught) {
  const std::vector<uint8_t> a{1, 0, 1, 1, 0, 1}, b{1, 1, 0, 1, 0, 1}, b_flipped{1, 1, 0, 1, 1, 1};
  for (const char* method : {"ncr", "bicro"}) {
    const std::vector<PlanSplit> rank0 = two_nets_plan_splits(method, 6, a, b);
    const std::vector<PlanSplit> rank1 = two_nets_plan_splits(method, 6, a, b_flipped);
    ASSERT_EQ(rank0.size(), 2u);
    EXPECT_EQ(rank0[0].what, "net A's clean flags");
    EXPECT_EQ(rank0[1].what, "net B's clean flags");
    std::vector<std::string> what;
    for (const PlanSplit& s : rank0) what.push_back(s.what);
    const EpochPlanDigest d0 = epoch_plan_digest(40, rank0), d1 = epoch_plan_digest(40, rank1);
    EXPECT_EQ(d0.splits[0], d1.splits[0]) << "net A's flags agree";
    check_epoch_plans_agree({d0, d0, d0}, what, 6);
    EXPECT_THROWS_WITH(check_epoch_plans_agree({d0, d0, d1}, what, 6), "epoch 7",
                       "rank 2 planned another split of the pairs", "net B's clean flags differ", "40 steps on both",
                       "machines of one kind");
  }
}

// CREAM: one pair that rank 1 calls hard (1) and rank 0 noisy (2) leaves both clean sets, and with them the
// epoch_split's kept flags, equal, yet deals other hard and noisy batches.
TEST(EpochPlanAgreement, ARankThatDisagreesOnOneHardVersusNoisyPairIsCaught) {
  const std::vector<double> parts0{0, 2, 1, 0, 2, 0}, parts1{0, 1, 1, 0, 2, 0};
  const auto sets = [](const std::vector<double>& p) {
    return std::vector<PlanSplit>{PlanSplit{"the clean, hard and noisy sets", split_of(viz::SplitKind::label, p)}};
  };
  const auto kept = [](const std::vector<double>& p) {
    std::vector<double> k;
    for (double v : p) k.push_back(v == 0 ? 1 : 0);
    return split_digest(split_of(viz::SplitKind::kept, k));
  };
  EXPECT_EQ(kept(parts0), kept(parts1)) << "the clean flags alone cannot see it";
  const EpochPlanDigest d0 = epoch_plan_digest(20, sets(parts0)), d1 = epoch_plan_digest(20, sets(parts1));
  EXPECT_THROWS_WITH(check_epoch_plans_agree({d0, d1}, {"the clean, hard and noisy sets"}, 3), "epoch 4",
                     "rank 1 planned another split of the pairs", "the clean, hard and noisy sets differ");
}

}  // namespace
}  // namespace rematch::train
