// UOT-RCL's per-epoch label correction (docs/methods/uotrcl.md §4.3.2; UOT-RCL §IV-A, §IV-B), computed without
// gradients on the whole training set:
//   a. JSD d_i between the two modalities' class predictions (Eq. 4, uotrcl_losses.h: jsd);
//   b. the confident set G: per predicted class ŷ_i = argmax_k (p_iᵛ + p_iᵗ)/2, the `per_class` samples of
//      smallest d_i (Eq. 5, "class-balanced threshold γ_k from ranked JSD");
//   c. the cross-modal consistent cost C_S [N, K] (Eqs. 6–8) from the 𝒦 nearest training samples in each
//      space and the consistency ratios against G;
//   d. progressive label correction as partial OT (Eqs. 10–14): the (N+1)×(K+1) problem with zero-cost dummy
//      row and column, α = [1/N·1_N; 1 − s], β = [1/K·1_K; 1 − s], corrected labels Ŷ = N·T[:N, :K];
//   e. the moving-average target update (Eq. 9);
//   f. the linear schedule of the transported mass s.
// Every choice the paper leaves open is listed, with the numbers behind it, in docs/uotrcl-choices.md.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "ot/ot.h"
#include "tensor/tensor.h"

namespace rematch::train::uotrcl {

// Eq. (5): indices of the confident pairs, grouped by predicted class 0..K-1 and within a class by increasing
// JSD (ties: lower index first). p_v, p_t [N, K] class probabilities; a class predicted for fewer than
// `per_class` samples contributes all of them (none when no sample predicts it).
std::vector<int64_t> confident_set(const Tensor& p_v, const Tensor& p_t, int64_t per_class);

// The ablation of Eq. (5) (--confident_set random): `size` distinct training rows of [0, n) drawn uniformly by
// `gen`, in increasing order — the same number of samples as the JSD selection, chosen without it.
std::vector<int64_t> random_confident_set(int64_t n, int64_t size, Generator& gen);

// The k nearest rows of z [N, L] to each row by cosine similarity, excluding the row itself (a sample is not
// its own neighbour, docs/methods/uotrcl.md §4.3.2 c). Searched in blocks of rows so that a block's similarities
// hold at most `block_entries` values (NUS-WIDE: 42,941² would not fit). Requires 1 ≤ k ≤ N − 1.
struct Neighbours {
  Tensor index;       // int64 [N, k], most similar first
  Tensor similarity;  // [N, k] cos(z_i, z_index), z's dtype
};
Neighbours nearest_neighbours(const Tensor& z, int64_t k, int64_t block_entries = int64_t{1} << 24);

// Eq. (7) for both modalities: ◇_i = argmax_{g∈G} cos(z_iᵛ, z_gᵛ), c_iᵛ = cos(z_iᵛ, z_◇ᵛ) / cos(z_iᵗ, z_◇ᵗ),
// and c_iᵗ with the roles swapped. The denominators are clamped to ≥ kMinDenominator
// (docs/methods/uotrcl.md §4.3.2 c ⚠: a cosine can be 0 or negative, and the ratio then reaches ~1e6).
// z_v, z_t [N, L].
constexpr double kMinDenominator = 1e-6;
struct ConsistencyRatios {
  Tensor c_v, c_t;      // [N]
  int64_t clamped = 0;  // rows where either denominator was below kMinDenominator
};
ConsistencyRatios consistency_ratios(const Tensor& z_v, const Tensor& z_t, const std::vector<int64_t>& confident);

// (1/𝒦) Σ_{k∈N_i} cos(z_i, z_k) y_k for every row: the neighbour vote of Eq. (8) in one space, [N, K].
Tensor neighbour_votes(const Neighbours& neighbours, const Tensor& targets);

// Eq. (8): C_S = −log(max(c_v ⊙ votes_v + c_t ⊙ votes_t, kMinBracket)) [N, K] — the bracket can be ≤ 0
// (negative cosines or ratios), so it is clamped before the log (docs/methods/uotrcl.md §4.3.2 c ⚠).
constexpr double kMinBracket = 1e-8;
Tensor consistent_cost(const Tensor& c_v, const Tensor& votes_v, const Tensor& c_t, const Tensor& votes_t);

// Steps b–c together: the confident set of the predictions and C_S from the embeddings and the current soft
// targets [N, K], with 𝒦 = knn neighbours per space.
struct ConsistentCost {
  std::vector<int64_t> confident;
  Tensor cost;                 // C_S [N, K]
  int64_t clamped_ratios = 0;  // ConsistencyRatios::clamped
};
ConsistentCost cross_modal_consistent_cost(const Tensor& z_v, const Tensor& z_t, const Tensor& p_v,
                                           const Tensor& p_t, const Tensor& targets, int64_t per_class,
                                           int64_t knn);
// Step c alone, with a given confident set G (non-empty).
ConsistentCost cross_modal_consistent_cost(const Tensor& z_v, const Tensor& z_t, const Tensor& targets,
                                           std::vector<int64_t> confident, int64_t knn);

// The label-correction OT (UOT-RCL Eq. (14)). ε = epsilon, or epsilon·mean(C_S) when `relative`
// (docs/uotrcl-choices.md). partial_sinkhorn needs costs ≥ 0, and C_S = −log(bracket) is negative wherever the
// bracket exceeds 1 (ratios above 1), so when min(C_S) < 0 the solver sees C_S − min(C_S). Adding a constant c to
// the real block is, up to row and column shifts of the potentials, the same as the cost c on the corner, so the
// shift equals pricing the corner at −min(C_S) > 0; with C_S ≥ 0 nothing is shifted and Eq. (14) is solved as
// written. The zero-cost corner carries slightly more than the requested mass — the slack ε of Eq. (13); a
// positive `corner` (ot::DummyOptions::corner) prices it and removes it as the entropy ε → 0.
struct LabelCorrectionOptions {
  double epsilon = 0.5;
  bool relative = false;
  int64_t max_iter = 1000;
  double tol = 1e-6;           // L1 row-marginal error of the augmented problem (ot::StopRule::MarginalL1)
  double corner = 0;           // ot::DummyOptions::corner
  bool float64 = true;         // solve in float64 (on the CPU reference path; CUDA keeps float32)
};

struct LabelCorrection {
  Tensor corrected;            // Ŷ = N·T[:N, :K] [N, K], the costs' dtype and device; rows sum to ≤ 1
  double epsilon = 0;          // the ε used
  double mass = 0;             // Σ T[:N, :K], s plus the corner slack
  double cost_shift = 0;       // min(0, min C_S), subtracted before the solve
  int64_t iterations = 0;
  double marginal_error = 0;
  bool converged = false;
};
LabelCorrection correct_labels(const Tensor& cost, double s, const LabelCorrectionOptions& options);

// Eq. (9): y_i ← γ y_i + (1 − γ) onehot(argmax_k μ_kᵀ(z_iᵛ + z_iᵗ)). targets [N, K], z_v, z_t [N, L],
// prototypes [L, K] (the model's C); returns the new targets.
Tensor update_targets(const Tensor& targets, const Tensor& z_v, const Tensor& z_t, const Tensor& prototypes,
                      double gamma);

// The transported mass of epoch `epoch` (counted from 0, warm-up included, docs/methods/uotrcl.md §4.3.2 f):
// s = s_start + (s_end − s_start)·(epoch − warmup)/(num_epochs − warmup − 1), so the first main epoch gets
// s_start and the last s_end; a single main epoch gets s_start. Requires warmup ≤ epoch < num_epochs.
double transported_mass(int64_t epoch, int64_t warmup, int64_t num_epochs, double s_start, double s_end);

}  // namespace rematch::train::uotrcl
