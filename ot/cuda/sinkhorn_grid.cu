// One large Sinkhorn problem over the whole device: a persistent cooperative kernel runs every sweep, the
// grid-wide barriers (cooperative_groups grid.sync) replacing a host loop — no host synchronisation, no launch
// per half-step (docs/ot.md §7.3: at 43,000×10 a sweep is launch- and sync-bound).
//
// Block b owns the rows [b·n/B, (b+1)·n/B): their φ, their row log-sum-exps, and — when the slabs fit — their
// row slab of C/ε in shared memory for the whole solve (32000×201 float32 is 194 KB per SM). A sweep
// (Cuturi 2013, log domain, as ot/cpu/sinkhorn.cpp's log sweep):
//   1. φ_i = log a_i − rlse_i on the block's rows;
//   2. per-block column partials of LSE_i(φ_i − C_ij/ε) over the block's rows   → grid barrier
//   3. ψ_j = log b_j − LSE (the partials merged, one warp per column)           → grid barrier
//   4. rlse_i = LSE_j(ψ_j − C_ij/ε) on the block's rows, ψ staged in shared memory by chunks.
// C is read twice per sweep (steps 2 and 4), the floor for alternating sweeps; nothing but C is n×m. At a
// check sweep the blocks' error partials are summed after one more barrier, in block order by every block, so
// all blocks take the same decision. Every log-sum-exp here is the exact max-shifted one, accumulated online
// (KeOps' (max, sum) pairs merged in batches of 8: 9 exps per 8 entries, no per-entry branch).
#include <cooperative_groups.h>

#include <algorithm>

#include "ot/cuda/sinkhorn_device.cuh"
#include "tensor/cuda/check.h"

namespace rematch::ot::cuda::detail {
namespace {

namespace cg = cooperative_groups;

constexpr int kThreads = 512;
constexpr int64_t kChunk = 4096;  // ψ values staged at a time (16 KB float32)
constexpr int kBatch = 8;         // entries per online log-sum-exp step

template <typename T, bool kResident> class GridSolver {
 public:
  __device__ GridSolver(const BatchArgs<T>& p, const GridScratch<T>& w, int64_t k, int64_t chunk,
                        unsigned char* smem, double* red, int* flag)
      : p_(p), w_(w), k_(k), n_(p.rows[k]), m_(p.cols[k]), chunk_(chunk), blocks_(gridDim.x), block_(blockIdx.x),
        r0_(n_ * blockIdx.x / gridDim.x), r1_(n_ * (blockIdx.x + 1) / gridDim.x), a_(p.a + k * p.a_step),
        b_(p.b + k * p.b_step), cost_(p.cost + k * p.n * p.m), mask_(p.mask ? p.mask + k * p.mask_step : nullptr),
        red_(red), flag_(flag) {
    T* base = reinterpret_cast<T*>(smem);
    psi_stage_ = base;             // chunk values
    partials_ = base + chunk_;     // 2·blockDim.x values
    cs_ = partials_ + 2 * blockDim.x;  // (r1 − r0)·m values when resident
  }

  __device__ void run() {
    cg::grid_group grid = cg::this_grid();
    init();
    grid.sync();
    row_pass();
    if (p_.scaling) check_rows();
    int64_t it = 0;
    bool converged = false;
    while (it < p_.max_iter) {
      ++it;
      const bool check = it % p_.check_every == 0 || it == p_.max_iter;
      const double change = update_phi(check && p_.potential_rule);
      __syncthreads();
      col_partials();
      grid.sync();
      col_merge();
      grid.sync();
      row_pass();
      if (p_.scaling) check_rows();
      if (check) {
        const double total = grid_sum(p_.potential_rule ? change : marginal_part(), w_.block_sums, grid);
        if (*flag_) break;
        const double err = p_.potential_rule ? p_.epsilon * sqrt(total) : total;
        if (err < p_.tol) {
          converged = true;
          break;
        }
      }
    }
    // A second set of partials: blocks may still be reading the first set of the last check.
    const double marginal_error = grid_sum(marginal_part(), w_.block_sums + blocks_, grid);
    write_outputs();
    if (block_ == 0 && threadIdx.x == 0) write_stats(p_.stats[k_], it, marginal_error, converged, *flag_);
  }

 private:
  __device__ T c(int64_t i, int64_t j) const {
    if constexpr (kResident) return cs_[(i - r0_) * m_ + j];
    else return scaled_cost(cost_, mask_, p_.m, i, j, p_.inv_eps);
  }

  // As the block kernel's init(): φ = f0/ε, ψ = g0/ε (−inf on zero-weight columns in the scaling domain). The
  // block's rows and a share of the columns; the slab of C/ε when resident.
  __device__ void init() {
    const int t = threadIdx.x, nt = blockDim.x;
    for (int64_t i = r0_ + t; i < r1_; i += nt) {
      const T v = p_.f0 ? p_.f0[k_ * p_.f0_step + i] / p_.eps : T(0);
      w_.phi[i] = w_.phibar[i] = v;
    }
    for (int64_t j = int64_t(block_) * nt + t; j < m_; j += int64_t(blocks_) * nt) {
      T v = p_.g0 ? p_.g0[k_ * p_.g0_step + j] / p_.eps : T(0);
      if (p_.scaling && !(b_[j] > T(0))) v = -inf<T>();
      w_.psi[j] = w_.psibar[j] = v;
    }
    if constexpr (kResident) {
      const int64_t entries = (r1_ - r0_) * m_;
      for (int64_t e = t; e < entries; e += nt) {
        const int64_t i = e / m_, j = e - i * m_;
        cs_[e] = scaled_cost(cost_, mask_, p_.m, r0_ + i, j, p_.inv_eps);
      }
    }
  }

  // rlse_i = LSE_j(ψ_j − C_ij/ε) on the block's rows of positive weight: `lanes` lanes per row (each at least
  // kBatch entries), rows in tiles of threads/lanes; ψ (written by other blocks: read past L1) staged by chunks.
  __device__ void row_pass() {
    const int t = threadIdx.x, nt = blockDim.x, lane = t & 31;
    const int lanes = lanes_for(m_, kBatch), rows_per_tile = nt / lanes, l = lane % lanes;
    const bool one_chunk = m_ <= chunk_;
    if (one_chunk) stage_psi(0, m_);
    for (int64_t base = r0_; base < r1_; base += rows_per_tile) {
      const int64_t i = base + t / lanes;
      const bool live = i < r1_ && a_[i] > T(0);
      T mx = -inf<T>(), s = 0;
      for (int64_t c0 = 0; c0 < m_; c0 += chunk_) {
        const int64_t c1 = min64(m_, c0 + chunk_);
        if (!one_chunk) stage_psi(c0, c1);
        if (!live) continue;
        for (int64_t j0 = c0 + l; j0 < c1; j0 += int64_t(kBatch) * lanes) {
          const int count = static_cast<int>(min64(kBatch, (c1 - j0 + lanes - 1) / lanes));
          T x[kBatch];
#pragma unroll
          for (int q = 0; q < kBatch; ++q) {
            const int64_t j = j0 + int64_t(q) * lanes;
            x[q] = q < count ? psi_stage_[j - c0] - c(i, j) : -inf<T>();
          }
          lse_add(mx, s, x, count);
        }
      }
      group_lse_merge(mx, s, lanes);
      if (live && l == 0) w_.rlse[i] = lse_value(mx, s);
    }
    __syncthreads();  // rlse is read next by other threads of the block
  }

  __device__ void stage_psi(int64_t c0, int64_t c1) {
    __syncthreads();  // the previous chunk's readers are done
    for (int64_t j = c0 + threadIdx.x; j < c1; j += blockDim.x) psi_stage_[j - c0] = __ldcg(w_.psi + j);
    __syncthreads();
  }

  // Per-block column partials (max, shifted sum) of φ_i − C_ij/ε over the block's rows: thread u of G·m on
  // column u mod m over the rows ≡ u / m (mod G), G = max(1, threads / m); the G partials merged in order.
  // Zero-weight rows have φ = −inf and add nothing.
  __device__ void col_partials() {
    const int t = threadIdx.x, nt = blockDim.x;
    const int64_t groups = max64(1, nt / m_), units = groups * m_;
    for (int64_t u = t; u < units; u += nt) {
      const int64_t g = u / m_, j = u - g * m_;
      T mx = -inf<T>(), s = 0;
      for (int64_t i0 = r0_ + g; i0 < r1_; i0 += int64_t(kBatch) * groups) {
        const int count = static_cast<int>(min64(kBatch, (r1_ - i0 + groups - 1) / groups));
        T x[kBatch];
#pragma unroll
        for (int q = 0; q < kBatch; ++q) {
          const int64_t i = i0 + int64_t(q) * groups;
          x[q] = q < count ? w_.phi[i] - c(i, j) : -inf<T>();
        }
        lse_add(mx, s, x, count);
      }
      if (groups == 1) {
        w_.part_mx[int64_t(block_) * m_ + j] = mx;
        w_.part_s[int64_t(block_) * m_ + j] = s;
      } else {
        partials_[u] = mx;
        partials_[nt + u] = s;
      }
    }
    if (groups > 1) {
      __syncthreads();
      for (int64_t j = t; j < m_; j += nt) {
        T mx = partials_[j], s = partials_[nt + j];
        for (int64_t g = 1; g < groups; ++g) lse_merge(mx, s, partials_[g * m_ + j], partials_[nt + g * m_ + j]);
        w_.part_mx[int64_t(block_) * m_ + j] = mx;
        w_.part_s[int64_t(block_) * m_ + j] = s;
      }
    }
  }

  // ψ_j = log b_j − LSE_i(φ_i − C_ij/ε) from the blocks' partials: one warp per column, lanes over blocks, a
  // butterfly merge (the same bits on every run).
  __device__ void col_merge() {
    const int lane = threadIdx.x & 31;
    const int64_t warp = (int64_t(block_) * blockDim.x + threadIdx.x) >> 5;
    const int64_t warps = (int64_t(blocks_) * blockDim.x) >> 5;
    for (int64_t j = warp; j < m_; j += warps) {
      T mx = -inf<T>(), s = 0;
      for (int bb = lane; bb < blocks_; bb += 32)
        lse_merge(mx, s, __ldcg(w_.part_mx + int64_t(bb) * m_ + j), __ldcg(w_.part_s + int64_t(bb) * m_ + j));
      group_lse_merge(mx, s, 32);
      if (lane != 0) continue;
      const T bj = b_[j];
      if (!(bj > T(0))) {
        w_.psi[j] = -inf<T>();
        continue;
      }
      const T clse = lse_value(mx, s);
      w_.psi[j] = log_dev(bj) - clse;
      // Scaling domain: t_j = exp(ψ̄_j + clse_j) must stay in range (ot/cpu/sinkhorn.cpp cached_sweep()); ψ̄_j
      // was written by another block.
      if (p_.scaling && !log_sum_ok<T>(double(__ldcg(w_.psibar + j)) + double(clse))) atomicOr(w_.flag, 1);
    }
  }

  // φ_i = log a_i − rlse_i on the block's rows; returns this thread's part of ‖φ − φ_prev‖₂² when `change`.
  __device__ double update_phi(bool change) {
    double d2 = 0;
    for (int64_t i = r0_ + threadIdx.x; i < r1_; i += blockDim.x) {
      const T ai = a_[i];
      const T next = ai > T(0) ? log_dev(ai) - w_.rlse[i] : -inf<T>();
      if (change && ai > T(0)) {
        const double d = double(next) - double(w_.phi[i]);
        d2 += d * d;
      }
      w_.phi[i] = next;
    }
    return d2;
  }

  __device__ void check_rows() {
    for (int64_t i = r0_ + threadIdx.x; i < r1_; i += blockDim.x)
      if (a_[i] > T(0) && !log_sum_ok<T>(double(w_.phibar[i]) + double(w_.rlse[i]))) atomicOr(w_.flag, 1);
  }

  __device__ double marginal_part() const {
    double e = 0;
    for (int64_t i = r0_ + threadIdx.x; i < r1_; i += blockDim.x) {
      const T ai = a_[i];
      if (ai > T(0)) e += fabs(exp(double(w_.phi[i]) + double(w_.rlse[i])) - double(ai));
    }
    return e;
  }

  // Σ over all threads of the grid of `part`, in block order, the same in every block; also reads the
  // scaling-domain flag (set before the barrier) into *flag_.
  __device__ double grid_sum(double part, double* sums, cg::grid_group& grid) {
    const double mine = block_sum(part, red_);
    if (threadIdx.x == 0) sums[block_] = mine;
    grid.sync();
    if (threadIdx.x == 0) {
      double total = 0;
      for (int bb = 0; bb < blocks_; ++bb) total += __ldcg(sums + bb);
      red_[32] = total;
      *flag_ = atomicOr(w_.flag, 0);
    }
    __syncthreads();
    return red_[32];
  }

  __device__ void write_outputs() const {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    T* plan = p_.plan + k_ * p_.n * p_.m;
    for (int64_t i = r0_ + warp; i < r1_; i += warps) {
      const T fi = w_.phi[i];
      for (int64_t j = lane; j < m_; j += 32) plan[i * p_.m + j] = exp_dev(fi + __ldcg(w_.psi + j) - c(i, j));
    }
    for (int64_t i = r0_ + threadIdx.x; i < r1_; i += blockDim.x) p_.f[k_ * p_.n + i] = w_.phi[i] * p_.eps;
    for (int64_t j = int64_t(block_) * blockDim.x + threadIdx.x; j < m_; j += int64_t(blocks_) * blockDim.x)
      p_.g[k_ * p_.m + j] = __ldcg(w_.psi + j) * p_.eps;
  }

  const BatchArgs<T>& p_;
  const GridScratch<T>& w_;
  const int64_t k_, n_, m_, chunk_;
  const int blocks_, block_;
  const int64_t r0_, r1_;
  const T* a_;
  const T* b_;
  const T* cost_;
  const uint8_t* mask_;
  double* red_;
  int* flag_;
  T *psi_stage_, *partials_, *cs_;
};

template <typename T, bool kResident>
__global__ void __launch_bounds__(kThreads, 1) grid_kernel(const __grid_constant__ BatchArgs<T> p,
                                                        const __grid_constant__ GridScratch<T> w, int64_t k,
                                                        int64_t chunk) {
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ double red[33];
  __shared__ int flag;
  if (p.invalid[k]) return;  // the same answer in every block: none reaches a barrier
  if (threadIdx.x == 0) flag = 0;
  __syncthreads();
  GridSolver<T, kResident>(p, w, k, chunk, smem, red, &flag).run();
}

template <typename T> auto grid_kernel_for(bool resident) {
  return resident ? grid_kernel<T, true> : grid_kernel<T, false>;
}

template <typename T> size_t grid_smem(int64_t slab_rows, int64_t m, int64_t chunk, bool resident) {
  const int64_t values = chunk + 2 * kThreads + (resident ? slab_rows * m : 0);
  return static_cast<size_t>(values) * sizeof(T);
}

// Co-resident blocks per SM with `smem` bytes of dynamic shared memory each (0: none, also when smem and the
// kernel's static shared memory exceed what one block may have).
template <typename T> int grid_blocks_per_sm(bool resident, size_t smem, const DeviceInfo& info) {
  const auto kernel = grid_kernel_for<T>(resident);
  cudaFuncAttributes attributes;
  REMATCH_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  if (smem + attributes.sharedSizeBytes > info.smem_optin) return 0;
  REMATCH_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  int blocks = 0;
  REMATCH_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, kThreads, smem));
  return blocks;
}

}  // namespace

// Resident: one block per SM, each holding ⌈n / SMs⌉ rows of C/ε, when that fits. Streamed: as many
// co-resident blocks as fit (more loads in flight), never more than rows.
template <typename T> GridConfig grid_config(int64_t n, int64_t m, bool allow_resident, const DeviceInfo& info) {
  GridConfig config;
  config.threads = kThreads;
  config.chunk = std::min(m, kChunk);
  if (allow_resident) {
    const int64_t blocks = std::min<int64_t>(info.sms, n);
    const size_t smem = grid_smem<T>((n + blocks - 1) / blocks, m, config.chunk, true);
    if (grid_blocks_per_sm<T>(true, smem, info) >= 1) {
      config.resident = true;
      config.blocks = static_cast<int>(blocks);
      config.smem = smem;
      return config;
    }
  }
  config.smem = grid_smem<T>(0, m, config.chunk, false);
  const int per_sm = grid_blocks_per_sm<T>(false, config.smem, info);
  REMATCH_CHECK(per_sm >= 1, "sinkhorn (cuda): the whole-device kernel does not fit on an SM (", config.smem,
                " bytes of shared memory, ", kThreads, " threads)");
  config.blocks = static_cast<int>(std::min<int64_t>(static_cast<int64_t>(per_sm) * info.sms, n));
  return config;
}

template <typename T>
void launch_grid(const BatchArgs<T>& p, const GridScratch<T>& scratch, int64_t problem, const GridConfig& config,
                 cudaStream_t stream) {
  const auto kernel = grid_kernel_for<T>(config.resident);
  REMATCH_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(config.smem)));
  REMATCH_CUDA_CHECK(cudaMemsetAsync(scratch.flag, 0, sizeof(int), stream));
  BatchArgs<T> args = p;
  GridScratch<T> w = scratch;
  int64_t k = problem, chunk = config.chunk;
  void* params[] = {&args, &w, &k, &chunk};
  REMATCH_CUDA_CHECK(
      cudaLaunchCooperativeKernel(kernel, dim3(config.blocks), dim3(config.threads), params, config.smem, stream));
  REMATCH_CUDA_LAUNCH_CHECK("sinkhorn_grid_kernel");
}

template GridConfig grid_config<float>(int64_t, int64_t, bool, const DeviceInfo&);
template GridConfig grid_config<double>(int64_t, int64_t, bool, const DeviceInfo&);
template void launch_grid<float>(const BatchArgs<float>&, const GridScratch<float>&, int64_t, const GridConfig&,
                                 cudaStream_t);
template void launch_grid<double>(const BatchArgs<double>&, const GridScratch<double>&, int64_t, const GridConfig&,
                                  cudaStream_t);

}  // namespace rematch::ot::cuda::detail
