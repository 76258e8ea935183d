// L2RM's method state: a checkpoint whose positions or sizes do not fit this run is an error naming the file and
// the entry, before anything indexes with them (the mismatched-pairs cursor once read past its plan).
#include "train/methods/l2rm/l2rm_method.h"

#include <functional>
#include <sstream>

#include "l2rm_test_util.h"
#include "test_util.h"
#include "train/methods/make_method.h"

namespace rematch::train {
namespace {

class L2rmMethodTest : public test::TempDirTest {
 protected:
  TrainConfig config() { return l2rm_test::tiny_config(path("data")); }
};

TEST_F(L2rmMethodTest, CheckpointEntriesThatDoNotFitTheRunAreErrors) {
  const TrainConfig c = config();
  std::ostringstream log;
  std::unique_ptr<Method> trained = make_method(c, log);
  trained->begin_epoch(0);  // a main epoch: the split and both plans exist
  TrainingState state;
  trained->save_state(state);
  auto load_with = [&](const std::function<void(TrainingState&)>& damage) {
    TrainingState s = state;
    damage(s);
    make_method(c, log)->load_state(s);
  };
  load_with([](TrainingState&) {});
  EXPECT_THROWS_WITH(load_with([](TrainingState& s) { s.put_int("l2rm.noisy_cursor", 1000); }),
                     "'l2rm.noisy_cursor' is 1000, outside the");
  EXPECT_THROWS_WITH(load_with([](TrainingState& s) { s.put_int("l2rm.noisy_cursor", -1); }), "'l2rm.noisy_cursor'");
  EXPECT_THROWS_WITH(load_with([](TrainingState& s) { s.put_int_vector("l2rm.clean", {1, 0}); }),
                     "'l2rm.clean' has 2 entries for 120 training captions");
  EXPECT_THROWS_WITH(load_with([](TrainingState& s) { s.put_tensor("l2rm.queue", zeros({2, 3, 8})); }),
                     "'l2rm.queue' is", "this run's image queue is");
}

}  // namespace
}  // namespace rematch::train
