// A Node is one recorded op of the backward graph: it maps the gradients of its outputs to the gradients of
// its inputs. Edges point at the nodes that produced the inputs (or at a leaf's gradient accumulator).
// Ops record themselves through `record()` (autograd/record.h); the engine (engine.cpp) walks the nodes.
// A backward function normally computes with the differentiable op API, so that with create_graph its results
// are recorded in turn (docs/design.md §3.5); one that cannot is marked once-differentiable, and
// differentiating its results again is an error that names it.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace rematch {

using TensorList = std::vector<Tensor>;
// grads of outputs -> grads of inputs (an undefined entry means "no gradient for this input").
using BackwardFn = std::function<TensorList(const TensorList& grad_outputs)>;

struct Edge {
  std::shared_ptr<Node> node;  // null: the input needs no gradient
  int input_nr = 0;            // which output slot of `node` the gradient feeds
};

// What the engine needs to know of an output to make a zero gradient for it.
struct OutputInfo {
  Shape sizes;
  DType dtype;
  Device device;
};

class Node : public std::enable_shared_from_this<Node> {
 public:
  Node(std::string name, BackwardFn fn) : name_(std::move(name)), fn_(std::move(fn)) {}
  virtual ~Node() = default;

  const std::string& name() const { return name_; }
  std::vector<Edge>& next_edges() { return next_; }
  std::vector<OutputInfo>& outputs() { return outputs_; }
  // Non-leaf outputs that asked for retain_grad(), per output slot.
  std::vector<std::weak_ptr<AutogradMeta>>& retained() { return retained_; }

  virtual TensorList apply(const TensorList& grad_outputs);
  // Drops the saved tensors after a backward pass without retain_graph.
  virtual void release();
  bool released() const { return released_; }
  bool once_differentiable() const { return once_differentiable_; }
  void set_once_differentiable() { once_differentiable_ = true; }

 protected:
  std::string name_;
  BackwardFn fn_;
  std::vector<Edge> next_;
  std::vector<OutputInfo> outputs_;
  std::vector<std::weak_ptr<AutogradMeta>> retained_;
  bool released_ = false;
  bool once_differentiable_ = false;
};

// The node whose backward function this thread is running (null outside the engine).
Node* running_node();

// The sink of a leaf tensor: adds incoming gradients into the leaf's .grad.
class AccumulateGrad : public Node {
 public:
  explicit AccumulateGrad(std::shared_ptr<AutogradMeta> leaf, OutputInfo info);
  TensorList apply(const TensorList& grad_outputs) override;
  void release() override {}

 private:
  std::shared_ptr<AutogradMeta> leaf_;
};

}  // namespace rematch
