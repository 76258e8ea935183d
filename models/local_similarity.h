// The local similarity vectors of docs/backbones.md §4.4, fused with step 5 of the attention (§4.3), for every
// (image, caption, word) of a call, as one graph node that recomputes instead of storing:
//   y[k,c,t] = W_l (a[k,c,t] − w[c,t])^{∘2} + b_l,   a[k,c,t] = l2n(Σ_r α[k,c,t,r] v[k,r])
// at real words and y = 0 at padded ones (the similarity encoder then takes l2n(y), l2n(0) = 0).
//
// Why fused: written with ops, autograd would keep three or four pair-level d-wide tensors alive until
// backward (Σαv, its l2n, the difference, its square: each [B_img·B_cap·L, d], 0.94 GB at batch 128, L = 14,
// d = 1024; §5.2). This node keeps only its inputs (α is [B_img, B_cap, L, R], 28× smaller than one of them),
// and both passes walk the images in chunks of at most `chunk_elements` d-wide values, recomputing Σαv,
// the l2n and the difference for the chunk in backward. Peak extra memory is two chunk-sized temporaries in the
// forward pass and three in backward (without create_graph: the difference and the gradients are formed in
// place, kernels::binary_; the op-by-op backward held seven, 109 MiB of SAF's 166 MiB step peak at the reduced
// dims of bench/sgraf_step_bench.cpp);
// the price is one extra [chunk·B_cap·L, R] x [R, d] product per chunk in backward (≈ 4 % of the node's FLOPs).
#pragma once

#include <cstdint>

#include "autograd/autograd.h"

namespace rematch::models {

// 2 Mi values: 8 MiB per float32 temporary. (It was 4 Mi: the backward's three chunk-sized temporaries were then
// the peak of SAF's one-pass step, 48 of its 114 MiB at the reduced dims of bench/sgraf_step_bench.cpp. The chunks
// change the order of the sums over images, so one-pass gradients moved by rounding: the golden steps hold.)
constexpr int64_t kLocalSimilarityChunkElements = int64_t{1} << 21;

// alpha [B_img, B_cap, L, R] (attention_weights), regions [B_img, R, d], words [B_cap, L, d], word_mask bool
// [B_cap, L], weight [m, d], bias [m] -> [B_img, B_cap, L, m]. Differentiable w.r.t. alpha, regions, words,
// weight and bias; padded rows neither produce values nor pass gradients.
Tensor local_similarity(const Tensor& alpha, const Tensor& regions, const Tensor& words, const Tensor& word_mask,
                        const Tensor& weight, const Tensor& bias,
                        int64_t chunk_elements = kLocalSimilarityChunkElements);

}  // namespace rematch::models
