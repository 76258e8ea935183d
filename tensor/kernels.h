// The backend line: the primitives every device implements, with no autograd. Each function checks its
// inputs (dtypes, shapes, devices), picks the CPU or CUDA implementation by the inputs' device and returns a
// new tensor (the `_` suffix marks the few that write into an argument). Differentiable ops in autograd/ are
// written from these; users normally call those instead.
#pragma once

#include <utility>
#include <vector>

#include "tensor/elementwise_ops.h"
#include "tensor/tensor_core.h"

namespace rematch::kernels {

// ---- copy, fill, cast -------------------------------------------------------------------------------------
// dst[...] = src broadcast to dst's shape, converting dtype; dst may be any strided view, on any device.
void copy_(const Tensor& dst, const Tensor& src);
void fill_(const Tensor& dst, double value);
Tensor contiguous(const Tensor& x);               // x itself when already contiguous
Tensor cast(const Tensor& x, DType dtype);        // x itself when already of that dtype
Tensor to_device(const Tensor& x, Device device); // x itself when already there
Tensor clone(const Tensor& x);                    // always a fresh contiguous copy

// ---- elementwise (one row per op in tensor/elementwise_ops.h) ---------------------------------------------
#define REMATCH_ELEMENTWISE_ENUMERATOR(op, name, accepts, result, functor) op,
enum class UnaryOp { REMATCH_UNARY_OPS(REMATCH_ELEMENTWISE_ENUMERATOR) };
enum class ScalarOp { REMATCH_SCALAR_OPS(REMATCH_ELEMENTWISE_ENUMERATOR) };
enum class BinaryOp { REMATCH_BINARY_OPS(REMATCH_ELEMENTWISE_ENUMERATOR) };
#undef REMATCH_ELEMENTWISE_ENUMERATOR

// Every op of each enum, in order (the parity tests iterate them).
#define REMATCH_ELEMENTWISE_UNARY_ITEM(op, ...) UnaryOp::op,
#define REMATCH_ELEMENTWISE_SCALAR_ITEM(op, ...) ScalarOp::op,
#define REMATCH_ELEMENTWISE_BINARY_ITEM(op, ...) BinaryOp::op,
inline constexpr UnaryOp kUnaryOps[] = {REMATCH_UNARY_OPS(REMATCH_ELEMENTWISE_UNARY_ITEM)};
inline constexpr ScalarOp kScalarOps[] = {REMATCH_SCALAR_OPS(REMATCH_ELEMENTWISE_SCALAR_ITEM)};
inline constexpr BinaryOp kBinaryOps[] = {REMATCH_BINARY_OPS(REMATCH_ELEMENTWISE_BINARY_ITEM)};
#undef REMATCH_ELEMENTWISE_UNARY_ITEM
#undef REMATCH_ELEMENTWISE_SCALAR_ITEM
#undef REMATCH_ELEMENTWISE_BINARY_ITEM

// One row of the table, without its functor.
struct OpInfo {
  const char* name;
  Accepts accepts;
  Result result;
};
OpInfo op_info(UnaryOp op);
OpInfo op_info(ScalarOp op);
OpInfo op_info(BinaryOp op);
const char* op_name(UnaryOp op);  // op_info(op).name
const char* op_name(ScalarOp op);
const char* op_name(BinaryOp op);

Tensor unary(UnaryOp op, const Tensor& x);
Tensor scalar_op(ScalarOp op, const Tensor& x, double s);
// NumPy broadcasting; both inputs must share dtype (and device).
Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b);
// cond ? a : b, broadcast over all three; cond is bool.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);

// ---- views (share storage) -------------------------------------------------------------------------------
Tensor as_strided(const Tensor& x, Shape sizes, Shape strides, int64_t offset);
Tensor view(const Tensor& x, Shape shape);        // error when the strides do not allow a view; one -1 allowed
Tensor reshape(const Tensor& x, Shape shape);     // a view when possible, else a copy
Tensor transpose(const Tensor& x, int64_t d0, int64_t d1);
Tensor permute(const Tensor& x, const std::vector<int64_t>& dims);
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length);
Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step = 1);
Tensor select(const Tensor& x, int64_t dim, int64_t index);
Tensor squeeze(const Tensor& x, int64_t dim);
Tensor squeeze(const Tensor& x);                  // all size-1 dims
Tensor unsqueeze(const Tensor& x, int64_t dim);
Tensor expand(const Tensor& x, Shape shape);      // -1 keeps a size
Tensor flatten(const Tensor& x, int64_t start_dim = 0, int64_t end_dim = -1);
// Shape after resolving one -1 against numel; the error names `op`.
Shape infer_shape(Shape shape, int64_t numel, const char* op);

// ---- reductions (tensor/cpu/reduce.cpp) -------------------------------------------------------------------
enum class ReduceOp { Sum, Mean, Max, Min };
const char* reduce_name(ReduceOp op);  // "sum", "mean", "max", "min": how errors name the op
// Reduces over `dims` (empty = all dims). Mean of an integer tensor is an error.
Tensor reduce(ReduceOp op, const Tensor& x, const std::vector<int64_t>& dims, bool keepdim);
// Max/Min along one dim: values and int64 indices (first occurrence).
std::pair<Tensor, Tensor> reduce_with_index(ReduceOp op, const Tensor& x, int64_t dim, bool keepdim);
// log(sum(exp(x))) along dims, max-shifted; rows of all -inf give -inf.
Tensor logsumexp(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim);

// ---- matrix products (tensor/cpu/matmul.cpp) -------------------------------------------------------------
// [n,k]x[k,m], or batched [B,n,k]x[B,k,m] where a batch dim of 1 (or a 2-D operand) broadcasts.
Tensor matmul(const Tensor& a, const Tensor& b);

// ---- fused row ops (tensor/cpu/softmax.cpp) --------------------------------------------------------------
Tensor softmax(const Tensor& x, int64_t dim);
Tensor log_softmax(const Tensor& x, int64_t dim);
// Gradients: softmax: y * (g - sum(g * y)); log_softmax: g - exp(y) * sum(g).
Tensor softmax_backward(const Tensor& grad, const Tensor& y, int64_t dim);
Tensor log_softmax_backward(const Tensor& grad, const Tensor& y, int64_t dim);
// x / (||x||_p + eps) along dim, p = 1 or 2 (the backbones' l1norm/l2norm).
Tensor lp_normalize(const Tensor& x, int64_t dim, int p, double eps);

// ---- shape and index ops (tensor/cpu/index.cpp) ----------------------------------------------------------
Tensor cat(const std::vector<Tensor>& xs, int64_t dim);
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);
// A copy of `x` with src added at index along dim (repeated indices accumulate, deterministically).
Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
// out[..., index[i], ...] += src[..., i, ...] into a copy of x (index 1-D): the backward of index_select.
Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
// Constant pad of `before`/`after` elements along dim.
Tensor pad(const Tensor& x, int64_t dim, int64_t before, int64_t after, double value);

// ---- sorting (tensor/cpu/sort.cpp) ------------------------------------------------------------------------
// Stable sort along dim: values and int64 indices.
std::pair<Tensor, Tensor> sort(const Tensor& x, int64_t dim, bool descending);
std::pair<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim, bool largest);

}  // namespace rematch::kernels
