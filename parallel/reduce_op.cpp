#include "parallel/reduce_op.h"

#include "autograd/autograd.h"

namespace rematch::parallel {

Tensor all_reduce_sum_recorded(Communicator& comm, const Tensor& x, ReduceBackward backward) {
  REMATCH_CHECK(x.defined(), "all_reduce_sum_recorded: needs a tensor");
  const Tensor y = comm.all_reduce_sum(x.detach());
  if (backward == ReduceBackward::WholeLossOnEveryRank)
    return record("all_reduce", {x}, y, [](const TensorList& g) { return TensorList{g[0]}; });
  return record("all_reduce", {x}, y, [&comm](const TensorList& g) {
    return TensorList{all_reduce_sum_recorded(comm, g[0], ReduceBackward::SumOverRanks)};
  });
}

}  // namespace rematch::parallel
