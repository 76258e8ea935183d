// The options of the UOT-RCL method (uotrcl_method.h) and their reading from `rematch train`'s flags
// (train/methods/train_config.h, UOT-RCL block). Values the paper does not publish default to the study's choice
// (docs/uotrcl-choices.md).
#pragma once

#include <cstdint>
#include <string>

#include "tensor/tensor.h"
#include "train/data/labeled_dataset.h"
#include "train/methods/train_config.h"
#include "train/methods/uotrcl/label_correction.h"
#include "train/methods/uotrcl/uotrcl_losses.h"

namespace rematch::train {

// When the training targets y of Eq. (9) move: once per epoch from the whole-set pass (our reading), or for
// each batch's pairs from the batch embeddings before the update (the other reading of the paper's text).
enum class TargetUpdate { Epoch, Batch };
TargetUpdate parse_target_update(const std::string& name);  // "epoch" | "batch"
const char* target_update_name(TargetUpdate update);

struct UotrclOptions {
  // data and label noise (docs/methods/uotrcl.md §4.1)
  std::string data_path;        // an HDF5 file or a folder in the .npy layout (data::load_labeled)
  int64_t valid_len = -1;
  double noise_ratio = 0;
  std::string noise_file;       // overrides generation when set
  data::LabelNoise noise_mode = data::LabelNoise::symmetric;
  uint64_t noise_seed = 0;
  uint64_t seed = 0;            // model init and batch order
  Device device = Device::cpu();
  // The dtype of the networks, prototypes, training features, one-hot labels, targets y and corrected labels Ŷ
  // (no flag: float64 is for the golden training step, tests/train/uotrcl_golden_step_test.cpp). The feature
  // files are read as float32 and cast.
  DType dtype = DType::Float32;
  // optimisation (UOT-RCL §V-B)
  int64_t batch_size = 100;
  int64_t num_epochs = 100;     // warm-up epochs included (docs/methods/uotrcl.md §4.3)
  int64_t warmup_epochs = 2;
  double learning_rate = 1e-4;
  int64_t lr_update = 0;        // ×0.1 every lr_update epochs; 0 = constant (UOT-RCL states no schedule)
  double grad_clip = 0;         // global-norm clip, 0 = off (neither UOT-RCL nor MRL clips)
  int64_t eval_batch = 1000;    // rows per block of the no-grad passes (whole training set, evaluation)
  // model (docs/methods/uotrcl.md §4.2)
  int64_t hidden_dim = 4096;
  int64_t output_dim = 512;
  // method (docs/methods/uotrcl.md §4.3)
  int64_t confident_per_class = 5;
  int64_t knn = 10;             // 𝒦; -1: 5 % of the training set
  double gamma = 0.99;
  double lambda_bhg = 0.4;
  double tau1 = 1, tau2 = 1, tau3 = 1;
  double s_start = 0.2, s_end = 0.8;
  uotrcl::LabelCorrectionOptions label_correction;
  uotrcl::RelationOtOptions relation;
  TargetUpdate target_update = TargetUpdate::Epoch;
  // Ablations (train/methods/ablations.h): the main-phase terms of Eq. (19) and how 𝒢 is chosen.
  bool plc = true;                  // L_PLC; --no_plc
  bool bhg = true;                  // L_BHG; --no_bhg
  bool random_confident = false;    // --confident_set random
};

// The UOT-RCL options of a resolved TrainConfig; a field still unresolved (NaN / -1) or out of range is an
// Error naming its flag.
UotrclOptions uotrcl_options(const TrainConfig& config);

}  // namespace rematch::train
