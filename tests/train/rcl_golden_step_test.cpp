// RCL's whole training step (docs/methods/rcl.md §2.2) against a PyTorch transcription of the official RCL-SGRAF step
// (tests/reference/rcl_step_reference.py, fixture tests/fixtures/golden_steps/rcl/): S = g(V, T) in train mode,
// L = CCL(S) with φ = log over all B − 1 negatives (§2.1), backward, global clip at 2, Adam — run by
// BatchLossMethod::train_step itself, in float64, on a 6-pair SGR model (embed 4, sim 4, 3 regions).
// Pinned randomness: dropout 0; --neg_ratio −1 (all negatives: the negative mask draws nothing); the training
// set is the one batch, its order fixed by distinct caption lengths (the loader sorts each batch by length).
// Adam starts from the fixture's moments of 4 earlier steps, so the update depends on the gradient's value.
// Every parameter and BatchNorm buffer after the step: within 1e-10 (observed: see the printed maximum).
#include <iostream>
#include <sstream>

#include "golden_step_util.h"
#include "train/methods/pairs/batch_loss_method.h"

namespace rematch::train {
namespace {

class RclGoldenStepTest : public test::TempDirTest {};

TEST_F(RclGoldenStepTest, OneStepMatchesTheReference) {
  TrainConfig c = test::golden_precomp_config("rcl", "rcl", path("data"));
  PairsOptions& o = c.options<PairsOptions>();
  c.batch_size = 6;
  o.sgr_step = 3;
  o.dropout = 0;
  c.learning_rate = 2e-4;
  c.grad_clip = 2.0;
  o.tau = 0.05;
  o.loss = losses::ComplementaryPhi::Log;
  o.neg_ratio = -1;
  c.num_epochs = 1;
  c.progress = run::ProgressStyle::None;
  o.dtype = DType::Float64;
  resolve_defaults(c);
  std::ostringstream log;
  BatchLossMethod method(c, o, BatchLoss::Rcl, load_pairs_data(c, true, log), log);
  ASSERT_EQ(method.model().config().vocab_size, 13) << "12 words and RCL's <mask>";

  TrainingState s;
  method.save_state(s);
  test::put_golden_module(s, "model.", method.model(), "rcl", "before.");
  test::put_golden_adam(s, "optim.", method.model(), "Adam", 2e-4, 4, "rcl", "adam.");
  s.put_int("epoch", 0);
  method.load_state(s);
  ASSERT_EQ(method.current_epoch().steps, 1);

  // The reference's step moves the parameters far beyond the tolerance (Adam's steps are ≈ lr).
  EXPECT_GT(test::golden_step_size(method.model(), "rcl", "before.", "after."), 1e-5);
  const StepResult r = method.train_step(0, 0);
  EXPECT_NEAR(r.loss, test::golden("rcl", "loss").item<double>(), 1e-10);
  const double worst = test::expect_golden_module(method.model(), "rcl", "after.");
  std::cout << "rcl golden step: largest difference over every parameter and buffer " << worst << "\n";
}

}  // namespace
}  // namespace rematch::train
