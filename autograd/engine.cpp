#include "autograd/engine.h"

#include <unordered_map>

#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "autograd/record.h"

namespace rematch {

namespace {

thread_local Node* t_running_node = nullptr;

// Marks the thread as running `node`'s backward for the scope's lifetime (in_backward(), running_node()). A
// backward function may run the engine itself (nn/gru_double_backward.cpp), so both are restored afterwards.
class BackwardScope {
 public:
  explicit BackwardScope(Node* node) : prev_in_backward_(in_backward()), prev_node_(t_running_node) {
    set_in_backward(true);
    t_running_node = node;
  }
  ~BackwardScope() {
    set_in_backward(prev_in_backward_);
    t_running_node = prev_node_;
  }

 private:
  bool prev_in_backward_;
  Node* prev_node_;
};

// The engine's own sums and copies: recorded only while it builds a graph (create_graph), so that without one
// they are the plain kernels they always were.
Tensor add_gradients(const Tensor& a, const Tensor& b) {
  return grad_enabled() ? add(a, b) : kernels::binary(kernels::BinaryOp::Add, a, b);
}
Tensor fresh_copy(const Tensor& g) { return grad_enabled() ? clone(g) : kernels::clone(g); }

// With create_graph, the gradients a once-differentiable node returns (computed outside the op API) are marked
// as coming from a node that fails when reached, so differentiating them again names the op instead of
// silently treating them as constants. Its edges are those the gradients depend on: the op's inputs and the
// incoming gradients that carry a graph.
TensorList mark_not_differentiable(Node& node, const TensorList& grad_outputs, TensorList grads) {
  const std::string name = node.name();
  auto fail = std::make_shared<Node>(name + " backward", [name](const TensorList&) -> TensorList {
    REMATCH_FAIL("op '", name, "' has no second derivative: its backward is not written with differentiable ops, ",
                 "so the gradients it returned cannot be differentiated again");
  });
  fail->next_edges() = node.next_edges();
  for (const Tensor& g : grad_outputs)
    if (g.defined() && g.requires_grad()) fail->next_edges().push_back(gradient_edge(g));
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!grads[i].defined() || !is_floating(grads[i].dtype())) continue;
    Tensor marked = grads[i].detach();
    AutogradMeta& meta = marked.autograd_meta();
    meta.requires_grad = true;
    meta.grad_fn = fail;
    meta.output_nr = static_cast<int>(fail->outputs().size());
    fail->outputs().push_back({marked.sizes(), marked.dtype(), marked.device()});
    grads[i] = marked;
  }
  return grads;
}

// Where grad() reads an input's gradient: output slot `slot` of a node, for input number `input`.
struct Capture {
  int slot;
  size_t input;
};
using Captures = std::unordered_map<Node*, std::vector<Capture>>;

// For grad(): whether each reachable node leads to a captured node (is one, or has an edge to one that does).
// Only the nodes with an edge into such a node need to run. Post-order without recursion: graphs are deep.
std::unordered_map<Node*, bool> leads_to_captures(const std::vector<Edge>& roots, const Captures& captures) {
  std::unordered_map<Node*, bool> leads;
  std::vector<std::pair<Node*, size_t>> stack;
  for (const Edge& r : roots)
    if (leads.emplace(r.node.get(), false).second) stack.emplace_back(r.node.get(), 0);
  while (!stack.empty()) {
    Node* n = stack.back().first;
    const size_t next = stack.back().second;
    if (next < n->next_edges().size()) {
      ++stack.back().second;
      Node* child = n->next_edges()[next].node.get();
      if (child && leads.emplace(child, false).second) stack.emplace_back(child, 0);
      continue;
    }
    bool l = captures.count(n) > 0;
    for (const Edge& e : n->next_edges()) l = l || (e.node && leads[e.node.get()]);
    leads[n] = l;
    stack.pop_back();
  }
  return leads;
}

// Runs the graph below `roots`, seeded with `seeds`. Without captures (backward) every node runs and leaves
// accumulate into .grad; with them (grad) only the nodes that lead to a captured input run, and the gradients
// reaching the captured slots are returned.
TensorList run_graph(const std::vector<Edge>& roots, const TensorList& seeds, const Captures* captures,
                     const TensorList& inputs, bool allow_unused, bool retain_graph, bool create_graph) {
  GradModeGuard mode(create_graph);

  // Count, for every node reachable from the roots, how many edges point at it.
  std::unordered_map<Node*, int> dependencies;
  std::vector<Node*> stack;
  bool freed = false;  // whether an earlier backward freed part of the graph (whose edges are then gone)
  for (const Edge& r : roots)
    if (dependencies.try_emplace(r.node.get(), 0).second) stack.push_back(r.node.get());
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    freed = freed || n->released();
    for (Edge& e : n->next_edges()) {
      if (!e.node) continue;
      auto [it, inserted] = dependencies.try_emplace(e.node.get(), 0);
      ++it->second;
      if (inserted) stack.push_back(e.node.get());
    }
  }
  // An input out of the graph's reach is refused before anything runs (and frees the graph).
  if (captures && !allow_unused && !freed)
    for (const auto& [n, caps] : *captures)
      for (const Capture& c : caps)
        REMATCH_CHECK(dependencies.count(n), "grad: input ", c.input, " ", inputs[c.input].describe(),
                      " was not used to compute the outputs (pass allow_unused to get an undefined gradient for it)");
  std::unordered_map<Node*, bool> leads;
  if (captures) leads = leads_to_captures(roots, *captures);
  // A node freed by an earlier backward runs anyway, to say so (Node::apply).
  auto must_run = [&](Node* n) {
    if (!captures || n->released()) return true;
    for (const Edge& e : n->next_edges())
      if (e.node && leads[e.node.get()]) return true;
    return false;
  };

  // Gradients waiting for each node, one slot per output; a node runs once every consumer has run.
  std::unordered_map<Node*, TensorList> pending;
  std::vector<std::shared_ptr<Node>> ready;
  for (size_t r = 0; r < roots.size(); ++r) {
    TensorList& slots = pending[roots[r].node.get()];
    slots.resize(roots[r].node->outputs().size());
    Tensor& acc = slots[roots[r].input_nr];
    acc = acc.defined() ? add_gradients(acc, seeds[r]) : seeds[r];
  }
  for (const Edge& r : roots) {
    bool queued = false;
    for (const auto& q : ready) queued = queued || q == r.node;
    if (!queued && dependencies[r.node.get()] == 0) ready.push_back(r.node);
  }

  TensorList captured(inputs.size());
  while (!ready.empty()) {
    std::shared_ptr<Node> node = ready.back();
    ready.pop_back();
    auto found = pending.find(node.get());
    if (captures && found != pending.end())
      if (auto c = captures->find(node.get()); c != captures->end())
        for (const Capture& cap : c->second) captured[cap.input] = found->second[cap.slot];
    if (!must_run(node.get())) {
      if (found != pending.end()) pending.erase(found);
      continue;
    }
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
      if (!captures && i < node->retained().size())
        if (auto meta = node->retained()[i].lock(); meta && meta->retains_grad)
          meta->grad = meta->grad.defined() ? add_gradients(meta->grad, grads[i]) : fresh_copy(grads[i]);
    }
    TensorList input_grads;
    {
      BackwardScope scope(node.get());
      input_grads = node->apply(grads);
    }
    if (create_graph && node->once_differentiable())
      input_grads = mark_not_differentiable(*node, grads, std::move(input_grads));
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
        acc = acc.defined() ? add_gradients(acc, g) : g;
      }
      if (--dependencies[e.node.get()] == 0) ready.push_back(e.node);
    }
    if (!retain_graph) node->release();
  }
  return captured;
}

Tensor seed_for(const char* who, const Tensor& output, const Tensor& given) {
  if (given.defined()) {
    REMATCH_CHECK(given.sizes() == output.sizes() && given.dtype() == output.dtype(), who, ": gradient ",
                  given.describe(), " does not match output ", output.describe());
    return given;
  }
  REMATCH_CHECK(output.numel() == 1, who, ": ", output.describe(),
                " is not a scalar; pass the gradient of the output explicitly");
  return ones(output.sizes(), output.dtype(), output.device());
}

}  // namespace

Node* running_node() { return t_running_node; }

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
  leaf_->grad = leaf_->grad.defined() ? add_gradients(leaf_->grad, g) : fresh_copy(g);
  return {};
}

void backward(const Tensor& root, const Tensor& grad, bool retain_graph, bool create_graph) {
  REMATCH_CHECK(root.defined(), "backward: undefined tensor");
  REMATCH_CHECK(root.requires_grad(), "backward: ", root.describe(),
                " does not require grad (no input of the ops that made it requires grad)");
  const Tensor seed = seed_for("backward", root, grad);
  // The graph recorded by create_graph refers to the nodes below root (their saved outputs), so it keeps them.
  run_graph({gradient_edge(root)}, {seed}, nullptr, {}, false, retain_graph || create_graph, create_graph);
}

TensorList grad(const TensorList& outputs, const TensorList& inputs, const TensorList& grad_outputs,
                const GradOptions& options) {
  REMATCH_CHECK(!outputs.empty(), "grad: no outputs to differentiate");
  REMATCH_CHECK(grad_outputs.empty() || grad_outputs.size() == outputs.size(), "grad: ", grad_outputs.size(),
                " grad_outputs for ", outputs.size(), " outputs; give one per output or none");
  std::vector<Edge> roots;
  TensorList seeds;
  for (size_t k = 0; k < outputs.size(); ++k) {
    const Tensor& y = outputs[k];
    REMATCH_CHECK(y.defined(), "grad: output ", k, " is undefined");
    REMATCH_CHECK(y.requires_grad(), "grad: output ", k, " ", y.describe(),
                  " does not require grad (no input of the ops that made it requires grad)");
    roots.push_back(gradient_edge(y));
    seeds.push_back(seed_for("grad", y, grad_outputs.empty() ? Tensor() : grad_outputs[k]));
  }
  Captures captures;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& x = inputs[i];
    REMATCH_CHECK(x.defined(), "grad: input ", i, " is undefined");
    REMATCH_CHECK(x.requires_grad(), "grad: input ", i, " ", x.describe(), " does not require grad");
    const Edge e = gradient_edge(x);
    captures[e.node.get()].push_back({e.input_nr, i});
  }
  const bool retain = options.retain_graph.value_or(options.create_graph);
  TensorList result = run_graph(roots, seeds, &captures, inputs, options.allow_unused, retain, options.create_graph);
  for (size_t i = 0; i < inputs.size(); ++i)
    REMATCH_CHECK(result[i].defined() || options.allow_unused, "grad: input ", i, " ", inputs[i].describe(),
                  " was not used to compute the outputs (pass allow_unused to get an undefined gradient for it)");
  return result;
}

}  // namespace rematch
