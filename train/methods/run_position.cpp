#include "train/methods/run_position.h"

#include <cmath>

namespace rematch::train {

void put_position(TrainingState& s, const RunPosition& p) {
  s.put_int("trainer.epoch", p.epoch);
  s.put_int("trainer.step", p.step);
  s.put_int("trainer.in_epoch", p.in_epoch);
  s.put_int("trainer.epoch_done", p.epoch_done);
  s.put_int("trainer.best_epoch", p.best_epoch);
  s.put_double("trainer.best_score", std::isfinite(p.best_score) ? p.best_score : -1.0);
}

RunPosition get_position(const TrainingState& s) {
  RunPosition p;
  p.epoch = s.get_int("trainer.epoch");
  p.step = s.get_int("trainer.step");
  p.in_epoch = s.get_int("trainer.in_epoch") != 0;
  p.epoch_done = s.get_int("trainer.epoch_done") != 0;
  p.best_epoch = s.get_int("trainer.best_epoch");
  p.best_score = p.best_epoch >= 0 ? s.get_double("trainer.best_score") : -std::numeric_limits<double>::infinity();
  return p;
}

std::string describe_position(const RunPosition& p) {
  if (p.epoch_done) return "the end of epoch " + std::to_string(p.epoch + 1);
  return "epoch " + std::to_string(p.epoch + 1) + ", step " + std::to_string(p.step);
}

}  // namespace rematch::train
