// `rematch score --checkpoint X.safetensors [--checkpoint Y.safetensors] --data_path DIR --data_name NAME
// [--vocab_path V] [--split test] --out S.npy`: the similarity matrix of an SGR/SAF model (SGRAF: an SGR and a
// SAF checkpoint, averaged) on one split, rows = images, saved as float32 .npy (train/cli/eval_checkpoint.h).
#pragma once

#include <ostream>

namespace CLI {
class App;
}

namespace rematch::cli {

// Registers the `score` subcommand on `app`; its report goes to `out`.
void add_score_command(CLI::App& app, std::ostream& out, std::ostream& err);

}  // namespace rematch::cli
