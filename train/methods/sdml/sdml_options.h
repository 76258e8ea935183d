// The options of the SDML method (sdml_method.h, docs/methods/sdml.md): the flags' typed fields, their table, the
// defaults (SDML `main_SDML.py`) and the checks across flags.
#pragma once

#include <cstdint>
#include <limits>

#include "tensor/dtype.h"
#include "train/methods/method_spec.h"
#include "train/methods/options.h"

namespace rematch::train {

struct SdmlOptions {
  int64_t hidden_dim = -1;    // Dense_Net mid_num (1024; -1: the default of sdml_defaults)
  int64_t output_dim = 512;   // L, SDML --output_shape (the flag uotrcl and mrl share)
  double alpha = std::numeric_limits<double>::quiet_NaN();    // L = α L_ae + (1 − α) L_d (0.5)
  double text_lr = std::numeric_limits<double>::quiet_NaN();  // the text view's Adam rate (2e-4)
  // No flag: the dtype of the networks (float64 for the golden step).
  DType dtype = DType::Float32;
};

const OptionTable& sdml_flags();
std::vector<Default> sdml_defaults();
// --lr_update and --warmup_epoch must stay 0; --output_dim must hold the classes (checked with the data).
void check_sdml(const TrainConfig& config);

}  // namespace rematch::train
