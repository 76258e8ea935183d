// CPU-only build: the CUDA Sinkhorn kernels do not exist. No CUDA tensor can be made in such a build
// (allocation fails first, tensor/cuda/runtime_disabled.cpp), so solve() only satisfies the linker and says why
// if ever reached; the tuning switches are kept so tests and benchmarks compile the same either way.
#include "ot/cuda/sinkhorn_kernels.h"
#include "tensor/error.h"

namespace rematch::ot::cuda {
namespace {
Tuning g_tuning;
}  // namespace

void set_tuning(const Tuning& tuning) { g_tuning = tuning; }
Tuning tuning() { return g_tuning; }

std::vector<cpu::ProblemStats> solve(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                                     const Tensor&, const SinkhornOptions&, const std::vector<int64_t>&,
                                     const std::vector<int64_t>&, BatchedSinkhornResult&) {
  REMATCH_FAIL("sinkhorn (cuda): rematch was built without CUDA (REMATCH_CUDA=OFF)");
}

}  // namespace rematch::ot::cuda
