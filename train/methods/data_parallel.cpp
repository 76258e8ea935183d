#include "train/methods/data_parallel.h"

#include "autograd/autograd.h"
#include "tensor/kernels.h"

namespace rematch::train {

void all_reduce_gradients(dist::Communicator& comm, const std::vector<Tensor>& params) {
  if (comm.world_size() == 1 || params.empty()) return;
  NoGradGuard no_grad;
  std::vector<Tensor> flat;
  for (const Tensor& p : params)
    flat.push_back(p.grad().defined() ? kernels::reshape(kernels::contiguous(p.grad()), {p.numel()})
                                      : zeros({p.numel()}, p.dtype(), p.device()));
  const Tensor sum = comm.all_reduce_sum(kernels::cat(flat, 0));
  int64_t at = 0;
  for (const Tensor& p : params) {
    p.set_grad(kernels::reshape(kernels::contiguous(kernels::narrow(sum, 0, at, p.numel())), p.sizes()));
    at += p.numel();
  }
}

bool on_any_rank(dist::Communicator& comm, bool mine) {
  if (comm.world_size() == 1) return mine;
  return comm.all_reduce_sum(from_vector(std::vector<int64_t>{mine ? 1 : 0}, {1})).to_vector<int64_t>()[0] > 0;
}

dist::RowRange batch_share(dist::Communicator& comm, int64_t batch) {
  return dist::block_rows(batch, 1, comm.rank(), comm.world_size());
}

}  // namespace rematch::train
