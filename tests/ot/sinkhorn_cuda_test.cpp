// The CUDA Sinkhorn kernels (ot/cuda/) against the CPU solver on the same problems: iteration counts, plans,
// potentials, marginal errors and convergence; masked entries exactly 0; valid sizes; both stopping rules and
// check_every; warm starts and zero weights; the scaling domain; partial OT with each dummy-cost convention;
// L2RM's 129×129 calls at ε = 0.01 and 0.07; large square, tall and 2048² problems; both variants of both
// kernel families (ot/cuda/sinkhorn_kernels.h); bitwise-repeatable runs; the CPU's error messages. Every test
// skips without a CUDA device.
//
// Tolerances. float64: the same iteration counts, plans within 1e-12 + 1e-8 relative (the two sides differ in
// exp implementations and summation orders only). float32: the CPU accumulates its sums in double and caches
// the kernel between exact sweeps, the GPU sums in float, so the stopping error differs by rounding and a
// stop may move by one sweep; plans within 1e-6 + 1e-3 relative, as the CPU's float32-vs-float64 test allows.
#include <cmath>
#include <string>
#include <vector>

#include "ot/cuda/sinkhorn_kernels.h"
#include "ot/ot.h"
#include "test_util.h"

namespace rematch {
namespace {

using ot::BatchedSinkhornResult;
using ot::Domain;
using ot::SinkhornOptions;
using ot::SinkhornResult;
using ot::StopRule;
using ot::cuda::Kernel;
using test::all_close;
using test::random_tensor;

Tensor gpu(const Tensor& t) { return t.defined() ? kernels::to_device(t, Device::cuda(0)) : t; }
Tensor host(const Tensor& t) { return t.defined() ? kernels::to_device(t, Device::cpu()) : t; }
Tensor f32(const Tensor& t) { return t.defined() ? kernels::cast(t, DType::Float32) : t; }
Tensor at(const Tensor& t, int64_t k) { return kernels::select(t, 0, k); }

// Forces a kernel family for one scope.
class TuningScope {
 public:
  explicit TuningScope(ot::cuda::Tuning t) { ot::cuda::set_tuning(t); }
  ~TuningScope() { ot::cuda::set_tuning({}); }
};

struct Path {
  ot::cuda::Tuning tuning;
  const char* name;
};
// Auto, the block kernel with its cached K̃ (the CPU's absorption scheme) and with log sweeps only, the grid
// kernel with C/ε slabs in shared memory and streamed.
const Path kPaths[] = {{{Kernel::Auto, true}, "auto"},
                       {{Kernel::Block, true}, "block cached"},
                       {{Kernel::Block, false}, "block log"},
                       {{Kernel::Grid, true}, "grid resident"},
                       {{Kernel::Grid, false}, "grid streamed"}};

Tensor normalised(const Tensor& w) {
  return kernels::scalar_op(kernels::ScalarOp::Mul, w, 1.0 / sum(w).item<double>());
}

// B problems n×m, float64 on the host: costs in [0, scale_k) with scale_k growing with k (so the problems stop
// at different sweeps), random positive weights of equal sums.
struct Batch {
  Tensor C, a, b;
};
Batch random_batch(int64_t B, int64_t n, int64_t m, uint32_t seed) {
  std::vector<Tensor> cs, as, bs;
  for (int64_t k = 0; k < B; ++k) {
    const double scale = 0.5 + 0.25 * static_cast<double>(k);
    cs.push_back(kernels::scalar_op(kernels::ScalarOp::Mul, random_tensor({1, n, m}, DType::Float64, seed + k, 0, 1),
                                    scale));
    as.push_back(kernels::unsqueeze(normalised(random_tensor({n}, DType::Float64, seed + 50 + k, 0.2, 1)), 0));
    bs.push_back(kernels::unsqueeze(normalised(random_tensor({m}, DType::Float64, seed + 90 + k, 0.2, 1)), 0));
  }
  return {kernels::cat(cs, 0), kernels::cat(as, 0), kernels::cat(bs, 0)};
}
Batch as_f32(const Batch& p) { return {f32(p.C), f32(p.a), f32(p.b)}; }

SinkhornOptions options(double eps, double tol, StopRule stop = StopRule::MarginalL1) {
  SinkhornOptions o;
  o.epsilon = eps;
  o.tol = tol;
  o.stop = stop;
  o.max_iter = 20000;
  return o;
}
SinkhornOptions on_gpu(SinkhornOptions o) {
  o.mask = gpu(o.mask);
  o.f0 = gpu(o.f0);
  o.g0 = gpu(o.g0);
  return o;
}


// The CUDA result of a batch against the CPU result of the same batch.
void expect_matches(const BatchedSinkhornResult& got, const BatchedSinkhornResult& want, DType dt,
                    const std::string& what) {
  ASSERT_EQ(got.plan.device(), Device::cuda(0)) << what;
  ASSERT_EQ(got.iterations.size(), want.iterations.size()) << what;
  for (size_t k = 0; k < want.iterations.size(); ++k) {
    if (dt == DType::Float64) EXPECT_EQ(got.iterations[k], want.iterations[k]) << what << " problem " << k;
    else EXPECT_NEAR(double(got.iterations[k]), double(want.iterations[k]), 1) << what << " problem " << k;
    EXPECT_EQ(got.converged[k], want.converged[k]) << what << " problem " << k;
    const double scale = dt == DType::Float64 ? 1e-9 : 1e-4;
    EXPECT_NEAR(got.marginal_error[k], want.marginal_error[k], scale * (1 + want.marginal_error[k] * 1e3))
        << what << " problem " << k;
  }
  // Entries small next to the mean entry 1/(n·m) may differ by more than 1e-3 of themselves in float32.
  const double mean = 1.0 / static_cast<double>(want.plan.size(1) * want.plan.size(2));
  const double atol = dt == DType::Float64 ? 1e-12 : 1e-2 * mean, rtol = dt == DType::Float64 ? 1e-8 : 1e-3;
  EXPECT_TRUE(all_close(host(got.plan), want.plan, atol, rtol)) << what;
  // Potentials: f in cost units, compared relative to ε-sized changes (ε ≥ 0.01 here).
  const double pot = dt == DType::Float64 ? 1e-9 : 2e-4;
  EXPECT_TRUE(all_close(host(got.f), want.f, pot, pot)) << what;
  EXPECT_TRUE(all_close(host(got.g), want.g, pot, pot)) << what;
}

BatchedSinkhornResult solve_cpu(const Batch& p, const SinkhornOptions& o, const ot::ProblemSizes& sizes = {}) {
  return ot::sinkhorn_batched(p.C, p.a, p.b, o, sizes);
}
BatchedSinkhornResult solve_gpu(const Batch& p, const SinkhornOptions& o, const ot::ProblemSizes& sizes = {}) {
  return ot::sinkhorn_batched(gpu(p.C), gpu(p.a), gpu(p.b), on_gpu(o), sizes);
}

TEST(SinkhornCuda, BatchMatchesCpuOnEveryKernelPath) {
  SKIP_WITHOUT_CUDA();
  const Batch p64 = random_batch(4, 33, 21, 1);
  for (DType dt : {DType::Float64, DType::Float32}) {
    const Batch p = dt == DType::Float64 ? p64 : as_f32(p64);
    for (StopRule stop : {StopRule::MarginalL1, StopRule::PotentialChange}) {
      const double tol = dt == DType::Float64 ? 1e-10 : 1e-4;
      const SinkhornOptions o = options(0.05, stop == StopRule::PotentialChange ? tol * 0.1 : tol, stop);
      const BatchedSinkhornResult want = solve_cpu(p, o);
      for (const Path& path : kPaths) {
        TuningScope scope(path.tuning);
        expect_matches(solve_gpu(p, o), want, dt,
                       std::string(dtype_name(dt)) + ", " + path.name +
                           (stop == StopRule::MarginalL1 ? ", marginal rule" : ", potential rule"));
      }
    }
  }
}

// Batched costs scaled differently converge at different speeds: each problem stops on its own, as on the CPU.
TEST(SinkhornCuda, EachProblemStopsOnItsOwn) {
  SKIP_WITHOUT_CUDA();
  const Batch p = random_batch(6, 40, 40, 2);
  const SinkhornOptions o = options(0.02, 1e-9);
  const BatchedSinkhornResult got = solve_gpu(p, o), want = solve_cpu(p, o);
  expect_matches(got, want, DType::Float64, "batch of 6");
  EXPECT_NE(got.iterations.front(), got.iterations.back());
}

TEST(SinkhornCuda, RunsAreBitwiseRepeatable) {
  SKIP_WITHOUT_CUDA();
  const Batch p = as_f32(random_batch(3, 70, 50, 3));
  const SinkhornOptions o = options(0.03, 1e-5);
  for (const Path& path : kPaths) {
    TuningScope scope(path.tuning);
    const BatchedSinkhornResult first = solve_gpu(p, o), second = solve_gpu(p, o);
    EXPECT_TRUE(all_close(host(first.plan), host(second.plan), 0, 0)) << path.name;
    EXPECT_EQ(first.iterations, second.iterations) << path.name;
    EXPECT_EQ(first.marginal_error, second.marginal_error) << path.name;
  }
}

TEST(SinkhornCuda, MaskedEntriesGetExactlyZeroMass) {
  SKIP_WITHOUT_CUDA();
  const int64_t B = 3, n = 24, m = 24;
  const Batch p64 = random_batch(B, n, m, 4);
  Tensor mask = kernels::unary(kernels::UnaryOp::LogicalNot, kernels::cast(eye(n, m), DType::Bool));
  mask = kernels::contiguous(kernels::expand(kernels::unsqueeze(mask, 0), {B, n, m}));
  kernels::fill_(kernels::select(kernels::select(at(mask, 1), 0, 5), 0, 9), 0);  // problem 1 also loses [5, 9]
  for (DType dt : {DType::Float64, DType::Float32}) {
    const Batch p = dt == DType::Float64 ? p64 : as_f32(p64);
    SinkhornOptions o = options(0.05, dt == DType::Float64 ? 1e-10 : 1e-4);
    o.mask = mask;
    const BatchedSinkhornResult want = solve_cpu(p, o);
    for (const Path& path : kPaths) {
      TuningScope scope(path.tuning);
      const BatchedSinkhornResult got = solve_gpu(p, o);
      expect_matches(got, want, dt, std::string("masked, ") + path.name);
      const std::vector<double> plan = host(got.plan).to_vector<double>(), keep = mask.to_vector<double>();
      for (size_t e = 0; e < plan.size(); ++e) {
        if (keep[e] == 0) EXPECT_EQ(plan[e], 0.0) << path.name << " entry " << e;
        else EXPECT_GT(plan[e], 0.0) << path.name << " entry " << e;
      }
    }
  }
}

// Valid sizes: NaN padding is never read, the outputs are zero outside each block, and each block is the CPU
// solve of the batch with the same sizes.
TEST(SinkhornCuda, ValidSizesIgnoreThePadding) {
  SKIP_WITHOUT_CUDA();
  const int64_t B = 4, n = 30, m = 20;
  Batch p = random_batch(B, n, m, 5);
  p.C = kernels::clone(p.C);
  const std::vector<int64_t> rows{30, 17, 5, 30}, cols{20, 3, 20, 11};
  for (int64_t k = 0; k < B; ++k) {
    kernels::fill_(kernels::narrow(at(p.C, k), 0, rows[k], n - rows[k]), NAN);
    kernels::fill_(kernels::narrow(at(p.C, k), 1, cols[k], m - cols[k]), NAN);
  }
  const Batch uniform{p.C, Tensor(), Tensor()};
  const SinkhornOptions o = options(0.05, 1e-10);
  const BatchedSinkhornResult want = solve_cpu(uniform, o, {rows, cols});
  for (const Path& path : kPaths) {
    TuningScope scope(path.tuning);
    const BatchedSinkhornResult got = solve_gpu(uniform, o, {rows, cols});
    expect_matches(got, want, DType::Float64, std::string("valid sizes, ") + path.name);
    for (int64_t k = 0; k < B; ++k) {
      const Tensor plan = at(host(got.plan), k);
      EXPECT_EQ(sum(kernels::narrow(plan, 0, rows[k], n - rows[k])).item<double>(), 0.0) << path.name;
      EXPECT_EQ(sum(kernels::narrow(plan, 1, cols[k], m - cols[k])).item<double>(), 0.0) << path.name;
    }
  }
}

TEST(SinkhornCuda, StoppingOptionsAsOnTheCpu) {
  SKIP_WITHOUT_CUDA();
  const Batch p = random_batch(2, 19, 23, 6);
  for (StopRule stop : {StopRule::MarginalL1, StopRule::PotentialChange}) {
    SinkhornOptions o = options(0.1, 0, stop);
    o.max_iter = 37;  // tol = 0: exactly max_iter sweeps
    BatchedSinkhornResult got = solve_gpu(p, o);
    EXPECT_EQ(got.iterations, (std::vector<int64_t>{37, 37}));
    EXPECT_EQ(got.converged, (std::vector<uint8_t>{0, 0}));
    expect_matches(got, solve_cpu(p, o), DType::Float64, "tol 0");
    o = options(0.1, 1e-8, stop);
    o.check_every = 10;  // the rule is tested after sweeps 10, 20, ...
    got = solve_gpu(p, o);
    for (int64_t it : got.iterations) EXPECT_EQ(it % 10, 0);
    expect_matches(got, solve_cpu(p, o), DType::Float64, "check_every 10");
  }
}

TEST(SinkhornCuda, WarmStartsAndZeroWeights) {
  SKIP_WITHOUT_CUDA();
  Batch p = random_batch(2, 12, 9, 7);
  std::vector<double> a = p.a.to_vector<double>(), b = p.b.to_vector<double>();
  a[0] += a[3];  // problem 0: row 3 and column 4 carry no mass
  a[3] = 0;
  b[1] += b[4];
  b[4] = 0;
  p.a = from_vector(a, {2, 12});
  p.b = from_vector(b, {2, 9});
  SinkhornOptions o = options(0.05, 1e-11);
  const BatchedSinkhornResult cold = solve_cpu(p, o);
  const BatchedSinkhornResult got = solve_gpu(p, o);
  expect_matches(got, cold, DType::Float64, "zero weights");
  EXPECT_EQ(host(got.f).to_vector<double>()[3], -INFINITY);
  EXPECT_EQ(host(got.g).to_vector<double>()[4], -INFINITY);
  // Warm start from the solution: one sweep. Warm starts must be finite; a zero-weight column still enters the
  // first row half-step, so it starts far below the others.
  std::vector<double> f0 = cold.f.to_vector<double>(), g0 = cold.g.to_vector<double>();
  f0[3] = 0;
  g0[4] = -50;
  o.f0 = from_vector(f0, {2, 12});
  o.g0 = from_vector(g0, {2, 9});
  const BatchedSinkhornResult warm = solve_gpu(p, o);
  expect_matches(warm, solve_cpu(p, o), DType::Float64, "warm start");
  EXPECT_EQ(warm.iterations, (std::vector<int64_t>{1, 1}));
}

TEST(SinkhornCuda, ScalingDomainAsOnTheCpu) {
  SKIP_WITHOUT_CUDA();
  const Batch p = random_batch(2, 15, 11, 8);
  SinkhornOptions o = options(0.2, 1e-10);
  o.domain = Domain::Scaling;
  for (const Path& path : kPaths) {
    TuningScope scope(path.tuning);
    expect_matches(solve_gpu(p, o), solve_cpu(p, o), DType::Float64, std::string("scaling, ") + path.name);
  }
  // C/ε up to 1000: the fixed kernel underflows; the same error as the CPU's.
  const Batch far{kernels::scalar_op(kernels::ScalarOp::Add, p.C, 0.75), p.a, p.b};
  o.epsilon = 1e-3;
  std::string cpu_error, gpu_error;
  try {
    solve_cpu(far, o);
  } catch (const Error& e) {
    cpu_error = e.what();
  }
  try {
    solve_gpu(far, o);
  } catch (const Error& e) {
    gpu_error = e.what();
  }
  EXPECT_NE(cpu_error.find("underflows"), std::string::npos) << cpu_error;
  EXPECT_EQ(gpu_error, cpu_error);
}

// Bad values give the CPU's message, word for word, naming the same problem and entry.
TEST(SinkhornCuda, BadValuesGiveTheCpuMessages) {
  SKIP_WITHOUT_CUDA();
  const Batch p = random_batch(3, 6, 5, 9);
  const SinkhornOptions o = options(0.1, 1e-9);
  const auto same_error = [&](const Batch& bad, const SinkhornOptions& opts, const char* expect) {
    std::string cpu_error = "(none)", gpu_error = "(none)";
    try {
      solve_cpu(bad, opts);
    } catch (const Error& e) {
      cpu_error = e.what();
    }
    for (const Path& path : kPaths) {
      TuningScope scope(path.tuning);
      gpu_error = "(none)";
      try {
        solve_gpu(bad, opts);
      } catch (const Error& e) {
        gpu_error = e.what();
      }
      EXPECT_NE(cpu_error.find(expect), std::string::npos) << cpu_error;
      EXPECT_EQ(gpu_error, cpu_error) << path.name;
    }
  };
  Batch bad = p;
  bad.C = kernels::clone(p.C);
  kernels::fill_(kernels::select(kernels::select(at(bad.C, 2), 0, 1), 0, 4), NAN);
  same_error(bad, o, "problem 2 of 3: cost C[1, 4] = nan");
  bad = p;
  bad.a = kernels::clone(p.a);
  kernels::fill_(kernels::select(at(bad.a, 1), 0, 2), -0.5);
  same_error(bad, o, "problem 1 of 3: weight a[2] = -0.5");
  bad = p;
  bad.b = kernels::scalar_op(kernels::ScalarOp::Mul, p.b, 1.001);
  same_error(bad, o, "different sums");
  SinkhornOptions masked = o;
  masked.mask = ones({6, 5}, DType::Bool);
  kernels::fill_(kernels::select(masked.mask, 0, 3), 0);
  same_error(p, masked, "row 3 is all-masked");
  masked.mask = ones({6, 5}, DType::Bool);
  kernels::fill_(kernels::select(masked.mask, 1, 2), 0);
  same_error(p, masked, "column 2 is all-masked");
  SinkhornOptions warm = o;
  warm.f0 = zeros({6}, DType::Float64);
  kernels::fill_(kernels::select(warm.f0, 0, 4), INFINITY);
  same_error(p, warm, "warm start f0[4] = inf");
}

// L2RM's rematch call (docs/methods/l2rm.md §1.5; L2RM supp. Algorithm 2) on its fixtures: 128×128 costs + Chapel et
// al. (2020)'s dummy row and column = 129×129, diagonal masked, ‖Δu‖₂ < 1e-3, at most 1000 sweeps. float64
// with L2RM's dummy costs: the sweep and the plan of the NumPy transcription; float32 with the shifted dummies:
// the CPU float32 solve.
TEST(SinkhornCuda, L2RMRematchCallAt129) {
  SKIP_WITHOUT_CUDA();
  const auto fixture = [](const std::string& folder, const std::string& name) {
    return load_npy(std::string(REMATCH_FIXTURES) + "/ot/" + folder + "/" + name + ".npy");
  };
  for (const char* problem : {"l2rm_p0", "l2rm_p1"}) {
    const Tensor C = kernels::cast(fixture(problem, "cost"), DType::Float64);
    const int64_t B = C.size(0);
    for (const char* eps : {"0.01", "0.07"}) {
      const std::string tag = std::string("eps") + eps + "_";
      SinkhornOptions o;
      o.epsilon = std::stod(eps);
      o.max_iter = 1000;
      o.tol = 1e-3;
      o.stop = StopRule::PotentialChange;
      o.mask = kernels::unary(kernels::UnaryOp::LogicalNot, kernels::cast(eye(B), DType::Bool));
      const Tensor w = full({B}, 1.0 / static_cast<double>(B), DType::Float64);
      for (const Path& path : kPaths) {
        TuningScope scope(path.tuning);
        const std::string what = std::string(problem) + " eps " + eps + " " + path.name;
        const SinkhornResult got = ot::partial_sinkhorn(gpu(C), gpu(w), gpu(w), 0.1, on_gpu(o));
        EXPECT_EQ(got.iterations, fixture(problem, tag + "iterations").item<int64_t>()) << what;
        EXPECT_TRUE(all_close(host(got.f), fixture(problem, tag + "u"), 1e-9, 0)) << what;
        EXPECT_TRUE(all_close(kernels::cast(host(got.plan), DType::Float32), fixture(problem, tag + "plan"), 1e-12,
                              1e-6))
            << what;
        const std::vector<double> plan = host(got.plan).to_vector<double>();
        for (int64_t i = 0; i < B; ++i) EXPECT_EQ(plan[i * B + i], 0.0) << what;

        ot::DummyOptions shifted;
        shifted.costs = ot::DummyCost::L2RMShifted;
        const SinkhornResult want32 = ot::partial_sinkhorn(f32(C), f32(w), f32(w), 0.1, o, shifted);
        const SinkhornResult got32 =
            ot::partial_sinkhorn(gpu(f32(C)), gpu(f32(w)), gpu(f32(w)), 0.1, on_gpu(o), shifted);
        EXPECT_NEAR(double(got32.iterations), double(want32.iterations), 1) << what;
        EXPECT_TRUE(all_close(host(got32.plan), want32.plan, 1e-6, 1e-3)) << what;
      }
    }
  }
}

// Partial OT builds the augmented problem with tensor ops on the cost's device and solves it with the batched
// driver: each dummy convention, masked, against the CPU.
TEST(SinkhornCuda, PartialSinkhornEachDummyConvention) {
  SKIP_WITHOUT_CUDA();
  const Batch p = random_batch(3, 10, 8, 10);
  SinkhornOptions o = options(0.02, 1e-10);
  o.mask = kernels::unary(kernels::UnaryOp::LogicalNot, kernels::cast(eye(10, 8), DType::Bool));
  const std::vector<double> mass{0.2, 0.5, 0.8};
  for (ot::DummyCost costs : {ot::DummyCost::L2RM, ot::DummyCost::L2RMShifted, ot::DummyCost::Zero}) {
    ot::DummyOptions d;
    d.costs = costs;
    const BatchedSinkhornResult want = ot::partial_sinkhorn_batched(p.C, p.a, p.b, mass, o, d);
    const BatchedSinkhornResult got = ot::partial_sinkhorn_batched(gpu(p.C), gpu(p.a), gpu(p.b), mass, on_gpu(o), d);
    expect_matches(got, want, DType::Float64, ot::dummy_cost_name(costs));
  }
}

// Large single problems (the grid kernel under Auto), float32 against the CPU float32 solve. Their suite,
// SinkhornCudaLarge, ends in "Large": too slow under compute-sanitizer, so tools/gpu_check.sh runs such
// suites in a step of their own, without memcheck.
void expect_large_matches(int64_t n, int64_t m, double eps, double tol, uint32_t seed) {
  const Batch p = as_f32(random_batch(1, n, m, seed));
  const SinkhornOptions o = options(eps, tol);
  const BatchedSinkhornResult want = solve_cpu(p, o);
  ASSERT_TRUE(want.all_converged());
  const std::string what = std::to_string(n) + "x" + std::to_string(m);
  // Auto takes the grid kernel with C/ε slabs in shared memory here; the other two paths stream C. The block
  // kernel (one SM for the whole problem, its K̃ too large to cache) keeps 3(n + m) potentials in shared memory
  // (too many for 50000 rows), and past 2^20 entries one SM alone is slow to wait for.
  const bool block_fits = n + m <= 16000 && n * m <= (int64_t{1} << 20);
  for (const Path& path : {kPaths[0], kPaths[2], kPaths[4]}) {
    if (path.tuning.kernel == Kernel::Block && !block_fits) continue;
    TuningScope scope(path.tuning);
    const BatchedSinkhornResult got = solve_gpu(p, o);
    EXPECT_TRUE(got.all_converged()) << what << " " << path.name;
    EXPECT_LT(got.marginal_error[0], tol) << what << " " << path.name;
    expect_matches(got, want, DType::Float32, what + " " + path.name);
    // The columns are exact after a sweep: Pᵀ1 = b to float32 rounding.
    const Tensor cols = kernels::reduce(kernels::ReduceOp::Sum, kernels::cast(host(got.plan), DType::Float64), {1},
                                        false);
    EXPECT_TRUE(all_close(cols, kernels::cast(p.b, DType::Float64), 1e-6, 1e-3)) << what << " " << path.name;
  }
}

TEST(SinkhornCudaLarge, Square1024x1024) {
  SKIP_WITHOUT_CUDA();
  expect_large_matches(1024, 1024, 0.05, 1e-4, 11);
}

TEST(SinkhornCudaLarge, TallSkinny50000x11And4000x201) {
  SKIP_WITHOUT_CUDA();
  expect_large_matches(50000, 11, 0.05, 1e-4, 12);
  expect_large_matches(4000, 201, 0.05, 1e-4, 13);
}

TEST(SinkhornCudaLarge, Square2048x2048) {
  SKIP_WITHOUT_CUDA();
  expect_large_matches(2048, 2048, 0.05, 1e-4, 14);
}

}  // namespace
}  // namespace rematch
