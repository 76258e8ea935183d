// `rematch eval --sims S.npy [--captions_per_image 5] [--folds 5] [--json]`: retrieval metrics of a saved
// similarity matrix (rows images, columns captions; train/eval/retrieval_metrics.h) as a table or as one JSON
// object.
#pragma once

#include <ostream>

namespace CLI {
class App;
}

namespace rematch::cli {

// Registers the `eval` subcommand on `app`; its report goes to `out`.
void add_eval_command(CLI::App& app, std::ostream& out);

}  // namespace rematch::cli
