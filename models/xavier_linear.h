// The Linear layer of the image encoder and the similarity encoder as the backbones initialise it
// (docs/backbones.md §1, every `init_weights`): weight ~ U(-a, a), a = √(6 / (in + out)) (Xavier/Glorot
// uniform), bias = 0.
#pragma once

#include <memory>

#include "nn/nn.h"

namespace rematch::models {

std::shared_ptr<nn::Linear> xavier_linear(int64_t in_features, int64_t out_features, DType dtype = DType::Float32,
                                          Generator* gen = nullptr);

}  // namespace rematch::models
