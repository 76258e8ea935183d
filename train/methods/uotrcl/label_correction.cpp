#include "train/methods/uotrcl/label_correction.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "autograd/autograd.h"
#include "nn/functional.h"
#include "train/methods/uotrcl/uotrcl_losses.h"

namespace rematch::train::uotrcl {
namespace {

std::string describe(const Tensor& t) { return t.defined() ? t.describe() : std::string("undefined"); }

void check_rows(const char* op, const Tensor& x, const char* name, int64_t rows) {
  REMATCH_CHECK(x.defined() && x.dim() == 2 && (rows < 0 || x.size(0) == rows), op, ": ", name,
                " must be 2-D with ", rows < 0 ? std::string("N") : std::to_string(rows), " rows, got ",
                describe(x));
}

// Rows per block so that one block of `cols` columns holds at most `entries` values (at least one row).
int64_t block_rows(int64_t entries, int64_t cols) { return std::max<int64_t>(1, entries / std::max<int64_t>(cols, 1)); }

Tensor confident_index(const std::vector<int64_t>& confident, Device device) {
  return kernels::to_device(from_vector(confident), device);
}

}  // namespace

std::vector<int64_t> random_confident_set(int64_t n, int64_t size, Generator& gen) {
  REMATCH_CHECK(size >= 1 && size <= n, "random_confident_set: size ", size, " must lie in [1, n = ", n, "]");
  std::vector<int64_t> rows = randperm(n, Device::cpu(), &gen).to_vector<int64_t>();
  rows.resize(static_cast<size_t>(size));
  std::sort(rows.begin(), rows.end());
  return rows;
}

std::vector<int64_t> confident_set(const Tensor& p_v, const Tensor& p_t, int64_t per_class) {
  check_rows("confident_set", p_v, "p_v", -1);
  check_rows("confident_set", p_t, "p_t", p_v.size(0));
  REMATCH_CHECK(p_t.sizes() == p_v.sizes(), "confident_set: p_v ", p_v.describe(), " and p_t ", p_t.describe(),
                " must have one shape");
  REMATCH_CHECK(per_class > 0, "confident_set: per_class must be positive, got ", per_class);
  NoGradGuard no_grad;
  const int64_t n = p_v.size(0), K = p_v.size(1);
  // Eq. (5): the class of a pair is the argmax of the averaged prediction; rank by the JSD of Eq. (4).
  const std::vector<int64_t> predicted = argmax(add(p_v, p_t), 1).to_vector<int64_t>();
  const std::vector<double> d = jsd(p_v, p_t).to_vector<double>();
  std::vector<std::vector<int64_t>> by_class(static_cast<size_t>(K));
  for (int64_t i = 0; i < n; ++i) by_class[static_cast<size_t>(predicted[static_cast<size_t>(i)])].push_back(i);
  std::vector<int64_t> out;
  for (auto& members : by_class) {
    std::stable_sort(members.begin(), members.end(),
                     [&](int64_t a, int64_t b) { return d[static_cast<size_t>(a)] < d[static_cast<size_t>(b)]; });
    const size_t take = std::min(members.size(), static_cast<size_t>(per_class));
    out.insert(out.end(), members.begin(), members.begin() + static_cast<std::ptrdiff_t>(take));
  }
  return out;
}

Neighbours nearest_neighbours(const Tensor& z, int64_t k, int64_t block_entries) {
  check_rows("nearest_neighbours", z, "z", -1);
  const int64_t n = z.size(0);
  REMATCH_CHECK(k >= 1 && k <= n - 1, "nearest_neighbours: k = ", k, " must lie in 1..N-1 = ", n - 1,
                " (a sample is not its own neighbour)");
  REMATCH_CHECK(block_entries > 0, "nearest_neighbours: block_entries must be positive, got ", block_entries);
  NoGradGuard no_grad;
  const Tensor unit = l2_normalize(z, 1);
  const Tensor unit_t = transpose(unit, 0, 1);
  const Tensor columns = unsqueeze(arange(n, DType::Int64, z.device()), 0);  // [1, N]
  const Tensor self_value = full({1, 1}, -std::numeric_limits<double>::infinity(), z.dtype(), z.device());
  const int64_t rows = block_rows(block_entries, n);
  TensorList indices, similarities;
  for (int64_t r0 = 0; r0 < n; r0 += rows) {
    const int64_t b = std::min(rows, n - r0);
    const Tensor sims = matmul(narrow(unit, 0, r0, b), unit_t);  // [b, N] cosines
    const Tensor own = unsqueeze(arange(static_cast<double>(r0), static_cast<double>(r0 + b), 1, DType::Int64,
                                        z.device()), 1);  // [b, 1]
    const auto [values, index] = topk(where(eq(own, columns), self_value, sims), k, 1, true);
    similarities.push_back(values);
    indices.push_back(index);
  }
  return {cat(indices, 0), cat(similarities, 0)};
}

ConsistencyRatios consistency_ratios(const Tensor& z_v, const Tensor& z_t, const std::vector<int64_t>& confident) {
  check_rows("consistency_ratios", z_v, "z_v", -1);
  check_rows("consistency_ratios", z_t, "z_t", z_v.size(0));
  REMATCH_CHECK(!confident.empty(), "consistency_ratios: the confident set is empty");
  const int64_t n = z_v.size(0);
  for (int64_t g : confident)
    REMATCH_CHECK(g >= 0 && g < n, "consistency_ratios: confident index ", g, " is outside 0..", n - 1);
  NoGradGuard no_grad;
  const Tensor G = confident_index(confident, z_v.device());
  // [N, |G|] cosines in each space (at most 32,000 × 1,000 for XMediaNet).
  const Tensor s_v = nn::cosine_similarity_matrix(z_v, index_select(z_v, 0, G));
  const Tensor s_t = nn::cosine_similarity_matrix(z_t, index_select(z_t, 0, G));
  // Eq. (7): the closest confident pair in one space, its cosine there over the cosine in the other space.
  // Returns the ratio [N] and the mask of clamped denominators [N].
  auto ratio = [](const Tensor& query_space, const Tensor& other_space) {
    const auto [closest, where_closest] = max(query_space, 1, true);
    const Tensor other = squeeze(gather(other_space, 1, where_closest), 1);
    return std::pair{div(squeeze(closest, 1), clamp_min(other, kMinDenominator)), lt(other, kMinDenominator)};
  };
  const auto [c_v, clamped_v] = ratio(s_v, s_t);
  const auto [c_t, clamped_t] = ratio(s_t, s_v);
  ConsistencyRatios out{c_v, c_t, 0};
  for (uint8_t c : to(logical_or(clamped_v, clamped_t), DType::UInt8).to_vector<uint8_t>()) out.clamped += c;
  return out;
}

Tensor neighbour_votes(const Neighbours& neighbours, const Tensor& targets) {
  check_rows("neighbour_votes", targets, "targets", -1);
  const Tensor& index = neighbours.index;
  REMATCH_CHECK(index.defined() && index.dim() == 2 && neighbours.similarity.defined() &&
                    neighbours.similarity.sizes() == index.sizes() && index.size(0) == targets.size(0),
                "neighbour_votes: neighbours ", describe(index), " / ", describe(neighbours.similarity),
                " do not match targets ", targets.describe());
  NoGradGuard no_grad;
  const int64_t n = index.size(0), k = index.size(1), K = targets.size(1);
  const Tensor sims = to(neighbours.similarity, targets.dtype());
  const int64_t rows = block_rows(int64_t{1} << 24, k * K);
  TensorList blocks;
  for (int64_t r0 = 0; r0 < n; r0 += rows) {
    const int64_t b = std::min(rows, n - r0);
    const Tensor picked = reshape(index_select(targets, 0, flatten(narrow(index, 0, r0, b))), {b, k, K});
    blocks.push_back(sum(mul(picked, unsqueeze(narrow(sims, 0, r0, b), 2)), {1}));
  }
  return div(cat(blocks, 0), static_cast<double>(k));  // Eq. (8): (1/𝒦) Σ d(z_i, z_k) y_k
}

Tensor consistent_cost(const Tensor& c_v, const Tensor& votes_v, const Tensor& c_t, const Tensor& votes_t) {
  check_rows("consistent_cost", votes_v, "votes_v", -1);
  check_rows("consistent_cost", votes_t, "votes_t", votes_v.size(0));
  REMATCH_CHECK(votes_t.sizes() == votes_v.sizes() && c_v.defined() && c_t.defined() && c_v.dim() == 1 &&
                    c_t.dim() == 1 && c_v.size(0) == votes_v.size(0) && c_t.size(0) == votes_v.size(0),
                "consistent_cost: ratios ", describe(c_v), ", ", describe(c_t), " and votes ", votes_v.describe(),
                ", ", votes_t.describe(), " must be [N] and [N, K]");
  const Tensor bracket = add(mul(unsqueeze(c_v, 1), votes_v), mul(unsqueeze(c_t, 1), votes_t));
  return neg(log(clamp_min(bracket, kMinBracket)));
}

ConsistentCost cross_modal_consistent_cost(const Tensor& z_v, const Tensor& z_t, const Tensor& p_v,
                                           const Tensor& p_t, const Tensor& targets, int64_t per_class,
                                           int64_t knn) {
  return cross_modal_consistent_cost(z_v, z_t, targets, confident_set(p_v, p_t, per_class), knn);
}

ConsistentCost cross_modal_consistent_cost(const Tensor& z_v, const Tensor& z_t, const Tensor& targets,
                                           std::vector<int64_t> confident, int64_t knn) {
  NoGradGuard no_grad;
  ConsistentCost out;
  out.confident = std::move(confident);
  const ConsistencyRatios r = consistency_ratios(z_v, z_t, out.confident);
  const Tensor votes_v = neighbour_votes(nearest_neighbours(z_v, knn), targets);
  const Tensor votes_t = neighbour_votes(nearest_neighbours(z_t, knn), targets);
  out.cost = consistent_cost(to(r.c_v, targets.dtype()), votes_v, to(r.c_t, targets.dtype()), votes_t);
  out.clamped_ratios = r.clamped;
  return out;
}

LabelCorrection correct_labels(const Tensor& cost, double s, const LabelCorrectionOptions& options) {
  check_rows("correct_labels", cost, "the cost C_S", -1);
  REMATCH_CHECK(std::isfinite(s) && s > 0 && s <= 1, "correct_labels: the transported mass s = ", s,
                " must lie in (0, 1]");
  REMATCH_CHECK(std::isfinite(options.epsilon) && options.epsilon > 0, "correct_labels: epsilon = ",
                options.epsilon, " must be finite and > 0");
  NoGradGuard no_grad;
  const int64_t n = cost.size(0), K = cost.size(1);
  const bool wide = options.float64 && cost.device().is_cpu();
  Tensor c = wide ? kernels::cast(cost.detach(), DType::Float64) : cost.detach();
  LabelCorrection out;
  out.cost_shift = std::min(0.0, kernels::reduce(kernels::ReduceOp::Min, c, {}, false).item<double>());
  if (out.cost_shift < 0) c = kernels::scalar_op(kernels::ScalarOp::Add, c, -out.cost_shift);
  const double mean_cost = kernels::reduce(kernels::ReduceOp::Mean, c, {}, false).item<double>();
  // All costs equal (mean 0 after the shift) leave no scale to be relative to: ε = epsilon then.
  out.epsilon = options.relative && mean_cost > 0 ? options.epsilon * mean_cost : options.epsilon;

  // α = [1/N·1_N; 1 − s], β = [1/K·1_K; 1 − s] (UOT-RCL Eq. (14)); partial_sinkhorn adds the dummies.
  const Tensor a = full({n}, 1.0 / static_cast<double>(n), c.dtype(), c.device());
  const Tensor b = full({K}, 1.0 / static_cast<double>(K), c.dtype(), c.device());
  // s = 1 transports everything; the sums of a and b are 1 only to rounding, and the solver refuses s above them.
  const double total = std::min(kernels::reduce(kernels::ReduceOp::Sum, a, {}, false).item<double>(),
                                kernels::reduce(kernels::ReduceOp::Sum, b, {}, false).item<double>());
  ot::SinkhornOptions o;
  o.epsilon = out.epsilon;
  o.max_iter = options.max_iter;
  o.tol = options.tol;
  ot::DummyOptions dummy;
  dummy.costs = ot::DummyCost::Zero;
  dummy.corner = options.corner;
  const ot::SinkhornResult r = ot::partial_sinkhorn(c, a, b, std::min(s, total), o, dummy);
  out.mass = kernels::reduce(kernels::ReduceOp::Sum, r.plan, {}, false).item<double>();
  out.iterations = r.iterations;
  out.marginal_error = r.marginal_error;
  out.converged = r.converged;
  // Ŷ = N·T[:N, :K]: the joint plan rescaled to the label space (UOT-RCL §IV-B).
  out.corrected = kernels::cast(kernels::scalar_op(kernels::ScalarOp::Mul, r.plan, static_cast<double>(n)),
                                cost.dtype());
  return out;
}

Tensor update_targets(const Tensor& targets, const Tensor& z_v, const Tensor& z_t, const Tensor& prototypes,
                      double gamma) {
  check_rows("update_targets", targets, "targets", -1);
  check_rows("update_targets", z_v, "z_v", targets.size(0));
  check_rows("update_targets", z_t, "z_t", targets.size(0));
  REMATCH_CHECK(prototypes.defined() && prototypes.dim() == 2 && prototypes.size(0) == z_v.size(1) &&
                    prototypes.size(1) == targets.size(1) && z_t.size(1) == z_v.size(1),
                "update_targets: prototypes ", describe(prototypes), " must be [L, K] for embeddings ",
                z_v.describe(), " and targets ", targets.describe());
  REMATCH_CHECK(gamma >= 0 && gamma <= 1, "update_targets: gamma = ", gamma, " must lie in [0, 1]");
  NoGradGuard no_grad;
  const int64_t K = targets.size(1);
  // Eq. (9): the class of the prototype closest to z_v + z_t (μ_kᵀ(z_v + z_t)), as a one-hot row.
  const Tensor predicted = argmax(matmul(add(z_v, z_t), to(prototypes.detach(), z_v.dtype())), 1, true);  // [N, 1]
  const Tensor classes = unsqueeze(arange(K, DType::Int64, targets.device()), 0);                         // [1, K]
  const Tensor one_hot = to(eq(to(predicted, targets.device()), classes), targets.dtype());
  return add(mul(targets, gamma), mul(one_hot, 1.0 - gamma));
}

double transported_mass(int64_t epoch, int64_t warmup, int64_t num_epochs, double s_start, double s_end) {
  REMATCH_CHECK(warmup >= 0 && warmup <= epoch && epoch < num_epochs, "transported_mass: epoch ", epoch,
                " is not a main epoch (warm-up ", warmup, ", ", num_epochs, " epochs in all)");
  const int64_t span = num_epochs - warmup - 1;
  if (span <= 0) return s_start;
  return s_start + (s_end - s_start) * static_cast<double>(epoch - warmup) / static_cast<double>(span);
}

}  // namespace rematch::train::uotrcl
