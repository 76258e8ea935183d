// The single-problem entry point of ot/sinkhorn.h. Every solve goes through the driver of ot/batched.cpp, which
// checks the inputs and hands each problem to the CPU solver (ot/cpu/sinkhorn.cpp) or the CUDA kernels
// (ot/cuda/sinkhorn*.cu).
#include "ot/sinkhorn.h"

#include "ot/batched.h"

namespace rematch::ot {

SinkhornResult sinkhorn(const Tensor& C, const Tensor& a, const Tensor& b, const SinkhornOptions& options) {
  return detail::solve_single("sinkhorn", C, a, b, options);
}

}  // namespace rematch::ot
