// A run's training state (train/run/training_state.cpp): TrainingState::load, then every getter a method's
// load_state uses, each on its own so one missing part does not hide the checks of the others. The parts are
// those make_corpus saves: a model, its Adam optimizer and StepLR schedule, a generator, integers, doubles and
// vectors. A model, optimizer and schedule that load then train one step.
#include "fuzz/fuzz_models.h"
#include "fuzz/fuzz_util.h"
#include "train/run/training_state.h"

using namespace rematch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fuzz::write_file("input.safetensors", fuzz::bytes(data, size));
  train::TrainingState s;
  if (!fuzz::reads_or_names(path, [&] { s = train::TrainingState::load(path); })) return 0;
  fuzz::SmallNet net;
  Generator gen(0);
  const bool restored = fuzz::reads_or_names(path, [&] {
    s.get_module("model.", *net.model);
    s.get_optimizer("optim.", *net.adam);
    s.get_schedule("schedule.", *net.schedule);
  });
  if (restored) net.train_step();
  fuzz::reads_or_names(path, [&] { s.get_generator("rng", gen); });
  fuzz::reads_or_names(path, [&] { s.get_int("epoch"); });
  fuzz::reads_or_names(path, [&] { s.get_double("best_score"); });
  fuzz::reads_or_names(path, [&] { s.get_int_vector("order"); });
  fuzz::reads_or_names(path, [&] { s.get_double_vector("weights"); });
  fuzz::reads_or_names(path, [&] { s.get_tensor("queue"); });
  fuzz::reads_or_names(path, [&] { s.get_entry("note"); });
  return 0;
}
