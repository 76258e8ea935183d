// The collective that data-parallel training differentiates through (docs/distributed.md §4): rows of every
// rank stacked in rank order, with gradient. Two backwards, by what the ranks do with the gathered rows:
//   Backward::SumOverRanks  each rank computes its own part of the loss from the gathered rows; the run's loss is
//                           the sum over ranks, so the gradient of rank k's rows is the sum over ranks of each
//                           one's gradient for those rows: a reduce-scatter (Communicator::reduce_scatter_sum).
//   Backward::OwnRows       every rank computes the same whole loss from the gathered rows (the batch-coupled
//                           losses on the gathered score matrix): each rank's gradient for the gathered tensor is
//                           already the run's, and rank k keeps the rows it contributed (no sum: a sum would count
//                           the loss once per rank).
#pragma once

#include "parallel/communicator.h"

namespace rematch::parallel {

enum class GatherBackward { SumOverRanks, OwnRows };

// all_gather(x) of `comm`, recorded for autograd (op name "all_gather"); the ranks' first dims may differ. Both
// backwards are themselves differentiable (the reduce-scatter is recorded, its backward the gather), so gradients
// through the gather can be differentiated again (autograd::grad with create_graph, on every rank alike).
Tensor all_gather_rows(Communicator& comm, const Tensor& x, GatherBackward backward = GatherBackward::SumOverRanks);

}  // namespace rematch::parallel
