#include "train/cli/data_command.h"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <memory>
#include <string>

#include "tensor/error.h"
#include "tensor/file_io.h"
#include "train/cli/app.h"
#include "train/data/data_check.h"

namespace rematch::cli {
namespace {

struct DataCheckFlags {
  data::DataCheckOptions check;
  bool json = false, quick = false;
};

void run_data_check(const DataCheckFlags& f, std::ostream& out) {
  data::DataCheckOptions o = f.check;
  o.whole_files = !f.quick;
  std::error_code ec;
  // A --data_path that exists but is no file or folder (a FIFO, a socket, a device) is named as what it is.
  if (std::filesystem::exists(o.data_path, ec) && !std::filesystem::is_directory(o.data_path, ec))
    io::require_regular_file(o.data_path, "--data_path");
  const bool labeled = std::filesystem::is_regular_file(o.data_path, ec) ||
                       std::filesystem::is_regular_file(o.data_path + "/train_imgs.npy", ec);
  if (o.data_name.empty() && !labeled)
    throw UsageError("give --data_name (the precomp folder inside --data_path, e.g. f30k_precomp); only the "
                     "labelled layouts (an HDF5 file, a folder of train_imgs.npy ...) can do without");
  const data::DataCheckReport r = data::check_data(o);
  out << (f.json ? data::report_json(r) + "\n" : data::format_report(r));
  // The table already says what is wrong; the exit code (1) is what scripts read.
  if (!r.ok())
    REMATCH_FAIL("data check: ", r.count(data::Severity::error), " problem(s) in ", r.folder, " (listed above)");
}

}  // namespace

void add_data_command(CLI::App& app, std::ostream& out) {
  CLI::App* data = app.add_subcommand("data", "Inspect a data set folder");
  data->require_subcommand(1);
  auto f = std::make_shared<DataCheckFlags>();
  CLI::App* check = data->add_subcommand(
      "check",
      "Check every file a training run reads (shapes, counts, caption encoding, the vocabulary's coverage, noise "
      "files) against the official release; exit 1 when a run would fail or train on other data");
  check->add_option("--data_path", f->check.data_path,
                    "Folder holding <data_name>/ (precomp layout), or the labelled data (HDF5 file or .npy folder)")
      ->required();
  check->add_option("--data_name", f->check.data_name,
                    "f30k_precomp, coco_precomp, cc152k_precomp, another precomp folder; wiki, nus, xmedianet for "
                    "the labelled sets (else guessed from the file name)");
  check->add_option("--vocab_path", f->check.vocab_path,
                    "Folder of <data_name>_vocab.json (default: <data_path>/vocab, then ./vocab)");
  check->add_option("--noise_file", f->check.noise_files,
                    "A noise file to check besides those found by their official names (repeatable)");
  check->add_option("--test_split", f->check.test_split, "A test split to require besides the official ones");
  check->add_option("--valid_len", f->check.valid_len,
                    "Labelled HDF5 without a valid split: validation rows cut from test (default: the release's)");
  check->add_flag("--quick", f->quick,
                  "Only what `rematch train` checks at its start: no tokenising of every caption for the vocabulary's "
                  "coverage");
  check->add_flag("--json", f->json, "Print one JSON object instead of the table");
  check->callback([f, &out] { run_data_check(*f, out); });
}

}  // namespace rematch::cli
