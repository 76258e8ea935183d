#include "autograd/record.h"

#include "autograd/grad_mode.h"
#include "autograd/ops.h"

namespace rematch {

Edge gradient_edge(const Tensor& t) {
  if (!t.defined() || !t.requires_grad()) return {};
  AutogradMeta& meta = t.autograd_meta();
  if (meta.grad_fn) return {meta.grad_fn, meta.output_nr};
  std::shared_ptr<Node> acc = meta.grad_accumulator.lock();
  if (!acc) {
    acc = std::make_shared<AccumulateGrad>(t.impl()->autograd, OutputInfo{t.sizes(), t.dtype(), t.device()});
    meta.grad_accumulator = acc;
  }
  return {acc, 0};
}

bool has_non_finite(const Tensor& t) {
  if (!t.defined() || !is_floating(t.dtype()) || t.numel() == 0) return false;
  Tensor finite = kernels::cast(kernels::unary(kernels::UnaryOp::IsFinite, t), DType::Int32);
  return !kernels::reduce(kernels::ReduceOp::Min, finite, {}, false).item<int32_t>();
}

bool any_requires_grad(const TensorList& inputs) {
  if (!grad_enabled()) return false;
  for (const Tensor& t : inputs)
    if (t.defined() && t.requires_grad()) return true;
  return false;
}

namespace {

TensorList record_node(const char* name, const TensorList& inputs, const TensorList& outputs, BackwardFn backward,
                       bool once_differentiable) {
  if (anomaly_mode() && !in_backward()) {
    for (const Tensor& o : outputs)
      REMATCH_CHECK(!has_non_finite(o), "anomaly mode: op '", name, "' produced NaN or Inf in its output ",
                    o.describe());
  }
  if (!any_requires_grad(inputs)) return outputs;
  auto node = std::make_shared<Node>(name, std::move(backward));
  if (once_differentiable) node->set_once_differentiable();
  for (const Tensor& t : inputs) node->next_edges().push_back(gradient_edge(t));
  TensorList result;
  result.reserve(outputs.size());
  node->retained().resize(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    // A fresh handle, so an output that aliases an input (a no-op view) does not steal the input's metadata.
    Tensor out = outputs[i].detach();
    node->outputs().push_back({out.sizes(), out.dtype(), out.device()});
    if (is_floating(out.dtype())) {
      AutogradMeta& meta = out.autograd_meta();
      meta.requires_grad = true;
      meta.grad_fn = node;
      meta.output_nr = static_cast<int>(i);
      node->retained()[i] = out.impl()->autograd;
    }
    result.push_back(out);
  }
  return result;
}

}  // namespace

TensorList record(const char* name, const TensorList& inputs, const TensorList& outputs, BackwardFn backward) {
  return record_node(name, inputs, outputs, std::move(backward), false);
}

Tensor record(const char* name, const TensorList& inputs, const Tensor& output, BackwardFn backward) {
  return record_node(name, inputs, TensorList{output}, std::move(backward), false)[0];
}

Tensor record_once_differentiable(const char* name, const TensorList& inputs, const Tensor& output,
                                  BackwardFn backward) {
  return record_node(name, inputs, TensorList{output}, std::move(backward), true)[0];
}

Tensor saved_output(const Tensor& output, int output_nr) {
  if (!grad_enabled() || !output.defined() || !is_floating(output.dtype())) return output;
  Node* node = running_node();
  REMATCH_CHECK(node, "saved_output: called outside a backward function");
  Tensor t = output.detach();
  AutogradMeta& meta = t.autograd_meta();
  meta.requires_grad = true;
  meta.grad_fn = node->shared_from_this();
  meta.output_nr = output_nr;
  return t;
}

Tensor with_autograd_meta(const Tensor& data, const std::shared_ptr<AutogradMeta>& meta) {
  Tensor t = data.detach();
  t.impl()->autograd = meta;
  return t;
}

Tensor sum_to(const Tensor& grad, const Shape& shape) {
  if (grad.sizes() == shape) return grad;
  const int64_t lead = grad.dim() - static_cast<int64_t>(shape.size());
  REMATCH_CHECK(lead >= 0, "sum_to: gradient ", grad.describe(), " has fewer dims than ", shape_str(shape));
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < grad.dim(); ++d)
    if (d < lead || (shape[d - lead] == 1 && grad.sizes()[d] != 1)) dims.push_back(d);
  return reshape(dims.empty() ? grad : sum(grad, dims, true), shape);
}

}  // namespace rematch
