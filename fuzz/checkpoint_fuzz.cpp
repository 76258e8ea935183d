// Training checkpoints (nn/checkpoint.cpp) loaded into a model, its optimizer and schedule: the info alone
// (read_checkpoint_info), the weights alone (load_model_weights) and the whole state (load_training_checkpoint,
// with the schedule, or without one when the file holds none). A state that loads then trains one step.
#include "fuzz/fuzz_models.h"
#include "fuzz/fuzz_util.h"

using namespace rematch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fuzz::write_file("input.safetensors", fuzz::bytes(data, size));
  fuzz::reads_or_names(path, [&] { nn::read_checkpoint_info(path); });
  {
    fuzz::SmallNet net;
    if (fuzz::reads_or_names(path, [&] { nn::load_model_weights(path, *net.model); })) net.train_step();
  }
  // load_training_checkpoint sets the default generator; each input starts from the same state.
  const GeneratorState rng = default_generator().state();
  for (bool with_schedule : {true, false}) {
    fuzz::SmallNet net;
    if (fuzz::reads_or_names(path, [&] {
          nn::load_training_checkpoint(path, *net.model, *net.adam, with_schedule ? net.schedule.get() : nullptr);
        }))
      net.train_step();
  }
  default_generator().set_state(rng);
  return 0;
}
