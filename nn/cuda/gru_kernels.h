// The CUDA kernels behind nn::GRU (nn/gru.h), internal to nn/: one GRU layer, both directions at once,
// forward and backward. The plan and the packed layout are the CPU path's (nn/cpu/gru_kernels.h: one GEMM for the
// input projections of all steps, then per step one GEMM with W_hh and one fused gate kernel), with the two
// directions stacked so each GEMM and each gate launch covers both: at step s the rows still running are the
// same prefix 0 .. active[s]-1 of the sorted batch in either direction (the reverse direction only reads a
// different time, len-1-s), so one strided-batched cuBLAS call per step serves both.
//
// Per step the forward is one GEMM (gh = h·W_hhᵀ, skipped at step 0 whose state is 0) and one gate kernel;
// the backward is one gate kernel and one GEMM (dh += d(W_hh h)·W_hh, skipped at step 0). The weight
// gradients follow as one GEMM each over all steps (dW_ih, dW_hh), the input gradient as one GEMM, and the
// bias gradients as column sums. Everything runs on the device's stream (tensor/cuda/runtime.h); float32 GEMMs
// use TF32 only when cuda::allow_tf32() says so (tensor/cuda/cuda_kernels.h).
//
// Implemented in nn/cuda/gru.cu in CUDA builds and by nn/cuda/gru_disabled.cpp (every call throws) in
// CPU-only builds, where no CUDA tensor can exist.
#pragma once

#include <vector>

#include "nn/cpu/gru_kernels.h"
#include "tensor/tensor.h"

namespace rematch::nn::gru_cuda {

// One layer on one CUDA device, as the forward leaves it for the backward. D directions, H hidden, I input.
struct Layer {
  gru_cpu::Packing packing;  // on the host: step sizes and offsets drive the launches
  // int32 on the device, concatenated: order [B] (sorted position -> original row), length [B] (of each
  // sorted position), offset [T+1] (first packed row of each step), source [total] (packed row -> b·T + t).
  Tensor index;
  Tensor x_packed;           // [total, I]: x's real rows in packed order
  // The parameters stacked over directions (views of the caller's tensors when D = 1).
  Tensor w_ih;               // [D, 3H, I]
  Tensor w_hh;               // [D, 3H, H]
  Tensor b_ih;               // [D, 3H]
  Tensor b_hh;               // [D, 3H]
  Tensor h_prev;             // [D, total, H]: the state each step started from (packed rows)
  Tensor gates;              // [D, total, 4H]: r, z, n and W_hn h + b_hn; undefined unless saved
};

struct LayerOutputs {
  Tensor output;  // [B, T, D·H]: zeros at t >= length
  Tensor h_n;     // [D, B, H]
};

// Uploads the packing's index tables, packs x and stacks the per-direction weights (all contiguous, on x's
// CUDA device, of x's dtype; checked by the caller).
Layer prepare(const gru_cpu::Packing& packing, const Tensor& x, const std::vector<gru_cpu::DirectionWeights>& w);

// Runs every direction of `layer`; fills layer.h_prev, and layer.gates when `save`.
LayerOutputs forward(Layer& layer, bool save);

struct LayerGrads {
  Tensor x;                       // [B, T, I], zeros at t >= length
  Tensor w_ih, w_hh, b_ih, b_hh;  // stacked as in Layer
};

// The backward of forward(layer, save = true). grad_output [B, T, D·H] and grad_h_n [D, B, H] are contiguous
// on the layer's device. The input gradient is computed when `input_grad`, the four weight gradients when
// `weight_grads`; the others stay undefined.
LayerGrads backward(const Layer& layer, const Tensor& grad_output, const Tensor& grad_h_n, bool input_grad,
                    bool weight_grads);

}  // namespace rematch::nn::gru_cuda
