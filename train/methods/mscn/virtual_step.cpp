#include "train/methods/mscn/virtual_step.h"

#include "autograd/autograd.h"
#include "parallel/reduce_op.h"
#include "tensor/kernels.h"

namespace rematch::train {

std::vector<Tensor> virtual_sgd_step(const Tensor& loss, const std::vector<Tensor>& params, double lr,
                                     const std::vector<bool>& frozen,
                                     const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& sum_gradients) {
  REMATCH_CHECK(frozen.empty() || frozen.size() == params.size(), "virtual_sgd_step: ", frozen.size(),
                " frozen flags for ", params.size(), " parameters");
  std::vector<Tensor> stepped;
  for (size_t k = 0; k < params.size(); ++k)
    if (frozen.empty() || !frozen[k]) stepped.push_back(params[k]);
  GradOptions o;
  o.create_graph = true;
  o.allow_unused = true;
  TensorList g = grad({loss}, stepped, {}, o);
  if (sum_gradients) {
    std::vector<Tensor> defined;
    for (const Tensor& gk : g)
      if (gk.defined()) defined.push_back(gk);
    const std::vector<Tensor> summed = sum_gradients(defined);
    REMATCH_CHECK(summed.size() == defined.size(), "virtual_sgd_step: ", summed.size(), " sums of ", defined.size(),
                  " gradients");
    size_t at = 0;
    for (Tensor& gk : g)
      if (gk.defined()) gk = summed[at++];
  }
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

std::vector<Tensor> sum_over_ranks_in_graph(parallel::Communicator& comm, const std::vector<Tensor>& shares) {
  if (shares.empty()) return {};
  std::vector<Tensor> flat;
  for (const Tensor& t : shares) flat.push_back(reshape(t, {t.numel()}));
  const Tensor sum = parallel::all_reduce_sum_recorded(comm, cat(flat, 0), parallel::ReduceBackward::WholeLossOnEveryRank);
  std::vector<Tensor> out;
  int64_t at = 0;
  for (const Tensor& t : shares) {
    out.push_back(reshape(narrow(sum, 0, at, t.numel()), t.sizes()));
    at += t.numel();
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
