// CPU kernels of nn::GRU; the layout and the plan are described in nn/cpu/gru_kernels.h. The gate equations are
// PyTorch's (gate order r, z, n, reset applied after the recurrent product):
//   r = σ(W_ir x + b_ir + W_hr h + b_hr),  z = σ(W_iz x + b_iz + W_hz h + b_hz),
//   n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn)),  h' = (1 − z) ⊙ n + z ⊙ h.
#include "nn/cpu/gru_kernels.h"

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <numeric>

#include "tensor/cpu/blas_threads.h"
#include "tensor/cpu/fast_exp.h"

namespace rematch::nn::gru_cpu {
namespace {

// Gate loops of fewer elements than this run on one thread.
constexpr int64_t kGateGrain = 16384;

int blas_int(int64_t v) {
  REMATCH_CHECK(v <= INT_MAX, "nn::GRU: size ", v, " exceeds the BLAS integer range");
  return static_cast<int>(v);
}

// C = op(A)·op(B) + beta·C, row-major; ta/tb transpose A/B.
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
          int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  cpu::single_threaded_blas();  // before any BLAS call of the process (tensor/cpu/blas_threads.h)
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, blas_int(m),
              blas_int(n), blas_int(k), 1.0f, a, blas_int(lda), b, blas_int(ldb), beta, c, blas_int(ldc));
}
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const double* a, int64_t lda, const double* b,
          int64_t ldb, double beta, double* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  cpu::single_threaded_blas();
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, blas_int(m),
              blas_int(n), blas_int(k), 1.0, a, blas_int(lda), b, blas_int(ldb), beta, c, blas_int(ldc));
}

// float32 uses the vectorisable fast_expf, with tanh(x) = 2σ(2x) − 1 (absolute error a few 1e-8, which is
// all the state h sees); float64, the reference type, uses libm.
inline float sigmoid(float x) { return 1.0f / (1.0f + cpu::fast_expf(-x)); }
inline double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
inline float tanh_act(float x) { return 2.0f / (1.0f + cpu::fast_expf(-2.0f * x)) - 1.0f; }
inline double tanh_act(double x) { return std::tanh(x); }

// The time step sorted row i reads at step s of direction dir.
inline int64_t time_of(const Packing& p, int64_t dir, int64_t i, int64_t s) {
  return dir == 0 ? s : p.length[p.order[i]] - 1 - s;
}

// out[c] = Σ_r m[r, c], accumulated in double so long float32 sums stay accurate.
template <typename T> void column_sums(const T* m, int64_t rows, int64_t cols, T* out) {
  constexpr int64_t kBlock = 256;
  const int64_t blocks = (cols + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static) if (rows * cols >= kGateGrain)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const int64_t c0 = blk * kBlock, c1 = std::min(cols, c0 + kBlock);
    double acc[kBlock] = {};
    for (int64_t r = 0; r < rows; ++r) {
      const T* row = m + r * cols;
      for (int64_t c = c0; c < c1; ++c) acc[c - c0] += row[c];
    }
    for (int64_t c = c0; c < c1; ++c) out[c] = static_cast<T>(acc[c - c0]);
  }
}

template <typename T>
DirectionSaved forward_typed(const Packing& p, int64_t dir, const Tensor& x_packed, const DirectionWeights& w,
                             const Tensor& output, const Tensor& h_n, bool save) {
  const int64_t H = w.w_hh.size(1), G = 3 * H, I = w.w_ih.size(1), N = p.total, T_ = p.steps;
  const int64_t DH = output.size(2);
  const DType dt = x_packed.dtype();
  const T* w_hh = w.w_hh.data<T>();
  const T* b_ih = w.b_ih.data<T>();
  const T* b_hh = w.b_hh.data<T>();

  // All steps' input projections at once: [total, I] x W_ihᵀ.
  Tensor xproj = empty({N, G}, dt);
  T* xp = xproj.data<T>();
  gemm(false, true, N, G, I, x_packed.data<T>(), I, w.w_ih.data<T>(), I, T(0), xp, G);

  DirectionSaved saved;
  saved.h_prev = empty({N, H}, dt);
  T* h_prev = saved.h_prev.data<T>();
  std::fill(h_prev, h_prev + p.active[0] * H, T(0));  // initial state 0
  // Without a backward to feed, the gates of a step go to a scratch buffer reused every step.
  saved.gates = empty({save ? N : p.batch, 4 * H}, dt);
  T* gates = saved.gates.data<T>();
  Tensor gh_buf = empty({p.batch, G}, dt);
  T* gh = gh_buf.data<T>();
  std::vector<T> b_rz(2 * H);
  for (int64_t j = 0; j < 2 * H; ++j) b_rz[j] = b_ih[j] + b_hh[j];
  const T* brz = b_rz.data();
  const T* b_in = b_ih + 2 * H;
  const T* b_hn = b_hh + 2 * H;
  T* out = output.data<T>();
  T* hn_out = h_n.data<T>() + dir * p.batch * H;

  for (int64_t s = 0; s < T_; ++s) {
    const int64_t nact = p.active[s];
    const T* hp = h_prev + p.offset[s] * H;
    if (s == 0) std::fill(gh, gh + nact * G, T(0));
    else gemm(false, true, nact, G, H, hp, H, w_hh, H, T(0), gh, G);
    const int64_t next_active = s + 1 < T_ ? p.active[s + 1] : 0;
#pragma omp parallel for schedule(static) if (nact * H >= kGateGrain)
    for (int64_t i = 0; i < nact; ++i) {
      const int64_t b = p.order[i], t = time_of(p, dir, i, s);
      const T* xr = xp + (p.offset[t] + i) * G;
      const T* gr = gh + i * G;
      const T* hrow = hp + i * H;
      T* gate = gates + (save ? p.offset[s] + i : i) * 4 * H;
      T* o = out + (b * T_ + t) * DH + dir * H;
      for (int64_t j = 0; j < H; ++j) {
        const T r = sigmoid(xr[j] + gr[j] + brz[j]);
        const T z = sigmoid(xr[H + j] + gr[H + j] + brz[H + j]);
        const T hn = gr[2 * H + j] + b_hn[j];
        const T n = tanh_act(xr[2 * H + j] + b_in[j] + r * hn);
        gate[j] = r;
        gate[H + j] = z;
        gate[2 * H + j] = n;
        gate[3 * H + j] = hn;
        o[j] = (T(1) - z) * n + z * hrow[j];
      }
      if (i < next_active) std::memcpy(h_prev + (p.offset[s + 1] + i) * H, o, H * sizeof(T));
      if (s == p.length[b] - 1) std::memcpy(hn_out + b * H, o, H * sizeof(T));
    }
  }
  if (!save) saved.gates = Tensor();
  return saved;
}

template <typename T>
DirectionGrads backward_typed(const Packing& p, int64_t dir, const Tensor& x_packed, const DirectionWeights& w,
                              const DirectionSaved& saved, const Tensor& grad_output, const Tensor& grad_h_n,
                              bool weight_grads, const Tensor& dx_packed, bool accumulate) {
  const int64_t H = w.w_hh.size(1), G = 3 * H, I = w.w_ih.size(1), N = p.total, T_ = p.steps, B = p.batch;
  const int64_t DH = grad_output.size(2);
  const DType dt = x_packed.dtype();
  const T* w_hh = w.w_hh.data<T>();
  const T* h_prev = saved.h_prev.data<T>();
  const T* gates = saved.gates.data<T>();
  const T* g_out = grad_output.data<T>();
  const T* g_hn = grad_h_n.data<T>() + dir * B * H;

  // Gradients w.r.t. the pre-activations: of the input projection (rows at the input's packed position) and
  // of the recurrent projection W_hh h (rows at the step's packed position).
  Tensor d_xproj = empty({N, G}, dt), d_hproj = empty({N, G}, dt);
  T* dxp = d_xproj.data<T>();
  T* dgh = d_hproj.data<T>();
  // dh: the gradient reaching each sorted row's state, seeded with ∂/∂h_n; a row waits untouched until the
  // reverse sweep reaches its last step.
  Tensor dh_buf = empty({B, H}, dt);
  T* dh = dh_buf.data<T>();
  for (int64_t i = 0; i < B; ++i) std::memcpy(dh + i * H, g_hn + p.order[i] * H, H * sizeof(T));

  for (int64_t s = T_ - 1; s >= 0; --s) {
    const int64_t nact = p.active[s];
#pragma omp parallel for schedule(static) if (nact * H >= kGateGrain)
    for (int64_t i = 0; i < nact; ++i) {
      const int64_t b = p.order[i], t = time_of(p, dir, i, s);
      const int64_t row = p.offset[s] + i;
      const T* gate = gates + row * 4 * H;
      const T* hrow = h_prev + row * H;
      const T* go = g_out + (b * T_ + t) * DH + dir * H;
      T* dxr = dxp + (p.offset[t] + i) * G;
      T* dgr = dgh + row * G;
      T* dhr = dh + i * H;
      for (int64_t j = 0; j < H; ++j) {
        const T r = gate[j], z = gate[H + j], n = gate[2 * H + j], hn = gate[3 * H + j];
        const T g = dhr[j] + go[j];
        const T da_n = g * (T(1) - z) * (T(1) - n * n);  // through n = tanh(a_n)
        const T da_r = da_n * hn * r * (T(1) - r);        // a_n = ... + r ⊙ hn
        const T da_z = g * (hrow[j] - n) * z * (T(1) - z);
        dxr[j] = da_r;
        dxr[H + j] = da_z;
        dxr[2 * H + j] = da_n;
        dgr[j] = da_r;
        dgr[H + j] = da_z;
        dgr[2 * H + j] = da_n * r;
        dhr[j] = g * z;  // h' = ... + z ⊙ h
      }
    }
    // Through the recurrent product: dh += d(W_hh h) · W_hh. Step 0 started from the constant 0 state.
    if (s > 0) gemm(false, false, nact, H, G, dgh + p.offset[s] * G, G, w_hh, H, T(1), dh, H);
  }

  DirectionGrads grads;
  if (weight_grads) {
    grads.w_ih = empty({G, I}, dt);
    gemm(true, false, G, I, N, dxp, G, x_packed.data<T>(), I, T(0), grads.w_ih.data<T>(), I);
    // Step 0's rows of h_prev are the zero initial state: start the product at step 1.
    grads.w_hh = empty({G, H}, dt);
    const int64_t r1 = p.offset[std::min<int64_t>(1, T_)];
    if (N > r1) gemm(true, false, G, H, N - r1, dgh + r1 * G, G, h_prev + r1 * H, H, T(0), grads.w_hh.data<T>(), H);
    else kernels::fill_(grads.w_hh, 0.0);
    grads.b_ih = empty({G}, dt);
    grads.b_hh = empty({G}, dt);
    column_sums(dxp, N, G, grads.b_ih.data<T>());
    column_sums(dgh, N, G, grads.b_hh.data<T>());
  }
  if (dx_packed.defined())
    gemm(false, false, N, I, G, dxp, G, w.w_ih.data<T>(), I, accumulate ? T(1) : T(0), dx_packed.data<T>(), I);
  return grads;
}

}  // namespace

Packing make_packing(const std::vector<int64_t>& lengths, int64_t steps) {
  Packing p;
  p.batch = static_cast<int64_t>(lengths.size());
  p.steps = steps;
  p.length = lengths;
  p.order.resize(lengths.size());
  std::iota(p.order.begin(), p.order.end(), int64_t{0});
  std::stable_sort(p.order.begin(), p.order.end(),
                   [&](int64_t a, int64_t b) { return lengths[a] > lengths[b]; });
  p.active.assign(steps, 0);
  for (int64_t len : lengths)
    for (int64_t t = 0; t < len; ++t) ++p.active[t];
  p.offset.assign(steps + 1, 0);
  for (int64_t t = 0; t < steps; ++t) p.offset[t + 1] = p.offset[t] + p.active[t];
  p.total = p.offset[steps];
  return p;
}

Tensor pack_rows(const Packing& p, const Tensor& x) {
  const int64_t F = x.size(2);
  const size_t row_bytes = static_cast<size_t>(F) * dtype_size(x.dtype());
  Tensor packed = empty({p.total, F}, x.dtype());
  const char* src = static_cast<const char*>(x.raw_data());
  char* dst = static_cast<char*>(packed.raw_data());
  for (int64_t t = 0; t < p.steps; ++t)
    for (int64_t i = 0; i < p.active[t]; ++i)
      std::memcpy(dst + (p.offset[t] + i) * row_bytes, src + (p.order[i] * p.steps + t) * row_bytes, row_bytes);
  return packed;
}

Tensor unpack_rows(const Packing& p, const Tensor& packed, int64_t feature_size) {
  const size_t row_bytes = static_cast<size_t>(feature_size) * dtype_size(packed.dtype());
  Tensor x = zeros({p.batch, p.steps, feature_size}, packed.dtype());
  const char* src = static_cast<const char*>(packed.raw_data());
  char* dst = static_cast<char*>(x.raw_data());
  for (int64_t t = 0; t < p.steps; ++t)
    for (int64_t i = 0; i < p.active[t]; ++i)
      std::memcpy(dst + (p.order[i] * p.steps + t) * row_bytes, src + (p.offset[t] + i) * row_bytes, row_bytes);
  return x;
}

DirectionSaved forward_direction(const Packing& p, int64_t dir, const Tensor& x_packed, const DirectionWeights& w,
                                 const Tensor& output, const Tensor& h_n, bool save) {
  return dispatch_float("nn::GRU", x_packed.dtype(), [&](auto tag) {
    return forward_typed<typename decltype(tag)::type>(p, dir, x_packed, w, output, h_n, save);
  });
}

DirectionGrads backward_direction(const Packing& p, int64_t dir, const Tensor& x_packed, const DirectionWeights& w,
                                  const DirectionSaved& saved, const Tensor& grad_output, const Tensor& grad_h_n,
                                  bool weight_grads, const Tensor& dx_packed, bool accumulate) {
  return dispatch_float("nn::GRU backward", x_packed.dtype(), [&](auto tag) {
    return backward_typed<typename decltype(tag)::type>(p, dir, x_packed, w, saved, grad_output, grad_h_n,
                                                       weight_grads, dx_packed, accumulate);
  });
}

}  // namespace rematch::nn::gru_cpu
