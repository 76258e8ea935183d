#include "train/methods/method.h"

#include <cmath>
#include <limits>
#include <sstream>

#include "nn/clip_grad.h"

namespace rematch::train {

void check_finite_loss(const std::string& method, int64_t epoch, int64_t step, const std::string& term,
                       double value) {
  if (std::isfinite(value)) return;
  std::ostringstream s;
  s << method << ": the loss term '" << term << "' is " << value << " at epoch " << epoch << ", step " << step;
  throw NonFiniteLoss(s.str());
}

void check_step_in_epoch(const std::string& method, int64_t epoch, int64_t step, int64_t current_epoch, size_t steps) {
  REMATCH_CHECK(epoch == current_epoch && step >= 0 && step < static_cast<int64_t>(steps), method, ": step ", step,
                " of epoch ", epoch, " is outside the epoch in progress (", current_epoch, ", ", steps, " steps)");
}

void clip_checked_gradients(const std::string& method, int64_t epoch, int64_t step, const std::vector<Tensor>& params,
                            double max_norm) {
  // max_norm <= 0: only the norm (the largest finite bound never scales a finite norm).
  const double limit = max_norm > 0 ? max_norm : std::numeric_limits<double>::max();
  check_finite_loss(method, epoch, step, "gradient norm", nn::clip_grad_norm_(params, limit));
}

}  // namespace rematch::train
