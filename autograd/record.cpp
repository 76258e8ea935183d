#include "autograd/record.h"

#include "autograd/grad_mode.h"

namespace rematch {

namespace {

// The edge for one input: its producing node, or the accumulator of a leaf that requires grad.
Edge edge_for(const Tensor& t) {
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

}  // namespace

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

TensorList record(const char* name, const TensorList& inputs, const TensorList& outputs, BackwardFn backward) {
  if (anomaly_mode() && !in_backward()) {
    for (const Tensor& o : outputs)
      REMATCH_CHECK(!has_non_finite(o), "anomaly mode: op '", name, "' produced NaN or Inf in its output ",
                    o.describe());
  }
  if (!any_requires_grad(inputs)) return outputs;
  auto node = std::make_shared<Node>(name, std::move(backward));
  for (const Tensor& t : inputs) node->next_edges().push_back(edge_for(t));
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

Tensor record(const char* name, const TensorList& inputs, const Tensor& output, BackwardFn backward) {
  return record(name, inputs, TensorList{output}, std::move(backward))[0];
}

Tensor sum_to(const Tensor& grad, const Shape& shape) {
  if (grad.sizes() == shape) return grad;
  const int64_t lead = grad.dim() - static_cast<int64_t>(shape.size());
  REMATCH_CHECK(lead >= 0, "sum_to: gradient ", grad.describe(), " has fewer dims than ", shape_str(shape));
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < grad.dim(); ++d)
    if (d < lead || (shape[d - lead] == 1 && grad.sizes()[d] != 1)) dims.push_back(d);
  Tensor summed = dims.empty() ? grad : kernels::reduce(kernels::ReduceOp::Sum, grad, dims, true);
  return kernels::reshape(summed, shape);
}

}  // namespace rematch
