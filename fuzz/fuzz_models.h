// The model, optimizer and schedule the checkpoint and training-state targets load files into, shared with
// make_corpus (which saves their seeds), so that a seed matches what the target expects name for name.
#pragma once

#include <memory>

#include "autograd/autograd.h"
#include "nn/nn.h"

namespace rematch::fuzz {

// Linear(3, 4) then BatchNorm1d(4) (a buffer of each dtype a state dict holds), Adam and StepLR.
struct SmallNet {
  SmallNet() {
    Generator gen(7);
    model = std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::UnaryModule>>{
        std::make_shared<nn::Linear>(3, 4, true, DType::Float32, &gen), std::make_shared<nn::BatchNorm1d>(4)});
    adam = std::make_unique<nn::Adam>(model->parameters(), 1e-3);
    schedule = std::make_unique<nn::StepLR>(*adam, 2);
  }

  // One training step on a fixed batch and a schedule step: whatever a load restored takes part in arithmetic.
  void train_step() {
    const Tensor x = reshape(arange(0.0, 6.0, 1.0, DType::Float32), {2, 3});
    model->train();
    backward(sum(square((*model)(x))));
    adam->step();
    adam->zero_grad();
    schedule->step();
  }

  std::shared_ptr<nn::Sequential> model;
  std::unique_ptr<nn::Adam> adam;
  std::unique_ptr<nn::StepLR> schedule;
};

}  // namespace rematch::fuzz
