// CUDA kernels of nn::GRU; the plan and the layout are described in nn/cuda/gru_kernels.h. The gate equations
// are PyTorch's, exactly as the CPU path (nn/cpu/gru.cpp) evaluates them:
//   r = σ(W_ir x + b_ir + W_hr h + b_hr),  z = σ(W_iz x + b_iz + W_hz h + b_hz),
//   n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn)),  h' = (1 − z) ⊙ n + z ⊙ h.
// Shapes: B batch, T steps, I input, H hidden, G = 3H gate rows, D directions, N = total packed rows.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <mutex>
#include <type_traits>
#include <vector>

#include "nn/cuda/gru_kernels.h"
#include "tensor/cuda/check.h"
#include "tensor/cuda/cublas_check.h"
#include "tensor/cuda/cuda_kernels.h"
#include "tensor/cuda/runtime.h"

namespace rematch::nn::gru_cuda {
namespace {

constexpr int kThreads = 256;

// One cuBLAS handle per device, bound to the device's stream; the GRU's own, as tensor/cuda/matmul.cu keeps
// its handle private. Made on first use and kept for the life of the process: destroying it at exit could run
// after the CUDA runtime has shut down.
cublasHandle_t cublas_handle(int device) {
  struct Slot {
    std::once_flag once;
    cublasHandle_t handle = nullptr;
  };
  static std::vector<Slot> slots(static_cast<size_t>(std::max(cuda::device_count(), 1)));
  cudaStream_t stream = cuda::stream(device);  // validates `device`
  Slot& slot = slots[static_cast<size_t>(device)];
  std::call_once(slot.once, [&] {
    REMATCH_CUDA_CHECK(cudaSetDevice(device));
    REMATCH_CUBLAS_CHECK(cuda::cublas().create(&slot.handle));
    REMATCH_CUBLAS_CHECK(cuda::cublas().set_stream(slot.handle, stream));
  });
  return slot.handle;
}

// The handle for one GRU call: TF32 tensor-core math for float32 only when the engine allows it, so by
// default the products round like the CPU's. The mode stays set on the shared handle for the call's products,
// which holds because one host thread at a time drives a device (tensor/cuda/runtime.h).
cublasHandle_t cublas_for(int device, DType dtype) {
  cublasHandle_t handle = cublas_handle(device);
  const bool tf32 = dtype == DType::Float32 && cuda::allow_tf32();
  REMATCH_CUBLAS_CHECK(
      cuda::cublas().set_math_mode(handle, tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
  return handle;
}

template <typename T> T* ptr(const Tensor& t) { return static_cast<T*>(t.raw_data()); }

size_t bytes_of(const Tensor& t) { return static_cast<size_t>(t.numel()) * dtype_size(t.dtype()); }

int blas_int(int64_t v) {
  REMATCH_CHECK(v <= INT_MAX, "nn::GRU (CUDA): size ", v, " exceeds the cuBLAS integer range");
  return static_cast<int>(v);
}

// Row-major C = op(A)·op(B) + beta·C for `batch` matrices at element strides sa, sb, sc. cuBLAS is
// column-major, where a row-major matrix reads as its transpose, so it computes Cᵀ = op(B)ᵀ·op(A)ᵀ: the same
// call with the operands swapped.
template <typename T>
void gemm(cublasHandle_t h, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda,
          int64_t sa, const T* b, int64_t ldb, int64_t sb, T beta, T* c, int64_t ldc, int64_t sc, int64_t batch) {
  if (m == 0 || n == 0 || batch == 0) return;
  const T one = 1;
  const cublasOperation_t op_a = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int M = blas_int(m), N = blas_int(n), K = blas_int(k), LA = blas_int(lda), LB = blas_int(ldb),
            LC = blas_int(ldc), NB = blas_int(batch);
  if constexpr (std::is_same_v<T, float>) {
    if (batch == 1)
      REMATCH_CUBLAS_CHECK(cuda::cublas().sgemm(h, op_b, op_a, N, M, K, &one, b, LB, a, LA, &beta, c, LC));
    else
      REMATCH_CUBLAS_CHECK(
          cuda::cublas().sgemm_strided_batched(h, op_b, op_a, N, M, K, &one, b, LB, sb, a, LA, sa, &beta, c, LC,
                                               sc, NB));
  } else {
    if (batch == 1)
      REMATCH_CUBLAS_CHECK(cuda::cublas().dgemm(h, op_b, op_a, N, M, K, &one, b, LB, a, LA, &beta, c, LC));
    else
      REMATCH_CUBLAS_CHECK(
          cuda::cublas().dgemm_strided_batched(h, op_b, op_a, N, M, K, &one, b, LB, sb, a, LA, sa, &beta, c, LC,
                                               sc, NB));
  }
}

__device__ inline float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
__device__ inline double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
__device__ inline float tanh_act(float x) { return tanhf(x); }
__device__ inline double tanh_act(double x) { return tanh(x); }

// The device index tables of a Layer (see Layer::index).
struct IndexView {
  const int32_t* order;
  const int32_t* length;
  const int32_t* offset;
  const int32_t* source;
};

IndexView index_view(const Layer& layer) {
  const int32_t* base = static_cast<const int32_t*>(layer.index.raw_data());
  const int64_t B = layer.packing.batch, T = layer.packing.steps;
  return {base, base + B, base + 2 * B, base + 2 * B + T + 1};
}

// One step of the sweep, the same for every direction: its rows are sorted positions 0 .. active-1, stored at
// packed rows offset + i. The forward writes the next state at next_offset + i for the next_active rows
// that go on.
struct Step {
  int64_t batch, steps, hidden, directions, total;
  int64_t s, active, offset;
  int64_t next_active, next_offset;
};

// Thread (i, j) of direction blockIdx.y: sorted row i, hidden unit j. Reads the input projection of the time
// this direction is at, the recurrent product gh (none at step 0, whose state is 0) and the biases; writes
// the output, the next state, h_n at the row's last step, and the gates for the backward when asked.
template <typename T>
__global__ void gru_forward_step_kernel(Step st, IndexView ix, const T* xproj, const T* gh, const T* b_ih,
                                        const T* b_hh, T* h_prev, T* gates, T* output, T* h_n) {
  const int64_t H = st.hidden, G = 3 * H;
  const int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= st.active * H) return;
  const int64_t d = blockIdx.y, i = e / H, j = e - i * H;
  const int64_t b = ix.order[i], len = ix.length[i];
  const int64_t t = d == 0 ? st.s : len - 1 - st.s;
  const T* xr = xproj + (ix.offset[t] + i) * st.directions * G + d * G;
  const T* bi = b_ih + d * G;
  const T* bh = b_hh + d * G;
  const int64_t row = d * st.total + st.offset + i;
  T h = 0, gr = 0, gz = 0, gn = 0;
  if (st.s == 0) {
    h_prev[row * H + j] = T(0);  // the zero initial state, stored for the backward like any other
  } else {
    h = h_prev[row * H + j];
    const T* g = gh + (d * st.batch + i) * G;
    gr = g[j];
    gz = g[H + j];
    gn = g[2 * H + j];
  }
  const T r = sigmoid(xr[j] + gr + (bi[j] + bh[j]));
  const T z = sigmoid(xr[H + j] + gz + (bi[H + j] + bh[H + j]));
  const T hn = gn + bh[2 * H + j];
  const T n = tanh_act(xr[2 * H + j] + bi[2 * H + j] + r * hn);
  const T h_new = (T(1) - z) * n + z * h;
  if (gates) {
    T* g4 = gates + row * 4 * H;
    g4[j] = r;
    g4[H + j] = z;
    g4[2 * H + j] = n;
    g4[3 * H + j] = hn;
  }
  output[((b * st.steps + t) * st.directions + d) * H + j] = h_new;
  if (i < st.next_active) h_prev[(d * st.total + st.next_offset + i) * H + j] = h_new;
  if (st.s == len - 1) h_n[(d * st.batch + b) * H + j] = h_new;
}

// The backward of one step: gradients of the pre-activations, of the input projection at the input's packed
// row and of the recurrent product at the step's row, and the part of dh that flows through z (the part
// through W_hh is the GEMM that follows).
template <typename T>
__global__ void gru_backward_step_kernel(Step st, IndexView ix, const T* gates, const T* h_prev,
                                         const T* grad_output, const T* grad_h_n, T* dh, T* d_xproj, T* d_hproj) {
  const int64_t H = st.hidden, G = 3 * H;
  const int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= st.active * H) return;
  const int64_t d = blockIdx.y, i = e / H, j = e - i * H;
  const int64_t b = ix.order[i], len = ix.length[i];
  const int64_t t = d == 0 ? st.s : len - 1 - st.s;
  const int64_t row = d * st.total + st.offset + i;
  const T* g4 = gates + row * 4 * H;
  const T r = g4[j], z = g4[H + j], n = g4[2 * H + j], hn = g4[3 * H + j];
  const T h = h_prev[row * H + j];
  T* dh_row = dh + (d * st.batch + i) * H;
  // A row's last step comes first in the reverse sweep: nothing later has reached its state, whose
  // gradient is then grad_h_n alone.
  const T later = st.s == len - 1 ? grad_h_n[(d * st.batch + b) * H + j] : dh_row[j];
  const T g = later + grad_output[((b * st.steps + t) * st.directions + d) * H + j];
  const T da_n = g * (T(1) - z) * (T(1) - n * n);  // through n = tanh(a_n)
  const T da_r = da_n * hn * r * (T(1) - r);        // a_n = ... + r ⊙ hn
  const T da_z = g * (h - n) * z * (T(1) - z);
  T* dx = d_xproj + (ix.offset[t] + i) * st.directions * G + d * G;
  dx[j] = da_r;
  dx[H + j] = da_z;
  dx[2 * H + j] = da_n;
  T* dg = d_hproj + row * G;
  dg[j] = da_r;
  dg[H + j] = da_z;
  dg[2 * H + j] = da_n * r;
  dh_row[j] = g * z;  // h' = ... + z ⊙ h
}

// dst[r, :] = src[source[r], :] (pack) and dst[source[r], :] = src[r, :] (unpack), rows of `width`.
template <typename T>
__global__ void gather_rows_kernel(T* dst, const T* src, const int32_t* source, int64_t rows, int64_t width) {
  const int64_t n = rows * width, stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += stride) {
    const int64_t r = e / width;
    dst[e] = src[source[r] * width + (e - r * width)];
  }
}

template <typename T>
__global__ void scatter_rows_kernel(T* dst, const T* src, const int32_t* source, int64_t rows, int64_t width) {
  const int64_t n = rows * width, stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += stride) {
    const int64_t r = e / width;
    dst[source[r] * width + (e - r * width)] = src[e];
  }
}

// out[m, c] = Σ_r x[m, r, c] for matrix m = blockIdx.y, accumulated in double like the CPU's column sums.
// A block covers 32 columns (coalesced rows of 32 elements) with 16 row groups, reduced in shared memory.
constexpr int kSumColumns = 32, kSumRowGroups = 16;

template <typename T>
__global__ void column_sums_kernel(const T* x, int64_t rows, int64_t cols, T* out) {
  __shared__ double partial[kSumRowGroups][kSumColumns];
  const int64_t c = static_cast<int64_t>(blockIdx.x) * kSumColumns + threadIdx.x;
  const T* m = x + static_cast<int64_t>(blockIdx.y) * rows * cols;
  double acc = 0;
  if (c < cols)
    for (int64_t r = threadIdx.y; r < rows; r += kSumRowGroups) acc += static_cast<double>(m[r * cols + c]);
  partial[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y == 0 && c < cols) {
    double sum = 0;
    for (int g = 0; g < kSumRowGroups; ++g) sum += partial[g][threadIdx.x];
    out[static_cast<int64_t>(blockIdx.y) * cols + c] = static_cast<T>(sum);
  }
}

// Grid-stride kernels: enough blocks to fill the device, the loop covers the rest.
unsigned stride_blocks(int64_t n) {
  return static_cast<unsigned>(std::min<int64_t>((n + kThreads - 1) / kThreads, 65536));
}

template <typename T> void column_sums(const T* x, int64_t matrices, int64_t rows, int64_t cols, T* out,
                                       cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((cols + kSumColumns - 1) / kSumColumns), static_cast<unsigned>(matrices));
  column_sums_kernel<T><<<grid, dim3(kSumColumns, kSumRowGroups), 0, stream>>>(x, rows, cols, out);
  REMATCH_CUDA_LAUNCH_CHECK("gru_column_sums");
}

void zero(const Tensor& t, cudaStream_t stream) {
  REMATCH_CUDA_CHECK(cudaMemsetAsync(t.raw_data(), 0, bytes_of(t), stream));
}

// The per-direction tensors stacked along a new first dim; D = 1 needs no copy.
Tensor stack(const std::vector<Tensor>& parts, const Shape& shape, cudaStream_t stream) {
  if (parts.size() == 1) return kernels::view(parts[0], shape);
  Tensor out = empty(shape, parts[0].dtype(), parts[0].device());
  char* dst = static_cast<char*>(out.raw_data());
  for (const Tensor& p : parts) {
    REMATCH_CUDA_CHECK(cudaMemcpyAsync(dst, p.raw_data(), bytes_of(p), cudaMemcpyDeviceToDevice, stream));
    dst += bytes_of(p);
  }
  return out;
}

// What a layer's forward and backward both set up: its sizes (shapes above), device and dtype, the device's
// stream and cuBLAS handle (made current), and the index tables.
struct LayerRun {
  Device dev;
  DType dt;
  int64_t D, G, I, H, B, T, N;
  cudaStream_t stream;
  cublasHandle_t blas;
  IndexView ix;
};

LayerRun begin_layer_run(const Layer& layer) {
  const gru_cpu::Packing& p = layer.packing;
  const Device dev = layer.x_packed.device();
  const DType dt = layer.x_packed.dtype();
  const int64_t G = layer.w_ih.size(1);
  REMATCH_CUDA_CHECK(cudaSetDevice(dev.index));
  return {dev, dt, layer.w_ih.size(0), G, layer.w_ih.size(2), G / 3, p.batch, p.steps, p.total,
          cuda::stream(dev.index), cublas_for(dev.index, dt), index_view(layer)};
}

Step step_at(const gru_cpu::Packing& p, int64_t H, int64_t D, int64_t s) {
  Step st{p.batch, p.steps, H, D, p.total, s, p.active[s], p.offset[s], 0, p.total};
  if (s + 1 < p.steps) {
    st.next_active = p.active[s + 1];
    st.next_offset = p.offset[s + 1];
  }
  return st;
}

template <typename T> LayerOutputs forward_typed(Layer& layer, bool save) {
  const gru_cpu::Packing& p = layer.packing;
  const auto [dev, dt, D, G, I, H, B, T_, N, stream, blas, ix] = begin_layer_run(layer);
  const T* w_hh = ptr<const T>(layer.w_hh);

  // Every step's input projections, both directions: [N, I] x [D·G, I]ᵀ -> [N, D·G].
  Tensor xproj = empty({N, D * G}, dt, dev);
  T* xp = ptr<T>(xproj);
  gemm<T>(blas, false, true, N, D * G, I, ptr<const T>(layer.x_packed), I, 0, ptr<const T>(layer.w_ih), I, 0, T(0),
          xp, D * G, 0, 1);

  LayerOutputs out{empty({B, T_, D * H}, dt, dev), empty({D, B, H}, dt, dev)};
  if (N < B * T_) zero(out.output, stream);  // the padding; the steps write every real position
  layer.h_prev = empty({D, N, H}, dt, dev);
  layer.gates = save ? empty({D, N, 4 * H}, dt, dev) : Tensor();
  T* h_prev = ptr<T>(layer.h_prev);
  T* gates = save ? ptr<T>(layer.gates) : nullptr;
  Tensor gh_buf = empty({D, B, G}, dt, dev);
  T* gh = ptr<T>(gh_buf);
  const T* b_ih = ptr<const T>(layer.b_ih);
  const T* b_hh = ptr<const T>(layer.b_hh);

  // Steps past the longest sequence have no rows (active is non-increasing).
  for (int64_t s = 0; s < T_ && p.active[s] > 0; ++s) {
    const Step st = step_at(p, H, D, s);
    // gh[d] = h_prev[d] (this step's rows) x W_hh[d]ᵀ, both directions in one batched call.
    if (s > 0)
      gemm<T>(blas, false, true, st.active, G, H, h_prev + st.offset * H, H, N * H, w_hh, H, G * H, T(0), gh, G,
              B * G, D);
    const dim3 grid(static_cast<unsigned>((st.active * H + kThreads - 1) / kThreads), static_cast<unsigned>(D));
    gru_forward_step_kernel<T><<<grid, kThreads, 0, stream>>>(st, ix, xp, gh, b_ih, b_hh, h_prev, gates,
                                                              ptr<T>(out.output), ptr<T>(out.h_n));
    REMATCH_CUDA_LAUNCH_CHECK("gru_forward_step");
  }
  return out;
}

template <typename T>
LayerGrads backward_typed(const Layer& layer, const Tensor& grad_output, const Tensor& grad_h_n, bool input_grad,
                          bool weight_grads) {
  LayerGrads grads;
  if (!input_grad && !weight_grads) return grads;
  REMATCH_CHECK(layer.gates.defined(), "nn::GRU (CUDA) backward: the forward did not save its gates");
  const gru_cpu::Packing& p = layer.packing;
  const auto [dev, dt, D, G, I, H, B, T_, N, stream, blas, ix] = begin_layer_run(layer);
  const T* w_hh = ptr<const T>(layer.w_hh);
  const T* h_prev = ptr<const T>(layer.h_prev);

  // Gradients w.r.t. the pre-activations: of the input projection (every packed row is written, by each
  // direction in its own columns) and of the recurrent product (every step row). dh holds the gradient
  // reaching each sorted row's state; a row's entries are first written at its last step.
  Tensor d_xproj = empty({N, D * G}, dt, dev);
  Tensor d_hproj = empty({D, N, G}, dt, dev);
  Tensor dh_buf = empty({D, B, H}, dt, dev);
  T* dxp = ptr<T>(d_xproj);
  T* dgh = ptr<T>(d_hproj);
  T* dh = ptr<T>(dh_buf);

  for (int64_t s = T_ - 1; s >= 0; --s) {
    if (p.active[s] == 0) continue;  // past the longest sequence
    const Step st = step_at(p, H, D, s);
    const dim3 grid(static_cast<unsigned>((st.active * H + kThreads - 1) / kThreads), static_cast<unsigned>(D));
    gru_backward_step_kernel<T><<<grid, kThreads, 0, stream>>>(st, ix, ptr<const T>(layer.gates), h_prev,
                                                               ptr<const T>(grad_output), ptr<const T>(grad_h_n),
                                                               dh, dxp, dgh);
    REMATCH_CUDA_LAUNCH_CHECK("gru_backward_step");
    // Through the recurrent product: dh[d] += d(W_hh h)[d] x W_hh[d]. Step 0 started from the constant 0.
    if (s > 0)
      gemm<T>(blas, false, false, st.active, H, G, dgh + st.offset * G, G, N * G, w_hh, H, G * H, T(1), dh, H,
              B * H, D);
  }

  if (weight_grads) {
    grads.w_ih = empty({D, G, I}, dt, dev);
    gemm<T>(blas, true, false, D * G, I, N, dxp, D * G, 0, ptr<const T>(layer.x_packed), I, 0, T(0),
            ptr<T>(grads.w_ih), I, 0, 1);
    // Step 0's rows of h_prev are the zero initial state: the product starts at step 1's rows.
    grads.w_hh = empty({D, G, H}, dt, dev);
    const int64_t r1 = T_ > 1 ? p.offset[1] : N;
    if (N > r1)
      gemm<T>(blas, true, false, G, H, N - r1, dgh + r1 * G, G, N * G, h_prev + r1 * H, H, N * H, T(0),
              ptr<T>(grads.w_hh), H, G * H, D);
    else
      zero(grads.w_hh, stream);
    grads.b_ih = empty({D, G}, dt, dev);
    grads.b_hh = empty({D, G}, dt, dev);
    column_sums<T>(dxp, 1, N, D * G, ptr<T>(grads.b_ih), stream);
    column_sums<T>(dgh, D, N, G, ptr<T>(grads.b_hh), stream);
  }
  if (input_grad) {
    // dx = d_xproj x W_ih over both directions' columns at once, then back to [B, T, I] with zero padding.
    Tensor dx_packed = empty({N, I}, dt, dev);
    gemm<T>(blas, false, false, N, I, D * G, dxp, D * G, 0, ptr<const T>(layer.w_ih), I, 0, T(0),
            ptr<T>(dx_packed), I, 0, 1);
    grads.x = empty({B, T_, I}, dt, dev);
    if (N < B * T_) zero(grads.x, stream);
    scatter_rows_kernel<T><<<stride_blocks(N * I), kThreads, 0, stream>>>(ptr<T>(grads.x), ptr<const T>(dx_packed),
                                                                          ix.source, N, I);
    REMATCH_CUDA_LAUNCH_CHECK("gru_unpack_rows");
  }
  return grads;
}

}  // namespace

Layer prepare(const gru_cpu::Packing& packing, const Tensor& x, const std::vector<gru_cpu::DirectionWeights>& w) {
  const Device dev = x.device();
  const int64_t B = packing.batch, T_ = packing.steps, N = packing.total, I = x.size(2);
  const int64_t H = w[0].w_hh.size(1), D = static_cast<int64_t>(w.size());
  REMATCH_CHECK(B * T_ <= INT32_MAX, "nn::GRU (CUDA): ", B, " x ", T_, " positions exceed the int32 index range");
  REMATCH_CUDA_CHECK(cudaSetDevice(dev.index));
  cudaStream_t stream = cuda::stream(dev.index);

  Layer layer;
  layer.packing = packing;
  std::vector<int32_t> table;
  table.reserve(static_cast<size_t>(2 * B + T_ + 1 + N));
  for (int64_t i = 0; i < B; ++i) table.push_back(static_cast<int32_t>(packing.order[i]));
  for (int64_t i = 0; i < B; ++i) table.push_back(static_cast<int32_t>(packing.length[packing.order[i]]));
  for (int64_t t = 0; t <= T_; ++t) table.push_back(static_cast<int32_t>(packing.offset[t]));
  for (int64_t t = 0; t < T_; ++t)  // packed rows in increasing order: step by step, sorted rows within
    for (int64_t i = 0; i < packing.active[t]; ++i)
      table.push_back(static_cast<int32_t>(packing.order[i] * T_ + t));
  // One small upload per call (the lengths live on the host). From pageable memory cudaMemcpyAsync returns
  // once the bytes are copied or staged (CUDA's API synchronization rules), so `table` may go at once; unlike
  // cuda::memcpy it need not drain the stream.
  layer.index = empty({static_cast<int64_t>(table.size())}, DType::Int32, dev);
  REMATCH_CUDA_CHECK(cudaMemcpyAsync(layer.index.raw_data(), table.data(), table.size() * sizeof(int32_t),
                                     cudaMemcpyHostToDevice, stream));

  layer.x_packed = empty({N, I}, x.dtype(), dev);
  dispatch_float("nn::GRU (CUDA)", x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    gather_rows_kernel<T><<<stride_blocks(N * I), kThreads, 0, stream>>>(ptr<T>(layer.x_packed), ptr<const T>(x),
                                                                         index_view(layer).source, N, I);
    REMATCH_CUDA_LAUNCH_CHECK("gru_pack_rows");
  });

  std::vector<Tensor> w_ih, w_hh, b_ih, b_hh;
  for (const gru_cpu::DirectionWeights& d : w) {
    w_ih.push_back(d.w_ih);
    w_hh.push_back(d.w_hh);
    b_ih.push_back(d.b_ih);
    b_hh.push_back(d.b_hh);
  }
  layer.w_ih = stack(w_ih, {D, 3 * H, I}, stream);
  layer.w_hh = stack(w_hh, {D, 3 * H, H}, stream);
  layer.b_ih = stack(b_ih, {D, 3 * H}, stream);
  layer.b_hh = stack(b_hh, {D, 3 * H}, stream);
  return layer;
}

LayerOutputs forward(Layer& layer, bool save) {
  return dispatch_float("nn::GRU (CUDA)", layer.x_packed.dtype(),
                        [&](auto tag) { return forward_typed<typename decltype(tag)::type>(layer, save); });
}

LayerGrads backward(const Layer& layer, const Tensor& grad_output, const Tensor& grad_h_n, bool input_grad,
                    bool weight_grads) {
  return dispatch_float("nn::GRU (CUDA) backward", layer.x_packed.dtype(), [&](auto tag) {
    return backward_typed<typename decltype(tag)::type>(layer, grad_output, grad_h_n, input_grad, weight_grads);
  });
}

}  // namespace rematch::nn::gru_cuda
