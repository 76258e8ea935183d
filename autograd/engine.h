// The backward pass: walks the graph below its roots once, in reverse topological order, summing gradients per
// node, and either accumulates them into the .grad of leaves (backward) or returns those of chosen inputs (grad).
//
// Higher order: with create_graph the backward functions run with grad mode on, so the gradients they return
// are recorded like any other computation and can be differentiated again, to any order (docs/design.md §3.5).
// Without it they run with grad mode off: the same kernels, no graph, nothing kept.
#pragma once

#include <optional>

#include "autograd/node.h"

namespace rematch {

// Gradient of `root` with respect to every leaf that requires grad, added into each leaf's .grad. `grad`
// defaults to 1 for a one-element root (any other root needs it). Without retain_graph the graph's saved
// tensors are freed afterwards, and a second backward through it is an error. With create_graph the gradients
// written to .grad carry a graph (and the graph below `root` is kept: the new graph refers to it); a leaf's
// .grad then refers back to the leaf, so zero_grad() the leaves when done to free both.
void backward(const Tensor& root, const Tensor& grad = Tensor(), bool retain_graph = false, bool create_graph = false);

struct GradOptions {
  bool create_graph = false;         // record the backward pass so that its results can be differentiated again
  std::optional<bool> retain_graph;  // keep the graph's saved tensors; unset: keep them when create_graph
  bool allow_unused = false;         // an input the outputs do not depend on gets an undefined gradient
};

// The gradients of Σ_k <outputs[k], grad_outputs[k]> with respect to `inputs` (each must require grad), returned
// in the order of `inputs` and not accumulated into any .grad (torch.autograd.grad). grad_outputs may be empty
// (every output must then have one element; the gradient is 1) or hold one entry per output (an undefined one
// means 1 for a one-element output). Only the part of the graph between the outputs and the inputs runs.
TensorList grad(const TensorList& outputs, const TensorList& inputs, const TensorList& grad_outputs = {},
                const GradOptions& options = {});

}  // namespace rematch
