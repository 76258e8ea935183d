// The sum over ranks recorded for autograd (docs/distributed.md §4.1, MSCN's item): what a data-parallel meta step
// differentiates through when a value that every rank needs whole (MSCN's virtual step θ' = θ − lr·∇θL, ∇θL being
// the sum of the ranks' shares) is itself a function of what is being learnt. Two backwards, by what the ranks do
// with the sum, as all_gather_rows's two (gather_op.h):
//   ReduceBackward::WholeLossOnEveryRank  every rank computes the same whole loss J from the sum y = Σ_r x_r, and J
//                       counts once (not once per rank): the gradient each rank holds for y is the run's ∂J/∂y, and
//                       since ∂y/∂x_r = I, rank r's gradient for its x_r is that same ∂J/∂y: passed through
//                       unchanged, no collective. Exact wherever the gradient a rank holds for y is the whole one
//                       (a loss computed whole on every rank, as GatherBackward::OwnRows assumes); recorded as the
//                       identity, so the gradient is differentiable again on every rank alike.
//   ReduceBackward::SumOverRanks  each rank's loss is a share and the run's loss is their sum: the gradient for y is
//                       a share too, and rank r's gradient for x_r is the sum over ranks of the ranks' gradients for
//                       y (an all-reduce, recorded, its own backward the same all-reduce: the sum is its own adjoint),
//                       so gradients through it differentiate again to any order under that convention.
// The identity is not right where the gradient for y becomes a share in a later derivative: d/dw of a rank's share of
// ∂J/∂w, when that share depends on y non-linearly, holds a share of the second derivative's gradient for y
// (tests/parallel/mpi_collectives.cpp shows both cases). MSCN's meta step has no such path: see docs/distributed.md §4.1, item 13.
#pragma once

#include "parallel/communicator.h"

namespace rematch::parallel {

enum class ReduceBackward { WholeLossOnEveryRank, SumOverRanks };

// comm.all_reduce_sum(x) (the sum in rank order on the mpi backend), recorded for autograd (op name "all_reduce").
Tensor all_reduce_sum_recorded(Communicator& comm, const Tensor& x, ReduceBackward backward);

}  // namespace rematch::parallel
