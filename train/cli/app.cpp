#include "train/cli/app.h"

#include <CLI/CLI.hpp>
#include <string>

#include "tensor/error.h"
#include "train/cli/eval_command.h"
#include "train/cli/init_checkpoint_command.h"
#include "train/cli/ot_command.h"
#include "train/cli/score_command.h"
#include "train/cli/synth_command.h"
#include "train/cli/train_command.h"
#include "train/cli/demo_command.h"
#include "train/cli/data_command.h"
#include "train/cli/retrieve_command.h"
#include "train/methods/method_spec.h"
#include "train/methods/train_config.h"

namespace rematch::cli {
namespace {

std::string usage_message(const std::string& what) {
  return "rematch: error: " + what + "\nRun with --help for more information.\n";
}

// The first line of `rematch --help`, its list of methods from the registry (make_method.cpp), so a new method
// is named there the day it registers.
std::string program_description() {
  std::string methods;
  for (const train::MethodSpec* m : train::registered_methods()) methods += (methods.empty() ? "" : ", ") + m->name;
  return "rematch: robust cross-modal retrieval training (--method " + methods +
         ") on SGR/SAF/SGRAF/VSE/MLP, with entropic OT";
}

}  // namespace

Device device_flag(const std::string& spec) {
  // Parsed as `rematch train` parses its --device (train::DeviceOption: one parser, one message).
  try {
    (void)train::DeviceOption(spec);
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  return usable_device(spec, "--device");
}

int run(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App app{program_description(), "rematch"};
  app.require_subcommand(1);
  app.footer("Run `rematch <subcommand> --help` for the flags of one subcommand.");
  // One shape for every command-line mistake, whether CLI11 or a subcommand found it.
  app.failure_message([](const CLI::App*, const CLI::Error& e) { return usage_message(e.what()); });
  add_synth_command(app, out);
  add_eval_command(app, out, err);
  add_ot_command(app, out);
  add_score_command(app, out, err);
  add_init_checkpoint_command(app, out);
  add_train_command(app, out, err);
  add_demo_command(app, out, err);
  add_data_command(app, out);
  add_retrieve_command(app, out, err);
  // CLI11 would only say "A subcommand is required" for `rematch frobnicate`; name the word and the choices.
  if (argc > 1 && argv[1][0] != '-') {
    std::string names;
    bool known = false;
    for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
      known |= sub->check_name(argv[1]);
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      err << usage_message("unknown subcommand '" + std::string(argv[1]) + "' (available: " + names + ")");
      return kExitUsage;
    }
  }
  // The subcommands run inside parse() (as CLI11 callbacks), so their failures surface here too.
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and friends are "errors" with exit code 0; everything else is a bad command line.
    const int code = app.exit(e, out, err);
    return code == 0 ? kExitOk : kExitUsage;
  } catch (const Interrupted& e) {
    err << "rematch: " << e.what() << "\n";
    return kExitInterrupted;
  } catch (const UsageError& e) {
    err << usage_message(e.what());
    return kExitUsage;
  } catch (const rematch::Error& e) {
    err << "rematch: error: " << e.what() << "\n";
    return kExitFailure;
  } catch (const std::exception& e) {
    err << "rematch: unexpected error: " << e.what() << "\n";
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace rematch::cli
