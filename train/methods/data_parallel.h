// Data-parallel training under mpirun (docs/distributed.md §4): what the trainer and the methods that opt in
// (Method::trains_data_parallel) share. Every rank holds the same parameters, optimizer state and generators
// and draws the same numbers; a step computes its share of the batch, the batch-coupled losses see the whole
// batch, and the parameters' gradients are summed over ranks before clipping, so the step is one process's.
#pragma once

#include <vector>

#include "dist/communicator.h"
#include "tensor/tensor.h"

namespace rematch::train {

// The parameters' gradients summed over the ranks of `comm` (one all-reduce of every gradient laid end to end,
// in rank order with the mpi backend); an undefined gradient counts as zeros. Nothing in a world of one.
void all_reduce_gradients(dist::Communicator& comm, const std::vector<Tensor>& params);

// Whether `mine` holds on some rank (SIGINT/SIGTERM reached one rank: every rank stops at the same step).
bool on_any_rank(dist::Communicator& comm, bool mine);

// Rank r's rows [begin, end) of a batch of `batch` samples: whole samples, as even as they go, in rank order.
dist::RowRange batch_share(dist::Communicator& comm, int64_t batch);

}  // namespace rematch::train
