#include "train/methods/kit/noisy_labels.h"

#include "tensor/error.h"

namespace rematch::train {

data::LabelNoise label_noise_mode(const CommonOptions& c, const std::string& method) {
  const NoiseMode mode = c.noise_mode.value_or(NoiseMode::Symmetric);
  REMATCH_CHECK(mode == NoiseMode::Symmetric || mode == NoiseMode::Mrl, method,
                ": --noise_mode must be one of symmetric, mrl (got '", noise_mode_name(mode), "')");
  return mode == NoiseMode::Mrl ? data::LabelNoise::mrl : data::LabelNoise::symmetric;
}

data::NoisyLabels noisy_training_labels(const CommonOptions& c, const data::LabeledDataset& data,
                                        const std::string& method) {
  const data::LabelNoise noise = label_noise_mode(c, method);
  const uint64_t noise_seed = c.noise_seed < 0 ? c.seed : static_cast<uint64_t>(c.noise_seed);
  return c.noise_file.empty()
             ? data::inject_label_noise(data.train, data.num_classes, c.noise_ratio, noise, noise_seed)
             : data::load_label_noise_file(c.noise_file, data.train, data.num_classes, noise);
}

double label_agreement(const std::vector<int64_t>& labels, const std::vector<int64_t>& clean) {
  int64_t hits = 0;
  for (size_t i = 0; i < labels.size(); ++i) hits += labels[i] == clean[i];
  return labels.empty() ? 0.0 : static_cast<double>(hits) / static_cast<double>(labels.size());
}

double noisy_label_accuracy(const data::NoisyLabels& noisy, const data::LabeledSplit& train) {
  return 0.5 * (label_agreement(noisy.image_labels, train.image_labels) +
                label_agreement(noisy.text_labels, train.text_labels));
}

void put_noisy_labels(TrainingState& state, const std::string& method, const data::NoisyLabels& noisy) {
  state.put_int_vector(method + ".noisy_image_labels", noisy.image_labels);
  state.put_int_vector(method + ".noisy_text_labels", noisy.text_labels);
}

void check_noisy_labels(const TrainingState& state, const std::string& method, const data::NoisyLabels& noisy) {
  const std::vector<int64_t> image_labels = state.get_int_vector(method + ".noisy_image_labels");
  const std::vector<int64_t> text_labels = state.get_int_vector(method + ".noisy_text_labels");
  REMATCH_CHECK(image_labels == noisy.image_labels && text_labels == noisy.text_labels, method, ": ",
                state.source(), " was trained with other noisy labels than this run's (", noisy.source,
                "); resume with the same --noise_ratio, --noise_mode, --noise_seed / --noise_file");
}

}  // namespace rematch::train
