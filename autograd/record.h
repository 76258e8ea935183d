// How a differentiable op joins the graph. An op computes its outputs with kernels::, then calls
//
//   return record("exp", {x}, y, [y = y.detach()](const TensorList& g) { return TensorList{mul(g[0], y)}; });
//
// When grad mode is on and some input requires grad, record() makes a Node whose edges point at the inputs,
// marks the outputs as its results and returns them. Capture only what backward needs, and capture outputs
// detached (a captured output would own its own node: a cycle). In anomaly mode every output is checked for
// NaN/Inf here, so the error names the first op that produced one.
#pragma once

#include "autograd/node.h"

namespace rematch {

Tensor record(const char* name, const TensorList& inputs, const Tensor& output, BackwardFn backward);
TensorList record(const char* name, const TensorList& inputs, const TensorList& outputs, BackwardFn backward);
// True when an op with these inputs would be recorded.
bool any_requires_grad(const TensorList& inputs);

// Anomaly mode's test: any NaN or Inf in a floating tensor.
bool has_non_finite(const Tensor& t);

// Sums a broadcast gradient back to `shape` (the backward of broadcasting).
Tensor sum_to(const Tensor& grad, const Shape& shape);

}  // namespace rematch
