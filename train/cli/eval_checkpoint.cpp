#include "train/cli/eval_checkpoint.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <memory>

#include "models/models.h"
#include "train/cli/app.h"
#include "train/data/precomp_dataset.h"
#include "train/data/vocab.h"
#include "train/eval/block_scoring.h"

namespace rematch::cli {
namespace {

using models::CaptionSide;
using models::ImageSide;
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

// Caption ids [n, L] (padded with <pad> = 0 to the longest of the block) and lengths [n].
std::pair<Tensor, Tensor> caption_block(const data::PrecompDataset& ds, int64_t begin, int64_t end) {
  std::vector<int64_t> lengths;
  for (int64_t j = begin; j < end; ++j) lengths.push_back(ds.caption_length(j));
  const int64_t longest = *std::max_element(lengths.begin(), lengths.end());
  std::vector<int64_t> ids(static_cast<size_t>((end - begin) * longest), data::Vocabulary::kPad);
  for (int64_t j = begin; j < end; ++j)
    std::copy(ds.caption_ids(j), ds.caption_ids(j) + ds.caption_length(j), ids.begin() + (j - begin) * longest);
  return {from_vector(ids, {end - begin, longest}), from_vector(lengths)};
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
  return ckpt;
}

ScoredSplit score_split(const CheckpointScoringOptions& o) {
  if (o.checkpoints.empty()) throw UsageError("--checkpoint is required");
  if (o.data_path.empty() || o.data_name.empty())
    throw UsageError("--checkpoint needs --data_path and --data_name (the split to score)");
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
    names += std::string(names.empty() ? "" : "+") + models::module_name(nets.back()->config().module);
  }
  const int64_t per_image = ds.captions_per_image();
  const int64_t n_cap = ds.num_captions(), n_img = n_cap / per_image;
  const eval::BlockSize block{o.block_images, o.block_captions};

  NoGradGuard no_grad;
  // Every caption block encoded once per model; image blocks encoded when the scorer reaches them.
  std::vector<std::vector<CaptionSide>> captions(nets.size());
  for (int64_t c0 = 0; c0 < n_cap; c0 += block.captions) {
    const auto [ids, lengths] = caption_block(ds, c0, std::min(n_cap, c0 + block.captions));
    for (size_t m = 0; m < nets.size(); ++m)
      captions[m].push_back(nets[m]->sim_enc().encode_captions(nets[m]->encode_captions(ids, lengths), lengths));
  }
  std::vector<ImageSide> images(nets.size());
  int64_t cached_begin = -1;
  auto scorer = [&](int64_t i0, int64_t i1, int64_t c0, int64_t /*c1: the block's end, known from c0*/) {
    if (i0 != cached_begin) {
      // Distinct image i is the row of its first caption (F30K dev/test repeat each image 5 times).
      std::vector<int64_t> rows;
      for (int64_t i = i0; i < i1; ++i) rows.push_back(ds.image_index(i * per_image));
      const Tensor regions = ds.images(rows);
      for (size_t m = 0; m < nets.size(); ++m)
        images[m] = nets[m]->sim_enc().encode_images(nets[m]->encode_images(regions));
      cached_begin = i0;
    }
    std::vector<Tensor> scores;
    for (size_t m = 0; m < nets.size(); ++m)
      scores.push_back(nets[m]->sim_enc().scores(images[m], captions[m][c0 / block.captions]));
    return models::average_scores(scores);
  };
  ScoredSplit out;
  out.sims = eval::score_blocks(n_img, n_cap, scorer, block);
  out.captions_per_image = per_image;
  const std::string label = names == "SGR+SAF" || names == "SAF+SGR" ? "SGRAF (SGR+SAF averaged)"
                            : nets.size() > 1                        ? names + " averaged"
                                                                     : names;
  out.summary = label + " on " + o.data_name + "/" + o.split;
  return out;
}

}  // namespace rematch::cli
