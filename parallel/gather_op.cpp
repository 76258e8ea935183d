#include "parallel/gather_op.h"

#include "autograd/autograd.h"
#include "tensor/kernels.h"

namespace rematch::parallel {

namespace {

// comm.reduce_scatter_sum(g, rows), recorded for autograd (op name "reduce_scatter"): all_gather_rows's
// SumOverRanks backward. Its own backward is the all_gather again (the two are each other's adjoints), so a
// gradient through the gather differentiates again, to any order (docs/design.md §3.5; a meta step run on several
// ranks differentiates through it twice).
Tensor reduce_scatter_rows(Communicator& comm, const Tensor& g, const std::vector<int64_t>& rows) {
  const Tensor y = comm.reduce_scatter_sum(g.detach(), rows);
  return record("reduce_scatter", {g}, y, [&comm](const TensorList& h) {
    return TensorList{all_gather_rows(comm, h[0], GatherBackward::SumOverRanks)};
  });
}

}  // namespace

Tensor all_gather_rows(Communicator& comm, const Tensor& x, GatherBackward backward) {
  REMATCH_CHECK(x.defined() && x.dim() >= 1, "all_gather_rows: needs a tensor of at least one dimension");
  // Every rank's row count, for the backward's scatter (a small gather of its own).
  const Tensor counts = comm.all_gather(from_vector(std::vector<int64_t>{x.size(0)}, {1}));
  const std::vector<int64_t> rows = kernels::to_device(counts, Device::cpu()).to_vector<int64_t>();
  const Tensor y = comm.all_gather(x.detach());
  if (backward == GatherBackward::OwnRows) {
    // The rows this rank contributed, cut with the differentiable narrow (its derivative is local: no collective).
    const RowRange mine = scattered_rows(y, rows, comm.rank(), comm.world_size());
    return record("all_gather", {x}, y, [mine](const TensorList& g) {
      return TensorList{contiguous(narrow(g[0], 0, mine.begin, mine.end - mine.begin))};
    });
  }
  return record("all_gather", {x}, y, [&comm, rows](const TensorList& g) {
    return TensorList{reduce_scatter_rows(comm, g[0], rows)};
  });
}

}  // namespace rematch::parallel
