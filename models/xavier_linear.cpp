#include "models/xavier_linear.h"

namespace rematch::models {

std::shared_ptr<nn::Linear> xavier_linear(int64_t in_features, int64_t out_features, DType dtype, Generator* gen) {
  auto layer = std::make_shared<nn::Linear>(in_features, out_features, true, dtype, gen);
  nn::xavier_uniform_(layer->weight(), 1, gen);
  nn::zeros_(layer->bias());
  return layer;
}

}  // namespace rematch::models
