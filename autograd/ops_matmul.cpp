// Differentiable matrix products. For Y = A·B the gradients are dA = G·Bᵀ and dB = Aᵀ·G; when a batch dim
// was broadcast (a 2-D operand, or a batch of 1) the per-entry gradients are summed back over it (sum_to).
// The backward calls matmul and transpose themselves, so it differentiates again (with create_graph) and the
// transposes, views, cost no copy: the CPU kernel hands transposed views to BLAS as they are.
#include "autograd/ops.h"
#include "autograd/record.h"

namespace rematch {

namespace {

Tensor t_last(const Tensor& x) { return transpose(x, -1, -2); }

// dB = Aᵀ·G summed back to B's shape. When B was shared by every batch entry of A (the usual "3-D input
// times a weight" case), sum_i A_iᵀ G_i is one [k, B·n] x [B·n, m] product of the flattened batches: one
// gemm and no [B, k, m] temporary.
Tensor grad_of_right(const Tensor& a2, const Tensor& g2, const Shape& sb2) {
  const bool shared = a2.dim() == 3 && a2.size(0) > 1 && (sb2.size() == 2 || sb2[0] == 1);
  if (shared) return matmul(t_last(flatten(a2, 0, 1)), flatten(g2, 0, 1));
  return sum_to(matmul(t_last(a2), g2), sb2);
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  REMATCH_CHECK(a.defined() && b.defined(), "matmul: undefined input");
  REMATCH_CHECK(a.dim() >= 1 && a.dim() <= 3 && b.dim() >= 1 && b.dim() <= 3,
                "matmul: expected 1-D to 3-D operands, got ", a.describe(), " and ", b.describe());
  // NumPy rules for vectors: a 1-D left operand is a row [1,k], a 1-D right operand a column [k,1]; the
  // added dim is removed from the result again.
  const Tensor a2 = a.dim() == 1 ? kernels::unsqueeze(a, 0) : a;
  const Tensor b2 = b.dim() == 1 ? kernels::unsqueeze(b, 1) : b;
  Tensor y2 = kernels::matmul(a2, b2);
  Shape ys = y2.sizes();
  if (b.dim() == 1) ys.pop_back();
  if (a.dim() == 1) ys.erase(ys.end() - (b.dim() == 1 ? 1 : 2));
  Tensor y = kernels::view(y2, ys);
  const bool ga = a.requires_grad(), gb = b.requires_grad();
  // The operands are captured as they came (a 1-D one is unsqueezed again in the backward, a view), so that
  // the backward's products depend on them in the graph.
  return record("matmul", {a, b}, y,
                [a = gb ? a : Tensor(), b = ga ? b : Tensor(), sa = a.sizes(), sb = b.sizes(), sa2 = a2.sizes(),
                 sb2 = b2.sizes(), sy2 = y2.sizes()](const TensorList& g) {
                  const Tensor g2 = reshape(g[0], sy2);
                  Tensor da, db;
                  if (b.defined()) {
                    const Tensor b2 = b.dim() == 1 ? unsqueeze(b, 1) : b;
                    da = reshape(sum_to(matmul(g2, t_last(b2)), sa2), sa);
                  }
                  if (a.defined()) {
                    const Tensor a2 = a.dim() == 1 ? unsqueeze(a, 0) : a;
                    db = reshape(grad_of_right(a2, g2, sb2), sb);
                  }
                  return TensorList{da, db};
                });
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  REMATCH_CHECK(a.defined() && b.defined(), "bmm: undefined input");
  REMATCH_CHECK(a.dim() == 3 && b.dim() == 3, "bmm: expected 3-D operands, got ", a.describe(), " and ",
                b.describe());
  REMATCH_CHECK(a.size(0) == b.size(0), "bmm: batch sizes differ: ", a.describe(), " x ", b.describe());
  Tensor y = kernels::matmul(a, b);
  const bool ga = a.requires_grad(), gb = b.requires_grad();
  return record("bmm", {a, b}, y,
                [a = gb ? a : Tensor(), b = ga ? b : Tensor()](const TensorList& g) {
                  return TensorList{b.defined() ? bmm(g[0], t_last(b)) : Tensor(),
                                    a.defined() ? bmm(t_last(a), g[0]) : Tensor()};
                });
}

}  // namespace rematch
