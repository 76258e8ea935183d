// Optimizer bookkeeping and the three update rules. Each rule is PyTorch 1.13's `_single_tensor_*` function
// transcribed op for op: a.add(b, alpha=s) is a + s·b, addcmul(b, c, value=s) is a + (s·b)·c and
// addcdiv(b, c, value=s) is a + (s·b)/c, exactly as ATen's CPU kernels evaluate them; scalars are rounded to
// the tensor's dtype first, as ATen does.
#include "nn/optim.h"

#include <cmath>
#include <map>
#include <set>

namespace rematch::nn {
namespace {

using kernels::BinaryOp;
using kernels::ScalarOp;

Tensor times(const Tensor& x, double s) { return kernels::scalar_op(ScalarOp::Mul, x, s); }
Tensor plus(const Tensor& a, const Tensor& b) { return kernels::binary(BinaryOp::Add, a, b); }
// a.add(b, alpha=s); with s = 1 ATen's a + 1·b is exactly a + b.
Tensor plus_scaled(const Tensor& a, const Tensor& b, double s) { return s == 1 ? plus(a, b) : plus(a, times(b, s)); }
Tensor plus_product(const Tensor& a, const Tensor& b, const Tensor& c, double s) {
  return plus(a, kernels::binary(BinaryOp::Mul, times(b, s), c));
}
Tensor plus_quotient(const Tensor& a, const Tensor& b, const Tensor& c, double s) {
  return plus(a, kernels::binary(BinaryOp::Div, times(b, s), c));
}
Tensor divided(const Tensor& x, double s) {
  return kernels::binary(BinaryOp::Div, x, scalar_tensor(s, x.dtype(), x.device()));
}

std::string join(const std::vector<std::string>& parts) {
  std::string s;
  for (const auto& p : parts) s += (s.empty() ? "" : "; ") + p;
  return s;
}

}  // namespace

Tensor Optimizer::ParamState::get(const std::string& name) const {
  for (const auto& [n, t] : buffers)
    if (n == name) return t;
  return Tensor();
}

void Optimizer::ParamState::set(const std::string& name, Tensor value) {
  for (auto& [n, t] : buffers)
    if (n == name) {
      t = std::move(value);
      return;
    }
  buffers.emplace_back(name, std::move(value));
}

Optimizer::Optimizer(ParamGroups groups, double lr, double weight_decay) : groups_(std::move(groups.groups)) {
  REMATCH_CHECK(std::isfinite(lr) && lr >= 0, "optimizer: invalid learning rate ", lr);
  REMATCH_CHECK(std::isfinite(weight_decay) && weight_decay >= 0, "optimizer: invalid weight_decay ", weight_decay);
  std::set<const TensorImpl*> seen;
  for (size_t g = 0; g < groups_.size(); ++g) {
    ParamGroup& group = groups_[g];
    group.lr = group.lr.value_or(lr);
    group.weight_decay = group.weight_decay.value_or(weight_decay);
    REMATCH_CHECK(std::isfinite(*group.lr) && *group.lr >= 0, "optimizer: group ", g, ": invalid learning rate ",
                  *group.lr);
    REMATCH_CHECK(std::isfinite(*group.weight_decay) && *group.weight_decay >= 0, "optimizer: group ", g,
                  ": invalid weight_decay ", *group.weight_decay);
    for (size_t i = 0; i < group.params.size(); ++i) {
      const Tensor& p = group.params[i];
      REMATCH_CHECK(p.defined() && is_floating(p.dtype()), "optimizer: group ", g, " parameter ", i,
                    " must be a floating tensor, got ", p.defined() ? p.describe() : "an undefined tensor");
      REMATCH_CHECK(p.is_leaf(), "optimizer: group ", g, " parameter ", i, " (", p.describe(),
                    ") is not a leaf; optimize the leaf it was computed from");
      REMATCH_CHECK(seen.insert(p.impl()).second, "optimizer: group ", g, " parameter ", i,
                    " appears more than once in the parameter groups");
    }
  }
  REMATCH_CHECK(!seen.empty(), "optimizer: got an empty parameter list");
  states_.resize(seen.size());
}

void Optimizer::step() {
  NoGradGuard no_grad;
  size_t index = 0;
  for (const ParamGroup& group : groups_) {
    for (const Tensor& p : group.params) {
      ParamState& state = states_[index++];
      const Tensor& g = p.grad();
      if (!g.defined()) continue;
      REMATCH_CHECK(g.sizes() == p.sizes() && g.dtype() == p.dtype() && g.device() == p.device(), kind(),
                    ".step: parameter ", index - 1, " is ", p.describe(), " but its gradient is ", g.describe());
      ++state.step;
      update(p, g, state, *group.lr, *group.weight_decay);
    }
  }
}

void Optimizer::zero_grad() {
  for (const ParamGroup& group : groups_)
    for (const Tensor& p : group.params) p.zero_grad();
}

const ParamGroup& Optimizer::group(size_t i) const {
  REMATCH_CHECK(i < groups_.size(), kind(), ": no parameter group ", i, " (it has ", groups_.size(), ")");
  return groups_[i];
}

double Optimizer::lr(size_t g) const { return *group(g).lr; }

void Optimizer::set_lr(double lr) {
  for (size_t g = 0; g < groups_.size(); ++g) set_lr(g, lr);
}

void Optimizer::set_lr(size_t g, double lr) {
  group(g);
  REMATCH_CHECK(std::isfinite(lr) && lr >= 0, kind(), ".set_lr: invalid learning rate ", lr);
  groups_[g].lr = lr;
}

std::vector<Tensor> Optimizer::params() const {
  std::vector<Tensor> out;
  for (const ParamGroup& group : groups_) out.insert(out.end(), group.params.begin(), group.params.end());
  return out;
}

int64_t Optimizer::step_count(size_t i) const {
  REMATCH_CHECK(i < states_.size(), kind(), ": no parameter ", i, " (it has ", states_.size(), ")");
  return states_[i].step;
}

OptimizerState Optimizer::state_dict() const {
  OptimizerState out;
  out.kind = kind();
  for (const ParamGroup& group : groups_) out.lrs.push_back(*group.lr);
  for (size_t i = 0; i < states_.size(); ++i) {
    out.steps.push_back(states_[i].step);
    for (const auto& [name, t] : states_[i].buffers) out.buffers.emplace_back(std::to_string(i) + "." + name, t);
  }
  return out;
}

void Optimizer::load_state_dict(const OptimizerState& state) {
  const std::string who = std::string(kind()) + ".load_state_dict";
  REMATCH_CHECK(state.kind == kind(), who, ": the state belongs to a ", state.kind, " optimizer");
  REMATCH_CHECK(state.lrs.size() == groups_.size(), who, ": the state has ", state.lrs.size(),
                " parameter groups, this optimizer ", groups_.size());
  REMATCH_CHECK(state.steps.size() == states_.size(), who, ": the state has ", state.steps.size(),
                " parameters, this optimizer ", states_.size());
  const std::vector<Tensor> ps = params();
  const std::vector<std::string> names = buffer_names();
  std::vector<std::string> problems;
  for (size_t g = 0; g < state.lrs.size(); ++g)
    if (!(std::isfinite(state.lrs[g]) && state.lrs[g] >= 0))
      problems.push_back("group " + std::to_string(g) + " has learning rate " + std::to_string(state.lrs[g]));
  std::map<std::string, const Tensor*> given;
  for (const auto& [key, t] : state.buffers) {
    if (!given.emplace(key, &t).second) problems.push_back("buffer '" + key + "' appears twice");
  }
  std::vector<ParamState> loaded(states_.size());
  std::set<std::string> used;
  for (size_t i = 0; i < ps.size(); ++i) {
    const std::string idx = std::to_string(i);
    if (state.steps[i] < 0) problems.push_back("parameter " + idx + " has step count " + std::to_string(state.steps[i]));
    loaded[i].step = state.steps[i];
    if (state.steps[i] <= 0) continue;  // never updated: no buffers yet
    for (const std::string& name : names) {
      auto it = given.find(idx + "." + name);
      if (it == given.end()) {
        problems.push_back("missing buffer '" + idx + "." + name + "'");
        continue;
      }
      used.insert(it->first);
      const Tensor& t = *it->second;
      if (!t.defined() || t.sizes() != ps[i].sizes()) {
        problems.push_back("buffer '" + it->first + "' is " + (t.defined() ? t.describe() : "undefined") +
                           ", parameter " + idx + " is " + ps[i].describe());
        continue;
      }
      loaded[i].set(name, kernels::clone(kernels::to_device(kernels::cast(t, ps[i].dtype()), ps[i].device())));
    }
  }
  for (const auto& [key, t] : given)
    if (!used.count(key)) problems.push_back("unexpected buffer '" + key + "'");
  REMATCH_CHECK(problems.empty(), who, ": ", join(problems));
  for (size_t g = 0; g < groups_.size(); ++g) groups_[g].lr = state.lrs[g];
  states_ = std::move(loaded);
}

// ---- SGD -------------------------------------------------------------------------------------------------

SGD::SGD(ParamGroups params, double lr, double momentum, double dampening, double weight_decay, bool nesterov)
    : Optimizer(std::move(params), lr, weight_decay), momentum_(momentum), dampening_(dampening), nesterov_(nesterov) {
  REMATCH_CHECK(std::isfinite(momentum) && momentum >= 0, "SGD: invalid momentum ", momentum);
  REMATCH_CHECK(std::isfinite(dampening), "SGD: invalid dampening ", dampening);
  REMATCH_CHECK(!nesterov || (momentum > 0 && dampening == 0),
                "SGD: Nesterov momentum requires a momentum > 0 and zero dampening (got momentum ", momentum,
                ", dampening ", dampening, ")");
}

std::vector<std::string> SGD::buffer_names() const {
  return momentum_ != 0 ? std::vector<std::string>{"momentum_buffer"} : std::vector<std::string>{};
}

void SGD::update(const Tensor& param, const Tensor& grad, ParamState& state, double lr, double weight_decay) {
  Tensor d = weight_decay != 0 ? plus_scaled(grad, param, weight_decay) : grad;
  if (momentum_ != 0) {
    Tensor buf = state.get("momentum_buffer");
    buf = buf.defined() ? plus_scaled(times(buf, momentum_), d, 1 - dampening_) : kernels::clone(d);
    state.set("momentum_buffer", buf);
    d = nesterov_ ? plus_scaled(d, buf, momentum_) : buf;
  }
  kernels::copy_(param, plus_scaled(param, d, -lr));
}

// ---- Adam / AdamW ----------------------------------------------------------------------------------------

Adam::Adam(ParamGroups params, double lr, AdamBetas betas, double eps, double weight_decay)
    : Adam(std::move(params), lr, betas, eps, weight_decay, false) {}

Adam::Adam(ParamGroups params, double lr, AdamBetas betas, double eps, double weight_decay, bool decoupled)
    : Optimizer(std::move(params), lr, weight_decay), betas_(betas), eps_(eps), decoupled_(decoupled) {
  REMATCH_CHECK(betas.beta1 >= 0 && betas.beta1 < 1, kind(), ": invalid beta1 ", betas.beta1, " (expected [0, 1))");
  REMATCH_CHECK(betas.beta2 >= 0 && betas.beta2 < 1, kind(), ": invalid beta2 ", betas.beta2, " (expected [0, 1))");
  REMATCH_CHECK(std::isfinite(eps) && eps >= 0, kind(), ": invalid eps ", eps);
}

std::vector<std::string> Adam::buffer_names() const { return {"exp_avg", "exp_avg_sq"}; }

void Adam::update(const Tensor& param, const Tensor& grad, ParamState& state, double lr, double weight_decay) {
  const double beta1 = betas_.beta1, beta2 = betas_.beta2;
  Tensor g = grad;
  if (decoupled_) {
    if (weight_decay != 0) kernels::copy_(param, times(param, 1 - lr * weight_decay));
  } else if (weight_decay != 0) {
    g = plus_scaled(grad, param, weight_decay);
  }
  Tensor exp_avg = state.get("exp_avg"), exp_avg_sq = state.get("exp_avg_sq");
  if (!exp_avg.defined()) {
    exp_avg = zeros_like(param);
    exp_avg_sq = zeros_like(param);
  }
  exp_avg = plus_scaled(times(exp_avg, beta1), g, 1 - beta1);
  exp_avg_sq = plus_product(times(exp_avg_sq, beta2), g, g, 1 - beta2);
  state.set("exp_avg", exp_avg);
  state.set("exp_avg_sq", exp_avg_sq);

  const double step = static_cast<double>(state.step);
  const double bias_correction1 = 1 - std::pow(beta1, step);
  const double bias_correction2 = 1 - std::pow(beta2, step);
  const double step_size = lr / bias_correction1;
  const double bias_correction2_sqrt = std::sqrt(bias_correction2);
  const Tensor denom = kernels::scalar_op(
      ScalarOp::Add, divided(kernels::unary(kernels::UnaryOp::Sqrt, exp_avg_sq), bias_correction2_sqrt), eps_);
  kernels::copy_(param, plus_quotient(param, exp_avg, denom, -step_size));
}

}  // namespace rematch::nn
