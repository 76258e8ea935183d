// The cuBLAS calls of tools/cuda_emu/include/cublas_v2.h, built as libcublas.so.emu for the CUDA emulator:
// column-major GEMM, C = alpha·op(A)·op(B) + beta·C, with cuBLAS's argument checks (an invalid leading
// dimension is CUBLAS_STATUS_INVALID_VALUE, as the real library answers it) and its rule that C is not read
// when beta is 0. CUBLAS_TF32_TENSOR_OP_MATH rounds float inputs to TF32 (10 explicit mantissa bits) first, as
// the tensor cores do; sums are formed in double.
#include <cublas_v2.h>

#include <cstdint>
#include <cstring>

struct cublasContext {
  cudaStream_t stream = nullptr;
  cublasMath_t math = CUBLAS_DEFAULT_MATH;
};

namespace {

float tf32(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  if ((bits & 0x7F800000u) == 0x7F800000u) return v;  // inf and NaN as they are
  bits = (bits + 0x00000FFFu + ((bits >> 13) & 1u)) & 0xFFFFE000u;  // round to nearest even at bit 13
  std::memcpy(&v, &bits, 4);
  return v;
}

template <class T>
cublasStatus_t gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const T* alpha,
                    const T* A, int lda, long long sa, const T* B, int ldb, long long sb, const T* beta, T* C, int ldc,
                    long long sc, int batch) {
  if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  const auto valid_op = [](cublasOperation_t op) { return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C; };
  if (!valid_op(ta) || !valid_op(tb) || m < 0 || n < 0 || k < 0 || batch < 0) return CUBLAS_STATUS_INVALID_VALUE;
  const auto at_least = [](int v) { return v < 1 ? 1 : v; };
  if (lda < at_least(ta == CUBLAS_OP_N ? m : k) || ldb < at_least(tb == CUBLAS_OP_N ? k : n) || ldc < at_least(m))
    return CUBLAS_STATUS_INVALID_VALUE;
  if (alpha == nullptr || beta == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  const bool round = sizeof(T) == 4 && h->math == CUBLAS_TF32_TENSOR_OP_MATH;
  const auto in = [&](T v) { return round ? static_cast<T>(tf32(static_cast<float>(v))) : v; };
  for (int b = 0; b < batch; ++b) {
    const T* a = A + b * sa;
    const T* bm = B + b * sb;
    T* c = C + b * sc;
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        double s = 0;
        for (int p = 0; p < k; ++p) {
          const T av = ta == CUBLAS_OP_N ? a[i + static_cast<long long>(p) * lda] : a[p + static_cast<long long>(i) * lda];
          const T bv = tb == CUBLAS_OP_N ? bm[p + static_cast<long long>(j) * ldb] : bm[j + static_cast<long long>(p) * ldb];
          s += static_cast<double>(in(av)) * static_cast<double>(in(bv));
        }
        T& out = c[i + static_cast<long long>(j) * ldc];
        const double scaled = static_cast<double>(*alpha) * s;
        out = *beta == T(0) ? static_cast<T>(scaled) : static_cast<T>(scaled + static_cast<double>(*beta) * out);
      }
  }
  return CUBLAS_STATUS_SUCCESS;
}

}  // namespace

extern "C" {
cublasStatus_t cublasCreate_v2(cublasHandle_t* handle) {
  if (handle == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *handle = new cublasContext;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->stream = stream;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (mode != CUBLAS_DEFAULT_MATH && mode != CUBLAS_PEDANTIC_MATH && mode != CUBLAS_TF32_TENSOR_OP_MATH)
    return CUBLAS_STATUS_INVALID_VALUE;
  handle->math = mode;
  return CUBLAS_STATUS_SUCCESS;
}
const char* cublasGetStatusName(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
  }
  return "CUBLAS_STATUS_UNKNOWN";
}
const char* cublasGetStatusString(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "the operation completed successfully";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "the library was not initialized";
    case CUBLAS_STATUS_ALLOC_FAILED: return "the resource allocation failed";
    case CUBLAS_STATUS_INVALID_VALUE: return "an invalid numeric value was used as an argument";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "the GPU program failed to execute";
  }
  return "unknown status";
}
cublasStatus_t cublasSgemm_v2(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                              const float* alpha, const float* A, int lda, const float* B, int ldb, const float* beta,
                              float* C, int ldc) {
  return gemm(h, ta, tb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1);
}
cublasStatus_t cublasDgemm_v2(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                              const double* alpha, const double* A, int lda, const double* B, int ldb,
                              const double* beta, double* C, int ldc) {
  return gemm(h, ta, tb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1);
}
cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                         int k, const float* alpha, const float* A, int lda, long long sa,
                                         const float* B, int ldb, long long sb, const float* beta, float* C, int ldc,
                                         long long sc, int batch) {
  return gemm(h, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, batch);
}
cublasStatus_t cublasDgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                         int k, const double* alpha, const double* A, int lda, long long sa,
                                         const double* B, int ldb, long long sb, const double* beta, double* C,
                                         int ldc, long long sc, int batch) {
  return gemm(h, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, batch);
}
}
