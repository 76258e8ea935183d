#include "parallel/gather_op.h"

#include "autograd/autograd.h"
#include "tensor/kernels.h"

namespace rematch::parallel {

Tensor all_gather_rows(Communicator& comm, const Tensor& x, GatherBackward backward) {
  REMATCH_CHECK(x.defined() && x.dim() >= 1, "all_gather_rows: needs a tensor of at least one dimension");
  // Every rank's row count, for the backward's scatter (a small gather of its own).
  const Tensor counts = comm.all_gather(from_vector(std::vector<int64_t>{x.size(0)}, {1}));
  const std::vector<int64_t> rows = kernels::to_device(counts, Device::cpu()).to_vector<int64_t>();
  const Tensor y = comm.all_gather(x.detach());
  if (backward == GatherBackward::OwnRows) {
    const RowRange mine = scattered_rows(y, rows, comm.rank(), comm.world_size());
    return record("all_gather", {x}, y, [mine](const TensorList& g) {
      return TensorList{kernels::contiguous(kernels::narrow(g[0], 0, mine.begin, mine.end - mine.begin))};
    });
  }
  return record("all_gather", {x}, y, [&comm, rows](const TensorList& g) {
    return TensorList{comm.reduce_scatter_sum(g[0], rows)};
  });
}

}  // namespace rematch::parallel
