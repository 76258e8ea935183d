// The CPU kernels behind nn::GRU (nn/gru.h), internal to nn/: one direction of one GRU layer, forward and
// backward, over a batch laid out as a packed sequence. The structure is the standard fast one (Appleyard et
// al. 2016, arXiv:1604.01946): one GEMM for the input projections of all steps, then per step one GEMM with
// W_hh and one fused gate loop (OpenMP over the rows); the backward runs the steps in reverse and ends with one
// GEMM each for dW_ih, dW_hh and the input gradient.
//
// Packed layout: the batch rows are sorted by decreasing length (stable), so at step s the rows still running
// are a prefix 0 .. active[s]-1 of that order and no step computes on padding. Per-step data of a direction
// (the state each step starts from, the gates) sit at packed rows offset[s] + i; the input of sorted row i at
// time t sits at packed row offset[t] + i for both directions (the reverse direction reads time len-1-s at its
// step s, which starts it at each sequence's last real token, as PyTorch's packed sequences do).
#pragma once

#include <cstdint>
#include <vector>

#include "tensor/tensor.h"

namespace rematch::nn::gru_cpu {

struct Packing {
  int64_t batch = 0;
  int64_t steps = 0;
  int64_t total = 0;             // sum of the lengths: rows of every packed buffer
  std::vector<int64_t> length;   // per original row
  std::vector<int64_t> order;    // sorted position i -> original row
  std::vector<int64_t> active;   // per step: rows with length > step
  std::vector<int64_t> offset;   // per step: first packed row; offset[steps] = total
};

// `lengths` must already be checked to lie in 1..steps.
Packing make_packing(const std::vector<int64_t>& lengths, int64_t steps);

// x [B, T, I] (contiguous) -> [total, I] in packed order, and the reverse (zeros at the padding).
Tensor pack_rows(const Packing& p, const Tensor& x);
Tensor unpack_rows(const Packing& p, const Tensor& packed, int64_t feature_size);

// The parameters of one direction, contiguous, in PyTorch's layout (gate blocks r, z, n).
struct DirectionWeights {
  Tensor w_ih;  // [3H, I]
  Tensor w_hh;  // [3H, H]
  Tensor b_ih;  // [3H]
  Tensor b_hh;  // [3H]
};

// What the forward keeps for the backward of one direction.
struct DirectionSaved {
  Tensor h_prev;  // [total, H]: the state each step started from
  Tensor gates;   // [total, 4H]: r, z, n and W_hn h + b_hn
};

// Runs direction `dir` (0 forward in time, 1 reverse) and writes its slice of output [B, T, D·H] (which must
// hold zeros at the padding already) and h_n[dir] [B, H]. Saves the backward's data when `save`.
DirectionSaved forward_direction(const Packing& p, int64_t dir, const Tensor& x_packed, const DirectionWeights& w,
                                 const Tensor& output, const Tensor& h_n, bool save);

struct DirectionGrads {
  Tensor w_ih, w_hh, b_ih, b_hh;  // undefined when not asked for
};

// The backward of forward_direction. grad_output [B, T, D·H] and grad_h_n [D, B, H] are contiguous. When
// `dx_packed` is defined, this direction's input gradient is added into it ([total, I]; `accumulate` false
// overwrites it instead).
DirectionGrads backward_direction(const Packing& p, int64_t dir, const Tensor& x_packed, const DirectionWeights& w,
                                  const DirectionSaved& saved, const Tensor& grad_output, const Tensor& grad_h_n,
                                  bool weight_grads, const Tensor& dx_packed, bool accumulate);

}  // namespace rematch::nn::gru_cpu
