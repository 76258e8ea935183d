#include "train/methods/method.h"

#include <cmath>
#include <sstream>

namespace rematch::train {

void check_finite_loss(const std::string& method, int64_t epoch, int64_t step, const std::string& term,
                       double value) {
  if (std::isfinite(value)) return;
  std::ostringstream s;
  s << method << ": the loss term '" << term << "' is " << value << " at epoch " << epoch << ", step " << step;
  throw NonFiniteLoss(s.str());
}

}  // namespace rematch::train
