#include "train/methods/mscn/virtual_step.h"

#include "tensor/kernels.h"

namespace rematch::train {

std::vector<Tensor> virtual_sgd_step(const Tensor& loss, const std::vector<Tensor>& params, double lr) {
  GradOptions o;
  o.create_graph = true;
  o.allow_unused = true;
  const TensorList g = grad({loss}, params, {}, o);
  std::vector<Tensor> out;
  out.reserve(params.size());
  for (size_t k = 0; k < params.size(); ++k)
    out.push_back(g[k].defined() ? sub(params[k].detach(), mul(g[k], lr)) : params[k].detach());
  return out;
}

void install_parameters(const nn::Module& shadow, const std::vector<Tensor>& values) {
  const nn::NamedTensors params = shadow.named_parameters();
  REMATCH_CHECK(params.size() == values.size(), "install_parameters: ", values.size(), " values for ",
                params.size(), " parameters");
  for (size_t k = 0; k < params.size(); ++k) {
    const auto& [name, p] = params[k];
    const Tensor& v = values[k];
    REMATCH_CHECK(v.defined() && v.sizes() == p.sizes() && v.dtype() == p.dtype() && v.device() == p.device(),
                  "install_parameters: '", name, "' is ", p.describe(), ", its value ",
                  v.defined() ? v.describe() : "undefined");
    // The module's handles share p's TensorImpl: giving it v's storage, view and autograd metadata makes every one
    // of them v (the parameter's old values are referenced by no graph: the shadow runs only after an install).
    *p.impl() = *v.impl();
  }
}

BufferSnapshot::BufferSnapshot(const nn::Module& module) {
  for (const auto& [name, b] : module.named_buffers()) {
    buffers_.push_back(b);
    saved_.push_back(kernels::clone(b));
  }
}

void BufferSnapshot::restore() const {
  for (size_t k = 0; k < buffers_.size(); ++k) kernels::copy_(buffers_[k], saved_[k]);
}

}  // namespace rematch::train
