#include "dist/gather_op.h"

#include "autograd/autograd.h"
#include "tensor/kernels.h"

namespace rematch::dist {

Tensor all_gather_rows(Communicator& comm, const Tensor& x) {
  REMATCH_CHECK(x.defined() && x.dim() >= 1, "all_gather_rows: needs a tensor of at least one dimension");
  // Every rank's row count, for the backward's scatter (a small gather of its own).
  const Tensor counts = comm.all_gather(from_vector(std::vector<int64_t>{x.size(0)}, {1}));
  const std::vector<int64_t> rows = kernels::to_device(counts, Device::cpu()).to_vector<int64_t>();
  const Tensor y = comm.all_gather(x.detach());
  return record("all_gather", {x}, y, [&comm, rows](const TensorList& g) {
    return TensorList{comm.reduce_scatter_sum(g[0], rows)};
  });
}

}  // namespace rematch::dist
