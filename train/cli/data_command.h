// `rematch data check` (docs/data.md §5): every file a training run would read for a data set, checked against
// the official release, as a table (or --json); exit 1 when a run would fail or train on other data.
#pragma once

#include <ostream>

namespace CLI {
class App;
}

namespace rematch::cli {

void add_data_command(CLI::App& app, std::ostream& out);

}  // namespace rematch::cli
