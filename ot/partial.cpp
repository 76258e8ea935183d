// Partial OT by the dummy row/column augmentation (Chapel et al. 2020): validate, build the (n+1)×(m+1)
// problem with tensor ops (so it runs on the cost's device), solve it with the batched driver, crop.
#include "ot/partial.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace rematch::ot {
namespace {

using kernels::ReduceOp;

// Per-problem reduction of x [B, ...] over every other dim, as host doubles.
std::vector<double> per_problem(ReduceOp op, const Tensor& x) {
  std::vector<int64_t> dims;
  for (int64_t d = 1; d < x.dim(); ++d) dims.push_back(d);
  return kernels::reduce(op, x, dims, false).to_vector<double>();
}

// The first entry of x (any shape) that fails `ok`, as "[i, j, ...] = v", leaving out the leading batch index
// when `skip_batch`; only called once a check failed.
template <typename Ok> std::string first_bad(const Tensor& x, bool skip_batch, Ok ok) {
  const std::vector<double> v = x.to_vector<double>();
  for (size_t flat = 0; flat < v.size(); ++flat) {
    if (ok(v[flat])) continue;
    std::vector<int64_t> idx(x.dim());
    int64_t rest = static_cast<int64_t>(flat);
    for (int64_t d = x.dim() - 1; d >= 0; --d) {
      idx[d] = rest % x.size(d);
      rest /= x.size(d);
    }
    std::string s = "[";
    for (size_t d = skip_batch ? 1 : 0; d < idx.size(); ++d) s += (s.size() > 1 ? ", " : "") + std::to_string(idx[d]);
    return rematch::detail::concat(s, "] = ", v[flat]);
  }
  return "?";
}

// Every entry finite and >= 0; `what` names the tensor in the error (x [B, ...]; `skip_batch` leaves the B
// index out of the message, for the single-problem entry point).
void check_nonnegative(const char* op, const char* what, const Tensor& x, bool skip_batch, const char* why) {
  const Tensor finite = kernels::cast(kernels::unary(kernels::UnaryOp::IsFinite, x), DType::Float32);
  REMATCH_CHECK(kernels::reduce(ReduceOp::Min, finite, {}, false).item<double>() == 1.0, op, ": ", what,
                first_bad(x, skip_batch, [](double v) { return std::isfinite(v); }), " is not finite", why);
  REMATCH_CHECK(kernels::reduce(ReduceOp::Min, x, {}, false).item<double>() >= 0, op, ": ", what,
                first_bad(x, skip_batch, [](double v) { return v >= 0; }), " is negative", why);
}

// v with as many digits as it takes to read back the same double (15 to 17): a refused mass and the marginal it
// exceeds by one ulp print as two different numbers, not both as "1".
std::string exact(double v) {
  char buf[32];
  for (int digits = 15; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

// Host values of one scalar per problem, shaped [B, 1] ([B, 1, 1] when `cube`) in `like`'s dtype and device.
Tensor column_of(const std::vector<double>& v, bool cube, const Tensor& like) {
  const int64_t B = static_cast<int64_t>(v.size());
  const Shape shape = cube ? Shape{B, 1, 1} : Shape{B, 1};
  return kernels::to_device(kernels::cast(from_vector(v, shape), like.dtype()), like.device());
}

// a [n] / [B, n] / undefined → [B, n].
Tensor weights_for(const Tensor& w, int64_t B, int64_t len, const Tensor& like) {
  if (!w.defined()) return full({B, len}, 1.0 / static_cast<double>(len), like.dtype(), like.device());
  return w.dim() == 1 ? kernels::expand(kernels::unsqueeze(w, 0), {B, len}) : w;
}

BatchedSinkhornResult partial_impl(const char* op, const Tensor& C, const Tensor& a_in, const Tensor& b_in,
                                   std::vector<double> mass, const SinkhornOptions& options, const DummyOptions& d,
                                   bool name_problem) {
  detail::check_options(op, options);
  REMATCH_CHECK(!options.f0.defined() && !options.g0.defined(), op,
                ": warm starts (f0, g0) are not supported by partial OT; the dummy potentials are set by the solver");
  REMATCH_CHECK(C.defined() && is_floating(C.dtype()) && C.dim() == 3, op,
                ": the batched cost must be a 3-D float32/float64 tensor [B, n, m], got ",
                C.defined() ? C.describe() : std::string("undefined"));
  const int64_t B = C.size(0), n = C.size(1), m = C.size(2);
  REMATCH_CHECK(B > 0 && n > 0 && m > 0, op, ": empty problem, cost ", C.describe());
  if (mass.size() == 1) mass.assign(static_cast<size_t>(B), mass[0]);
  REMATCH_CHECK(static_cast<int64_t>(mass.size()) == B, op, ": ", mass.size(), " masses for a batch of ", B,
                " problems (give one for all or one per problem)");
  const Tensor Cd = C.detach();
  const char* why = " (partial OT's dummy construction needs finite costs >= 0 everywhere)";
  check_nonnegative(op, "cost C", Cd, !name_problem, why);
  for (const auto& [w, name, len] : {std::tuple{&a_in, "a", n}, std::tuple{&b_in, "b", m}}) {
    if (!w->defined()) continue;
    REMATCH_CHECK(w->dtype() == C.dtype() && w->device() == C.device(), op, ": ", name, " is ", w->describe(),
                  " but the cost is ", C.describe(), "; pass it in the cost's dtype and device");
    REMATCH_CHECK((w->dim() == 1 && w->size(0) == len) || (w->dim() == 2 && w->size(0) == B && w->size(1) == len),
                  op, ": ", name, " has shape ", w->shape_str(), " but the cost is ", C.shape_str(), ": expected [",
                  len, "] or [", B, ", ", len, "]");
    const Tensor w2 = w->dim() == 1 ? kernels::unsqueeze(w->detach(), 0) : w->detach();
    check_nonnegative(op, name, w2, w->dim() == 1, "");
  }
  const Tensor a = weights_for(a_in.defined() ? a_in.detach() : a_in, B, n, C);
  const Tensor b = weights_for(b_in.defined() ? b_in.detach() : b_in, B, m, C);
  const std::vector<double> sum_a = per_problem(ReduceOp::Sum, a), sum_b = per_problem(ReduceOp::Sum, b);
  const std::vector<double> max_c = per_problem(ReduceOp::Max, Cd);

  // Chapel et al.: dummy row weight Σb − s, dummy column weight Σa − s; L2RM's ξ and A per problem.
  // A mass above the smaller marginal by rounding only is that marginal: uniform weights 1/n sum to 1 − 1 ulp for
  // many n (10 × 0.1), and mass = 1 must not depend on n. The tolerance is the balanced solver's for Σa = Σb
  // (cpu::check_values in ot/batched.cpp).
  const double rel = C.dtype() == DType::Float32 ? 1e-5 : 1e-6;
  std::vector<double> row_w(B), col_w(B), edge(B), corner(B), start(B);
  for (int64_t k = 0; k < B; ++k) {
    const double smaller = std::min(sum_a[k], sum_b[k]);
    const std::string where = name_problem ? rematch::detail::concat("problem ", k, ": ") : std::string();
    REMATCH_CHECK(std::isfinite(mass[k]) && mass[k] > 0, op, ": ", where, "mass = ", mass[k],
                  " must be finite and > 0");
    REMATCH_CHECK(mass[k] <= smaller * (1 + rel), op, ": ", where, "mass = ", exact(mass[k]),
                  " is larger than the smaller marginal min(sum(a) = ", exact(sum_a[k]), ", sum(b) = ", exact(sum_b[k]),
                  ") = ", exact(smaller), " (by more than ", rel, " relative): at most that much can be transported");
    const double s = std::min(mass[k], smaller);
    row_w[k] = sum_b[k] - s;
    col_w[k] = sum_a[k] - s;
    const double xi = std::isnan(d.xi) ? 100.0 * max_c[k] : d.xi;
    const double A = std::isnan(d.corner) ? (d.costs == DummyCost::Zero ? 0.0 : max_c[k]) : d.corner;
    REMATCH_CHECK(std::isfinite(xi) && std::isfinite(A) && A >= 0, op, ": ", where, "dummy costs xi = ", xi,
                  " and corner A = ", A, " must be finite, with A >= 0");
    edge[k] = d.costs == DummyCost::L2RM ? xi : 0.0;
    corner[k] = d.costs == DummyCost::L2RM ? 2 * xi + A : A;
    start[k] = -xi;
  }

  // Ĉ = [[C, e·1], [e·1ᵀ, corner]] per problem (L2RM supp. Eq. (3); UOT-RCL Eq. (14) with e = corner = 0).
  const Tensor e3 = column_of(edge, true, C);
  const Tensor top = kernels::cat({Cd, kernels::expand(e3, {B, n, 1})}, 2);
  const Tensor bottom = kernels::cat({kernels::expand(e3, {B, 1, m}), column_of(corner, true, C)}, 2);
  const Tensor C_aug = kernels::cat({top, bottom}, 1);
  const Tensor a_aug = kernels::cat({a, column_of(row_w, false, C)}, 1);
  const Tensor b_aug = kernels::cat({b, column_of(col_w, false, C)}, 1);

  SinkhornOptions o = options;
  if (o.mask.defined()) {  // M̂ = [[M, 1], [1ᵀ, 1]] (docs/methods/l2rm.md §1.5 step 4)
    const Tensor& mk = o.mask;
    REMATCH_CHECK((mk.dim() == 2 && mk.size(0) == n && mk.size(1) == m) || (mk.dim() == 3 && mk.sizes() == C.sizes()),
                  op, ": the mask has shape ", mk.shape_str(), " but the cost is ", C.shape_str());
    REMATCH_CHECK(mk.dtype() == DType::Bool || mk.dtype() == DType::UInt8, op, ": the mask must be bool or uint8, got ",
                  mk.describe());
    const Tensor u8 = kernels::cast(mk, DType::UInt8);
    o.mask = kernels::pad(kernels::pad(u8, -1, 0, 1, 1), -2, 0, 1, 1);
  }
  if (d.costs == DummyCost::L2RMShifted) {  // f0 = −α, g0 = −β: the iterates of L2RM's costs, shifted
    const Tensor s = column_of(start, false, C);
    o.f0 = kernels::cat({zeros({B, n}, C.dtype(), C.device()), s}, 1);
    o.g0 = kernels::cat({zeros({B, m}, C.dtype(), C.device()), s}, 1);
  }
  BatchedSinkhornResult r = detail::solve_batched(op, C_aug, a_aug, b_aug, o, {}, name_problem);
  r.plan = kernels::contiguous(kernels::narrow(kernels::narrow(r.plan, 1, 0, n), 2, 0, m));
  return r;
}

}  // namespace

const char* dummy_cost_name(DummyCost costs) {
  switch (costs) {
    case DummyCost::L2RM: return "l2rm";
    case DummyCost::L2RMShifted: return "l2rm_shifted";
    case DummyCost::Zero: return "zero";
  }
  return "?";
}

SinkhornResult partial_sinkhorn(const Tensor& C, const Tensor& a, const Tensor& b, double mass,
                                const SinkhornOptions& options, const DummyOptions& dummy) {
  const char* op = "partial_sinkhorn";
  REMATCH_CHECK(C.defined() && C.dim() == 2, op, ": the cost must be 2-D [n, m], got ",
                C.defined() ? C.describe() : std::string("undefined"), " (use partial_sinkhorn_batched for [B, n, m])");
  for (const auto& [w, name, len] : {std::tuple{&a, "a", C.size(0)}, std::tuple{&b, "b", C.size(1)}})
    REMATCH_CHECK(!w->defined() || (w->dim() == 1 && w->size(0) == len), op, ": ", name, " has shape ",
                  w->shape_str(), " but the cost is ", C.shape_str(), ": expected [", len, "]");
  REMATCH_CHECK(!options.mask.defined() || options.mask.sizes() == C.sizes(), op, ": the mask has shape ",
                options.mask.shape_str(), " but the cost is ", C.shape_str(), ": expected the same shape");
  BatchedSinkhornResult r = partial_impl(op, kernels::unsqueeze(C, 0), a, b, {mass}, options, dummy, false);
  SinkhornResult out;
  out.plan = kernels::squeeze(r.plan, 0);
  out.f = kernels::squeeze(r.f, 0);
  out.g = kernels::squeeze(r.g, 0);
  out.iterations = r.iterations[0];
  out.marginal_error = r.marginal_error[0];
  out.converged = r.converged[0] != 0;
  return out;
}

BatchedSinkhornResult partial_sinkhorn_batched(const Tensor& C, const Tensor& a, const Tensor& b,
                                               const std::vector<double>& mass, const SinkhornOptions& options,
                                               const DummyOptions& dummy) {
  return partial_impl("partial_sinkhorn_batched", C, a, b, mass, options, dummy, true);
}

}  // namespace rematch::ot
