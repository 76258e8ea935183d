// MSCN's virtual step (`MSCN/main_MSCN.py: train`, `MSCN/utils.py: MetaAdam.meta_step`; docs/methods/mscn.md §2.2):
// the code copies the net (`pseudo_net.load_state_dict(net.state_dict())`), takes
// g = torch.autograd.grad(loss, params, create_graph=True) and installs θ' = θ − lr·g in the copy's modules in place
// of its parameters (`set_parameter`; `parameter.detach_()` first, so θ is a constant and θ' depends on the meta
// net only through g). Despite its name, MetaAdam's step is plain SGD at the main optimizer's current lr: the Adam
// state it loads is never read; and its `clip_grad_norm_(pseudo_net.parameters())` clips nothing (autograd.grad
// leaves .grad empty), so g is unclipped.
//
// Here the forward that gives g runs on the net itself (grad() touches no .grad, and the BatchNorm running
// statistics it moves are put back: the code's forward moves the copy's), and θ' goes into a second model of the
// same configuration, the shadow, whose parameter tensors take θ''s values and graph (install_parameters).
#pragma once

#include <functional>
#include <vector>

#include "parallel/communicator.h"

#include "nn/module.h"

namespace rematch::train {

// θ'_k = θ_k (detached) − lr·g_k with g = grad(loss, params, create_graph, allow_unused): each θ'_k carries the graph
// of g (a parameter the loss does not use gets θ_k itself, detached). With `frozen` (one flag per parameter; empty:
// none), a flagged parameter is not stepped and gets θ_k detached.
//
// Under mpirun each rank's g is its share of the batch's gradient (mscn_training_scores): `sum_gradients`, when set,
// maps the defined g_k (in order) to their sums over ranks, recorded for autograd (sum_over_ranks_in_graph), so θ' is
// one process's on every rank and the meta step differentiates through the sum.
std::vector<Tensor> virtual_sgd_step(const Tensor& loss, const std::vector<Tensor>& params, double lr,
                                     const std::vector<bool>& frozen = {},
                                     const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& sum_gradients = {});

// The tensors summed over the ranks of `comm` in the graph (one parallel::all_reduce_sum_recorded of them all laid end
// to end, backward ReduceBackward::WholeLossOnEveryRank: every rank computes the whole meta loss from θ', which counts
// once; docs/distributed.md §4.1, item 13 says why the identity backward is exact for the meta step).
std::vector<Tensor> sum_over_ranks_in_graph(parallel::Communicator& comm, const std::vector<Tensor>& shares);

// The parameters of an SGR/SAF model the code's virtual step leaves as they are: the Bi-GRU's (txt_enc.cap_rnn.*).
// `set_parameter` writes `module._parameters[name]`, and PyTorch's nn.GRU runs on its `_flat_weights` list, which
// only `__setattr__` refreshes: the stepped copy's GRU keeps the unstepped (detached) weights.
std::vector<bool> gru_parameters(const nn::Module& model);

// Makes each parameter of `shadow` (parameters() order) the tensor `values[k]`: every handle the modules hold
// sees its values and its place in the graph (`MetaAdam.set_parameter`). Shapes, dtypes and devices must match.
void install_parameters(const nn::Module& shadow, const std::vector<Tensor>& values);

// The values of a module's buffers (BatchNorm running statistics), to put back after a forward pass.
class BufferSnapshot {
 public:
  explicit BufferSnapshot(const nn::Module& module);
  void restore() const;

 private:
  std::vector<Tensor> buffers_, saved_;
};

}  // namespace rematch::train
