#include "train/cli/eval_checkpoint.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <memory>

#include "models/models.h"
#include "train/cli/app.h"
#include "train/data/precomp_dataset.h"
#include "train/data/vocab.h"
#include "train/eval/sgraf_scoring.h"

namespace rematch::cli {
namespace {

using models::SgrafModel;

// The model files must fit the data: region slots and feature size, and a vocabulary the ids stay inside
// (RCL checkpoints carry one extra word, <mask>, SPEC-backbones §3.1).
void check_fits(const std::string& path, const models::SgrafConfig& c, const data::PrecompDataset& ds,
                int64_t vocab_size) {
  if (c.num_regions != ds.num_regions() || c.img_dim != ds.feature_dim())
    throw UsageError("--checkpoint " + path + " expects regions [" + std::to_string(c.num_regions) + ", " +
                     std::to_string(c.img_dim) + "] but " + ds.images_path() + " holds [" +
                     std::to_string(ds.num_regions()) + ", " + std::to_string(ds.feature_dim()) + "]");
  if (c.vocab_size != vocab_size && c.vocab_size != vocab_size + 1)
    throw UsageError("--checkpoint " + path + " has a vocabulary of " + std::to_string(c.vocab_size) +
                     " words but the vocabulary file has " + std::to_string(vocab_size));
}

}  // namespace

CLI::Option* add_checkpoint_scoring_options(CLI::App& cmd, CheckpointScoringOptions& o) {
  CLI::Option* ckpt = cmd.add_option("--checkpoint", o.checkpoints,
                                     "SGR/SAF model file (rematch checkpoint or tools/convert_pth.py output); "
                                     "give it twice (SGR and SAF) for SGRAF: the score matrices are averaged")
                          ->check(CLI::ExistingFile);
  cmd.add_option("--data_path", o.data_path, "Folder holding <data_name>/ (SCAN precomp layout)");
  cmd.add_option("--data_name", o.data_name, "Data set folder, e.g. f30k_precomp");
  cmd.add_option("--vocab_path", o.vocab_path, "Folder of <data_name>_vocab.json (default <data_path>/vocab)");
  cmd.add_option("--split", o.split, "Split to score")
      ->capture_default_str()
      ->check(CLI::IsMember({"train", "dev", "test", "testall"}));
  cmd.add_option("--val_subset", o.val_subset, "Part of dev used (sgraf: 5,000 captions; ncr: 1,000 x im_div)")
      ->capture_default_str()
      ->check(CLI::IsMember({"sgraf", "ncr"}));
  cmd.add_option("--block_images", o.block_images, "Images per scoring block")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd.add_option("--block_captions", o.block_captions, "Captions per scoring block")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd.add_option("--device", o.device, "cpu | cuda | cuda:N: the device the models score on")
      ->capture_default_str()
      ->needs(ckpt);
  return ckpt;
}

ScoredSplit score_split(const CheckpointScoringOptions& o) {
  if (o.checkpoints.empty()) throw UsageError("--checkpoint is required");
  if (o.data_path.empty() || o.data_name.empty())
    throw UsageError("--checkpoint needs --data_path and --data_name (the split to score)");
  const Device device = device_flag(o.device);  // before any file is read
  const std::string vocab_dir = o.vocab_path.empty() ? o.data_path + "/vocab" : o.vocab_path;
  const data::Vocabulary vocab = data::Vocabulary::load(data::vocabulary_path(vocab_dir, o.data_name));
  data::PrecompOptions popt;
  popt.val_subset = data::parse_val_subset(o.val_subset);
  const data::PrecompDataset ds(o.data_path, o.data_name, o.split, vocab, popt);

  std::vector<std::unique_ptr<SgrafModel>> nets;
  std::string names;
  for (const std::string& path : o.checkpoints) {
    nets.push_back(models::load_sgraf_model(path));
    check_fits(path, nets.back()->config(), ds, vocab.size());
    nets.back()->to(device);
    names += std::string(names.empty() ? "" : "+") + models::module_name(nets.back()->config().module);
  }
  const int64_t per_image = ds.captions_per_image();
  std::vector<SgrafModel*> models;
  for (auto& net : nets) models.push_back(net.get());
  ScoredSplit out;
  out.sims = eval::score_precomp_split(models, ds, {o.block_images, o.block_captions});
  out.captions_per_image = per_image;
  const std::string label = names == "SGR+SAF" || names == "SAF+SGR" ? "SGRAF (SGR+SAF averaged)"
                            : nets.size() > 1                        ? names + " averaged"
                                                                     : names;
  out.summary = label + " on " + o.data_name + "/" + o.split;
  return out;
}

}  // namespace rematch::cli
