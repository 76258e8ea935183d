// `rematch eval --sims S.npy [--captions_per_image 5] [--folds 5] [--json]`: retrieval metrics of a saved
// similarity matrix (rows images, columns captions; train/eval/retrieval_metrics.h) as a table or as one JSON
// object. With `--checkpoint X [--checkpoint Y] --data_path ... --data_name ... [--split test]` instead of
// --sims, the matrix is first scored by SGR/SAF models (SGRAF: both, averaged; train/cli/eval_checkpoint.h).
#pragma once

#include <ostream>

namespace CLI {
class App;
}

namespace rematch::cli {

// Registers the `eval` subcommand on `app`; its report goes to `out`.
void add_eval_command(CLI::App& app, std::ostream& out, std::ostream& err);

}  // namespace rematch::cli
