// The differentiable op API. Every function here computes its result with kernels:: and, when grad mode is
// on and an input requires grad, records a backward node (autograd/record.h). Forward and backward of each op
// sit side by side in autograd/ops_<family>.cpp. Inputs of binary ops must share dtype and device;
// broadcasting follows NumPy and gradients are summed back to each input's shape.
#pragma once

#include <utility>
#include <vector>

#include "autograd/node.h"

namespace rematch {

// ---- elementwise (ops_elementwise.cpp) -------------------------------------------------------------------
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor add(const Tensor& a, double s);
Tensor sub(const Tensor& a, double s);
Tensor rsub(double s, const Tensor& a);      // s - a
Tensor mul(const Tensor& a, double s);
Tensor div(const Tensor& a, double s);
Tensor rdiv(double s, const Tensor& a);      // s / a
Tensor neg(const Tensor& x);
Tensor abs(const Tensor& x);                 // gradient sign(x), 0 at 0
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor log1p(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);
Tensor pow(const Tensor& x, double exponent);
Tensor square(const Tensor& x);
Tensor reciprocal(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor relu(const Tensor& x);                // gradient 0 at 0
Tensor leaky_relu(const Tensor& x, double negative_slope);
// Bounds may be NaN to mean "none"; gradient passes where min <= x <= max (PyTorch).
Tensor clamp(const Tensor& x, double min, double max);
Tensor clamp_min(const Tensor& x, double min);
Tensor clamp_max(const Tensor& x, double max);
Tensor sign(const Tensor& x);                // gradient 0
Tensor maximum(const Tensor& a, const Tensor& b);  // ties split the gradient in half (PyTorch)
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor masked_fill(const Tensor& x, const Tensor& mask, double value);
// Comparisons and logic: bool results, no gradient.
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, double s);
Tensor ne(const Tensor& a, double s);
Tensor lt(const Tensor& a, double s);
Tensor le(const Tensor& a, double s);
Tensor gt(const Tensor& a, double s);
Tensor ge(const Tensor& a, double s);
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor logical_not(const Tensor& a);
// Differentiable conversions: a float↔float cast passes the gradient back in the input's dtype.
Tensor to(const Tensor& x, DType dtype);
Tensor to(const Tensor& x, Device device);
Tensor clone(const Tensor& x);
Tensor contiguous(const Tensor& x);

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, double s);
Tensor operator-(const Tensor& a, double s);
Tensor operator*(const Tensor& a, double s);
Tensor operator/(const Tensor& a, double s);
Tensor operator+(double s, const Tensor& a);
Tensor operator-(double s, const Tensor& a);
Tensor operator*(double s, const Tensor& a);
Tensor operator/(double s, const Tensor& a);
Tensor operator-(const Tensor& x);

// ---- special functions (ops_special.cpp) --------------------------------------------------------------------
Tensor lgamma(const Tensor& x);              // log|Γ(x)|, gradient ψ(x) (torch.lgamma)
Tensor digamma(const Tensor& x);             // ψ(x), gradient ψ'(x) (torch.digamma)
Tensor trigamma(const Tensor& x);            // ψ'(x) (torch.polygamma(1, x)), gradient ψ''(x)
Tensor polygamma(int64_t n, const Tensor& x);  // ψ^(n)(x), n in 0..64 (torch.polygamma), gradient ψ^(n+1)(x)

// ---- reductions (ops_reduce.cpp); empty `dims` reduces over everything -----------------------------------
Tensor sum(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor mean(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
// Values of max/min over dims; the gradient is split evenly among tied maxima (PyTorch's amax).
Tensor amax(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor amin(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
// Values and int64 indices along one dim; the gradient goes to the returned index.
std::pair<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim = false);
std::pair<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor argmin(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor logsumexp(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim = false);
// correction 1 = unbiased (N-1), 0 = biased (N).
Tensor var(const Tensor& x, const std::vector<int64_t>& dims = {}, int64_t correction = 1, bool keepdim = false);
// p = 1 or 2; the p = 2 gradient at a zero vector is 0 (the subgradient PyTorch picks).
Tensor norm(const Tensor& x, int p = 2, const std::vector<int64_t>& dims = {}, bool keepdim = false);

// ---- matrix products (ops_matmul.cpp) ---------------------------------------------------------------------
// 1-D·1-D, 2-D·2-D, and batched with broadcasting of the batch dim (3-D with 2-D or 3-D).
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor bmm(const Tensor& a, const Tensor& b);  // strict [B,n,k]x[B,k,m]

// ---- views and shapes (ops_shape.cpp) ---------------------------------------------------------------------
Tensor reshape(const Tensor& x, const Shape& shape);
Tensor view(const Tensor& x, const Shape& shape);
Tensor transpose(const Tensor& x, int64_t d0, int64_t d1);
Tensor permute(const Tensor& x, const std::vector<int64_t>& dims);
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length);
Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step = 1);
Tensor select(const Tensor& x, int64_t dim, int64_t index);
Tensor squeeze(const Tensor& x, int64_t dim);
Tensor squeeze(const Tensor& x);
Tensor unsqueeze(const Tensor& x, int64_t dim);
Tensor expand(const Tensor& x, const Shape& shape);
Tensor flatten(const Tensor& x, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor cat(const TensorList& xs, int64_t dim);
Tensor stack(const TensorList& xs, int64_t dim);
TensorList split(const Tensor& x, int64_t split_size, int64_t dim);     // last piece may be smaller
TensorList split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t dim);
TensorList chunk(const Tensor& x, int64_t chunks, int64_t dim);
Tensor pad(const Tensor& x, int64_t dim, int64_t before, int64_t after, double value = 0);

// ---- index ops (ops_index.cpp); index tensors are int32 or int64 ------------------------------------------
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);
// x with src's rows added at `index` along dim (repeated indices accumulate): index_select's backward.
Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);
Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
// weight [V, D], ids of any shape -> [..., D]; the gradient sums rows of repeated ids.
Tensor embedding(const Tensor& weight, const Tensor& ids);

// ---- fused row ops (ops_fused.cpp) ------------------------------------------------------------------------
Tensor softmax(const Tensor& x, int64_t dim);
Tensor log_softmax(const Tensor& x, int64_t dim);
Tensor l2_normalize(const Tensor& x, int64_t dim, double eps = 1e-8);  // x / (||x||_2 + eps)
Tensor l1_normalize(const Tensor& x, int64_t dim, double eps = 1e-8);  // x / (sum|x| + eps)

// ---- sorting (ops_sort.cpp); values carry the gradient back to their source positions --------------------
std::pair<Tensor, Tensor> sort(const Tensor& x, int64_t dim = -1, bool descending = false);
Tensor argsort(const Tensor& x, int64_t dim = -1, bool descending = false);
std::pair<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim = -1, bool largest = true);

}  // namespace rematch
