// The image–caption data of a run on the SCAN precomp pairs (docs/methods/shared.md §0.1–§0.2): the vocabulary,
// the train/dev/test precomp splits and the training correspondence (which image row each training caption is
// paired with — mismatched for the noisy-correspondence benchmarks). Everything is read and checked before any
// training starts, so a missing file or a bad flag fails at once.
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "train/data/noise.h"
#include "train/data/precomp_dataset.h"
#include "train/data/vocab.h"
#include "train/methods/method_spec.h"
#include "train/methods/train_config.h"

namespace rematch::train {

struct PairsData {
  data::Vocabulary vocab;
  std::unique_ptr<data::PrecompDataset> train, dev, test;
  data::Correspondence correspondence;
};

// Vocabulary: data::find_vocabulary_file (--vocab_path, else <data_path>/vocab, else ./vocab); with
// `add_mask_word` the word <mask> is appended as RCL does. The noise comes from --noise_file, or from
// --noise_mode/--noise_ratio/--noise_seed (image level by default).
PairsData load_pairs_data(const CommonOptions& config, bool add_mask_word, std::ostream& log);

// `<data_path>/<data_name>`, checked to be a folder (an Error naming both flags and the expected layout).
std::string precomp_folder(const CommonOptions& config);

// MethodSpec::make of a method M on the precomp pairs with options S: the data load_pairs_data reads (with the
// word <mask> when `mask_word`), then M(common, options, args..., data, log).
template <class M, class S, class... Args>
std::function<std::unique_ptr<Method>(const TrainConfig&, std::ostream&)> make_pairs_method(bool mask_word,
                                                                                              Args... args) {
  return make_with<S, PairsData>(
      [mask_word](const CommonOptions& c, const S&, std::ostream& log) { return load_pairs_data(c, mask_word, log); },
      [args...](const CommonOptions& c, const S& o, PairsData data, std::ostream& log) -> std::unique_ptr<Method> {
        return std::make_unique<M>(c, o, args..., std::move(data), log);
      });
}

}  // namespace rematch::train
