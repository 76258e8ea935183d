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

EpochPlanDigest epoch_plan_digest(int64_t steps, const std::optional<viz::EpochSplit>& split) {
  EpochPlanDigest d;
  d.steps = steps;
  if (!split) return d;
  uint64_t h = 1469598103934665603ull;  // FNV-1a, 64 bits
  const auto mix = [&h](uint64_t v) {
    for (int i = 0; i < 8; ++i, v >>= 8) h = (h ^ (v & 0xff)) * 1099511628211ull;
  };
  mix(split->values.size());
  if (split->kind == viz::SplitKind::label) {
    for (double v : split->values) mix(static_cast<uint64_t>(static_cast<int64_t>(v)));
  } else {
    for (uint8_t f : viz::flagged_pairs(*split)) mix(f);
  }
  d.split = static_cast<int64_t>(h);
  return d;
}

void check_epoch_plans_agree(const std::vector<EpochPlanDigest>& per_rank, int64_t epoch) {
  for (size_t r = 1; r < per_rank.size(); ++r) {
    const EpochPlanDigest &a = per_rank[0], &b = per_rank[r];
    if (a.steps == b.steps && a.split == b.split) continue;
    REMATCH_FAIL("epoch ", epoch + 1, ": rank ", r, " planned ",
                 a.steps == b.steps ? "another split of the pairs" : std::to_string(b.steps) + " steps",
                 " than rank 0 (", a.steps, " steps): each rank computes the epoch's split from the same values, and ",
                 "machines that round differently (GPUs or CPUs of other kinds, other OMP_NUM_THREADS) split "
                 "differently; train on machines of one kind with the same thread count, or in one process (the "
                 "run resumes from its last checkpoint on any number of processes)");
  }
}

void check_ranks_plan_one_epoch(parallel::Communicator& comm, int64_t epoch, int64_t steps,
                                const std::optional<viz::EpochSplit>& split) {
  if (comm.world_size() == 1) return;
  const EpochPlanDigest mine = epoch_plan_digest(steps, split);
  const std::vector<int64_t> all =
      comm.all_gather(from_vector(std::vector<int64_t>{mine.steps, mine.split}, {1, 2})).to_vector<int64_t>();
  std::vector<EpochPlanDigest> per_rank;
  for (size_t i = 0; i + 1 < all.size(); i += 2) per_rank.push_back({all[i], all[i + 1]});
  check_epoch_plans_agree(per_rank, epoch);
}

}  // namespace rematch::train
