// Module: the base of every layer and model. It owns named parameters (leaves that require grad), named
// buffers (state that is saved but not trained, such as BatchNorm's running statistics) and named child
// modules, and gives them dotted PyTorch state-dict names ("cap_rnn.weight_ih_l0",
// "SGR_module.0.graph_query_w.weight") in PyTorch's order: a module's own parameters, then its own buffers,
// then each child in registration order.
//
// Parameter and buffer handles stay valid for the module's life: to(device) and load_state_dict write into
// the existing tensors (an optimizer built before either still updates the right tensors).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autograd/autograd.h"

namespace rematch::nn {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;
using StateDict = NamedTensors;

class Module {
 public:
  virtual ~Module() = default;
  Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  NamedTensors named_parameters() const;
  NamedTensors named_buffers() const;
  std::vector<Tensor> parameters() const;
  int64_t parameter_count() const;  // number of scalar parameters

  // Parameters then buffers, dotted names, PyTorch order.
  StateDict state_dict() const;
  // Strict: a missing, unexpected or wrongly shaped entry is an error naming it (all of them are listed).
  // Values are converted to each tensor's dtype and device and copied into it.
  void load_state_dict(const StateDict& state);

  // Training mode (dropout active, BatchNorm uses batch statistics), recursively.
  void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }

  // Moves every parameter and buffer to `device` in place (handles stay valid).
  void to(Device device);
  void zero_grad();

  // Own (non-recursive) access by local name; errors name the module's known names.
  const Tensor& parameter(const std::string& name) const;
  const Tensor& buffer(const std::string& name) const;
  void set_buffer(const std::string& name, const Tensor& value);  // replaces the value, same shape

 protected:
  // For constructors. The parameter becomes a leaf that requires grad.
  Tensor register_parameter(const std::string& name, Tensor value);
  Tensor register_buffer(const std::string& name, Tensor value);
  template <typename M> std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> module) {
    check_new_name(name);
    children_.emplace_back(name, module);
    return module;
  }

 private:
  void check_new_name(const std::string& name) const;
  void collect(const std::string& prefix, NamedTensors& out, bool params, bool buffers) const;

  NamedTensors params_;
  NamedTensors buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
};

// A module with one input and one output; what Sequential chains.
class UnaryModule : public Module {
 public:
  virtual Tensor forward(const Tensor& x) = 0;
  Tensor operator()(const Tensor& x) { return forward(x); }
};

// Runs its children in order; children are named "0", "1", ... as in torch.nn.Sequential.
class Sequential : public UnaryModule {
 public:
  Sequential() = default;
  explicit Sequential(std::vector<std::shared_ptr<UnaryModule>> layers);
  void push_back(std::shared_ptr<UnaryModule> layer);
  Tensor forward(const Tensor& x) override;
  size_t size() const { return layers_.size(); }
  const std::shared_ptr<UnaryModule>& operator[](size_t i) const { return layers_.at(i); }

 private:
  std::vector<std::shared_ptr<UnaryModule>> layers_;
};

}  // namespace rematch::nn
