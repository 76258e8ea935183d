// PairsOptions: the SGR/SAF backbone and the losses every method on image–caption pairs shares (each extends it in
// its own <method>_options.h) and the table that declares them for a method; and the options, flag table and
// per-preset defaults of the one-loss methods triplet, infonce and rcl (batch_loss_method.h;
// docs/methods/triplet.md, infonce.md, rcl.md; sources in docs/presets.md).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "models/sgraf_config.h"
#include "tensor/dtype.h"
#include "train/losses/retrieval_losses.h"
#include "train/methods/method_spec.h"
#include "train/methods/options.h"

namespace rematch::train {

// --triplet_negatives: VSE++'s hardest negative, or the sum over all negatives.
enum class TripletNegatives { Hardest, Mean };

struct PairsOptions {
  // SGR / SAF backbone (docs/backbones.md)
  models::SimilarityModule module_name = models::SimilarityModule::SGR;
  int64_t embed_size = 1024;
  int64_t word_dim = 300;
  int64_t sim_dim = 256;
  int64_t sgr_step = 3;
  double dropout = 0.4;
  // losses
  double margin = 0.2;  // triplet margin (and GCE q for rcl --loss gce, as the RCL code)
  TripletNegatives triplet_negatives = TripletNegatives::Hardest;
  double tau = std::numeric_limits<double>::quiet_NaN();  // softmax temperature: 0.05 (infonce, rcl, l2rm)
  losses::ComplementaryPhi loss = losses::ComplementaryPhi::Log;  // rcl φ
  double neg_ratio = -1;  // rcl: share of negatives used, (0, 1); otherwise all B−1
  // No flag: the dtype of the model, the batches and the losses (float64 for the golden-step tests, whose
  // references run in float64).
  DType dtype = DType::Float32;
};

// The flags of PairsOptions, with their fields reached in a TrainConfig through `reach` (the triplet, infonce and
// rcl section, or L2RM's, which extends PairsOptions).
OptionTable pairs_flag_table(const std::string& title, std::function<PairsOptions&(TrainConfig&)> reach,
                             std::function<const PairsOptions&(const TrainConfig&)> const_reach);

// The table of config.options<PairsOptions>() (triplet, infonce, rcl).
const OptionTable& pairs_flags();

// The per-preset defaults of triplet, infonce and rcl (SGRAF's and RCL's scripts).
std::vector<Default> triplet_defaults();
std::vector<Default> rcl_defaults();  // rcl and its infonce baseline

}  // namespace rematch::train
