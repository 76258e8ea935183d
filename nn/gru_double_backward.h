// The derivative of the GRU layer's fused backward, internal to nn/. Without create_graph nn/gru.cpp's node returns
// the kernels' gradients as they are. With it, they are recorded as the outputs of one more op, "gru_backward", of
// (x, the weights, grad_output, grad_h_n), whose own backward differentiates the same gradients taken through
// the composite layer (nn/gru_composite.h): the kernels give the values, autograd of the composite their
// derivatives, to any order.
#pragma once

#include "nn/cpu/gru_kernels.h"
#include "tensor/tensor.h"

namespace rematch::nn {

// x_packed: the layer's input in direction 0's packed order (as the kernels keep it) and x_meta: the input's
// autograd metadata, so that the input comes back as a differentiable tensor; `weights` as gru() takes them;
// grad_output and grad_h_n: the gradients that reached the layer; `grads`: the kernels' result, one per input
// (x, then the weights), undefined where not needed. Returns `grads` recorded as above.
std::vector<Tensor> record_gru_backward(const gru_cpu::Packing& packing, const Tensor& x_packed,
                                        const std::shared_ptr<AutogradMeta>& x_meta,
                                        const std::vector<Tensor>& weights, const Tensor& grad_output,
                                        const Tensor& grad_h_n, const std::vector<Tensor>& grads);

}  // namespace rematch::nn
