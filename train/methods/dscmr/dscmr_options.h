// The options of the DSCMR method (dscmr_method.h, docs/methods/dscmr.md): the flags' typed fields, their table,
// the defaults (DSCMR `main.py`, the only configuration the official code publishes) and the checks across flags.
#pragma once

#include <cstdint>
#include <limits>

#include "tensor/dtype.h"
#include "train/methods/method_spec.h"
#include "train/methods/options.h"

namespace rematch::train {

struct DscmrOptions {
  // model (docs/methods/dscmr.md §2): IDCM_NN img_output_dim = text_output_dim (2048), minus_one_dim (1024);
  // -1: the default of dscmr_defaults
  int64_t hidden_dim = -1;
  int64_t common_dim = -1;
  // L = term1 + alpha·term2 + beta·term3 (train_model.py: calc_loss; main.py alpha = 1e-3, beta = 1e-1)
  double alpha = std::numeric_limits<double>::quiet_NaN();
  double beta = std::numeric_limits<double>::quiet_NaN();
  // No flag: the dtype of the networks (float64 for the golden step).
  DType dtype = DType::Float32;
};

const OptionTable& dscmr_flags();
std::vector<Default> dscmr_defaults();
// --lr_update and --warmup_epoch must stay 0 (DSCMR trains at a constant learning rate from the first epoch).
void check_dscmr(const TrainConfig& config);

}  // namespace rematch::train
