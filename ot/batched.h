// Many Sinkhorn problems in one call: C [B, n, m] with per-problem marginals, masks and valid sizes. This is
// the one entry every solve goes through (sinkhorn() and partial_sinkhorn() call it with their own names for
// the error messages), so the choice of device backend is made in one place: solve_batched() in batched.cpp.
// CPU: OpenMP over problems (each problem on one thread); a batch of fewer problems than threads whose
// problems are large (detail::kSplitProblemEntries) splits the rows of each problem over the threads instead.
#pragma once

#include <cstdint>
#include <vector>

#include "ot/sinkhorn.h"

namespace rematch::ot {

// Per-problem valid sizes: problem k uses the top-left rows[k] × cols[k] block of C[k] (and the first rows[k]
// entries of a[k], cols[k] of b[k], mask and warm starts alike); the rest of the batch entry is padding that is
// never read. Empty vectors: every problem uses the full n × m.
struct ProblemSizes {
  std::vector<int64_t> rows, cols;
};

struct BatchedSinkhornResult {
  Tensor plan;                          // [B, n, m], detached; zero outside each valid block
  Tensor f, g;                          // [B, n], [B, m] log-potentials in cost units; 0 outside the valid sizes
  std::vector<int64_t> iterations;      // per problem: each stops on its own
  std::vector<double> marginal_error;   // per problem, as SinkhornResult::marginal_error
  std::vector<uint8_t> converged;       // per problem, 0 or 1

  bool all_converged() const;
};

// C [B, n, m] float32/float64. a: undefined (uniform over each valid size), [n] shared, or [B, n]; b likewise
// with m. options.mask: undefined, [n, m] shared or [B, n, m]; options.f0/g0: [n]/[m] shared or [B, n]/[B, m].
// Each problem is validated as sinkhorn() validates one; an error names the problem index.
BatchedSinkhornResult sinkhorn_batched(const Tensor& C, const Tensor& a, const Tensor& b,
                                       const SinkhornOptions& options, const ProblemSizes& sizes = {});

namespace detail {
// A problem with at least this many entries, in a batch of fewer problems than threads, is split over the
// threads by rows. Smaller ones run one per thread: a cached sweep of 2^22 entries takes a few ms (two
// memory-bound matrix-vector products), and every split sweep pays forks and barriers — which, on an
// oversubscribed machine, wait out descheduled threads (measured: a 2000×2000 solve 2.3x slower split over
// 2 threads on a 2-core VM at load 5 than on one thread).
constexpr int64_t kSplitProblemEntries = int64_t{1} << 22;

// The shared driver behind sinkhorn(), sinkhorn_batched() and partial_sinkhorn*(): `op` starts every error,
// followed by "problem k of B" when `name_problem`.
BatchedSinkhornResult solve_batched(const char* op, const Tensor& C, const Tensor& a, const Tensor& b,
                                    const SinkhornOptions& options, const ProblemSizes& sizes, bool name_problem);
// One problem: C [n, m], a [n], b [m] (undefined: uniform); results with the batch dimension removed.
SinkhornResult solve_single(const char* op, const Tensor& C, const Tensor& a, const Tensor& b,
                            const SinkhornOptions& options);
// Options that make no sense (epsilon <= 0, max_iter < 1, ...) are an Error starting with `op`.
void check_options(const char* op, const SinkhornOptions& options);
}  // namespace detail

}  // namespace rematch::ot
