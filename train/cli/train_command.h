// `rematch train --method <a registered method, make_method.cpp> [flags]`: one training run into a run
// folder (config.json, metrics.jsonl, checkpoints, plots, results.md; train/methods/trainer.h). The flags are
// the fields of TrainConfig (train/methods/train_config.h), named as in the public PyTorch code; `--preset`
// fills the official scripts' hyperparameters. `--resume DIR` continues an interrupted run with the settings
// saved in DIR/config.json.
#pragma once

#include <ostream>

namespace CLI {
class App;
}

namespace rematch::cli {

// Results go to `out`; the progress line and the data/model log to `err`.
void add_train_command(CLI::App& app, std::ostream& out, std::ostream& err);

}  // namespace rematch::cli
