// `rematch retrieve` (docs/viz.md §3, §4): a self-contained HTML page of what a model retrieves — for query
// images their top-k captions, for query captions their top-k images, ground truth marked, ranked as `rematch
// eval` ranks — from SGR/SAF checkpoints (two are averaged, as in eval) or a saved score matrix; and with --run,
// what a training run caught: the pairs its method flagged as mismatched and those it kept.
#pragma once

#include <ostream>

namespace CLI {
class App;
}

namespace rematch::cli {

void add_retrieve_command(CLI::App& app, std::ostream& out, std::ostream& err);

}  // namespace rematch::cli
