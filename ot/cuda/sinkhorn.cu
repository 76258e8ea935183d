// The host side of the CUDA Sinkhorn backend: device pointers and scratch, the value checks, the choice of
// kernel family, and reading the per-problem results back (with the copy of the valid sizes before the
// launches, the only points where the host waits).
//
// Order of work on the device's stream, with nothing waited for in between:
//   1. value checks (sinkhorn_validate.cu) → one flag per problem; a flagged problem is not solved;
//   2. zeros outside the valid blocks when the batch is padded;
//   3. the solver: one launch of the block kernel for the whole batch, or one cooperative launch of the grid
//      kernel per problem (each runs every sweep of its problem);
//   4. the per-problem results and flags copied back (the synchronisation).
// A flagged problem gets the CPU's message from cpu::check_values on a host copy of that problem alone.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "ot/cuda/sinkhorn_kernels.h"
#include "ot/cuda/sinkhorn_launch.h"
#include "tensor/cuda/check.h"
#include "tensor/cuda/runtime.h"

namespace rematch::ot::cuda {
namespace {

using detail::BatchArgs;
using detail::BlockConfig;
using detail::DeviceInfo;
using detail::DeviceStats;
using detail::GridConfig;
using detail::GridScratch;

Tuning g_tuning;

// Launch shapes depend on the device, the dtype, the sizes and the tuning only; the occupancy queries behind
// them cost microseconds, which L2RM's one small solve per training step would pay every time, so they are
// computed once per key.
template <typename Key, typename Value, typename Make> Value memoised(const Key& key, Make make) {
  static std::mutex mutex;
  static std::map<Key, Value> cache;
  std::lock_guard<std::mutex> lock(mutex);
  const auto found = cache.find(key);
  if (found != cache.end()) return found->second;
  return cache.emplace(key, make()).first->second;
}

DeviceInfo query_device(int device) {
  DeviceInfo info;
  int value = 0;
  REMATCH_CUDA_CHECK(cudaDeviceGetAttribute(&value, cudaDevAttrMultiProcessorCount, device));
  info.sms = value;
  REMATCH_CUDA_CHECK(cudaDeviceGetAttribute(&value, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  info.smem_optin = static_cast<size_t>(value);
  REMATCH_CUDA_CHECK(cudaDeviceGetAttribute(&value, cudaDevAttrCooperativeLaunch, device));
  REMATCH_CHECK(value != 0, "sinkhorn (cuda): cuda:", device, " does not support cooperative launches");
  return info;
}
DeviceInfo device_info(int device) {
  return memoised<int, DeviceInfo>(device, [&] { return query_device(device); });
}

// One device allocation carved into aligned pieces; returned to the stream-ordered pool when it goes.
class Scratch {
 public:
  explicit Scratch(int device) : device_(device) {}
  ~Scratch() { rematch::cuda::device_free(base_, device_); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;

  // Reserves count elements of U; the pointers are valid after allocate().
  template <typename U> size_t reserve(int64_t count) {
    const size_t at = (size_ + 255) / 256 * 256;
    size_ = at + static_cast<size_t>(std::max<int64_t>(count, 0)) * sizeof(U);
    return at;
  }
  void allocate() { base_ = static_cast<char*>(rematch::cuda::device_malloc(std::max<size_t>(size_, 1), device_)); }
  template <typename U> U* at(size_t offset) const { return reinterpret_cast<U*>(base_ + offset); }

 private:
  int device_;
  char* base_ = nullptr;
  size_t size_ = 0;
};

// The scaling domain's error, worded as ot/cpu/sinkhorn.cpp words it (tests/ot/sinkhorn_cuda_test.cpp compares).
template <typename T> std::string scaling_error(double epsilon) {
  return rematch::detail::concat("scaling domain: exp(-C/epsilon) underflows or overflows at epsilon = ", epsilon,
                                 " (it is 0 once C/epsilon exceeds ~", std::is_same_v<T, float> ? 87 : 708,
                                 "); use Domain::Log");
}

// Host copies of problem k (its padded slices), for cpu::check_values.
template <typename T> std::string host_check(const BatchArgs<T>& p, int64_t k, int64_t n, int64_t m, int device) {
  const Device dev = Device::cuda(device), host = Device::cpu();
  const auto fetch = [&](auto* src, int64_t count) {
    using U = std::remove_const_t<std::remove_pointer_t<decltype(src)>>;
    std::vector<U> v(static_cast<size_t>(count));
    rematch::cuda::memcpy(v.data(), host, src, dev, v.size() * sizeof(U));
    return v;
  };
  const std::vector<T> cost = fetch(p.cost + k * p.n * p.m, p.n * p.m);
  const std::vector<T> a = fetch(p.a + k * p.a_step, p.n), b = fetch(p.b + k * p.b_step, p.m);
  std::vector<uint8_t> mask;
  std::vector<T> f0, g0;
  if (p.mask) mask = fetch(p.mask + k * p.mask_step, p.n * p.m);
  if (p.f0) f0 = fetch(p.f0 + k * p.f0_step, p.n);
  if (p.g0) g0 = fetch(p.g0 + k * p.g0_step, p.m);
  cpu::ProblemView<T> v;
  v.n = n;
  v.m = m;
  v.cost = cost.data();
  v.ld_cost = p.m;
  v.mask = p.mask ? mask.data() : nullptr;
  v.ld_mask = p.m;
  v.a = a.data();
  v.b = b.data();
  v.f0 = p.f0 ? f0.data() : nullptr;
  v.g0 = p.g0 ? g0.data() : nullptr;
  return cpu::check_values(v, p.epsilon);
}

// Kernel::Auto: the family with the smaller estimated time per sweep, in SM clocks. A sweep visits every entry
// twice; a log visit costs an exponential, ~16 per clock per SM (docs/ot.md §7.1), a visit of the block kernel's
// cached K̃ a multiply-add and two shared loads, ~32 per clock (instruction issue); blocks sharing an SM share
// it; a grid-wide barrier costs ~1-2 µs (~3000 clocks) and the grid kernel passes three per checked sweep.
// Memory traffic is not modelled: the block kernel reads C from memory only once K̃ outgrows shared memory,
// where the grid kernel streams it too.
bool grid_is_faster(const BlockConfig& block, int64_t batch, int64_t n, int64_t m, const DeviceInfo& info) {
  if (!block.feasible) return true;
  constexpr double kExpsPerClock = 16, kCachedPerClock = 32, kBarrierClocks = 3000;
  const double visits = 2.0 * static_cast<double>(n) * static_cast<double>(m);
  const double block_sweep = visits / (block.resident ? kCachedPerClock : kExpsPerClock);
  const int64_t per_sm = std::min<int64_t>(block.blocks_per_sm, (batch + info.sms - 1) / info.sms);
  const int64_t waves = (batch + info.sms * per_sm - 1) / (info.sms * per_sm);
  const double block_time = static_cast<double>(waves * per_sm) * block_sweep;
  const double grid_time = static_cast<double>(batch) * (3 * kBarrierClocks + visits / kExpsPerClock / info.sms);
  return grid_time < block_time;
}

template <typename T> const T* typed(const Tensor& t) {
  return t.defined() ? static_cast<const T*>(t.raw_data()) : nullptr;
}

template <typename T>
std::vector<cpu::ProblemStats> solve_typed(const Tensor& C, const Tensor& a, const Tensor& b, const Tensor& mask,
                                           const Tensor& f0, const Tensor& g0, const SinkhornOptions& o,
                                           std::vector<int64_t> rows, std::vector<int64_t> cols,
                                           BatchedSinkhornResult& out) {
  const int device = C.device().index;
  REMATCH_CUDA_CHECK(cudaSetDevice(device));
  const cudaStream_t stream = rematch::cuda::stream(device);
  const DeviceInfo info = device_info(device);
  const int64_t B = C.size(0), n = C.size(1), m = C.size(2);
  REMATCH_CHECK(B <= (int64_t{1} << 31) - 1, "sinkhorn (cuda): a batch of ", B,
                " problems is more than one launch holds");
  const bool padded = !rows.empty() || !cols.empty();
  if (rows.empty()) rows.assign(static_cast<size_t>(B), n);
  if (cols.empty()) cols.assign(static_cast<size_t>(B), m);

  // Kernel family and launch shapes.
  const Tuning tune = g_tuning;
  // block_config depends on the batch only through whether every problem gets an SM to itself.
  const auto block_key = std::make_tuple(device, sizeof(T), n, m, B <= info.sms, tune.resident);
  const BlockConfig block = memoised<decltype(block_key), BlockConfig>(
      block_key, [&] { return detail::block_config<T>(B, n, m, tune.resident, info); });
  const bool use_grid = tune.kernel == Kernel::Grid ||
                        (tune.kernel == Kernel::Auto && grid_is_faster(block, B, n, m, info));
  REMATCH_CHECK(use_grid || block.feasible, "sinkhorn (cuda): Kernel::Block cannot hold a ", n, "x", m,
                " problem's potentials in shared memory; use Kernel::Auto or Kernel::Grid");
  std::vector<GridConfig> grids;
  int max_blocks = 0;
  if (use_grid) {
    for (int64_t k = 0; k < B; ++k) {
      const auto key = std::make_tuple(device, sizeof(T), rows[k], cols[k], tune.resident);
      grids.push_back(memoised<decltype(key), GridConfig>(
          key, [&] { return detail::grid_config<T>(rows[k], cols[k], tune.resident, info); }));
      max_blocks = std::max(max_blocks, grids.back().blocks);
    }
  }

  // Scratch: valid sizes, flags, results; reach flags with a mask; the grid kernel's vectors and partials.
  Scratch scratch(device);
  const size_t at_rows = scratch.reserve<int64_t>(2 * B);
  const size_t at_stats = scratch.reserve<DeviceStats>(B);
  const size_t at_invalid = scratch.reserve<int32_t>(B);  // right after the stats: one copy reads both back
  const size_t at_row_reach = scratch.reserve<uint8_t>(mask.defined() ? B * n : 0);
  const size_t at_col_reach = scratch.reserve<uint8_t>(mask.defined() ? B * m : 0);
  const int64_t gn = use_grid ? n : 0, gm = use_grid ? m : 0;
  const size_t at_phi = scratch.reserve<T>(3 * gn), at_psi = scratch.reserve<T>(2 * gm);
  const size_t at_part = scratch.reserve<T>(2 * int64_t{max_blocks} * gm);
  const size_t at_sums = scratch.reserve<double>(2 * int64_t{max_blocks});
  const size_t at_flag = scratch.reserve<int>(1);
  scratch.allocate();

  std::vector<int64_t> sizes(rows);
  sizes.insert(sizes.end(), cols.begin(), cols.end());
  rematch::cuda::memcpy(scratch.at<int64_t>(at_rows), C.device(), sizes.data(), Device::cpu(),
                        sizes.size() * sizeof(int64_t));

  BatchArgs<T> p{};
  p.batch = B;
  p.n = n;
  p.m = m;
  p.rows = scratch.at<int64_t>(at_rows);
  p.cols = p.rows + B;
  p.cost = typed<T>(C);
  p.mask = mask.defined() ? static_cast<const uint8_t*>(mask.raw_data()) : nullptr;
  p.mask_step = mask.defined() && mask.dim() == 3 ? n * m : 0;
  p.a = typed<T>(a);
  p.a_step = a.dim() == 2 ? n : 0;
  p.b = typed<T>(b);
  p.b_step = b.dim() == 2 ? m : 0;
  p.f0 = typed<T>(f0);
  p.f0_step = f0.defined() && f0.dim() == 2 ? n : 0;
  p.g0 = typed<T>(g0);
  p.g0_step = g0.defined() && g0.dim() == 2 ? m : 0;
  p.epsilon = o.epsilon;
  p.eps = static_cast<T>(o.epsilon);
  p.inv_eps = static_cast<T>(1.0 / o.epsilon);
  p.max_iter = o.max_iter;
  p.check_every = o.check_every;
  p.tol = o.tol;
  p.potential_rule = o.stop == StopRule::PotentialChange;
  p.scaling = o.domain == Domain::Scaling;
  p.invalid = scratch.at<int32_t>(at_invalid);
  p.plan = static_cast<T*>(out.plan.raw_data());
  p.f = static_cast<T*>(out.f.raw_data());
  p.g = static_cast<T*>(out.g.raw_data());
  p.stats = scratch.at<DeviceStats>(at_stats);

  int32_t* invalid = scratch.at<int32_t>(at_invalid);
  uint8_t* row_reach = mask.defined() ? scratch.at<uint8_t>(at_row_reach) : nullptr;
  uint8_t* col_reach = mask.defined() ? scratch.at<uint8_t>(at_col_reach) : nullptr;
  if (mask.defined()) {
    REMATCH_CUDA_CHECK(cudaMemsetAsync(row_reach, 0, static_cast<size_t>(B * n), stream));
    REMATCH_CUDA_CHECK(cudaMemsetAsync(col_reach, 0, static_cast<size_t>(B * m), stream));
  }
  detail::launch_validate<T>(p, invalid, row_reach, col_reach, stream);

  if (padded) {
    REMATCH_CUDA_CHECK(cudaMemsetAsync(p.plan, 0, static_cast<size_t>(B * n * m) * sizeof(T), stream));
    REMATCH_CUDA_CHECK(cudaMemsetAsync(p.f, 0, static_cast<size_t>(B * n) * sizeof(T), stream));
    REMATCH_CUDA_CHECK(cudaMemsetAsync(p.g, 0, static_cast<size_t>(B * m) * sizeof(T), stream));
  }

  if (use_grid) {
    GridScratch<T> w;
    w.phi = scratch.at<T>(at_phi);
    w.rlse = w.phi + n;
    w.phibar = w.rlse + n;
    w.psi = scratch.at<T>(at_psi);
    w.psibar = w.psi + m;
    w.part_mx = scratch.at<T>(at_part);
    w.part_s = w.part_mx + int64_t{max_blocks} * m;
    w.block_sums = scratch.at<double>(at_sums);
    w.flag = scratch.at<int>(at_flag);
    for (int64_t k = 0; k < B; ++k) detail::launch_grid<T>(p, w, k, grids[k], stream);
  } else {
    detail::launch_block<T>(p, block, stream);
  }

  std::vector<char> back(at_invalid + static_cast<size_t>(B) * sizeof(int32_t) - at_stats);
  rematch::cuda::memcpy(back.data(), Device::cpu(), scratch.at<char>(at_stats), C.device(), back.size());
  std::vector<DeviceStats> dstats(static_cast<size_t>(B));
  std::vector<int32_t> flags(static_cast<size_t>(B));
  std::memcpy(dstats.data(), back.data(), dstats.size() * sizeof(DeviceStats));
  std::memcpy(flags.data(), back.data() + (at_invalid - at_stats), flags.size() * sizeof(int32_t));

  std::vector<cpu::ProblemStats> stats(static_cast<size_t>(B));
  for (int64_t k = 0; k < B; ++k) {
    cpu::ProblemStats& s = stats[k];
    if (flags[k]) {
      s.error = host_check<T>(p, k, rows[k], cols[k], device);
      REMATCH_CHECK(!s.error.empty(), "sinkhorn (cuda): internal error: the device value checks rejected problem ",
                    k, " but cpu::check_values accepts it");
      continue;
    }
    const DeviceStats& d = dstats[k];
    if (d.range_error) {
      s.error = scaling_error<T>(o.epsilon);
      continue;
    }
    s.iterations = d.iterations;
    s.marginal_error = d.marginal_error;
    s.converged = d.converged != 0;
  }
  return stats;
}

}  // namespace

void set_tuning(const Tuning& tuning) { g_tuning = tuning; }
Tuning tuning() { return g_tuning; }

std::vector<cpu::ProblemStats> solve(const Tensor& C, const Tensor& a, const Tensor& b, const Tensor& mask,
                                     const Tensor& f0, const Tensor& g0, const SinkhornOptions& options,
                                     const std::vector<int64_t>& rows, const std::vector<int64_t>& cols,
                                     BatchedSinkhornResult& out) {
  return dispatch_float("sinkhorn (cuda)", C.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    return solve_typed<T>(C, a, b, mask, f0, g0, options, rows, cols, out);
  });
}

}  // namespace rematch::ot::cuda
