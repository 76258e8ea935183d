// CRCL's whole training step (docs/methods/crcl.md §9.1–§9.2) against the OFFICIAL code itself: the fixture
// tests/fixtures/golden_steps/crcl/ is written by tests/reference/crcl_step_official.py, which runs QinYang79/CRCL's
// `model/CRCL.py: CRCL.train_self` on its `model/SGRAF.py` in float64 (only `.cuda()` removed; every change is
// listed in that script). One step of a 6-pair SGR batch (embed 4, sim 4, 36 regions — the official VisualSA
// hard-codes 36), run by CrclMethod::train_step itself: S in train mode, p1, p2, p, the step's labels, the loss
// with its tan terms, backward, clip at 2, AdamW (weight decay 0.01) from moments of 4 earlier steps.
// Two steps from the same state: a main epoch of round 0 (y = 0.8·y_last + 0.2·p, two labels under the 0.1 floor
// set to 0), and the last warm-up epoch of round 0 (y = y_last frozen in the loss; the labels then become p).
// Checked to 1e-10: the loss, every parameter and BatchNorm buffer, every AdamW moment, the labels after the step.
// Pinned randomness (the script says why): dropout p = 0; no augmentation (data.py draws it outside the step);
// the batch is the whole training set, its order fixed by distinct caption lengths.
#include <iostream>
#include <sstream>

#include "golden_step_util.h"
#include "train/methods/crcl/crcl_method.h"

namespace rematch::train {
namespace {

class CrclGoldenStepTest : public test::TempDirTest {
 protected:
  // The method with the fixture's state before the step, positioned in `epoch` (2: main, 1: last warm-up).
  std::unique_ptr<CrclMethod> method_at(int64_t epoch) {
    TrainConfig c = test::golden_precomp_config("crcl", "crcl", path("data"));
    CrclOptions& o = c.options<CrclOptions>();
    o.embed_size = 4;
    o.word_dim = 3;
    o.sim_dim = 4;
    o.sgr_step = 3;
    o.dropout = 0;
    o.tau = 0.05;
    o.alpha = 0.8;
    o.schedules = {1};
    o.no_augment = true;
    o.dtype = DType::Float64;
    c.batch_size = 6;
    c.warmup_epoch = 2;
    c.num_epochs = 1;
    c.learning_rate = 5e-4;
    c.lr_update = 15;
    c.grad_clip = 2.0;
    c.progress = run::ProgressStyle::None;
    resolve_defaults(c);
    auto m = std::make_unique<CrclMethod>(c, o, load_pairs_data(c, true, log_), log_);
    EXPECT_EQ(m->model().config().vocab_size, 13) << "12 words and CRCL's <mask>";
    EXPECT_EQ(m->num_epochs(), 3);
    TrainingState s;
    m->save_state(s);
    test::put_golden_module(s, "model.", m->model(), "crcl", "before.");
    test::put_golden_adam(s, "optim.", m->model(), "AdamW", 5e-4, 4, "crcl", "adam.");
    s.put_tensor("crcl.labels", test::golden("crcl", "labels_before"));
    s.put_int("epoch", epoch);
    m->load_state(s);
    EXPECT_EQ(m->current_epoch().steps, 1);
    return m;
  }

  // Every parameter, buffer and AdamW moment after the step against the fixture's `after` files; the largest
  // difference.
  double expect_after(CrclMethod& m, const std::string& after, const std::string& adam_after) {
    double worst = test::expect_golden_module(m.model(), "crcl", after);
    TrainingState s;
    m.save_state(s);
    int64_t i = 0;
    for (const auto& [name, p] : m.model().named_parameters()) {
      for (const char* moment : {"exp_avg", "exp_avg_sq"})
        worst = std::max(worst, test::expect_golden_tensor(
                                    s.get_tensor("optim.state." + std::to_string(i) + "." + moment),
                                    test::golden("crcl", adam_after + name + "." + moment), name + "." + moment));
      ++i;
    }
    return worst;
  }

  std::ostringstream log_;
};

TEST_F(CrclGoldenStepTest, MainEpochStepMatchesTheOfficialCode) {
  std::unique_ptr<CrclMethod> m = method_at(2);
  ASSERT_EQ(m->current_epoch().phase, "main");
  EXPECT_GT(test::golden_step_size(m->model(), "crcl", "before.", "after."), 1e-5);
  const StepResult r = m->train_step(2, 0);
  EXPECT_NEAR(r.loss, test::golden("crcl", "loss").item<double>(), 1e-10);
  double worst = expect_after(*m, "after.", "adam_after.");
  const Tensor labels = from_vector(m->labels(), {6});
  worst = std::max(worst, test::expect_golden_tensor(labels, test::golden("crcl", "labels_after"), "labels"));
  // The floor zeroed the two small labels; the others moved towards p.
  EXPECT_EQ(m->labels()[2], 0.0);
  EXPECT_EQ(m->labels()[4], 0.0);
  EXPECT_GT(m->labels()[0], 0.5);
  std::cout << "crcl golden step (main epoch): loss " << r.loss << ", largest difference over every parameter, "
            << "buffer, AdamW moment and label " << worst << "\n";
}

TEST_F(CrclGoldenStepTest, LastWarmupStepMatchesTheOfficialCode) {
  std::unique_ptr<CrclMethod> m = method_at(1);
  ASSERT_EQ(m->current_epoch().phase, "warmup");
  const StepResult r = m->train_step(1, 0);
  EXPECT_NEAR(r.loss, test::golden("crcl", "warm_loss").item<double>(), 1e-10);
  double worst = expect_after(*m, "warm_after.", "warm_adam_after.");
  const Tensor labels = from_vector(m->labels(), {6});
  worst = std::max(worst, test::expect_golden_tensor(labels, test::golden("crcl", "warm_labels_after"), "labels = p"));
  std::cout << "crcl golden step (last warm-up epoch): loss " << r.loss << ", largest difference " << worst << "\n";
}

}  // namespace
}  // namespace rematch::train
