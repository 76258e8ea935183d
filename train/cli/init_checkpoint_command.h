// `rematch init-checkpoint --module_name SGR|SAF --out X.safetensors (--vocab_path V --data_name NAME |
// --vocab_size N) [--img_dim ... --num_regions ...] [--seed S]`: a randomly initialised SGR or SAF model
// (docs/backbones.md §1 initialisation) saved as a rematch training checkpoint at epoch 0 (fresh Adam state,
// model_config in the metadata), e.g. to try `rematch score` and `rematch eval --checkpoint` end to end.
#pragma once

#include <ostream>

namespace CLI {
class App;
}

namespace rematch::cli {

// Registers the `init-checkpoint` subcommand on `app`; its report goes to `out`.
void add_init_checkpoint_command(CLI::App& app, std::ostream& out);

}  // namespace rematch::cli
