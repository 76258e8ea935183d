#include "train/methods/kit/pairs_data.h"

#include <filesystem>
#include <ostream>

#include "tensor/error.h"

namespace rematch::train {

std::string precomp_folder(const CommonOptions& c) {
  const std::string folder = c.data_path + "/" + c.data_name;
  REMATCH_CHECK(std::filesystem::is_directory(folder), "--data_path/--data_name: no data folder '", folder,
                "' (expected the SCAN precomp layout: ", folder, "/train_ims.npy, train_caps.txt, ...)");
  return folder;
}

PairsData load_pairs_data(const CommonOptions& c, bool add_mask_word, std::ostream& log) {
  const std::string folder = precomp_folder(c);
  PairsData d;
  const std::string vocab_file = data::find_vocabulary_file(c.vocab_path, c.data_path, c.data_name);
  d.vocab = data::Vocabulary::load(vocab_file);
  if (add_mask_word) d.vocab.add_word("<mask>");
  data::PrecompOptions dev_options;
  dev_options.val_subset = c.val_subset.value_or(data::ValSubset::sgraf);
  data::PrecompOptions train_options;
  train_options.check_finite = false;  // the training step stops on a NaN itself (no pass over a large file first)
  d.train = std::make_unique<data::PrecompDataset>(c.data_path, c.data_name, "train", d.vocab, train_options);
  d.dev = std::make_unique<data::PrecompDataset>(c.data_path, c.data_name, "dev", d.vocab, dev_options);
  const std::string test_split = c.test_split_name();
  d.test = std::make_unique<data::PrecompDataset>(c.data_path, c.data_name, test_split, d.vocab);
  REMATCH_CHECK(!c.coco_folds || d.test->num_images() % 5 == 0, "--coco_folds: the ", test_split, " split of ",
                folder, " has ", d.test->num_images(), " images, which do not make 5 equal folds (COCO's testall: ",
                "5000)");

  data::NoiseOptions noise;
  noise.protocol = c.noise_ratio > 0 ? noise_mode_name(c.noise_mode.value_or(NoiseMode::Image)) : "none";
  noise.ratio = c.noise_ratio;
  noise.seed = static_cast<uint64_t>(c.noise_seed);
  noise.noise_file = c.noise_file;
  d.correspondence = data::make_correspondence(noise, d.train->num_images(), d.train->im_div());
  log << "data: " << folder << ": train " << d.train->num_images() << " images / " << d.train->num_captions()
      << " captions, dev " << d.dev->num_captions() << " captions, " << test_split << " "
      << d.test->num_captions() << " captions; vocabulary " << d.vocab.size() << " words (" << vocab_file
      << ")\n"
      << "noise: " << d.correspondence.source << " (" << d.correspondence.num_noisy() << " of "
      << d.correspondence.num_captions() << " training captions mismatched)\n";
  return d;
}

}  // namespace rematch::train
