// CPU matrix products through OpenBLAS (cblas_sgemm / cblas_dgemm). Transposed views go to BLAS as
// CblasTrans with their own leading dimension instead of being copied; only operands whose last two dims are
// neither row- nor column-major (e.g. expanded or sliced in both dims) are copied.
//
// Threads: OpenBLAS is set to one thread (openblas_set_num_threads(1), a process-wide setting) and large
// products are split over rows or columns across OpenMP threads instead, so one thread pool serves every
// kernel. OpenBLAS's own pool spins (sched_yield) for about 0.1 s after each threaded call; beside another
// busy process those spinning threads took the cores from the work: a demo-sized triplet run took 29 s
// instead of 7 s (bench/RESULTS.md, "Under load").
#include "tensor/cpu/matmul_kernels.h"
#include "tensor/cpu/blas_threads.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <climits>
#include <type_traits>

#include "tensor/kernels.h"

namespace rematch::cpu {
namespace {

// One operand as BLAS sees it: each batch entry is a matrix at base + i * batch_stride (0 when broadcast).
struct BlasOperand {
  Tensor keep;  // the tensor `base` points into (a contiguous copy when the view did not fit BLAS)
  const char* base = nullptr;
  CBLAS_TRANSPOSE trans = CblasNoTrans;
  int64_t ld = 0;
  int64_t batch_stride = 0;  // in elements
};

// How BLAS can read a rows x cols matrix with element strides (rs, cs): row-major (NoTrans, ld = rs) or
// column-major, i.e. a transposed view (Trans, ld = cs). Size-1 dims have meaningless strides, so they do
// not constrain the choice. False when neither fits.
bool blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs, CBLAS_TRANSPOSE& trans, int64_t& ld) {
  if (cs == 1 || cols == 1) {
    if (rows == 1 || rs >= std::max<int64_t>(cols, 1)) {
      trans = CblasNoTrans;
      ld = rows == 1 ? std::max<int64_t>(cols, 1) : rs;
      return true;
    }
  }
  if (rs == 1 || rows == 1) {
    if (cols == 1 || cs >= std::max<int64_t>(rows, 1)) {
      trans = CblasTrans;
      ld = cols == 1 ? std::max<int64_t>(rows, 1) : cs;
      return true;
    }
  }
  return false;
}

BlasOperand prepare(const Tensor& t) {
  BlasOperand op;
  op.keep = t;
  if (!blas_layout(t.size(-2), t.size(-1), t.stride(-2), t.stride(-1), op.trans, op.ld)) {
    op.keep = kernels::contiguous(t);
    blas_layout(t.size(-2), t.size(-1), op.keep.stride(-2), op.keep.stride(-1), op.trans, op.ld);
  }
  op.base = static_cast<const char*>(op.keep.raw_data());
  op.batch_stride = (t.dim() == 3 && t.size(0) > 1) ? op.keep.stride(0) : 0;
  return op;
}

int blas_int(int64_t v, const char* what) {
  REMATCH_CHECK(v <= INT_MAX, "matmul: ", what, " ", v, " exceeds the BLAS integer range");
  return static_cast<int>(v);
}

// Products of fewer multiply-adds than this (about 128³, some 0.1 ms on one core) run on one thread: below it
// the hand-off to a second thread costs about what it saves.
constexpr int64_t kParallelGemmWork = int64_t{1} << 21;

// One BLAS call; sizes were checked by check_blas_sizes.
template <typename T>
void blas_gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda,
               const T* b, int64_t ldb, T* c, int64_t ldc) {
  const int M = static_cast<int>(m), N = static_cast<int>(n), K = static_cast<int>(k);
  const int LDA = static_cast<int>(lda), LDB = static_cast<int>(ldb), LDC = static_cast<int>(ldc);
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, ta, tb, M, N, K, 1.0f, a, LDA, b, LDB, 0.0f, c, LDC);
  else
    cblas_dgemm(CblasRowMajor, ta, tb, M, N, K, 1.0, a, LDA, b, LDB, 0.0, c, LDC);
}

void check_blas_sizes(int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc) {
  blas_int(m, "rows");
  blas_int(n, "columns");
  blas_int(k, "inner size");
  blas_int(lda, "leading dim");
  blas_int(ldb, "leading dim");
  blas_int(ldc, "leading dim");
}

// Rows (or columns) of C per block of a large product: a function of the product's shape only. Each block is
// one BLAS call, and a BLAS kernel may round an element differently depending on where it falls in its call's
// tiles (OpenBLAS's edge kernels for a call's last rows differ from its main one), so blocks shaped by the
// thread count would give other bits at another thread count. Blocks of at least kMinBlock rows keep the cost
// of each call packing the other operand again small (about 12/kMinBlock of the work).
constexpr int64_t kMinBlock = 256, kMaxBlocks = 64;
int64_t block_length(int64_t len) {
  const int64_t b = std::max(kMinBlock, (len + kMaxBlocks - 1) / kMaxBlocks);
  return (b + 15) / 16 * 16;  // a multiple of every OpenBLAS unroll
}

// C = op(A) op(B), a large product split into fixed row blocks of C (op(A)'s rows) or, when C is wider than
// tall, column blocks (op(B)'s columns), the blocks shared among the OpenMP threads. Each element is one BLAS
// dot product over the whole of k in a call of the same shape at any thread count, so the result's bits do
// not depend on the number of threads (or on whether the caller runs inside a parallel region).
template <typename T>
void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda,
          const T* b, int64_t ldb, T* c, int64_t ldc) {
  check_blas_sizes(m, n, k, lda, ldb, ldc);
  const bool by_rows = m >= n;
  const int64_t len = by_rows ? m : n;
  const int64_t block = block_length(len), blocks = (len + block - 1) / block;
  if (m * n * k < kParallelGemmWork || blocks <= 1) return blas_gemm<T>(ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
#pragma omp parallel for schedule(static) if (!omp_in_parallel() && omp_get_max_threads() > 1)
  for (int64_t p = 0; p < blocks; ++p) {
    const int64_t lo = p * block, size = std::min(block, len - lo);
    if (by_rows)
      blas_gemm<T>(ta, tb, size, n, k, a + (ta == CblasNoTrans ? lo * lda : lo), lda, b, ldb, c + lo * ldc, ldc);
    else
      blas_gemm<T>(ta, tb, m, size, k, a, lda, b + (tb == CblasNoTrans ? lo : lo * ldb), ldb, c + lo, ldc);
  }
}

template <typename T> void matmul_typed(const Tensor& out, const Tensor& a, const Tensor& b) {
  const int64_t n = a.size(-2), k = a.size(-1), m = b.size(-1);
  const int64_t batch = out.dim() == 3 ? out.size(0) : 1;
  single_threaded_blas();
  const BlasOperand A = prepare(a), B = prepare(b);
  const T* pa = reinterpret_cast<const T*>(A.base);
  const T* pb = reinterpret_cast<const T*>(B.base);
  T* pc = out.data<T>();
  // A batch of row-major A_i stacked without gaps times one shared B is a single [batch·n, k] x [k, m]
  // product whose result is exactly out's layout: one large gemm instead of `batch` small ones.
  const bool fold = batch > 1 && B.batch_stride == 0 && A.trans == CblasNoTrans && A.batch_stride == n * A.ld;
  if (fold) return gemm<T>(A.trans, B.trans, batch * n, m, k, pa, A.ld, pb, B.ld, pc, m);
  // Many products: one thread each when together they are large (each then runs single-threaded inside).
  check_blas_sizes(n, m, k, A.ld, B.ld, m);
  const bool parallel = batch > 1 && batch * n * m * k >= kParallelGemmWork && !omp_in_parallel();
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t i = 0; i < batch; ++i)
    gemm<T>(A.trans, B.trans, n, m, k, pa + i * A.batch_stride, A.ld, pb + i * B.batch_stride, B.ld,
            pc + i * n * m, m);
}

}  // namespace

void single_threaded_blas() {
  static const bool once = (openblas_set_num_threads(1), true);
  (void)once;
}

void matmul(const Tensor& out, const Tensor& a, const Tensor& b) {
  // BLAS with k = 0 is not required to touch C; an empty inner product is 0.
  if (a.size(-1) == 0) return kernels::fill_(out, 0.0);
  dispatch_float("matmul", out.dtype(), [&](auto tag) { matmul_typed<typename decltype(tag)::type>(out, a, b); });
}

}  // namespace rematch::cpu
