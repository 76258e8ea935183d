// Gradient clipping by total norm, with torch.nn.utils.clip_grad_norm_'s semantics (PyTorch 1.13).
#pragma once

#include <limits>
#include <vector>

#include "autograd/autograd.h"

namespace rematch::nn {

// The norm of order `norm_type` (any p > 0, or infinity) of all gradients together, as if concatenated
// into one vector; parameters without a gradient are ignored. When max_norm / (norm + 1e-6) < 1 every
// gradient is multiplied in place by that factor. Returns the total norm from before clipping (0 when no
// parameter has a gradient). A non-finite norm is an error when `error_if_nonfinite`; otherwise the
// gradients are scaled by the non-finite factor, as PyTorch does.
double clip_grad_norm_(const std::vector<Tensor>& params, double max_norm, double norm_type = 2,
                       bool error_if_nonfinite = false);

constexpr double kInfNorm = std::numeric_limits<double>::infinity();

}  // namespace rematch::nn
