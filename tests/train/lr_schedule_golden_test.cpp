// The learning rate of every epoch of a whole run, per method, against a transcription of each official code's
// schedule (tests/reference/schedule_reference.py, fixtures tests/fixtures/golden_steps/schedules/):
//   rcl   lr0·0.1^⌊epoch/lr_update⌋ (RCL-SGRAF adjust_learning_rate)
//   l2rm  constant through the warm-up, then lr0·0.1^⌊main epoch/lr_update⌋ for the retrieval net and the cost
//         net alike (main_L2RM.py, docs/methods/l2rm.md §1.1)
//   rcsl  AdamW re-created at mine_epoch (lr back to lr0) and ×0.1 on the current lr at each milestone, with
//         milestones before, on and after the re-creation (train.py, docs/methods/rcsl.md §3.5)
//   uotrcl no public code; our reading (docs/uotrcl-choices.md §3 item 10): constant (the default, lr_update
//         resolves to 0), or lr0·0.1^⌊epoch/lr_update⌋ with the warm-up epochs counted (they are inside
//         num_epochs, docs/methods/uotrcl.md §4.3)
// The methods run their own begin_epoch/end_epoch on the golden-step data sets (no training step is needed: the
// lr of an epoch is set when it begins). Relative tolerance 1e-10 (the closed forms and the reference's
// repeated ×0.1 differ by roundings only).
#include <nlohmann/json.hpp>
#include <sstream>

#include "golden_step_util.h"
#include "train/methods/l2rm/l2rm_method.h"
#include "train/methods/pairs/batch_loss_method.h"
#include "train/methods/rcsl/rcsl_method.h"
#include "train/methods/uotrcl/uotrcl_method.h"

namespace rematch::train {
namespace {

class LrScheduleGoldenTest : public test::TempDirTest {
 protected:
  TrainConfig pairs_config(const std::string& method, const std::string& fixture) {
    TrainConfig c = test::golden_precomp_config(method, fixture, path("data"));
    c.progress = run::ProgressStyle::None;
    return c;
  }

  static void expect_lrs(const std::vector<double>& got, const std::string& name) {
    const std::vector<double> want = test::golden("schedules", name).to_vector<double>();
    ASSERT_EQ(got.size(), want.size()) << name;
    for (size_t e = 0; e < got.size(); ++e) EXPECT_NEAR(got[e], want[e], 1e-10 * want[e]) << name << " epoch " << e;
  }
};

TEST_F(LrScheduleGoldenTest, Rcl) {
  TrainConfig c = pairs_config("rcl", "rcl");
  c.batch_size = 6;
  c.learning_rate = 2e-4;
  c.lr_update = 3;
  c.num_epochs = 7;
  resolve_defaults(c);
  std::ostringstream log;
  BatchLossMethod method(c, c.options<PairsOptions>(), BatchLoss::Rcl, load_pairs_data(c, true, log), log);
  std::vector<double> lrs;
  for (int64_t e = 0; e < method.num_epochs(); ++e) {
    method.begin_epoch(e);
    lrs.push_back(method.learning_rate());
    method.end_epoch(e);
  }
  expect_lrs(lrs, "rcl_lr");
}

TEST_F(LrScheduleGoldenTest, L2rmRetrievalAndCostNets) {
  TrainConfig c = pairs_config("l2rm", "l2rm");
  c.batch_size = 8;
  c.learning_rate = 2e-4;
  c.options<L2rmOptions>().cost_lr = 2e-6;
  c.lr_update = 2;
  c.warmup_epoch = 2;
  c.num_epochs = 5;
  resolve_defaults(c);
  std::ostringstream log;
  L2rmMethod method(c, c.options<L2rmOptions>(), load_pairs_data(c, false, log), log);
  std::vector<double> lrs, cost_lrs;
  for (int64_t e = 0; e < method.num_epochs(); ++e) {
    method.begin_epoch(e);
    lrs.push_back(method.learning_rate());
    TrainingState s;
    method.save_state(s);
    cost_lrs.push_back(nlohmann::json::parse(s.get_entry("cost_optim.")).at("lrs").at(0).get<double>());
    method.end_epoch(e);
  }
  expect_lrs(lrs, "l2rm_lr");
  expect_lrs(cost_lrs, "l2rm_cost_lr");
}

TEST_F(LrScheduleGoldenTest, RcslOptimizerRecreatedAtMineEpoch) {
  TrainConfig c = pairs_config("rcsl", "rcsl_learning");
  RcslOptions& o = c.options<RcslOptions>();
  o.paired_length = 4;
  c.batch_size = 8;
  c.learning_rate = 5e-4;
  c.num_epochs = 8;
  o.mine_epoch = 4;
  o.lr_milestones = {2, 4, 6};
  o.unpaired_keep = 1;
  resolve_defaults(c);
  std::ostringstream log;
  RcslMethod method(c, o, /*noisy=*/false, load_pairs_data(c, true, log), log);
  std::vector<double> lrs;
  for (int64_t e = 0; e < method.num_epochs(); ++e) {
    method.begin_epoch(e);
    lrs.push_back(method.learning_rate());
    method.end_epoch(e);
  }
  expect_lrs(lrs, "rcsl_lr");
}

// Both readings of --lr_update over 2 warm-up + 5 main epochs; the main epochs run begin_epoch's label
// correction on the golden step's 16 pairs.
TEST_F(LrScheduleGoldenTest, UotrclConstantOrEveryLrUpdateEpochs) {
  test::write_golden_labeled("uotrcl", path("labeled"));
  for (const int64_t lr_update : {int64_t{-1}, int64_t{3}}) {
    TrainConfig c;
    c.method = "uotrcl";
    c.data_path = path("labeled");
    c.batch_size = 8;
    c.learning_rate = 1e-4;
    c.lr_update = lr_update;  // -1: unset, the UOT-RCL default (constant)
    c.warmup_epoch = 2;
    c.num_epochs = 7;
    UotrclOptions& o = c.options<UotrclOptions>();
    o.hidden_dim = 7;
    o.output_dim = 4;
    o.knn = 2;
    o.confident_per_class = 2;
    c.progress = run::ProgressStyle::None;
    resolve_defaults(c);
    std::ostringstream log;
    UotrclMethod method(c, o, data::load_labeled(c.data_path, c.valid_len), log);
    std::vector<double> lrs;
    for (int64_t e = 0; e < method.num_epochs(); ++e) {
      method.begin_epoch(e);
      lrs.push_back(method.learning_rate());
      method.end_epoch(e);
    }
    expect_lrs(lrs, lr_update > 0 ? "uotrcl_step_lr" : "uotrcl_lr");
  }
}

}  // namespace
}  // namespace rematch::train
