#include "nn/gru_double_backward.h"

#include "autograd/autograd.h"
#include "nn/gru_composite.h"

namespace rematch::nn {
namespace {

// A new node standing for t (same values, gradient passed through): differentiating with respect to it stops
// there, so the nested gradients below are partial derivatives in the op's inputs, and the engine that runs the
// op's node carries them on through each input's own graph.
Tensor fresh_alias(const Tensor& t) {
  return record("gru_backward_input", {t}, t.detach(), [](const TensorList& g) { return TensorList{g[0]}; });
}

// The derivative of gradients = J(x, W)ᵀ·(grad_output, grad_h_n) for incoming u: d/d(x, W, grad_output,
// grad_h_n) of Σ_k <u_k, gradients_k>, with J the Jacobian of the composite layer.
TensorList differentiate(const gru_cpu::Packing& packing, const TensorList& inputs, const std::vector<size_t>& outs,
                         const TensorList& u) {
  const bool create_graph = grad_enabled();
  GradModeGuard record_composite(true);
  TensorList alias;
  for (const Tensor& t : inputs) alias.push_back(t.requires_grad() ? fresh_alias(t) : t);
  const size_t n = inputs.size();
  const GRUOutput f = gru_composite(alias[0], packing, TensorList(alias.begin() + 1, alias.end() - 2));
  TensorList wrt;
  for (size_t k : outs) wrt.push_back(alias[k]);
  GradOptions first;
  first.create_graph = true;
  first.allow_unused = true;
  const TensorList grads = grad({f.output, f.h_n}, wrt, {alias[n - 2], alias[n - 1]}, first);
  Tensor inner;
  for (size_t j = 0; j < grads.size(); ++j) {
    if (!grads[j].defined() || !grads[j].requires_grad()) continue;
    const Tensor term = sum(mul(grads[j], u[j]));
    inner = inner.defined() ? add(inner, term) : term;
  }
  TensorList result(n);
  if (!inner.defined()) return result;
  TensorList targets;
  std::vector<size_t> where;
  for (size_t k = 0; k < n; ++k)
    if (alias[k].requires_grad()) {
      targets.push_back(alias[k]);
      where.push_back(k);
    }
  GradOptions second;
  second.create_graph = create_graph;
  second.allow_unused = true;
  const TensorList r = grad({inner}, targets, {}, second);
  for (size_t i = 0; i < where.size(); ++i) result[where[i]] = r[i];
  return result;
}

}  // namespace

std::vector<Tensor> record_gru_backward(const gru_cpu::Packing& packing, const Tensor& x_packed,
                                        const std::shared_ptr<AutogradMeta>& x_meta,
                                        const std::vector<Tensor>& weights, const Tensor& grad_output,
                                        const Tensor& grad_h_n, const std::vector<Tensor>& grads) {
  // x in [B, T, I] again: direction 0 reads packed row r from flat row rows[r].
  const int64_t input_size = x_packed.size(1);
  const Tensor x_flat = kernels::index_add(zeros({packing.batch * packing.steps, input_size}, x_packed.dtype(),
                                                 x_packed.device()),
                                           0, gru_packed_rows(packing, 0, x_packed.device()), x_packed);
  TensorList inputs{with_autograd_meta(kernels::reshape(x_flat, {packing.batch, packing.steps, input_size}), x_meta)};
  inputs.insert(inputs.end(), weights.begin(), weights.end());
  inputs.push_back(grad_output);
  inputs.push_back(grad_h_n);
  std::vector<size_t> outs;
  TensorList values;
  for (size_t k = 0; k < grads.size(); ++k)
    if (grads[k].defined()) {
      outs.push_back(k);
      values.push_back(grads[k]);
    }
  const TensorList recorded =
      record("gru_backward", inputs, values, [packing, inputs, outs](const TensorList& u) {
        return differentiate(packing, inputs, outs, u);
      });
  std::vector<Tensor> result(grads.size());
  for (size_t j = 0; j < outs.size(); ++j) result[outs[j]] = recorded[j];
  return result;
}

}  // namespace rematch::nn
