// gradcheck: compares the analytic Jacobian (one backward pass per output element) with central differences
// in float64, entry by entry, over every input. Small inputs only: it costs 2·numel(inputs) + numel(output)
// evaluations of f.
#pragma once

#include <functional>
#include <string>

#include "autograd/node.h"

namespace rematch {

struct GradcheckOptions {
  double eps = 1e-6;   // finite-difference step
  double atol = 1e-5;  // |analytic - numeric| <= atol + rtol·|numeric|
  double rtol = 1e-3;
};

struct GradcheckResult {
  bool ok = true;
  double max_abs_error = 0;
  std::string message;  // the first mismatch: input, element, output element, both values
};

// `inputs` must be float64; each is cloned into a contiguous leaf that requires grad before f sees it, so f
// may build non-contiguous views of them itself.
GradcheckResult gradcheck(const std::function<Tensor(const TensorList&)>& f, const TensorList& inputs,
                          const GradcheckOptions& options = {});

}  // namespace rematch
