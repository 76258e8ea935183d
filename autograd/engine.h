// The backward pass: walks the graph below a tensor once, in reverse topological order, summing gradients
// per node and accumulating into the .grad of leaves.
#pragma once

#include "tensor/tensor.h"

namespace rematch {

// Gradient of `root` with respect to every leaf that requires grad. `grad` defaults to 1 for a one-element
// root (any other root needs it). Without retain_graph the graph's saved tensors are freed afterwards, and a
// second backward through it is an error.
void backward(const Tensor& root, const Tensor& grad = Tensor(), bool retain_graph = false);

}  // namespace rematch
