#include "train/cli/init_checkpoint_command.h"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <memory>
#include <string>

#include "models/models.h"
#include "train/cli/app.h"
#include "train/cli/number_checks.h"
#include "train/data/vocab.h"

namespace rematch::cli {
namespace {

struct InitOptions {
  std::string module_name, out, vocab_path, data_name;
  int64_t vocab_size = 0;
  uint64_t seed = 0;
  double learning_rate = 2e-4;
  models::SgrafConfig config;
};

void run_init(InitOptions& o, std::ostream& out) {
  // A new file only: an --out over an existing file replaced a run's checkpoint_best, even while that run held
  // its lock and went on training (its final test then found no training state).
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::symlink_status(o.out, ec)))
    throw UsageError("--out " + o.out + " exists: init-checkpoint writes a new checkpoint and replaces nothing; "
                     "give another --out, or delete that file first");
  models::SgrafConfig c = o.config;
  c.module = models::parse_module_name(o.module_name);
  if (o.vocab_size > 0 && !o.vocab_path.empty())
    throw UsageError("give either --vocab_size or --vocab_path with --data_name, not both");
  if (o.vocab_size > 0) {
    c.vocab_size = o.vocab_size;
  } else {
    if (o.vocab_path.empty() || o.data_name.empty())
      throw UsageError("the vocabulary size comes from --vocab_size or from --vocab_path with --data_name");
    c.vocab_size = data::Vocabulary::load(data::vocabulary_path(o.vocab_path, o.data_name)).size();
  }
  try {
    models::validate(c);
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  Generator gen(o.seed);  // declared before the model, which keeps a pointer to it for dropout
  models::SgrafModel model(c, DType::Float32, &gen);
  nn::Adam adam(model.parameters(), o.learning_rate);
  nn::save_training_checkpoint(o.out, model, adam, nullptr, models::sgraf_checkpoint_info(model));
  out << "wrote " << o.out << ": randomly initialised " << models::describe(c) << ", " << model.parameter_count()
      << " parameters (seed " << o.seed << ")\n";
}

}  // namespace

void add_init_checkpoint_command(CLI::App& app, std::ostream& out) {
  auto o = std::make_shared<InitOptions>();
  models::SgrafConfig& c = o->config;
  CLI::App* cmd = app.add_subcommand("init-checkpoint", "Write a randomly initialised SGR or SAF checkpoint");
  cmd->add_option("--module_name", o->module_name, "SGR or SAF")->required()->check(CLI::IsMember({"SGR", "SAF"}));
  cmd->add_option("--out", o->out, "Checkpoint to write (.safetensors)")->required();
  cmd->add_option("--vocab_path", o->vocab_path, "Folder of <data_name>_vocab.json (sets the vocabulary size)");
  cmd->add_option("--data_name", o->data_name, "Data set name, for the vocabulary file");
  cmd->add_option("--vocab_size", o->vocab_size, "Vocabulary size, instead of --vocab_path")
      ->check(kPositiveCount);
  cmd->add_option("--img_dim", c.img_dim, "Region feature size")->capture_default_str()->check(kPositiveCount);
  cmd->add_option("--word_dim", c.word_dim, "Word embedding size")->capture_default_str()->check(kPositiveCount);
  cmd->add_option("--embed_size", c.embed_size, "Joint embedding size (GRU hidden size)")
      ->capture_default_str()
      ->check(kPositiveCount);
  cmd->add_option("--sim_dim", c.sim_dim, "Similarity vector size")->capture_default_str()->check(kPositiveCount);
  cmd->add_option("--num_regions", c.num_regions, "Regions per image")
      ->capture_default_str()
      ->check(kPositiveCount);
  cmd->add_option("--sgr_step", c.sgr_step, "Graph reasoning steps (SGR)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, models::kMaxSgrStep));
  cmd->add_option("--seed", o->seed, "Seed of the initial weights")->capture_default_str();
  cmd->add_option("--learning_rate", o->learning_rate, "Learning rate stored with the (fresh) Adam state")
      ->capture_default_str()
      ->check(kPositive);
  cmd->callback([o, &out] { run_init(*o, out); });
}

}  // namespace rematch::cli
