// nn::GRU and the functional gru(): input checks, the packed layout, and the one autograd node that runs the
// kernels of one layer in both directions: nn/cpu/gru.cpp for host tensors, nn/cuda/gru.cu for CUDA ones. With
// create_graph the kernels' gradients are recorded once more, with the derivative of nn/gru_double_backward.h.
#include "nn/gru.h"

#include <cmath>
#include <memory>

#include "nn/cuda/gru_kernels.h"
#include "nn/cpu/gru_kernels.h"
#include "nn/gru_double_backward.h"

namespace rematch::nn {
namespace {

const char* const kGateNames[4] = {"weight_ih", "weight_hh", "bias_ih", "bias_hh"};

std::string weight_name(size_t index) {
  return std::string(kGateNames[index % 4]) + (index < 4 ? "_l0" : "_l0_reverse");
}

// The hidden size, after checking every weight's presence, dtype, device and shape against x and each other.
int64_t check_weights(const Tensor& x, const TensorList& weights, const std::string& who) {
  REMATCH_CHECK(weights.size() == 4 || weights.size() == 8, who,
                ": expected 4 weights per direction (4 or 8 in all), got ", weights.size());
  for (size_t k = 0; k < weights.size(); ++k) {
    const Tensor& w = weights[k];
    REMATCH_CHECK(w.defined(), who, ": ", weight_name(k), " is undefined");
    REMATCH_CHECK(w.device() == x.device(), who, ": input x is ", x.describe(), " but ", weight_name(k), " is ",
                  w.describe(), "; they must be on one device");
    REMATCH_CHECK(w.dtype() == x.dtype(), who, ": input x is ", x.describe(), " but ", weight_name(k), " is ",
                  w.describe(), "; they must share a dtype");
  }
  const int64_t I = x.size(2);
  const int64_t H = weights[1].dim() == 2 ? weights[1].size(1) : -1;
  for (size_t k = 0; k < weights.size(); ++k) {
    const Shape want = k % 4 == 0 ? Shape{3 * H, I} : k % 4 == 1 ? Shape{3 * H, H} : Shape{3 * H};
    REMATCH_CHECK(H >= 1 && weights[k].sizes() == want, who, ": ", weight_name(k), " has shape ",
                  weights[k].shape_str(), ", expected ", shape_str(want), " for input size ", I, " and hidden size ",
                  H);
  }
  return H;
}

std::vector<int64_t> check_lengths(const Tensor& lengths, int64_t batch, int64_t steps, const std::string& who) {
  REMATCH_CHECK(lengths.defined(), who, ": lengths is undefined");
  REMATCH_CHECK(lengths.dtype() == DType::Int64 && lengths.device().is_cpu(), who,
                ": lengths must be an int64 tensor on the host, got ", lengths.describe());
  REMATCH_CHECK(lengths.dim() == 1 && lengths.size(0) == batch, who, ": lengths ", lengths.describe(),
                " must hold one entry per sequence: ", batch, " for a batch of ", batch);
  std::vector<int64_t> v = lengths.to_vector<int64_t>();
  for (size_t b = 0; b < v.size(); ++b)
    REMATCH_CHECK(v[b] >= 1 && v[b] <= steps, who, ": lengths[", b, "] = ", v[b], " is out of range 1..", steps,
                  " (the input has ", steps, " steps)");
  return v;
}

// Everything the backward of one call on the host needs; shared by the node's closure.
struct GRUContext {
  gru_cpu::Packing packing;
  Tensor x_packed;
  std::vector<gru_cpu::DirectionWeights> weights;
  std::vector<gru_cpu::DirectionSaved> saved;
  std::vector<bool> needs_grad;  // per recorded input: x, then the weights
};

TensorList gru_backward(const GRUContext& ctx, const TensorList& grads) {
  const Tensor grad_output = kernels::contiguous(grads[0]);
  const Tensor grad_h_n = kernels::contiguous(grads[1]);
  const int64_t input_size = ctx.x_packed.size(1);
  Tensor dx_packed = ctx.needs_grad[0] ? empty({ctx.packing.total, input_size}, ctx.x_packed.dtype()) : Tensor();
  TensorList result(ctx.needs_grad.size());
  for (size_t d = 0; d < ctx.weights.size(); ++d) {
    const size_t first = 1 + 4 * d;
    bool weight_grads = false;
    for (size_t k = first; k < first + 4; ++k) weight_grads = weight_grads || ctx.needs_grad[k];
    gru_cpu::DirectionGrads g =
        gru_cpu::backward_direction(ctx.packing, static_cast<int64_t>(d), ctx.x_packed, ctx.weights[d], ctx.saved[d],
                                    grad_output, grad_h_n, weight_grads, dx_packed, d > 0);
    const Tensor* per_weight[4] = {&g.w_ih, &g.w_hh, &g.b_ih, &g.b_hh};
    for (size_t k = 0; k < 4; ++k)
      if (ctx.needs_grad[first + k]) result[first + k] = *per_weight[k];
  }
  if (ctx.needs_grad[0]) result[0] = gru_cpu::unpack_rows(ctx.packing, dx_packed, input_size);
  return result;
}

// The same on a CUDA device, where both directions run together and the weights are stacked over them.
struct GRUCudaContext {
  gru_cuda::Layer layer;
  std::vector<bool> needs_grad;  // per recorded input: x, then the weights
};

TensorList gru_cuda_backward(const GRUCudaContext& ctx, const TensorList& grads) {
  bool weight_grads = false;
  for (size_t k = 1; k < ctx.needs_grad.size(); ++k) weight_grads = weight_grads || ctx.needs_grad[k];
  const gru_cuda::LayerGrads g = gru_cuda::backward(ctx.layer, kernels::contiguous(grads[0]),
                                                    kernels::contiguous(grads[1]), ctx.needs_grad[0], weight_grads);
  TensorList result(ctx.needs_grad.size());
  if (ctx.needs_grad[0]) result[0] = g.x;
  const Tensor* stacked[4] = {&g.w_ih, &g.w_hh, &g.b_ih, &g.b_hh};
  for (size_t k = 1; k < result.size(); ++k) {
    const int64_t direction = static_cast<int64_t>((k - 1) / 4);
    if (ctx.needs_grad[k]) result[k] = kernels::select(*stacked[(k - 1) % 4], 0, direction);
  }
  return result;
}

GRUOutput gru_on_cuda(const Tensor& x, const gru_cpu::Packing& packing,
                      const std::vector<gru_cpu::DirectionWeights>& weights, const TensorList& inputs) {
  auto ctx = std::make_shared<GRUCudaContext>();
  for (const Tensor& t : inputs) ctx->needs_grad.push_back(t.requires_grad());
  ctx->layer = gru_cuda::prepare(packing, kernels::contiguous(x.detach()), weights);
  const gru_cuda::LayerOutputs out = gru_cuda::forward(ctx->layer, any_requires_grad(inputs));
  TensorList outs = record("gru", inputs, {out.output, out.h_n},
                           [ctx, x_meta = x.impl()->autograd,
                            weights = TensorList(inputs.begin() + 1, inputs.end())](const TensorList& grads) {
                             if (!grad_enabled()) return gru_cuda_backward(*ctx, grads);
                             TensorList g;
                             {
                               NoGradGuard kernels_only;
                               g = gru_cuda_backward(*ctx, grads);
                             }
                             return record_gru_backward(ctx->layer.packing, ctx->layer.x_packed, x_meta, weights,
                                                        grads[0], grads[1], g);
                           });
  return {outs[0], outs[1]};
}

}  // namespace

GRUOutput gru(const Tensor& x, const Tensor& lengths, const TensorList& weights, const std::string& who) {
  REMATCH_CHECK(x.defined(), who, ": input x is undefined");
  REMATCH_CHECK(x.dim() == 3, who, ": input x must be [batch, steps, features] (batch_first), got ", x.describe());
  REMATCH_CHECK(is_floating(x.dtype()), who, ": input x must be float32 or float64, got ", x.describe());
  REMATCH_CHECK(x.size(0) >= 1 && x.size(1) >= 1, who, ": input x ", x.describe(), " has no sequences or no steps");
  REMATCH_CHECK(!weights.empty() && weights[0].defined() && weights[0].dim() == 2, who,
                ": weight_ih_l0 must be a matrix [3H, input_size]");
  REMATCH_CHECK(x.size(2) == weights[0].size(1), who, ": input x ", x.describe(), " has ", x.size(2),
                " features per step, expected input_size ", weights[0].size(1));
  // nn::GRU cannot be built with input size 0, but the weights given here can be [3H, 0]: the CUDA path would
  // launch its packing kernel with 0 blocks and give cuBLAS a leading dimension of 0, which it rejects.
  REMATCH_CHECK(x.size(2) >= 1, who, ": input x ", x.describe(),
                " has input_size 0; a GRU needs at least one feature per step");
  const int64_t hidden = check_weights(x, weights, who);
  const int64_t batch = x.size(0), steps = x.size(1), directions = static_cast<int64_t>(weights.size() / 4);

  const gru_cpu::Packing packing = gru_cpu::make_packing(check_lengths(lengths, batch, steps, who), steps);
  std::vector<gru_cpu::DirectionWeights> direction_weights;
  for (int64_t d = 0; d < directions; ++d) {
    auto w = [&](int64_t k) { return kernels::contiguous(weights[4 * d + k].detach()); };
    direction_weights.push_back({w(0), w(1), w(2), w(3)});
  }
  TensorList inputs{x};
  inputs.insert(inputs.end(), weights.begin(), weights.end());
  if (x.device().is_cuda()) return gru_on_cuda(x, packing, direction_weights, inputs);

  auto ctx = std::make_shared<GRUContext>();
  ctx->packing = packing;
  ctx->weights = direction_weights;
  ctx->x_packed = gru_cpu::pack_rows(ctx->packing, kernels::contiguous(x.detach()));
  for (const Tensor& t : inputs) ctx->needs_grad.push_back(t.requires_grad());
  const bool save = any_requires_grad(inputs);

  Tensor output = zeros({batch, steps, directions * hidden}, x.dtype());
  Tensor h_n = empty({directions, batch, hidden}, x.dtype());
  for (int64_t d = 0; d < directions; ++d)
    ctx->saved.push_back(
        gru_cpu::forward_direction(ctx->packing, d, ctx->x_packed, ctx->weights[d], output, h_n, save));
  if (!save) ctx->x_packed = Tensor();  // only the backward reads it again

  TensorList outs = record("gru", inputs, {output, h_n},
                           [ctx, x_meta = x.impl()->autograd, weights](const TensorList& grads) {
                             if (!grad_enabled()) return gru_backward(*ctx, grads);
                             TensorList g;
                             {
                               NoGradGuard kernels_only;
                               g = gru_backward(*ctx, grads);
                             }
                             return record_gru_backward(ctx->packing, ctx->x_packed, x_meta, weights, grads[0],
                                                        grads[1], g);
                           });
  return {outs[0], outs[1]};
}

GRU::GRU(int64_t input_size, int64_t hidden_size, bool bidirectional, DType dtype, Generator* gen)
    : input_size_(input_size), hidden_size_(hidden_size), bidirectional_(bidirectional) {
  REMATCH_CHECK(input_size >= 1 && hidden_size >= 1, "nn::GRU: input_size and hidden_size must be positive, got ",
                input_size, " and ", hidden_size);
  REMATCH_CHECK(is_floating(dtype), "nn::GRU: parameters must be float32 or float64, got ", dtype_name(dtype));
  // PyTorch's RNNBase.reset_parameters: every weight and bias ~ U(-k, k), k = 1/sqrt(hidden_size).
  const double k = 1.0 / std::sqrt(static_cast<double>(hidden_size));
  const int64_t G = 3 * hidden_size;
  const Shape shapes[4] = {{G, input_size}, {G, hidden_size}, {G}, {G}};
  for (int64_t i = 0; i < 4 * num_directions(); ++i) {
    Tensor u = rand(shapes[i % 4], dtype, Device::cpu(), gen);
    Tensor value =
        kernels::scalar_op(kernels::ScalarOp::Add, kernels::scalar_op(kernels::ScalarOp::Mul, u, 2 * k), -k);
    weights_.push_back(register_parameter(weight_name(static_cast<size_t>(i)), value));
  }
}

GRUOutput GRU::forward(const Tensor& x, const Tensor& lengths) const {
  return gru(x, lengths, weights_, describe());
}

std::string GRU::describe() const {
  return ::rematch::detail::concat("nn::GRU(", input_size_, ", ", hidden_size_, bidirectional_ ? ", bidirectional)" : ")");
}

}  // namespace rematch::nn
