// Data-parallel training under mpirun (docs/distributed.md §4): what the trainer and the methods that opt in
// (MethodSpec::data_parallel) share. Every rank holds the same parameters, optimizer state and generators
// and draws the same numbers; a step computes its share of the batch, the batch-coupled losses see the whole
// batch, and the parameters' gradients are summed over ranks before clipping, so the step is one process's.
#pragma once

#include <string>
#include <vector>

#include "parallel/communicator.h"
#include "tensor/tensor.h"
#include "train/methods/method.h"
#include "viz/epoch_splits.h"

namespace rematch::train {

// The parameters' gradients summed over the ranks of `comm` (one all-reduce of every gradient laid end to end,
// in rank order with the mpi backend); an undefined gradient counts as zeros. Nothing in a world of one.
void all_reduce_gradients(parallel::Communicator& comm, const std::vector<Tensor>& params);

// Whether `mine` holds on some rank (SIGINT/SIGTERM reached one rank: every rank stops at the same step).
bool on_any_rank(parallel::Communicator& comm, bool mine);

// Rank r's rows [begin, end) of a batch of `batch` samples: whole samples, as even as they go, in rank order.
parallel::RowRange batch_share(parallel::Communicator& comm, int64_t batch);

// The digest of one vector of decisions: the kept/flagged flag of every pair (viz::flagged_pairs: a weight counts
// by its side of 0.5, so a weight that moves in its last bits does not change it) or every label (CREAM's sets,
// corrected labels), and their count.
int64_t split_digest(const viz::EpochSplit& split);

// An epoch's plan as the ranks compare it: its step count and the digest of each vector of decisions that chose
// its batches (Method::plan_splits, in the method's order; none for a method or epoch without a split).
struct EpochPlanDigest {
  int64_t steps = 0;
  std::vector<int64_t> splits;
};
EpochPlanDigest epoch_plan_digest(int64_t steps, const std::vector<PlanSplit>& splits);

// The ranks' digests (rank order) must agree: every rank plans an epoch itself from values the ranks share, so on
// machines of one kind they agree to the bit; ranks that round otherwise (GPUs or CPUs of other kinds, other thread
// counts) could split differently and then train on different batches, or wait forever for a rank that planned
// fewer steps. An Error names the epoch, the first rank that differs from rank 0, what differs (the step count, or
// `what[i]` of the first vector whose digest differs: "net B's clean flags") and what to do.
void check_epoch_plans_agree(const std::vector<EpochPlanDigest>& per_rank, const std::vector<std::string>& what,
                             int64_t epoch);

// Gathers this rank's digest and checks it (nothing in a world of one). The trainer calls it at each epoch's
// start with the method's plan_splits (train/methods/trainer.cpp).
void check_ranks_plan_one_epoch(parallel::Communicator& comm, int64_t epoch, int64_t steps,
                                const std::vector<PlanSplit>& splits);

}  // namespace rematch::train
