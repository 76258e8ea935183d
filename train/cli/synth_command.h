// `rematch synth --kind pairs|labeled --out DIR [knobs]`: writes a synthetic benchmark (train/synth/) in the
// file layout of the real ones, and prints where it went and what it holds.
#pragma once

#include <ostream>

namespace CLI {
class App;
}

namespace rematch::cli {

// Registers the `synth` subcommand on `app`; its report goes to `out`.
void add_synth_command(CLI::App& app, std::ostream& out);

}  // namespace rematch::cli
