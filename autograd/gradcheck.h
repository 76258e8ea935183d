// gradcheck: compares the analytic Jacobian (one backward pass per output element) with central differences
// in float64, entry by entry, over every input. Small inputs only: it costs 2·numel(inputs) + numel(output)
// evaluations of f. gradgradcheck does the same for f's gradient, which checks second derivatives.
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

// gradcheck of f's gradient (torch.autograd.gradgradcheck): with an upstream gradient v of f's output shape
// (uniform in [-1, 1), drawn from `seed`), G(inputs, v) = grad(f(inputs), inputs, v) is a function of the inputs
// and v; its analytic Jacobian, taken through the graph that create_graph records, is compared with central
// differences of G. An input f does not use has gradient 0. The error message names the input as gradcheck
// does, counting v as the last input and the entries of G input after input, flattened.
GradcheckResult gradgradcheck(const std::function<Tensor(const TensorList&)>& f, const TensorList& inputs,
                              const GradcheckOptions& options = {}, uint32_t seed = 0);

}  // namespace rematch
