// The driver every Sinkhorn solve goes through: shape/dtype/device checks, the device dispatch, and on the
// CPU the OpenMP loop over problems around cpu::solve (ot/cpu/sinkhorn.cpp); CUDA costs go to the fused kernels of
// ot/cuda/ (ot/cuda/sinkhorn_kernels.h).
#include "ot/batched.h"

#include <omp.h>

#include <algorithm>
#include <exception>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "ot/cuda/sinkhorn_kernels.h"
#include "ot/cpu/sinkhorn_kernels.h"

namespace rematch::ot {

// Both backends trust a shifted sum in the same range (the scaling domain fails outside it on both).
static_assert(cuda::kSumLo<float> == cpu::kSumLo<float> && cuda::kSumHi<float> == cpu::kSumHi<float>);
static_assert(cuda::kSumLo<double> == cpu::kSumLo<double> && cuda::kSumHi<double> == cpu::kSumHi<double>);

namespace cpu {

template <typename T> std::string check_values(const ProblemView<T>& p, double epsilon) {
  using rematch::detail::concat;
  double sa = 0, sb = 0;
  for (int64_t i = 0; i < p.n; ++i) {
    if (!(std::isfinite(p.a[i]) && p.a[i] >= 0)) return concat("weight a[", i, "] = ", p.a[i], " must be finite and >= 0");
    sa += p.a[i];
  }
  for (int64_t j = 0; j < p.m; ++j) {
    if (!(std::isfinite(p.b[j]) && p.b[j] >= 0)) return concat("weight b[", j, "] = ", p.b[j], " must be finite and >= 0");
    sb += p.b[j];
  }
  if (!(sa > 0)) return "the weights a sum to 0: there is no mass to transport";
  const double rel = std::is_same_v<T, float> ? 1e-5 : 1e-6;
  if (std::fabs(sa - sb) > rel * std::max(sa, sb))
    return concat("the marginals have different sums: sum(a) = ", sa, " but sum(b) = ", sb,
                  " (balanced OT needs equal masses to ", rel, " relative; partial_sinkhorn transports a smaller mass)");
  // any: the row (column) has an unmasked entry; reach: one in a column (row) of positive weight — without it
  // a row (column) of positive weight can send (receive) nothing.
  std::vector<uint8_t> row_any(p.n, 0), col_any(p.m, 0), row_reach(p.n, 0), col_reach(p.m, 0);
  const double largest = static_cast<double>(std::numeric_limits<T>::max()) * epsilon;  // |C| beyond: C/ε = inf
  for (int64_t i = 0; i < p.n; ++i) {
    const T* c = p.cost + i * p.ld_cost;
    const uint8_t* mk = p.mask ? p.mask + i * p.ld_mask : nullptr;
    for (int64_t j = 0; j < p.m; ++j) {
      if (mk && !mk[j]) continue;
      if (!(std::fabs(static_cast<double>(c[j])) < largest))
        return concat("cost C[", i, ", ", j, "] = ", c[j],
                      std::isfinite(c[j]) ? " overflows when divided by epsilon" : " is not finite",
                      " (forbid an entry with the mask instead)");
      row_any[i] = col_any[j] = 1;
      row_reach[i] |= p.b[j] > 0;
      col_reach[j] |= p.a[i] > 0;
    }
  }
  for (int64_t i = 0; i < p.n; ++i)
    if (p.a[i] > 0 && !row_reach[i])
      return row_any[i] ? concat("row ", i, " has weight a[", i, "] = ", p.a[i],
                                 " but its unmasked entries all lie in zero-weight columns: no plan has these marginals")
                        : concat("row ", i, " is all-masked but has weight a[", i, "] = ", p.a[i],
                                 " > 0: no plan has these marginals (unmask an entry or give the row weight 0)");
  for (int64_t j = 0; j < p.m; ++j)
    if (p.b[j] > 0 && !col_reach[j])
      return col_any[j] ? concat("column ", j, " has weight b[", j, "] = ", p.b[j],
                                 " but its unmasked entries all lie in zero-weight rows: no plan has these marginals")
                        : concat("column ", j, " is all-masked but has weight b[", j, "] = ", p.b[j],
                                 " > 0: no plan has these marginals (unmask an entry or give the column weight 0)");
  for (int64_t i = 0; p.f0 && i < p.n; ++i)
    if (!std::isfinite(p.f0[i] / T(epsilon))) return concat("warm start f0[", i, "] = ", p.f0[i], " is not finite");
  for (int64_t j = 0; p.g0 && j < p.m; ++j)
    if (!std::isfinite(p.g0[j] / T(epsilon))) return concat("warm start g0[", j, "] = ", p.g0[j], " is not finite");
  return {};
}

template std::string check_values<float>(const ProblemView<float>&, double);
template std::string check_values<double>(const ProblemView<double>&, double);

}  // namespace cpu

namespace {

// `t` (undefined allowed) must be [len] or [B, len] of `dtype`; `what` names it in errors.
void check_per_problem(const char* op, const char* what, const Tensor& t, const Tensor& C, int64_t len) {
  if (!t.defined()) return;
  const int64_t B = C.size(0);
  REMATCH_CHECK(t.dtype() == C.dtype(), op, ": ", what, " is ", t.describe(), " but the cost is ",
                dtype_name(C.dtype()), "; pass it in the cost's dtype");
  const bool shared = t.dim() == 1 && t.size(0) == len;
  const bool per_problem = t.dim() == 2 && t.size(0) == B && t.size(1) == len;
  REMATCH_CHECK(shared || per_problem, op, ": ", what, " has shape ", t.shape_str(), " but the cost is ",
                C.shape_str(), ": expected [", len, "] or [", B, ", ", len, "]");
}

// Uniform weights 1/size over each problem's valid prefix, zero beyond it: [B, len].
Tensor uniform_weights(int64_t B, int64_t len, const std::vector<int64_t>& sizes, DType dtype) {
  std::vector<double> w(static_cast<size_t>(B * len), 0.0);
  for (int64_t k = 0; k < B; ++k) {
    const int64_t s = sizes.empty() ? len : sizes[k];
    for (int64_t i = 0; i < s; ++i) w[k * len + i] = 1.0 / static_cast<double>(s);
  }
  return kernels::cast(from_vector(w, {B, len}), dtype);
}

// Contiguous and detached, on the tensor's device (the solvers read raw memory; the plan is a constant target).
Tensor solver_view(const Tensor& t) { return t.defined() ? kernels::contiguous(t.detach()) : t; }

template <typename T>
std::vector<cpu::ProblemStats> solve_cpu_typed(const Tensor& C, const Tensor& a, const Tensor& b, const Tensor& mask,
                                               const Tensor& f0, const Tensor& g0, const SinkhornOptions& o,
                                               const std::vector<int64_t>& rows, const std::vector<int64_t>& cols,
                                               BatchedSinkhornResult& out) {
  const int64_t B = C.size(0), n = C.size(1), m = C.size(2);
  const T* cp = C.data<T>();
  const T* ap = a.data<T>();
  const T* bp = b.data<T>();
  const uint8_t* mp = mask.defined() ? static_cast<const uint8_t*>(mask.raw_data()) : nullptr;
  const T* f0p = f0.defined() ? f0.data<T>() : nullptr;
  const T* g0p = g0.defined() ? g0.data<T>() : nullptr;
  const int64_t a_step = a.dim() == 2 ? n : 0, b_step = b.dim() == 2 ? m : 0;
  const int64_t mask_step = mask.defined() && mask.dim() == 3 ? n * m : 0;
  const int64_t f0_step = f0.defined() && f0.dim() == 2 ? n : 0, g0_step = g0.defined() && g0.dim() == 2 ? m : 0;
  T* plan = out.plan.data<T>();
  T* f = out.f.data<T>();
  T* g = out.g.data<T>();

  std::vector<cpu::ProblemStats> stats(static_cast<size_t>(B));
  auto solve_one = [&](int64_t k, int threads) {
    cpu::ProblemView<T> v;
    v.n = rows.empty() ? n : rows[k];
    v.m = cols.empty() ? m : cols[k];
    v.cost = cp + k * n * m;
    v.ld_cost = m;
    v.mask = mp ? mp + k * mask_step : nullptr;
    v.ld_mask = m;
    v.a = ap + k * a_step;
    v.b = bp + k * b_step;
    v.f0 = f0p ? f0p + k * f0_step : nullptr;
    v.g0 = g0p ? g0p + k * g0_step : nullptr;
    v.plan = plan + k * n * m;
    v.ld_plan = m;
    v.f = f + k * n;
    v.g = g + k * m;
    try {  // nothing may escape an OpenMP loop: an allocation failure becomes this problem's error
      std::string error = cpu::check_values(v, o.epsilon);
      if (error.empty()) stats[k] = cpu::solve<T>(v, o, threads);
      else stats[k].error = std::move(error);
    } catch (const std::exception& e) {
      stats[k].error = e.what();
    }
  };
  const int threads = omp_get_max_threads();
  int64_t largest = 0;
  for (int64_t k = 0; k < B; ++k)
    largest = std::max(largest, (rows.empty() ? n : rows[k]) * (cols.empty() ? m : cols[k]));
  if (B < threads && largest >= detail::kSplitProblemEntries) {
    for (int64_t k = 0; k < B; ++k) solve_one(k, threads);
  } else {
#pragma omp parallel for schedule(dynamic, 1) if (B > 1)
    for (int64_t k = 0; k < B; ++k) solve_one(k, 1);
  }
  return stats;
}

// Per-problem results into `out`; the first problem with an error (in batch order) is thrown, "problem k of B"
// named when `name_problem`.
void collect(const char* op, const std::vector<cpu::ProblemStats>& stats, bool name_problem,
             BatchedSinkhornResult& out) {
  const int64_t B = static_cast<int64_t>(stats.size());
  for (int64_t k = 0; k < B; ++k) {
    const cpu::ProblemStats& s = stats[k];
    if (!s.error.empty()) {
      if (name_problem) REMATCH_FAIL(op, ": problem ", k, " of ", B, ": ", s.error);
      REMATCH_FAIL(op, ": ", s.error);
    }
    out.iterations.push_back(s.iterations);
    out.marginal_error.push_back(s.marginal_error);
    out.converged.push_back(s.converged ? 1 : 0);
  }
}

// After a sweep the plan's column sums are the weights b (ot/sinkhorn.h), to rounding, converged or not. As |C|/ε
// nears 1 / the dtype's precision (2^23 ≈ 1e7 for float32, 2^52 ≈ 4e15 for float64), (f_i + g_j − C_ij)/ε keeps no
// correct digit and the plan moves several times the mass asked for, while the row error after the last sweep
// (what marginal_error reports) can look moderate. Checked on the plan returned, by one reduction on its device,
// the same for both backends; a miss of more than 1e-3 of Σb is an error. Measured on costs uniform in [0, 1): in
// float32 the columns miss 1e-6 to 6e-5 of Σb at |C|/ε = 1e4, 2e-5 to 1.5e-3 at 1e5 (the smaller the problem the
// larger), 0.3 and more at 1e7; in float64 1e-5 to 2e-4 at 1e13, several times Σb at 1e18.
void check_plan_columns(const char* op, const BatchedSinkhornResult& out, const Tensor& b, const ProblemSizes& sizes,
                        double epsilon, bool name_problem) {
  const int64_t B = out.plan.size(0), m = out.plan.size(2);
  const std::vector<double> sums = kernels::reduce(kernels::ReduceOp::Sum, out.plan, {1}, false).to_vector<double>();
  const std::vector<double> w = b.to_vector<double>();
  const int64_t b_step = b.dim() == 2 ? m : 0;
  for (int64_t k = 0; k < B; ++k) {
    const int64_t cols = sizes.cols.empty() ? m : sizes.cols[k];
    double miss = 0, total = 0;
    for (int64_t j = 0; j < cols; ++j) {
      miss += std::fabs(sums[k * m + j] - w[k * b_step + j]);
      total += w[k * b_step + j];
    }
    if (miss <= 1e-3 * total) continue;  // NaN cannot reach here: the solvers stop with an error instead
    const bool f32 = out.plan.dtype() == DType::Float32;
    const std::string where = name_problem ? rematch::detail::concat("problem ", k, " of ", B, ": ") : std::string();
    REMATCH_FAIL(op, ": ", where, "the plan's column sums miss the weights b by ", miss, " in all (L1, of sum(b) = ",
                 total, "; a sweep makes them exact): at epsilon = ", epsilon, ", |C|/epsilon is beyond what ",
                 f32 ? "float32" : "float64", " resolves in (f + g - C)/epsilon (the plan loses its digits as |C|/epsilon"
                 " nears ", f32 ? "1e7, 1/float32's precision" : "4e15, 1/float64's precision",
                 "); raise epsilon or scale the costs down", f32 ? ", or solve in float64" : "");
  }
}

// The CPU backend of solve_batched: inputs already checked for shape, dtype and device.
BatchedSinkhornResult solve_cpu(const char* op, const Tensor& C, const Tensor& a, const Tensor& b,
                                const SinkhornOptions& o, const ProblemSizes& sizes, bool name_problem) {
  const int64_t B = C.size(0), n = C.size(1), m = C.size(2);
  const DType dt = C.dtype();
  BatchedSinkhornResult out;
  // Every entry is written when the problems fill the batch; zeros stand outside smaller valid blocks.
  const bool padded = !sizes.rows.empty() || !sizes.cols.empty();
  out.plan = padded ? zeros({B, n, m}, dt) : empty({B, n, m}, dt);
  out.f = padded ? zeros({B, n}, dt) : empty({B, n}, dt);
  out.g = padded ? zeros({B, m}, dt) : empty({B, m}, dt);
  const Tensor Ch = solver_view(C);
  const Tensor ah = a.defined() ? solver_view(a) : uniform_weights(B, n, sizes.rows, dt);
  const Tensor bh = b.defined() ? solver_view(b) : uniform_weights(B, m, sizes.cols, dt);
  const Tensor mh = solver_view(o.mask), f0h = solver_view(o.f0), g0h = solver_view(o.g0);
  const std::vector<cpu::ProblemStats> stats = dispatch_float(op, dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return solve_cpu_typed<T>(Ch, ah, bh, mh, f0h, g0h, o, sizes.rows, sizes.cols, out);
  });
  collect(op, stats, name_problem, out);
  check_plan_columns(op, out, bh, sizes, o.epsilon, name_problem);
  return out;
}

// The CUDA backend of solve_batched, with solve_cpu's contract, on the kernels of ot/cuda/. Uniform weights are
// made on the host and copied; the kernels write every entry of the outputs.
BatchedSinkhornResult solve_cuda(const char* op, const Tensor& C, const Tensor& a, const Tensor& b,
                                 const SinkhornOptions& o, const ProblemSizes& sizes, bool name_problem) {
  const int64_t B = C.size(0), n = C.size(1), m = C.size(2);
  const DType dt = C.dtype();
  const Device dev = C.device();
  BatchedSinkhornResult out;
  out.plan = empty({B, n, m}, dt, dev);
  out.f = empty({B, n}, dt, dev);
  out.g = empty({B, m}, dt, dev);
  const Tensor ad = a.defined() ? solver_view(a) : kernels::to_device(uniform_weights(B, n, sizes.rows, dt), dev);
  const Tensor bd = b.defined() ? solver_view(b) : kernels::to_device(uniform_weights(B, m, sizes.cols, dt), dev);
  const std::vector<cpu::ProblemStats> stats = cuda::solve(solver_view(C), ad, bd, solver_view(o.mask),
                                                           solver_view(o.f0), solver_view(o.g0), o, sizes.rows,
                                                           sizes.cols, out);
  collect(op, stats, name_problem, out);
  check_plan_columns(op, out, bd, sizes, o.epsilon, name_problem);
  return out;
}

BatchedSinkhornResult solve_batched_impl(const char* op, const Tensor& C, const Tensor& a, const Tensor& b,
                                         const SinkhornOptions& o, const ProblemSizes& sizes, bool name_problem) {
  detail::check_options(op, o);
  REMATCH_CHECK(C.defined(), op, ": the cost C is undefined");
  REMATCH_CHECK(is_floating(C.dtype()), op, ": the cost must be float32 or float64, got ", C.describe());
  REMATCH_CHECK(C.dim() == 3, op, ": the batched cost must be 3-D [B, n, m], got ", C.describe());
  const int64_t B = C.size(0), n = C.size(1), m = C.size(2);
  REMATCH_CHECK(B > 0 && n > 0 && m > 0, op, ": empty problem, cost ", C.describe());
  for (const auto* s : {&sizes.rows, &sizes.cols}) {
    const bool is_rows = s == &sizes.rows;
    const int64_t full = is_rows ? n : m;
    if (s->empty()) continue;
    REMATCH_CHECK(static_cast<int64_t>(s->size()) == B, op, ": ProblemSizes::", is_rows ? "rows" : "cols", " has ",
                  s->size(), " entries for a batch of ", B);
    for (int64_t k = 0; k < B; ++k)
      REMATCH_CHECK((*s)[k] >= 1 && (*s)[k] <= full, op, ": ProblemSizes::", is_rows ? "rows" : "cols", "[", k,
                    "] = ", (*s)[k], " is outside [1, ", full, "]");
  }
  check_per_problem(op, "a", a, C, n);
  check_per_problem(op, "b", b, C, m);
  check_per_problem(op, "f0", o.f0, C, n);
  check_per_problem(op, "g0", o.g0, C, m);
  if (o.mask.defined()) {
    const Tensor& mk = o.mask;
    REMATCH_CHECK(mk.dtype() == DType::Bool || mk.dtype() == DType::UInt8, op, ": the mask must be bool or uint8, got ",
                  mk.describe());
    const bool shared = mk.dim() == 2 && mk.size(0) == n && mk.size(1) == m;
    const bool per_problem = mk.dim() == 3 && mk.sizes() == C.sizes();
    REMATCH_CHECK(shared || per_problem, op, ": the mask has shape ", mk.shape_str(), " but the cost is ",
                  C.shape_str(), ": expected [", n, ", ", m, "] or ", C.shape_str());
  }
  std::vector<const Tensor*> inputs{&C};
  for (const Tensor* t : {&a, &b, &o.mask, &o.f0, &o.g0})
    if (t->defined()) inputs.push_back(t);
  for (const Tensor* t : inputs)
    REMATCH_CHECK(t->device() == C.device(), op, ": every input must be on the cost's device ", C.device().str(),
                  ", but one is ", t->describe());

  // The device dispatch point of ot/: every solve reaches the backend from here.
  if (C.device().is_cuda()) return solve_cuda(op, C, a, b, o, sizes, name_problem);
  return solve_cpu(op, C, a, b, o, sizes, name_problem);
}

}  // namespace

bool BatchedSinkhornResult::all_converged() const {
  return std::all_of(converged.begin(), converged.end(), [](uint8_t c) { return c != 0; });
}

BatchedSinkhornResult sinkhorn_batched(const Tensor& C, const Tensor& a, const Tensor& b,
                                       const SinkhornOptions& options, const ProblemSizes& sizes) {
  return solve_batched_impl("sinkhorn_batched", C, a, b, options, sizes, true);
}

namespace detail {

void check_options(const char* op, const SinkhornOptions& o) {
  REMATCH_CHECK(std::isfinite(o.epsilon) && o.epsilon > 0, op, ": epsilon = ", o.epsilon,
                " must be finite and > 0 (the entropic regularisation; set SinkhornOptions::epsilon)");
  REMATCH_CHECK(o.max_iter >= 1, op, ": max_iter = ", o.max_iter, " must be >= 1");
  REMATCH_CHECK(o.tol >= 0, op, ": tol = ", o.tol, " must be >= 0 (0 runs exactly max_iter sweeps)");
  REMATCH_CHECK(o.check_every >= 1, op, ": check_every = ", o.check_every, " must be >= 1");
}

BatchedSinkhornResult solve_batched(const char* op, const Tensor& C, const Tensor& a, const Tensor& b,
                                    const SinkhornOptions& options, const ProblemSizes& sizes, bool name_problem) {
  return solve_batched_impl(op, C, a, b, options, sizes, name_problem);
}

SinkhornResult solve_single(const char* op, const Tensor& C, const Tensor& a, const Tensor& b,
                            const SinkhornOptions& options) {
  REMATCH_CHECK(C.defined(), op, ": the cost C is undefined");
  REMATCH_CHECK(C.dim() == 2, op, ": the cost must be 2-D [n, m], got ", C.describe(),
                " (use sinkhorn_batched for [B, n, m])");
  const int64_t n = C.size(0), m = C.size(1);
  const std::pair<const Tensor*, const char*> vectors[] = {{&a, "a"}, {&b, "b"}, {&options.f0, "f0"}, {&options.g0, "g0"}};
  for (const auto& [t, name] : vectors) {
    const int64_t len = (t == &a || t == &options.f0) ? n : m;
    REMATCH_CHECK(!t->defined() || (t->dim() == 1 && t->size(0) == len), op, ": ", name, " has shape ", t->shape_str(),
                  " but the cost is ", C.shape_str(), ": expected [", len, "]");
  }
  if (options.mask.defined())
    REMATCH_CHECK(options.mask.sizes() == C.sizes(), op, ": the mask has shape ", options.mask.shape_str(),
                  " but the cost is ", C.shape_str(), ": expected the same shape");
  BatchedSinkhornResult r = solve_batched_impl(op, kernels::unsqueeze(C, 0), a, b, options, {}, false);
  SinkhornResult out;
  out.plan = kernels::squeeze(r.plan, 0);
  out.f = kernels::squeeze(r.f, 0);
  out.g = kernels::squeeze(r.g, 0);
  out.iterations = r.iterations[0];
  out.marginal_error = r.marginal_error[0];
  out.converged = r.converged[0] != 0;
  return out;
}

}  // namespace detail
}  // namespace rematch::ot
