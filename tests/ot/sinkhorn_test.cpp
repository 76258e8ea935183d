// ot::sinkhorn: POT fixtures (tests/reference/ot_reference.py) for both domains, marginals within tolerance,
// exact zeros under a mask, convergence to ot.emd as ε → 0, float32 against float64, the stopping options,
// warm starts, zero weights, negative costs, and the errors for bad input.
#include <cmath>
#include <string>
#include <vector>

#include "ot/ot.h"
#include "test_util.h"

namespace rematch {
namespace {

using ot::Domain;
using ot::SinkhornOptions;
using ot::SinkhornResult;
using ot::StopRule;
using test::all_close;
using test::random_tensor;

Tensor fixture(const std::string& folder, const std::string& name) {
  return load_npy(std::string(REMATCH_FIXTURES) + "/ot/" + folder + "/" + name + ".npy");
}
double scalar(const std::string& folder, const std::string& name) { return fixture(folder, name).item<double>(); }

SinkhornOptions tight(double eps) {
  SinkhornOptions o;
  o.epsilon = eps;
  o.max_iter = 200000;
  o.tol = 1e-13;
  return o;
}

Tensor row_sums(const Tensor& p) { return kernels::reduce(kernels::ReduceOp::Sum, p, {1}, false); }
Tensor col_sums(const Tensor& p) { return kernels::reduce(kernels::ReduceOp::Sum, p, {0}, false); }
double l1(const Tensor& x, const Tensor& y) {
  double s = 0;
  const std::vector<double> a = x.to_vector<double>(), b = y.to_vector<double>();
  for (size_t i = 0; i < a.size(); ++i) s += std::fabs(a[i] - b[i]);
  return s;
}
double dot(const Tensor& x, const Tensor& y) {
  double s = 0;
  const std::vector<double> a = x.to_vector<double>(), b = y.to_vector<double>();
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}
// Potentials are unique up to (f + c, g − c): compare f − f[0] and g + f[0].
Tensor normalised(const Tensor& p, double shift) { return kernels::scalar_op(kernels::ScalarOp::Add, p, shift); }

// A random n×m problem with costs in [0, 1) and random positive weights of equal sums.
struct Problem {
  Tensor C, a, b;
};
Problem random_problem(int64_t n, int64_t m, uint32_t seed, DType dt = DType::Float64) {
  Problem p;
  p.C = random_tensor({n, m}, dt, seed, 0, 1);
  p.a = random_tensor({n}, DType::Float64, seed + 100, 0.2, 1);
  p.b = random_tensor({m}, DType::Float64, seed + 200, 0.2, 1);
  p.a = kernels::cast(kernels::scalar_op(kernels::ScalarOp::Mul, p.a, 1.0 / sum(p.a).item<double>()), dt);
  p.b = kernels::cast(kernels::scalar_op(kernels::ScalarOp::Mul, p.b, 1.0 / sum(p.b).item<double>()), dt);
  return p;
}

Tensor fixture_mask(const std::string& c) {
  return std::string(c) == "sinkhorn_masked" ? fixture(c, "mask") : Tensor();
}

const char* kCases[] = {"sinkhorn_small", "sinkhorn_rect", "sinkhorn_eps001", "sinkhorn_masked"};

TEST(Sinkhorn, LogDomainMatchesPotSinkhornLog) {
  for (const char* c : kCases) {
    SinkhornOptions o = tight(scalar(c, "reg"));
    o.mask = fixture_mask(c);
    const SinkhornResult r = ot::sinkhorn(fixture(c, "C"), fixture(c, "a"), fixture(c, "b"), o);
    EXPECT_TRUE(r.converged) << c;
    EXPECT_TRUE(all_close(r.plan, fixture(c, "plan_sinkhorn_log"), 1e-12, 1e-8)) << c;
    const double f0 = r.f.to_vector<double>()[0], pot_f0 = fixture(c, "f").to_vector<double>()[0];
    EXPECT_TRUE(all_close(normalised(r.f, -f0), normalised(fixture(c, "f"), -pot_f0), 1e-9, 0)) << c;
    EXPECT_TRUE(all_close(normalised(r.g, f0), normalised(fixture(c, "g"), pot_f0), 1e-9, 0)) << c;
  }
}

TEST(Sinkhorn, ScalingDomainMatchesPotSinkhorn) {
  for (const char* c : kCases) {
    SinkhornOptions o = tight(scalar(c, "reg"));
    o.domain = Domain::Scaling;
    o.mask = fixture_mask(c);
    const SinkhornResult r = ot::sinkhorn(fixture(c, "C"), fixture(c, "a"), fixture(c, "b"), o);
    EXPECT_TRUE(r.converged) << c;
    EXPECT_TRUE(all_close(r.plan, fixture(c, "plan_sinkhorn"), 1e-12, 1e-8)) << c;
  }
}

// After a sweep the columns are exact and the row L1 error is what the rule tests and the result reports.
TEST(Sinkhorn, MarginalsWithinTolerance) {
  for (double tol : {1e-3, 1e-6, 1e-10}) {
    for (Domain d : {Domain::Log, Domain::Scaling}) {
      const Problem p = random_problem(33, 21, 7);
      SinkhornOptions o;
      o.epsilon = 0.05;
      o.tol = tol;
      o.domain = d;
      const SinkhornResult r = ot::sinkhorn(p.C, p.a, p.b, o);
      ASSERT_TRUE(r.converged);
      EXPECT_LT(r.marginal_error, tol);
      EXPECT_NEAR(l1(row_sums(r.plan), p.a), r.marginal_error, 1e-12);
      EXPECT_LT(l1(col_sums(r.plan), p.b), 1e-12);
    }
  }
}

TEST(Sinkhorn, MaskedEntriesGetExactlyZeroMass) {
  const std::string c = "sinkhorn_masked";
  const std::vector<double> mask = fixture(c, "mask").to_vector<double>();
  for (DType dt : {DType::Float64, DType::Float32}) {
    for (Domain d : {Domain::Log, Domain::Scaling}) {
      SinkhornOptions o = tight(scalar(c, "reg"));
      o.tol = dt == DType::Float32 ? 1e-5 : 1e-12;
      o.domain = d;
      o.mask = kernels::cast(fixture(c, "mask"), DType::Bool);
      const SinkhornResult r = ot::sinkhorn(kernels::cast(fixture(c, "C"), dt), kernels::cast(fixture(c, "a"), dt),
                                            kernels::cast(fixture(c, "b"), dt), o);
      EXPECT_TRUE(r.converged);
      const std::vector<double> plan = r.plan.to_vector<double>();
      for (size_t k = 0; k < plan.size(); ++k) {
        if (mask[k] == 0) EXPECT_EQ(plan[k], 0.0) << "entry " << k;
        else EXPECT_GT(plan[k], 0.0) << "entry " << k;
      }
    }
  }
}

// Unique LP optimum: the entropic plan converges to ot.emd's, and its cost exceeds the exact one by at most
// ε·log(n·m) (the entropy of any plan is at most log(n·m), so ε·(H(P*) − H(P_ε)) bounds the excess).
TEST(Sinkhorn, ApproachesEmdAsEpsilonShrinks) {
  for (const char* c : {"emd_5x4", "emd_6x6"}) {
    const Tensor C = fixture(c, "C"), emd = fixture(c, "plan");
    const double exact = scalar(c, "cost");
    double previous = 1e9;
    for (double eps : {1e-2, 5e-3, 1e-3}) {
      const SinkhornResult r = ot::sinkhorn(C, fixture(c, "a"), fixture(c, "b"), tight(eps));
      ASSERT_TRUE(r.converged) << c << " eps " << eps;
      const double distance = l1(r.plan, emd), excess = dot(r.plan, C) - exact;
      EXPECT_LE(distance, previous) << c << " eps " << eps;
      EXPECT_GE(excess, -1e-12);
      EXPECT_LE(excess, eps * std::log(double(C.numel())));
      previous = distance;
    }
    EXPECT_LT(previous, 1e-6) << c;
  }
}

TEST(Sinkhorn, Float32AgreesWithFloat64) {
  const std::string c = "sinkhorn_rect";
  SinkhornOptions o = tight(scalar(c, "reg"));
  o.tol = 1e-5;
  const auto f32 = [](const Tensor& t) { return kernels::cast(t, DType::Float32); };
  for (Domain d : {Domain::Log, Domain::Scaling}) {
    o.domain = d;
    const SinkhornResult r = ot::sinkhorn(f32(fixture(c, "C")), f32(fixture(c, "a")), f32(fixture(c, "b")), o);
    EXPECT_TRUE(r.converged);
    EXPECT_EQ(r.plan.dtype(), DType::Float32);
    EXPECT_TRUE(all_close(r.plan, fixture(c, "plan_sinkhorn_log"), 2e-6, 1e-3));
  }
}

TEST(Sinkhorn, ZeroToleranceRunsExactlyMaxIter) {
  const Problem p = random_problem(9, 11, 1);
  SinkhornOptions o;
  o.epsilon = 0.1;
  o.tol = 0;
  o.max_iter = 37;
  for (StopRule s : {StopRule::MarginalL1, StopRule::PotentialChange}) {
    o.stop = s;
    const SinkhornResult r = ot::sinkhorn(p.C, p.a, p.b, o);
    EXPECT_EQ(r.iterations, 37);
    EXPECT_FALSE(r.converged);
  }
}

TEST(Sinkhorn, CheckEveryTestsOnlyEveryKthSweep) {
  const Problem p = random_problem(9, 11, 2);
  SinkhornOptions o;
  o.epsilon = 0.1;
  o.tol = 1e-8;
  const SinkhornResult every = ot::sinkhorn(p.C, p.a, p.b, o);
  o.check_every = 10;
  const SinkhornResult tenth = ot::sinkhorn(p.C, p.a, p.b, o);
  ASSERT_TRUE(every.converged && tenth.converged);
  EXPECT_EQ(tenth.iterations % 10, 0);
  EXPECT_GE(tenth.iterations, every.iterations);
  EXPECT_LT(tenth.iterations, every.iterations + 10);
}

TEST(Sinkhorn, InterruptCheckStopsTheSolveAndOtherwiseChangesNothing) {
  // SinkhornOptions::interrupted (ot/sinkhorn.h): asked after the first sweep, then every 2^16 entries swept; true
  // stops with "interrupted", false leaves the plan bit for bit as without a check.
  const Problem p = random_problem(300, 250, 3);
  SinkhornOptions o;
  o.epsilon = 0.1;
  o.tol = 0;
  o.max_iter = 40;
  const SinkhornResult plain = ot::sinkhorn(p.C, p.a, p.b, o);
  int asked = 0;
  o.interrupted = [&asked] { return ++asked < 0; };
  const SinkhornResult checked = ot::sinkhorn(p.C, p.a, p.b, o);
  EXPECT_EQ(asked, 40);  // 300 × 250 entries: every sweep
  EXPECT_TRUE(all_close(checked.plan, plain.plan, 0, 0));
  o.interrupted = [&asked] { return ++asked > 42; };
  EXPECT_THROWS_WITH(ot::sinkhorn(p.C, p.a, p.b, o), "sinkhorn", "interrupted");
  EXPECT_EQ(asked, 43);
  const Problem tiny = random_problem(3, 3, 4);  // 9 entries: asked after sweep 1, 7283, 14565, ...
  asked = 0;
  o.max_iter = 10000;
  o.interrupted = [&asked] { return ++asked < 0; };
  ot::sinkhorn(tiny.C, tiny.a, tiny.b, o);
  EXPECT_EQ(asked, 2);
}

TEST(Sinkhorn, WarmStartFromTheSolutionStopsAtOnce) {
  const Problem p = random_problem(12, 8, 3);
  SinkhornOptions o;
  o.epsilon = 0.05;
  o.tol = 1e-9;
  const SinkhornResult cold = ot::sinkhorn(p.C, p.a, p.b, o);
  o.f0 = cold.f;
  o.g0 = cold.g;
  const SinkhornResult warm = ot::sinkhorn(p.C, p.a, p.b, o);
  EXPECT_GT(cold.iterations, 5);
  EXPECT_EQ(warm.iterations, 1);
  EXPECT_TRUE(all_close(warm.plan, cold.plan, 1e-12, 1e-8));
}

TEST(Sinkhorn, ZeroWeightRowsAndColumnsGetZeroMass) {
  Problem p = random_problem(6, 5, 4);
  std::vector<double> a = p.a.to_vector<double>(), b = p.b.to_vector<double>();
  a[0] += a[2];
  a[2] = 0;
  b[4] += b[1];
  b[1] = 0;
  const SinkhornResult r = ot::sinkhorn(p.C, from_vector(a), from_vector(b), tight(0.1));
  EXPECT_TRUE(r.converged);
  const std::vector<double> plan = r.plan.to_vector<double>();
  for (int64_t j = 0; j < 5; ++j) EXPECT_EQ(plan[2 * 5 + j], 0.0);
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(plan[i * 5 + 1], 0.0);
  EXPECT_EQ(r.f.to_vector<double>()[2], -INFINITY);
  EXPECT_EQ(r.g.to_vector<double>()[1], -INFINITY);
  EXPECT_LT(l1(row_sums(r.plan), from_vector(a)), 1e-12);
}

// Documented behaviour: negative costs are fine — a constant shift of C leaves the plan unchanged.
TEST(Sinkhorn, NegativeCostsGiveTheShiftedProblemsPlan) {
  const Problem p = random_problem(10, 7, 5);
  const Tensor shifted = kernels::scalar_op(kernels::ScalarOp::Add, p.C, -3.0);
  const SinkhornResult r = ot::sinkhorn(p.C, p.a, p.b, tight(0.05));
  const SinkhornResult s = ot::sinkhorn(shifted, p.a, p.b, tight(0.05));
  EXPECT_TRUE(all_close(s.plan, r.plan, 1e-13, 1e-9));
}

TEST(Sinkhorn, UndefinedMarginalsAreUniform) {
  const Problem p = random_problem(8, 4, 6);
  const SinkhornResult r = ot::sinkhorn(p.C, Tensor(), Tensor(), tight(0.1));
  EXPECT_TRUE(all_close(row_sums(r.plan), full({8}, 1.0 / 8, DType::Float64), 1e-12, 0));
  EXPECT_TRUE(all_close(col_sums(r.plan), full({4}, 1.0 / 4, DType::Float64), 1e-12, 0));
}

TEST(Sinkhorn, PlanIsDetached) {
  Problem p = random_problem(5, 5, 8);
  p.C.requires_grad_(true);
  const SinkhornResult r = ot::sinkhorn(p.C, p.a, p.b, tight(0.1));
  EXPECT_FALSE(r.plan.requires_grad());
  EXPECT_EQ(r.plan.grad_fn(), nullptr);
}

TEST(Sinkhorn, ScalingDomainUnderflowIsAnError) {
  const Problem p = random_problem(6, 6, 9);
  SinkhornOptions o;
  o.epsilon = 1e-3;  // C/ε up to 1000: exp(−C/ε) is 0 in float64
  o.domain = Domain::Scaling;
  const Tensor far = kernels::scalar_op(kernels::ScalarOp::Add, p.C, 0.75);
  EXPECT_THROWS_WITH(ot::sinkhorn(far, p.a, p.b, o), "sinkhorn", "scaling domain", "underflows", "Domain::Log");
  o.domain = Domain::Log;
  o.max_iter = 200000;
  EXPECT_TRUE(ot::sinkhorn(far, p.a, p.b, o).converged);
}

TEST(Sinkhorn, CostsBeyondTheDtypesResolutionAreAnErrorNotAPlan) {
  // |C|/ε near 1/precision: (f + g − C)/ε keeps no correct digit. The plan used to come back moving several times
  // the mass asked for (5 of 1 in float32 at ε = 1e-10), its marginal_error still 0.7, its columns never checked.
  const Problem p32 = random_problem(5, 4, 2, DType::Float32);
  SinkhornOptions o;
  o.epsilon = 1e-10;
  EXPECT_THROWS_WITH(ot::sinkhorn(p32.C, p32.a, p32.b, o), "sinkhorn: the plan's column sums miss the weights b by",
                     "of sum(b) = 1", "epsilon = 1e-10", "beyond what float32 resolves", "solve in float64");
  o.stop = StopRule::PotentialChange;  // converged by its rule all the same
  EXPECT_THROWS_WITH(ot::partial_sinkhorn(p32.C, p32.a, p32.b, 0.5, o), "partial_sinkhorn", "column sums miss",
                     "float32");
  const Problem p64 = random_problem(5, 4, 2);
  o = SinkhornOptions();
  o.epsilon = 1e-18;
  EXPECT_THROWS_WITH(ot::sinkhorn(p64.C, p64.a, p64.b, o), "column sums miss", "beyond what float64 resolves",
                     "scale the costs down");
  // One problem of a batch: it is named. Problem 0's costs are those of problem 1 divided by 1e9.
  const Tensor far = kernels::unsqueeze(kernels::scalar_op(kernels::ScalarOp::Mul, p32.C, 1e9), 0);
  const Tensor near = kernels::unsqueeze(p32.C, 0);
  o = SinkhornOptions();
  o.epsilon = 0.1;
  EXPECT_THROWS_WITH(ot::sinkhorn_batched(kernels::cat({near, far}, 0), p32.a, p32.b, o),
                     "sinkhorn_batched: problem 1 of 2: the plan's column sums miss");
  // Where float32 still resolves the costs (|C|/ε up to 1e3 here) the solve is what it was, not converged or not.
  for (const double eps : {1e-2, 1e-3}) {
    o.epsilon = eps;
    o.max_iter = 3;
    const SinkhornResult r = ot::sinkhorn(p32.C, p32.a, p32.b, o);
    EXPECT_LT(l1(col_sums(r.plan), p32.b), 1e-4) << eps;  // 1.3e-5 at ε = 1e-3
  }
}

TEST(Sinkhorn, BadInputIsAClearError) {
  const Problem p = random_problem(4, 3, 10);
  const SinkhornOptions o = tight(0.1);
  std::vector<double> c = p.C.to_vector<double>();
  c[5] = NAN;
  EXPECT_THROWS_WITH(ot::sinkhorn(from_vector(c, {4, 3}), p.a, p.b, o), "sinkhorn", "C[1, 2] = nan", "not finite");
  c[5] = INFINITY;
  EXPECT_THROWS_WITH(ot::sinkhorn(from_vector(c, {4, 3}), p.a, p.b, o), "C[1, 2] = inf", "mask");
  const Tensor a2 = kernels::scalar_op(kernels::ScalarOp::Mul, p.a, 2.0);
  EXPECT_THROWS_WITH(ot::sinkhorn(p.C, a2, p.b, o), "sinkhorn", "different sums", "sum(a) = 2", "sum(b) = 1");
  std::vector<double> a = p.a.to_vector<double>();
  a[0] = -a[0];
  EXPECT_THROWS_WITH(ot::sinkhorn(p.C, from_vector(a), p.b, o), "weight a[0]", ">= 0");
  EXPECT_THROWS_WITH(ot::sinkhorn(p.C, p.b, p.b, o), "sinkhorn", "a has shape [3]", "[4, 3]", "expected [4]");
  EXPECT_THROWS_WITH(ot::sinkhorn(kernels::unsqueeze(p.C, 0), p.a, p.b, o), "2-D", "sinkhorn_batched");
  EXPECT_THROWS_WITH(ot::sinkhorn(p.C, kernels::cast(p.a, DType::Float32), p.b, o), "a is float32", "float64");
  EXPECT_THROWS_WITH(ot::sinkhorn(kernels::cast(p.C, DType::Int64), p.a, p.b, o), "float32 or float64", "int64");
  SinkhornOptions masked = o;
  masked.mask = ones({4, 3}, DType::Bool);
  kernels::fill_(kernels::select(masked.mask, 0, 2), 0);
  EXPECT_THROWS_WITH(ot::sinkhorn(p.C, p.a, p.b, masked), "row 2 is all-masked", "a[2]");
  masked.mask = ones({4, 3}, DType::Bool);
  kernels::fill_(kernels::select(masked.mask, 1, 1), 0);
  EXPECT_THROWS_WITH(ot::sinkhorn(p.C, p.a, p.b, masked), "column 1 is all-masked", "b[1]");
  masked.mask = ones({3, 4}, DType::Bool);
  EXPECT_THROWS_WITH(ot::sinkhorn(p.C, p.a, p.b, masked), "mask has shape [3, 4] but the cost is [4, 3]");
  masked.mask = ones({4, 3}, DType::Float32);
  EXPECT_THROWS_WITH(ot::sinkhorn(p.C, p.a, p.b, masked), "mask must be bool or uint8");
  SinkhornOptions bad = o;
  bad.epsilon = 0;
  EXPECT_THROWS_WITH(ot::sinkhorn(p.C, p.a, p.b, bad), "epsilon = 0", "> 0");
  bad = o;
  bad.max_iter = 0;
  EXPECT_THROWS_WITH(ot::sinkhorn(p.C, p.a, p.b, bad), "max_iter = 0");
  bad = o;
  bad.tol = -1;
  EXPECT_THROWS_WITH(ot::sinkhorn(p.C, p.a, p.b, bad), "tol = -1");
  bad = o;
  bad.check_every = 0;
  EXPECT_THROWS_WITH(ot::sinkhorn(p.C, p.a, p.b, bad), "check_every = 0");
  EXPECT_THROWS_WITH(ot::sinkhorn(zeros({0, 3}, DType::Float64), Tensor(), Tensor(), o), "empty problem");
}

}  // namespace
}  // namespace rematch
