#include "nn/module.h"

#include <algorithm>
#include <map>
#include <set>

namespace rematch::nn {

void Module::check_new_name(const std::string& name) const {
  REMATCH_CHECK(!name.empty() && name.find('.') == std::string::npos, "module: invalid name '", name,
                "' (non-empty, no dots)");
  auto taken = [&](const auto& list) {
    return std::any_of(list.begin(), list.end(), [&](const auto& e) { return e.first == name; });
  };
  REMATCH_CHECK(!taken(params_) && !taken(buffers_) && !taken(children_), "module: name '", name,
                "' is registered twice");
}

Tensor Module::register_parameter(const std::string& name, Tensor value) {
  check_new_name(name);
  REMATCH_CHECK(value.defined() && is_floating(value.dtype()), "register_parameter '", name,
                "': parameters must be floating tensors, got ", value.describe());
  value = value.is_leaf() ? value : value.detach();
  value.requires_grad_(true);
  params_.emplace_back(name, value);
  return value;
}

Tensor Module::register_buffer(const std::string& name, Tensor value) {
  check_new_name(name);
  REMATCH_CHECK(value.defined(), "register_buffer '", name, "': undefined tensor");
  buffers_.emplace_back(name, value);
  return value;
}

void Module::collect(const std::string& prefix, NamedTensors& out, bool params, bool buffers) const {
  if (params)
    for (const auto& [n, t] : params_) out.emplace_back(prefix + n, t);
  if (buffers)
    for (const auto& [n, t] : buffers_) out.emplace_back(prefix + n, t);
  for (const auto& [n, child] : children_) child->collect(prefix + n + ".", out, params, buffers);
}

NamedTensors Module::named_parameters() const {
  NamedTensors out;
  collect("", out, true, false);
  return out;
}

NamedTensors Module::named_buffers() const {
  NamedTensors out;
  collect("", out, false, true);
  return out;
}

std::vector<Tensor> Module::parameters() const {
  std::vector<Tensor> out;
  for (auto& [n, t] : named_parameters()) out.push_back(t);
  return out;
}

int64_t Module::parameter_count() const {
  int64_t n = 0;
  for (auto& [name, t] : named_parameters()) n += t.numel();
  return n;
}

StateDict Module::state_dict() const {
  // PyTorch order: each module's parameters, then its buffers, then its children.
  NamedTensors out;
  collect("", out, true, true);
  return out;
}

void Module::load_state_dict(const StateDict& state) {
  const StateDict mine = state_dict();
  std::map<std::string, const Tensor*> given;
  for (const auto& [n, t] : state) {
    REMATCH_CHECK(given.emplace(n, &t).second, "load_state_dict: entry '", n, "' appears twice");
  }
  std::vector<std::string> missing, unexpected, wrong_shape;
  std::set<std::string> known;
  for (const auto& [n, t] : mine) {
    known.insert(n);
    auto it = given.find(n);
    if (it == given.end()) missing.push_back(n);
    else if (it->second->sizes() != t.sizes())
      wrong_shape.push_back(n + " (expected " + t.shape_str() + ", got " + it->second->shape_str() + ")");
  }
  for (const auto& [n, t] : state)
    if (!known.count(n)) unexpected.push_back(n);
  if (!missing.empty() || !unexpected.empty() || !wrong_shape.empty()) {
    auto join = [](const std::vector<std::string>& v) {
      std::string s;
      for (const auto& e : v) s += (s.empty() ? "" : ", ") + e;
      return s.empty() ? std::string("none") : s;
    };
    REMATCH_FAIL("load_state_dict: missing keys: ", join(missing), "; unexpected keys: ", join(unexpected),
                 "; wrong shapes: ", join(wrong_shape));
  }
  NoGradGuard no_grad;
  for (const auto& [n, t] : mine) kernels::copy_(t, *given.at(n));
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [n, child] : children_) child->train(on);
}

static void move_in_place(const Tensor& t, Device device) {
  if (t.device() == device) return;
  Tensor moved = kernels::to_device(kernels::contiguous(t), device);
  TensorImpl* impl = t.impl();
  impl->storage = moved.storage();
  impl->strides = moved.strides();
  impl->offset = moved.offset();
  if (impl->autograd && impl->autograd->grad.defined()) impl->autograd->grad = kernels::to_device(impl->autograd->grad, device);
}

void Module::to(Device device) {
  for (auto& [n, t] : params_) move_in_place(t, device);
  for (auto& [n, t] : buffers_) move_in_place(t, device);
  for (auto& [n, child] : children_) child->to(device);
}

void Module::zero_grad() {
  for (auto& t : parameters()) t.zero_grad();
}

const Tensor& Module::parameter(const std::string& name) const {
  for (const auto& [n, t] : params_)
    if (n == name) return t;
  REMATCH_FAIL("module: no parameter '", name, "'");
}

const Tensor& Module::buffer(const std::string& name) const {
  for (const auto& [n, t] : buffers_)
    if (n == name) return t;
  REMATCH_FAIL("module: no buffer '", name, "'");
}

void Module::set_buffer(const std::string& name, const Tensor& value) {
  const Tensor& b = buffer(name);
  REMATCH_CHECK(value.sizes() == b.sizes(), "set_buffer '", name, "': expected shape ", b.shape_str(), ", got ",
                value.shape_str());
  kernels::copy_(b, value);
}

Sequential::Sequential(std::vector<std::shared_ptr<UnaryModule>> layers) {
  for (auto& l : layers) push_back(std::move(l));
}

void Sequential::push_back(std::shared_ptr<UnaryModule> layer) {
  register_module(std::to_string(layers_.size()), layer);
  layers_.push_back(std::move(layer));
}

Tensor Sequential::forward(const Tensor& x) {
  Tensor y = x;
  for (auto& l : layers_) y = l->forward(y);
  return y;
}

}  // namespace rematch::nn
