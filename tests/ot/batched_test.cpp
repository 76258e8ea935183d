// ot::sinkhorn_batched and partial_sinkhorn_batched: every problem of a batch gets what a solve of it alone
// gets (per-problem marginals, masks, valid sizes with garbage padding, its own stop), a large problem split
// over threads equals the one-thread solve, float32 batches, and errors that name the problem.
#include <omp.h>

#include <cmath>
#include <string>
#include <vector>

#include "ot/ot.h"
#include "test_util.h"

namespace rematch {
namespace {

using ot::BatchedSinkhornResult;
using ot::SinkhornOptions;
using ot::SinkhornResult;
using test::all_close;
using test::random_tensor;

Tensor normalised(const Tensor& w) { return kernels::scalar_op(kernels::ScalarOp::Mul, w, 1.0 / sum(w).item<double>()); }

// B problems of size n×m: costs in [0, 1) scaled per problem (so their stop iterations differ), weights random.
struct Batch {
  Tensor C, a, b;
};
Batch random_batch(int64_t B, int64_t n, int64_t m, uint32_t seed) {
  Batch p;
  std::vector<Tensor> cs, as, bs;
  for (int64_t k = 0; k < B; ++k) {
    const double scale = 0.5 + 0.5 * static_cast<double>(k);
    cs.push_back(kernels::scalar_op(kernels::ScalarOp::Mul, random_tensor({1, n, m}, DType::Float64, seed + k, 0, 1), scale));
    as.push_back(kernels::unsqueeze(normalised(random_tensor({n}, DType::Float64, seed + 50 + k, 0.2, 1)), 0));
    bs.push_back(kernels::unsqueeze(normalised(random_tensor({m}, DType::Float64, seed + 90 + k, 0.2, 1)), 0));
  }
  p.C = kernels::cat(cs, 0);
  p.a = kernels::cat(as, 0);
  p.b = kernels::cat(bs, 0);
  return p;
}

SinkhornOptions options(double eps, double tol = 1e-10) {
  SinkhornOptions o;
  o.epsilon = eps;
  o.tol = tol;
  o.max_iter = 100000;
  return o;
}

Tensor at(const Tensor& t, int64_t k) { return kernels::select(t, 0, k); }

TEST(SinkhornBatched, EachProblemGetsItsOwnSolve) {
  const Batch p = random_batch(5, 9, 7, 1);
  const SinkhornOptions o = options(0.05);
  const BatchedSinkhornResult r = ot::sinkhorn_batched(p.C, p.a, p.b, o);
  ASSERT_EQ(r.iterations.size(), 5u);
  EXPECT_TRUE(r.all_converged());
  for (int64_t k = 0; k < 5; ++k) {
    const SinkhornResult one = ot::sinkhorn(at(p.C, k), at(p.a, k), at(p.b, k), o);
    EXPECT_TRUE(all_close(at(r.plan, k), one.plan, 0, 0)) << k;
    EXPECT_TRUE(all_close(at(r.f, k), one.f, 0, 0)) << k;
    EXPECT_EQ(r.iterations[k], one.iterations) << k;
    EXPECT_EQ(r.marginal_error[k], one.marginal_error) << k;
  }
  // Costs scaled differently converge at different speeds: each problem stops on its own.
  EXPECT_NE(r.iterations.front(), r.iterations.back());
}

TEST(SinkhornBatched, SharedMarginalsAndMask) {
  const Batch p = random_batch(3, 6, 6, 2);
  SinkhornOptions o = options(0.1);
  o.mask = kernels::unary(kernels::UnaryOp::LogicalNot, kernels::cast(eye(6), DType::Bool));
  const Tensor a = at(p.a, 0), b = at(p.b, 1);
  const BatchedSinkhornResult r = ot::sinkhorn_batched(p.C, a, b, o);
  for (int64_t k = 0; k < 3; ++k) {
    const SinkhornResult one = ot::sinkhorn(at(p.C, k), a, b, o);
    EXPECT_TRUE(all_close(at(r.plan, k), one.plan, 0, 0)) << k;
    for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(at(r.plan, k).to_vector<double>()[i * 7], 0.0);
  }
}

TEST(SinkhornBatched, PerProblemMasks) {
  const Batch p = random_batch(2, 5, 4, 3);
  SinkhornOptions o = options(0.1);
  o.mask = ones({2, 5, 4}, DType::UInt8);
  kernels::fill_(kernels::select(kernels::select(at(o.mask, 1), 0, 2), 0, 3), 0);  // problem 1, entry [2, 3]
  const BatchedSinkhornResult r = ot::sinkhorn_batched(p.C, p.a, p.b, o);
  EXPECT_EQ(at(r.plan, 1).to_vector<double>()[2 * 4 + 3], 0.0);
  EXPECT_GT(at(r.plan, 0).to_vector<double>()[2 * 4 + 3], 0.0);
}

// Valid sizes: the padding (here NaN) is never read, the result is zero outside each block, and each block is
// the solve of the cropped problem with uniform weights over the valid sizes.
TEST(SinkhornBatched, ValidSizesIgnoreThePadding) {
  const int64_t B = 3, n = 8, m = 6;
  Tensor C = kernels::clone(random_batch(B, n, m, 4).C);
  const std::vector<int64_t> rows{8, 5, 3}, cols{6, 2, 4};
  for (int64_t k = 0; k < B; ++k) {
    kernels::fill_(kernels::narrow(at(C, k), 0, rows[k], n - rows[k]), NAN);
    kernels::fill_(kernels::narrow(at(C, k), 1, cols[k], m - cols[k]), NAN);
  }
  const SinkhornOptions o = options(0.05);
  const BatchedSinkhornResult r = ot::sinkhorn_batched(C, Tensor(), Tensor(), o, {rows, cols});
  for (int64_t k = 0; k < B; ++k) {
    const Tensor block = kernels::narrow(kernels::narrow(at(C, k), 0, 0, rows[k]), 1, 0, cols[k]);
    const SinkhornResult one = ot::sinkhorn(kernels::contiguous(block), Tensor(), Tensor(), o);
    const Tensor got = kernels::narrow(kernels::narrow(at(r.plan, k), 0, 0, rows[k]), 1, 0, cols[k]);
    EXPECT_TRUE(all_close(got, one.plan, 1e-15, 0)) << k;
    EXPECT_DOUBLE_EQ(sum(at(r.plan, k)).item<double>(), sum(one.plan).item<double>());
    EXPECT_TRUE(all_close(kernels::narrow(at(r.f, k), 0, 0, rows[k]), one.f, 1e-15, 0)) << k;
  }
}

// One large problem alone is split over the threads by rows; it must equal the one-thread solve (the
// per-thread column partial sums change only the summation order).
TEST(SinkhornBatched, LargeProblemSplitOverThreadsEqualsOneThread) {
  const int64_t n = 2048, m = ot::detail::kSplitProblemEntries / n + 3;
  const Batch p = random_batch(1, n, m, 5);
  const SinkhornOptions o = options(0.05, 1e-9);
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const BatchedSinkhornResult serial = ot::sinkhorn_batched(p.C, p.a, p.b, o);
  omp_set_num_threads(std::max(threads, 2));
  const BatchedSinkhornResult split = ot::sinkhorn_batched(p.C, p.a, p.b, o);
  omp_set_num_threads(threads);
  EXPECT_TRUE(split.all_converged());
  EXPECT_NEAR(static_cast<double>(split.iterations[0]), static_cast<double>(serial.iterations[0]), 1);
  EXPECT_TRUE(all_close(split.plan, serial.plan, 1e-14, 1e-8));
}

TEST(SinkhornBatched, Float32BatchTracksFloat64) {
  const Batch p = random_batch(4, 16, 12, 6);
  const auto f32 = [](const Tensor& t) { return kernels::cast(t, DType::Float32); };
  const BatchedSinkhornResult r64 = ot::sinkhorn_batched(p.C, p.a, p.b, options(0.05, 1e-10));
  const BatchedSinkhornResult r32 = ot::sinkhorn_batched(f32(p.C), f32(p.a), f32(p.b), options(0.05, 1e-5));
  EXPECT_TRUE(r32.all_converged());
  EXPECT_TRUE(all_close(r32.plan, r64.plan, 1e-6, 1e-3));
}

TEST(PartialSinkhornBatched, EachProblemGetsItsOwnPartialSolve) {
  const Batch p = random_batch(3, 10, 8, 7);
  SinkhornOptions o = options(0.02, 1e-10);
  o.mask = kernels::unary(kernels::UnaryOp::LogicalNot, kernels::cast(eye(10, 8), DType::Bool));
  const std::vector<double> mass{0.2, 0.5, 0.8};
  for (ot::DummyCost costs : {ot::DummyCost::L2RM, ot::DummyCost::L2RMShifted, ot::DummyCost::Zero}) {
    ot::DummyOptions d;
    d.costs = costs;
    const BatchedSinkhornResult r = ot::partial_sinkhorn_batched(p.C, p.a, p.b, mass, o, d);
    EXPECT_EQ(r.plan.sizes(), (Shape{3, 10, 8}));
    EXPECT_EQ(r.f.sizes(), (Shape{3, 11}));
    for (int64_t k = 0; k < 3; ++k) {
      const SinkhornResult one = ot::partial_sinkhorn(at(p.C, k), at(p.a, k), at(p.b, k), mass[k], o, d);
      EXPECT_TRUE(all_close(at(r.plan, k), one.plan, 0, 0)) << ot::dummy_cost_name(costs) << " " << k;
      // Zero corner cost: the real block carries s plus UOT-RCL's slack (Eq. (13)), 0.25 for s = 0.2 here.
      if (costs == ot::DummyCost::Zero) EXPECT_GE(sum(one.plan).item<double>(), mass[k] - 1e-9);
      else EXPECT_NEAR(sum(one.plan).item<double>(), mass[k], 1e-8);
    }
  }
}

TEST(SinkhornBatched, ErrorsNameTheProblem) {
  const Batch p = random_batch(4, 5, 5, 8);
  const SinkhornOptions o = options(0.1);
  Tensor C = kernels::clone(p.C);
  kernels::fill_(kernels::select(kernels::select(at(C, 2), 0, 1), 0, 4), NAN);
  EXPECT_THROWS_WITH(ot::sinkhorn_batched(C, p.a, p.b, o), "sinkhorn_batched", "problem 2 of 4", "C[1, 4] = nan");
  EXPECT_THROWS_WITH(ot::sinkhorn_batched(p.C, kernels::narrow(p.a, 0, 0, 3), p.b, o), "a has shape [3, 5]",
                     "expected [5] or [4, 5]");
  EXPECT_THROWS_WITH(ot::sinkhorn_batched(at(p.C, 0), p.a, p.b, o), "3-D [B, n, m]");
  EXPECT_THROWS_WITH(ot::sinkhorn_batched(p.C, p.a, p.b, o, {{5, 5, 6, 5}, {}}), "ProblemSizes::rows[2] = 6",
                     "[1, 5]");
  EXPECT_THROWS_WITH(ot::sinkhorn_batched(p.C, p.a, p.b, o, {{5, 5}, {}}), "2 entries for a batch of 4");
  SinkhornOptions masked = o;
  masked.mask = ones({4, 5, 4}, DType::Bool);
  EXPECT_THROWS_WITH(ot::sinkhorn_batched(p.C, p.a, p.b, masked), "mask has shape [4, 5, 4]");
  std::vector<double> sums = kernels::reduce(kernels::ReduceOp::Sum, p.a, {1}, false).to_vector<double>();
  EXPECT_NEAR(sums[3], 1.0, 1e-12);
  EXPECT_THROWS_WITH(ot::partial_sinkhorn_batched(p.C, p.a, p.b, {0.5, 0.5, 1.5, 0.5}, o), "problem 2", "mass = 1.5");
}

}  // namespace
}  // namespace rematch
