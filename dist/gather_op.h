// The collective that data-parallel training differentiates through (docs/distributed.md §4): rows of every
// rank stacked in rank order, with gradient. Each rank computes its own loss on the gathered rows; the run's
// loss is the sum over ranks, so the gradient of rank k's rows is the sum over ranks of each one's gradient
// for those rows: the backward of the gather is a reduce-scatter (Communicator::reduce_scatter_sum).
#pragma once

#include "dist/communicator.h"

namespace rematch::dist {

// all_gather(x) of `comm`, recorded for autograd (op name "all_gather"); the ranks' first dims may differ.
Tensor all_gather_rows(Communicator& comm, const Tensor& x);

}  // namespace rematch::dist
