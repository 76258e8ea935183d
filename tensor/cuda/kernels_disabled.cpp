// CPU-only build: the CUDA kernels of tensor/cuda/cuda_kernels.h do not exist. No CUDA tensor can be made in
// such a build (allocation fails first, tensor/cuda/runtime_disabled.cpp), so these only satisfy the linker and
// say why if ever reached.
#include "tensor/cuda/cuda_kernels.h"
#include "tensor/error.h"

namespace rematch::cuda {
namespace {
[[noreturn]] void no_cuda(const char* op) {
  REMATCH_FAIL(op, ": rematch was built without CUDA (REMATCH_CUDA=OFF)");
}
}  // namespace

void unary(kernels::UnaryOp op, const Tensor&, const Tensor&) { no_cuda(kernels::op_name(op)); }
void scalar_op(kernels::ScalarOp op, const Tensor&, const Tensor&, double) { no_cuda(kernels::op_name(op)); }
void binary(kernels::BinaryOp op, const Tensor&, const Tensor&, const Tensor&) { no_cuda(kernels::op_name(op)); }
void where(const Tensor&, const Tensor&, const Tensor&, const Tensor&) { no_cuda("where"); }
void fill(const Tensor&, double) { no_cuda("fill_"); }
void copy(const Tensor&, const Tensor&) { no_cuda("copy_"); }
void reduce(kernels::ReduceOp, const Tensor&, const Tensor&, int64_t, int64_t, int64_t) { no_cuda("reduce"); }
void reduce_with_index(kernels::ReduceOp, const Tensor&, const Tensor&, const Tensor&, int64_t, int64_t) {
  no_cuda("reduce_with_index");
}
void softmax(const Tensor&, const Tensor&, int64_t, bool) { no_cuda("softmax"); }
void softmax_backward(const Tensor&, const Tensor&, const Tensor&, int64_t, bool) { no_cuda("softmax_backward"); }
void lp_normalize(const Tensor&, const Tensor&, int64_t, int, double) { no_cuda("lp_normalize"); }
void matmul(const Tensor&, const Tensor&, const Tensor&) { no_cuda("matmul"); }
void set_allow_tf32(bool) {}
bool allow_tf32() { return false; }
std::pair<int64_t, int64_t> find_bad_index(const Tensor&, int64_t) { no_cuda("index check"); }
void index_select(const Tensor&, const Tensor&, int64_t, const Tensor&) { no_cuda("index_select"); }
void gather(const Tensor&, const Tensor&, int64_t, const Tensor&) { no_cuda("gather"); }
void scatter_add_(const Tensor&, int64_t, const Tensor&, const Tensor&) { no_cuda("scatter_add"); }
void index_add_(const Tensor&, int64_t, const Tensor&, const Tensor&) { no_cuda("index_add"); }
void sort(const Tensor&, const Tensor&, const Tensor&, int64_t, bool, int64_t) { no_cuda("sort"); }

}  // namespace rematch::cuda
