// The noisy training labels of the class-labelled methods (uotrcl, mrl, dscmr, sdml: one protocol for their tables):
// drawn or read as --noise_ratio, --noise_mode, --noise_seed and --noise_file say (docs/methods/uotrcl.md, the noise
// protocol its tables share), their accuracy against the clean labels, and their place in a checkpoint: a run
// resumes only on the labels it trained on.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "train/data/labeled_dataset.h"
#include "train/methods/method.h"
#include "train/methods/train_config.h"

namespace rematch::train {

// --noise_mode as a label-noise protocol (symmetric, the default, or mrl); any other mode is an Error naming
// `method`.
data::LabelNoise label_noise_mode(const CommonOptions& c, const std::string& method);
// The training labels `method` trains on: --noise_file's, or drawn at --noise_ratio from --noise_seed (the run's
// seed when unset).
data::NoisyLabels noisy_training_labels(const CommonOptions& c, const data::LabeledDataset& data,
                                        const std::string& method);
// The share of `labels` equal to `clean` (0 for none).
double label_agreement(const std::vector<int64_t>& labels, const std::vector<int64_t>& clean);
// The mean of both views' label_agreement with the clean training labels: the epoch statistic noisy_accuracy.
double noisy_label_accuracy(const data::NoisyLabels& noisy, const data::LabeledSplit& train);

// "<method>.noisy_image_labels" and "<method>.noisy_text_labels" in a checkpoint, and the check on resuming that
// they are this run's (an Error naming the checkpoint and the flags that draw them).
void put_noisy_labels(TrainingState& state, const std::string& method, const data::NoisyLabels& noisy);
void check_noisy_labels(const TrainingState& state, const std::string& method, const data::NoisyLabels& noisy);

}  // namespace rematch::train
