// ot::partial_sinkhorn: the dummy augmentation against POT (sinkhorn_log on the augmented problem, both cost
// conventions; entropic_partial_wasserstein; exact partial_wasserstein), the requested mass, L2RM's loop
// (same stop iteration, same plan as the NumPy transcription of docs/methods/l2rm.md §1.5), the shifted dummy costs
// (same plan as ξ = 100·max C), float32, masks, and the errors for bad input.
#include <cmath>
#include <string>
#include <vector>

#include "ot/ot.h"
#include "test_util.h"

namespace rematch {
namespace {

using ot::DummyCost;
using ot::DummyOptions;
using ot::SinkhornOptions;
using ot::SinkhornResult;
using test::all_close;

Tensor fixture(const std::string& folder, const std::string& name) {
  return load_npy(std::string(REMATCH_FIXTURES) + "/ot/" + folder + "/" + name + ".npy");
}
double scalar(const std::string& folder, const std::string& name) { return fixture(folder, name).item<double>(); }

double total(const Tensor& x) { return sum(x).item<double>(); }
double dot(const Tensor& x, const Tensor& y) { return total(mul(x, y)); }
double l1(const Tensor& x, const Tensor& y) { return total(abs(sub(x, y))); }
double largest(const Tensor& x) { return kernels::reduce(kernels::ReduceOp::Max, x, {}, false).item<double>(); }

DummyOptions dummy(DummyCost c) {
  DummyOptions d;
  d.costs = c;
  return d;
}

SinkhornOptions converged_options(double eps, double tol) {
  SinkhornOptions o;
  o.epsilon = eps;
  o.max_iter = 1000000;
  o.tol = tol;
  return o;
}

// L2RM's call (docs/methods/l2rm.md §1.5): p = q = 1/B, ρ = 0.1, diagonal masked, ‖Δu‖₂ < 1e-3, at most 1000 sweeps.
SinkhornResult l2rm_solve(const Tensor& C, double eps, DummyCost costs, DType dt = DType::Float64) {
  const int64_t B = C.size(0);
  SinkhornOptions o;
  o.epsilon = eps;
  o.max_iter = 1000;
  o.tol = 1e-3;
  o.stop = ot::StopRule::PotentialChange;
  o.mask = kernels::unary(kernels::UnaryOp::LogicalNot, kernels::cast(eye(B), DType::Bool));
  const Tensor p = full({B}, 1.0 / static_cast<double>(B), dt);
  return ot::partial_sinkhorn(kernels::cast(C, dt), p, p, 0.1, o, dummy(costs));
}

const char* kPartialCases[] = {"partial_uniform", "partial_unequal"};

// Chapel et al.'s augmentation solved by our Sinkhorn = POT's sinkhorn_log on the same augmented matrices.
TEST(PartialSinkhorn, MatchesPotOnTheAugmentedProblem) {
  for (const char* c : kPartialCases) {
    for (const auto& [costs, name, tol] : {std::tuple{DummyCost::L2RM, "plan_aug_l2rm", 1e-11},
                                           std::tuple{DummyCost::Zero, "plan_aug_zero", 1e-13}}) {
      const SinkhornResult r = ot::partial_sinkhorn(fixture(c, "C"), fixture(c, "a"), fixture(c, "b"),
                                                    scalar(c, "mass"), converged_options(scalar(c, "reg"), tol),
                                                    dummy(costs));
      EXPECT_TRUE(r.converged) << c << " " << name;
      EXPECT_EQ(r.f.size(0), fixture(c, "C").size(0) + 1);
      EXPECT_TRUE(all_close(r.plan, fixture(c, name), 1e-10, 1e-7)) << c << " " << name;
    }
  }
}

// L2RM's costs: the corner costs A + C_ij more than moving mass through the real block, so the real block
// carries the requested mass (to ~1e-9 at convergence). Zero costs: the corner is free, the real block
// carries s plus the slack of UOT-RCL Eq. (13). Both stay within the marginals.
TEST(PartialSinkhorn, TransportsTheRequestedMass) {
  for (const char* c : kPartialCases) {
    const double s = scalar(c, "mass");
    const SinkhornOptions o = converged_options(scalar(c, "reg"), 1e-11);
    const SinkhornResult l2rm = ot::partial_sinkhorn(fixture(c, "C"), fixture(c, "a"), fixture(c, "b"), s, o);
    EXPECT_NEAR(total(l2rm.plan), s, 1e-9) << c;
    const SinkhornResult zero = ot::partial_sinkhorn(fixture(c, "C"), fixture(c, "a"), fixture(c, "b"), s, o,
                                                     dummy(DummyCost::Zero));
    EXPECT_GE(total(zero.plan), s - 1e-9) << c;
    EXPECT_LE(total(zero.plan), s * 1.001) << c;
    for (const Tensor& plan : {l2rm.plan, zero.plan}) {
      const Tensor rows = kernels::reduce(kernels::ReduceOp::Sum, plan, {1}, false);
      const Tensor cols = kernels::reduce(kernels::ReduceOp::Sum, plan, {0}, false);
      EXPECT_LE(largest(sub(rows, fixture(c, "a"))), 1e-10) << c;
      EXPECT_LE(largest(sub(cols, fixture(c, "b"))), 1e-10) << c;
    }
  }
}

// POT's entropic_partial_wasserstein regularises only the real block (Benamou et al. 2015) while the
// augmentation puts entropy on the dummies too: a different problem at the same ε, so only close — same
// mass, transport cost within 15 % (measured 9 % and 6 %: the extra entropy spreads a little more), both
// above the exact cost, plans within 0.2 in L1 (of 2·mass) — and both tend to the exact plan as ε → 0.
TEST(PartialSinkhorn, CloseToPotEntropicPartialWasserstein) {
  for (const char* c : kPartialCases) {
    const Tensor C = fixture(c, "C"), epw = fixture(c, "plan_epw");
    const SinkhornResult r = ot::partial_sinkhorn(C, fixture(c, "a"), fixture(c, "b"), scalar(c, "mass"),
                                                  converged_options(scalar(c, "reg"), 1e-11));
    const double exact = dot(fixture(c, "plan_exact"), C);
    EXPECT_NEAR(total(r.plan), total(epw), 1e-8) << c;
    EXPECT_NEAR(dot(r.plan, C), dot(epw, C), 0.15 * dot(epw, C)) << c;
    EXPECT_GT(dot(r.plan, C), exact) << c;
    EXPECT_GT(dot(epw, C), exact) << c;
    EXPECT_LT(l1(r.plan, epw), 0.2) << c;
  }
}

// Zero-cost form: the augmented entropic cost exceeds the exact partial cost by at most ε·log((n+1)(m+1)),
// and shrinking ε from 0.04 to 0.005 brings it down towards ot.partial.partial_wasserstein's.
TEST(PartialSinkhorn, ApproachesExactPartialWasserstein) {
  for (const char* c : kPartialCases) {
    const Tensor C = fixture(c, "C");
    const double exact = dot(fixture(c, "plan_exact"), C);
    double previous = 1e9, first = 0;
    for (double eps : {0.04, 0.02, 0.01, 0.005}) {
      const SinkhornResult r = ot::partial_sinkhorn(C, fixture(c, "a"), fixture(c, "b"), scalar(c, "mass"),
                                                    converged_options(eps, 1e-12), dummy(DummyCost::Zero));
      const double cost = dot(r.plan, C);
      EXPECT_LE(cost, previous) << c << " eps " << eps;
      EXPECT_LE(cost - exact, eps * std::log(double((C.size(0) + 1) * (C.size(1) + 1)))) << c;
      if (eps == 0.04) first = cost - exact;
      previous = cost;
    }
    EXPECT_LT(previous - exact, 0.15 * first) << c;  // measured 0.09 and 0.01: about linear in ε
  }
}

// The L2RM rule stops our solver at the same sweep as the NumPy transcription of L2RM's loop, with the
// same potentials (u = f, v = g in cost units) and plan. The transcription adds 1e-10 inside each LSE and we
// do not, which moves the potentials by ~1e-12.
TEST(PartialSinkhorn, L2RMStoppingRuleMatchesTheNumpyTranscription) {
  for (const char* p : {"l2rm_p0", "l2rm_p1"}) {
    const Tensor C = kernels::cast(fixture(p, "cost"), DType::Float64);
    for (const char* eps : {"0.01", "0.07"}) {
      const std::string tag = std::string("eps") + eps + "_";
      const SinkhornResult r = l2rm_solve(C, std::stod(eps), DummyCost::L2RM);
      EXPECT_EQ(r.iterations, fixture(p, tag + "iterations").item<int64_t>()) << p << " eps " << eps;
      EXPECT_TRUE(r.converged);
      EXPECT_TRUE(all_close(r.f, fixture(p, tag + "u"), 1e-9, 0)) << p << " eps " << eps;
      EXPECT_TRUE(all_close(r.g, fixture(p, tag + "v"), 1e-9, 0)) << p << " eps " << eps;
      EXPECT_TRUE(all_close(kernels::cast(r.plan, DType::Float32), fixture(p, tag + "plan"), 1e-12, 1e-6))
          << p << " eps " << eps;
      for (int64_t i = 0; i < C.size(0); ++i) EXPECT_EQ(r.plan.to_vector<double>()[i * C.size(0) + i], 0.0);
    }
  }
}

// docs/ot.md §3.2: subtracting ξ from the dummy row and column (corner 2ξ + A → A) only shifts the
// potentials, so the plan is the same — at every sweep (same stop under L2RM's rule) and at convergence.
TEST(PartialSinkhorn, ShiftedDummyCostsGiveTheSamePlan) {
  for (const char* p : {"l2rm_p0", "l2rm_p1"}) {
    const Tensor C = kernels::cast(fixture(p, "cost"), DType::Float64);
    const double xi = 100 * largest(C);
    for (double eps : {0.01, 0.07}) {
      const SinkhornResult l2rm = l2rm_solve(C, eps, DummyCost::L2RM);
      const SinkhornResult shifted = l2rm_solve(C, eps, DummyCost::L2RMShifted);
      EXPECT_EQ(shifted.iterations, l2rm.iterations) << p;
      EXPECT_TRUE(all_close(shifted.plan, l2rm.plan, 1e-15, 1e-9)) << p << " eps " << eps;
      const std::vector<double> f = l2rm.f.to_vector<double>(), fs = shifted.f.to_vector<double>();
      EXPECT_NEAR(fs.back(), f.back() - xi, 1e-9);
      EXPECT_NEAR(fs.front(), f.front(), 1e-9);
    }
  }
  const std::string c = "partial_uniform";
  for (double eps : {0.02, 0.05}) {
    const SinkhornOptions o = converged_options(eps, 1e-11);
    const SinkhornResult l2rm = ot::partial_sinkhorn(fixture(c, "C"), Tensor(), Tensor(), 0.6, o);
    const SinkhornResult shifted = ot::partial_sinkhorn(fixture(c, "C"), Tensor(), Tensor(), 0.6, o,
                                                        dummy(DummyCost::L2RMShifted));
    EXPECT_TRUE(all_close(shifted.plan, l2rm.plan, 1e-12, 1e-8));
  }
}

// float32 with shifted dummies never subtracts two numbers of size ξ/ε, and tracks float64.
TEST(PartialSinkhorn, Float32WithShiftedDummiesTracksFloat64) {
  const Tensor C = kernels::cast(fixture("l2rm_p0", "cost"), DType::Float64);
  for (double eps : {0.01, 0.07}) {
    const SinkhornResult ref = l2rm_solve(C, eps, DummyCost::L2RM);
    const SinkhornResult f32 = l2rm_solve(C, eps, DummyCost::L2RMShifted, DType::Float32);
    EXPECT_EQ(f32.plan.dtype(), DType::Float32);
    EXPECT_NEAR(static_cast<double>(f32.iterations), static_cast<double>(ref.iterations), 2) << eps;
    EXPECT_LT(l1(kernels::cast(f32.plan, DType::Float64), ref.plan), 1e-3 * total(ref.plan)) << eps;
  }
}

// Documented behaviour: with the mask extended by ones, an all-masked real row sends all its mass to the
// dummy column — it is not an error in partial OT.
TEST(PartialSinkhorn, AllMaskedRowGoesToTheDummy) {
  const std::string c = "partial_uniform";
  SinkhornOptions o = converged_options(0.05, 1e-11);
  o.mask = ones({20, 20}, DType::Bool);
  kernels::fill_(kernels::select(o.mask, 0, 3), 0);
  const SinkhornResult r = ot::partial_sinkhorn(fixture(c, "C"), Tensor(), Tensor(), 0.6, o);
  EXPECT_TRUE(r.converged);
  EXPECT_EQ(total(kernels::select(r.plan, 0, 3)), 0.0);
  EXPECT_NEAR(total(r.plan), 0.6, 1e-8);
}

TEST(PartialSinkhorn, BadInputIsAClearError) {
  const std::string c = "partial_unequal";
  const Tensor C = fixture(c, "C"), a = fixture(c, "a"), b = fixture(c, "b");
  const SinkhornOptions o = converged_options(0.05, 1e-9);
  std::vector<double> cv = C.to_vector<double>();
  cv[13] = -0.5;
  EXPECT_THROWS_WITH(ot::partial_sinkhorn(from_vector(cv, {12, 10}), a, b, 0.5, o), "partial_sinkhorn",
                     "C[1, 3] = -0.5", "negative", ">= 0");
  cv[13] = NAN;
  EXPECT_THROWS_WITH(ot::partial_sinkhorn(from_vector(cv, {12, 10}), a, b, 0.5, o), "C[1, 3] = nan", "not finite");
  // The sums print to the digits that round-trip (ot/partial.cpp): sum(b) is 1.25 to rounding.
  EXPECT_THROWS_WITH(ot::partial_sinkhorn(C, a, b, 1.1, o), "mass = 1.1", "larger than the smaller marginal",
                     "sum(a) = 1", "sum(b) = 1.2");
  EXPECT_THROWS_WITH(ot::partial_sinkhorn(C, a, b, 0, o), "mass = 0", "> 0");
  EXPECT_THROWS_WITH(ot::partial_sinkhorn(C, b, a, 0.5, o), "a has shape [10]", "expected [12]");
  std::vector<double> av = a.to_vector<double>();
  av[2] = -av[2];
  EXPECT_THROWS_WITH(ot::partial_sinkhorn(C, from_vector(av), b, 0.5, o), "partial_sinkhorn", "a[2]", "negative");
  SinkhornOptions warm = o;
  warm.f0 = zeros({13}, DType::Float64);
  EXPECT_THROWS_WITH(ot::partial_sinkhorn(C, a, b, 0.5, warm), "warm starts");
  SinkhornOptions transposed = o;
  transposed.mask = ones({10, 12}, DType::Bool);
  EXPECT_THROWS_WITH(ot::partial_sinkhorn(C, a, b, 0.5, transposed), "mask has shape [10, 12] but the cost is [12, 10]");
  DummyOptions d;
  d.corner = -1;
  EXPECT_THROWS_WITH(ot::partial_sinkhorn(C, a, b, 0.5, o, d), "corner A = -1");
  EXPECT_THROWS_WITH(ot::partial_sinkhorn_batched(kernels::unsqueeze(C, 0), a, b, {0.5, 0.4}, o), "2 masses",
                     "batch of 1");
}

}  // namespace
}  // namespace rematch
