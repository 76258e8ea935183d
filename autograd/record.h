// How a differentiable op joins the graph. An op computes its outputs with kernels::, then calls
//
//   return record("exp", {x}, y, [y = y.detach()](const TensorList& g) {
//     return TensorList{mul(g[0], saved_output(y))};
//   });
//
// When grad mode is on and some input requires grad, record() makes a Node whose edges point at the inputs,
// marks the outputs as its results and returns them. In anomaly mode every output is checked for NaN/Inf
// here, so the error names the first op that produced one.
//
// The backward function is written with the differentiable op API (ops.h), so that when the engine runs it
// with create_graph (grad mode on) its result is recorded and can be differentiated again (docs/design.md
// §3.5); without create_graph the same ops run their kernels and record nothing. What it captures:
//   - an input: the input tensor itself (not detached), so that its result depends on the input's graph;
//   - an output: detached (a node that owned its output would own itself: a cycle), and read back through
//     saved_output(), which re-attaches it to the running node when a graph is being recorded;
//   - constants (masks, indices, shapes): as they are.
// A backward that cannot be written so (a kernel with no derivative of its own) is recorded with
// record_once_differentiable(): differentiating its gradients again is then an error that names the op.
#pragma once

#include "autograd/node.h"

namespace rematch {

Tensor record(const char* name, const TensorList& inputs, const Tensor& output, BackwardFn backward);
TensorList record(const char* name, const TensorList& inputs, const TensorList& outputs, BackwardFn backward);
Tensor record_once_differentiable(const char* name, const TensorList& inputs, const Tensor& output,
                                  BackwardFn backward);
// True when an op with these inputs would be recorded.
bool any_requires_grad(const TensorList& inputs);

// Inside a backward function: output `output_nr` of the running node, captured detached. While the engine
// records a graph (create_graph) it comes back as that output again (its gradient flows into the running
// node), so that a formula using it differentiates through it; otherwise it is returned as it is.
Tensor saved_output(const Tensor& output, int output_nr = 0);

// A tensor whose values are `data` and whose place in the graph is that of the tensor `meta` belongs to: for a
// backward that keeps an input's values in another buffer (a packed copy) and only the input's autograd
// metadata, and needs the input back as a differentiable value.
Tensor with_autograd_meta(const Tensor& data, const std::shared_ptr<AutogradMeta>& meta);

// Where a gradient for `t` enters the graph: the node that produced it, or a leaf's gradient accumulator.
// Null node when t does not require grad.
Edge gradient_edge(const Tensor& t);

// Anomaly mode's test: any NaN or Inf in a floating tensor.
bool has_non_finite(const Tensor& t);

// Sums a broadcast gradient back to `shape` (the backward of broadcasting); differentiable.
Tensor sum_to(const Tensor& grad, const Shape& shape);

}  // namespace rematch
