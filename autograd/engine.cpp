#include "autograd/engine.h"

#include <unordered_map>

#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/record.h"

namespace rematch {

TensorList Node::apply(const TensorList& grad_outputs) {
  REMATCH_CHECK(!released_, "backward through '", name_,
                "' a second time: its saved tensors were freed by the first backward; "
                "pass retain_graph=true to the first call");
  return fn_(grad_outputs);
}

void Node::release() {
  fn_ = nullptr;
  next_.clear();
  released_ = true;
}

AccumulateGrad::AccumulateGrad(std::shared_ptr<AutogradMeta> leaf, OutputInfo info)
    : Node("AccumulateGrad", nullptr), leaf_(std::move(leaf)) {
  outputs_.push_back(std::move(info));
}

TensorList AccumulateGrad::apply(const TensorList& grad_outputs) {
  const Tensor& g = grad_outputs[0];
  // A fresh buffer: the incoming gradient may be shared with other leaves (add's backward passes it on).
  if (!leaf_->grad.defined()) leaf_->grad = kernels::clone(g);
  else leaf_->grad = kernels::binary(kernels::BinaryOp::Add, leaf_->grad, g);
  return {};
}

namespace {

// Marks the thread as running a node's backward for the guard's lifetime (see in_backward()).
struct BackwardScope {
  BackwardScope() { set_in_backward(true); }
  ~BackwardScope() { set_in_backward(false); }
};

}  // namespace

void backward(const Tensor& root, const Tensor& grad, bool retain_graph) {
  REMATCH_CHECK(root.defined(), "backward: undefined tensor");
  REMATCH_CHECK(root.requires_grad(), "backward: ", root.describe(),
                " does not require grad (no input of the ops that made it requires grad)");
  Tensor seed = grad;
  if (!seed.defined()) {
    REMATCH_CHECK(root.numel() == 1, "backward: ", root.describe(),
                  " is not a scalar; pass the gradient of the output explicitly");
    seed = ones(root.sizes(), root.dtype(), root.device());
  }
  REMATCH_CHECK(seed.sizes() == root.sizes() && seed.dtype() == root.dtype(), "backward: gradient ",
                seed.describe(), " does not match output ", root.describe());

  NoGradGuard no_grad;
  AutogradMeta& root_meta = root.autograd_meta();
  std::shared_ptr<Node> root_node = root_meta.grad_fn;
  if (!root_node) {  // backward on a leaf: its gradient is the seed
    root.set_grad(root.grad().defined() ? kernels::binary(kernels::BinaryOp::Add, root.grad(), seed)
                                        : kernels::clone(seed));
    return;
  }

  // Count, for every node reachable from the root, how many edges point at it.
  std::unordered_map<Node*, int> dependencies;
  std::vector<Node*> stack{root_node.get()};
  dependencies[root_node.get()] = 0;
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (Edge& e : n->next_edges()) {
      if (!e.node) continue;
      auto [it, inserted] = dependencies.try_emplace(e.node.get(), 0);
      ++it->second;
      if (inserted) stack.push_back(e.node.get());
    }
  }

  // Gradients waiting for each node, one slot per output; a node runs once every consumer has run.
  std::unordered_map<Node*, TensorList> pending;
  pending[root_node.get()].resize(root_node->outputs().size());
  pending[root_node.get()][root_meta.output_nr] = seed;
  std::vector<std::shared_ptr<Node>> ready{root_node};
  while (!ready.empty()) {
    std::shared_ptr<Node> node = ready.back();
    ready.pop_back();
    auto found = pending.find(node.get());
    if (found == pending.end()) {  // every path into this node carried no gradient
      for (Edge& e : node->next_edges())
        if (e.node && --dependencies[e.node.get()] == 0) ready.push_back(e.node);
      if (!retain_graph) node->release();
      continue;
    }
    TensorList grads = std::move(found->second);
    pending.erase(found);
    grads.resize(node->outputs().size());
    for (size_t i = 0; i < grads.size(); ++i) {
      if (!grads[i].defined()) {
        const OutputInfo& info = node->outputs()[i];
        grads[i] = zeros(info.sizes, info.dtype, info.device);
      }
      if (i < node->retained().size())
        if (auto meta = node->retained()[i].lock(); meta && meta->retains_grad)
          meta->grad = meta->grad.defined() ? kernels::binary(kernels::BinaryOp::Add, meta->grad, grads[i])
                                            : kernels::clone(grads[i]);
    }
    TensorList input_grads;
    {
      BackwardScope scope;
      input_grads = node->apply(grads);
    }
    std::vector<Edge>& edges = node->next_edges();
    REMATCH_CHECK(input_grads.size() <= edges.size(), "backward of '", node->name(),
                  "' returned ", input_grads.size(), " gradients for ", edges.size(), " inputs");
    for (size_t i = 0; i < edges.size(); ++i) {
      Edge& e = edges[i];
      if (!e.node) continue;
      Tensor g = i < input_grads.size() ? input_grads[i] : Tensor();
      if (g.defined()) {
        const OutputInfo& target = e.node->outputs()[e.input_nr];
        REMATCH_CHECK(g.sizes() == target.sizes, "backward of '", node->name(), "': gradient for input ", i,
                      " has shape ", g.shape_str(), ", expected ", shape_str(target.sizes));
        if (anomaly_mode())
          REMATCH_CHECK(!has_non_finite(g), "anomaly mode: backward of '", node->name(),
                        "' produced NaN or Inf in the gradient of input ", i, " (", g.describe(), ")");
        TensorList& slot = pending[e.node.get()];
        slot.resize(e.node->outputs().size());
        Tensor& acc = slot[e.input_nr];
        acc = acc.defined() ? kernels::binary(kernels::BinaryOp::Add, acc, g) : g;
      }
      if (--dependencies[e.node.get()] == 0) ready.push_back(e.node);
    }
    if (!retain_graph) node->release();
  }
}

}  // namespace rematch
