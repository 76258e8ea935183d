#include "train/methods/mscn/virtual_step.h"

#include "tensor/kernels.h"

namespace rematch::train {

std::vector<Tensor> virtual_sgd_step(const Tensor& loss, const std::vector<Tensor>& params, double lr,
                                     const std::vector<bool>& frozen) {
  REMATCH_CHECK(frozen.empty() || frozen.size() == params.size(), "virtual_sgd_step: ", frozen.size(),
                " frozen flags for ", params.size(), " parameters");
  std::vector<Tensor> stepped;
  for (size_t k = 0; k < params.size(); ++k)
    if (frozen.empty() || !frozen[k]) stepped.push_back(params[k]);
  GradOptions o;
  o.create_graph = true;
  o.allow_unused = true;
  const TensorList g = grad({loss}, stepped, {}, o);
  std::vector<Tensor> out;
  out.reserve(params.size());
  size_t next = 0;
  for (size_t k = 0; k < params.size(); ++k) {
    if (!frozen.empty() && frozen[k]) {
      out.push_back(params[k].detach());
      continue;
    }
    const Tensor& gk = g[next++];
    out.push_back(gk.defined() ? sub(params[k].detach(), mul(gk, lr)) : params[k].detach());
  }
  return out;
}

std::vector<bool> gru_parameters(const nn::Module& model) {
  std::vector<bool> out;
  for (const auto& [name, p] : model.named_parameters()) out.push_back(name.rfind("txt_enc.cap_rnn.", 0) == 0);
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
