#include "train/methods/data_parallel.h"

#include "autograd/autograd.h"
#include "tensor/kernels.h"

namespace rematch::train {

void all_reduce_gradients(parallel::Communicator& comm, const std::vector<Tensor>& params) {
  if (comm.world_size() == 1 || params.empty()) return;
  NoGradGuard no_grad;
  std::vector<Tensor> flat;
  for (const Tensor& p : params)
    flat.push_back(p.grad().defined() ? kernels::reshape(kernels::contiguous(p.grad()), {p.numel()})
                                      : zeros({p.numel()}, p.dtype(), p.device()));
  const Tensor sum = comm.all_reduce_sum(kernels::cat(flat, 0));
  int64_t at = 0;
  for (const Tensor& p : params) {
    p.set_grad(kernels::reshape(kernels::contiguous(kernels::narrow(sum, 0, at, p.numel())), p.sizes()));
    at += p.numel();
  }
}

bool on_any_rank(parallel::Communicator& comm, bool mine) {
  if (comm.world_size() == 1) return mine;
  return comm.all_reduce_sum(from_vector(std::vector<int64_t>{mine ? 1 : 0}, {1})).to_vector<int64_t>()[0] > 0;
}

parallel::RowRange batch_share(parallel::Communicator& comm, int64_t batch) {
  return parallel::block_rows(batch, 1, comm.rank(), comm.world_size());
}

int64_t split_digest(const viz::EpochSplit& split) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a, 64 bits
  const auto mix = [&h](uint64_t v) {
    for (int i = 0; i < 8; ++i, v >>= 8) h = (h ^ (v & 0xff)) * 1099511628211ull;
  };
  mix(split.values.size());
  if (split.kind == viz::SplitKind::label) {
    for (double v : split.values) mix(static_cast<uint64_t>(static_cast<int64_t>(v)));
  } else {
    for (uint8_t f : viz::flagged_pairs(split)) mix(f);
  }
  return static_cast<int64_t>(h);
}

EpochPlanDigest epoch_plan_digest(int64_t steps, const std::vector<PlanSplit>& splits) {
  EpochPlanDigest d;
  d.steps = steps;
  for (const PlanSplit& s : splits) d.splits.push_back(split_digest(s.split));
  return d;
}

void check_epoch_plans_agree(const std::vector<EpochPlanDigest>& per_rank, const std::vector<std::string>& what,
                             int64_t epoch) {
  const std::string advice =
      ": each rank computes the epoch's split from the same values, and machines that round differently (GPUs or "
      "CPUs of other kinds, other OMP_NUM_THREADS) split differently; train on machines of one kind with the same "
      "thread count, or in one process (the run resumes from its last checkpoint on any number of processes)";
  for (size_t r = 1; r < per_rank.size(); ++r) {
    const EpochPlanDigest &a = per_rank[0], &b = per_rank[r];
    if (a.steps != b.steps)
      REMATCH_FAIL("epoch ", epoch + 1, ": rank ", r, " planned ", b.steps, " steps than rank 0 (", a.steps,
                   " steps)", advice);
    if (a.splits.size() != b.splits.size())
      REMATCH_FAIL("epoch ", epoch + 1, ": rank ", r, " reported ", b.splits.size(), " vectors of split decisions, rank 0 ",
                   a.splits.size(), " (a method that reports its split only on some ranks is a bug)", advice);
    for (size_t i = 0; i < a.splits.size(); ++i) {
      if (a.splits[i] == b.splits[i]) continue;
      REMATCH_FAIL("epoch ", epoch + 1, ": rank ", r, " planned another split of the pairs than rank 0 (",
                   i < what.size() ? what[i] : "split " + std::to_string(i), " differ; ", a.steps, " steps on both)",
                   advice);
    }
  }
}

void check_ranks_plan_one_epoch(parallel::Communicator& comm, int64_t epoch, int64_t steps,
                                const std::vector<PlanSplit>& splits) {
  if (comm.world_size() == 1) return;
  const EpochPlanDigest mine = epoch_plan_digest(steps, splits);
  // Two gathers: the step count and how many vectors, then (every rank reporting as many) their digests.
  const std::vector<int64_t> head =
      comm.all_gather(from_vector(std::vector<int64_t>{mine.steps, static_cast<int64_t>(mine.splits.size())}, {1, 2}))
          .to_vector<int64_t>();
  std::vector<EpochPlanDigest> per_rank;
  bool same_count = true;
  for (size_t i = 0; i + 1 < head.size(); i += 2) {
    per_rank.push_back({head[i], std::vector<int64_t>(static_cast<size_t>(head[i + 1]), 0)});
    same_count = same_count && head[i + 1] == head[1];
  }
  if (same_count && !mine.splits.empty()) {  // every rank takes this branch or none (the same gathered head)
    const int64_t n = static_cast<int64_t>(mine.splits.size());
    const std::vector<int64_t> all = comm.all_gather(from_vector(mine.splits, {1, n})).to_vector<int64_t>();
    for (size_t r = 0; r < per_rank.size(); ++r)
      for (size_t i = 0; i < static_cast<size_t>(n); ++i) per_rank[r].splits[i] = all[r * static_cast<size_t>(n) + i];
  }
  std::vector<std::string> what;
  for (const PlanSplit& s : splits) what.push_back(s.what);
  check_epoch_plans_agree(per_rank, what, epoch);
}

}  // namespace rematch::train
