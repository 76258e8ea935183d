// `rematch ot --cost C.npy [--a a.npy --b b.npy] --eps E [--partial MASS --dummy l2rm|l2rm_shifted|zero]
// [--mask_diagonal] [--device cpu|cuda] --out plan.npy`: solves one entropic OT problem (C [n, m]) or a batch
// (C [B, n, m]) with ot/ and writes the plan as .npy; prints the iterations, the marginal error and the time.
#pragma once

#include <ostream>

namespace CLI {
class App;
}

namespace rematch::cli {

// Registers the `ot` subcommand on `app`; its report goes to `out`.
void add_ot_command(CLI::App& app, std::ostream& out);

}  // namespace rematch::cli
