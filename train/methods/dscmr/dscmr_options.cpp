#include "train/methods/dscmr/dscmr_options.h"

#include "tensor/error.h"
#include "train/methods/train_config.h"

namespace rematch::train {
namespace {

OptionTable make_dscmr_flags() {
  FlagTable<DscmrOptions> t(
      "DSCMR (--method dscmr; docs/methods/dscmr.md)",
      [](TrainConfig& c) -> DscmrOptions& { return c.options<DscmrOptions>(); },
      [](const TrainConfig& c) -> const DscmrOptions& { return c.options<DscmrOptions>(); });
  // Flags of their own: --hidden_dim/--output_dim (uotrcl, mrl), --alpha (crcl) and --beta (mrl) mean other things.
  t.integer("dscmr_hidden_dim", &DscmrOptions::hidden_dim, "DSCMR ImgNN/TextNN width (IDCM_NN img_output_dim)")
      .at_least(1);
  t.integer("dscmr_common_dim", &DscmrOptions::common_dim, "DSCMR common space size (IDCM_NN minus_one_dim)")
      .at_least(1);
  t.real("dscmr_alpha", &DscmrOptions::alpha, "DSCMR weight of the common-space discrimination loss (term2)")
      .at_least(0);
  t.real("dscmr_beta", &DscmrOptions::beta, "DSCMR weight of the modality invariance loss (term3)").at_least(0);
  return finish_table(t.table());
}

}  // namespace

const OptionTable& dscmr_flags() {
  static const OptionTable table = make_dscmr_flags();
  return table;
}

std::vector<Default> dscmr_defaults() {
  const std::string main = "DSCMR `main.py`";
  std::vector<Default> d;
  d.push_back(Default::always("dscmr_hidden_dim", 2048,
                              "DSCMR `model.py` IDCM_NN img_output_dim = text_output_dim = 2048"));
  d.push_back(Default::always("dscmr_common_dim", 1024, "DSCMR `model.py` IDCM_NN minus_one_dim = 1024"));
  d.push_back(Default::always("dscmr_alpha", 1e-3, main + " `alpha = 1e-3`"));
  d.push_back(Default::always("dscmr_beta", 0.1, main + " `beta = 1e-1`"));
  d.push_back(Default::always("num_epochs", 500, main + " `MAX_EPOCH = 500`"));
  d.push_back(Default::always("batch_size", 100, main + " `batch_size = 100`"));
  d.push_back(Default::always("learning_rate", 1e-4, main + " `lr = 1e-4` (Adam, betas (0.5, 0.999))"));
  d.push_back(Default::always("warmup_epoch", 0, "DSCMR has no warm-up"));
  d.push_back(Default::always("lr_update", 0, "DSCMR `main.py`: a constant learning rate, no scheduler"));
  d.push_back(Default::always("grad_clip", 0.0, "DSCMR does not clip"));
  d.push_back(Default::per_preset("valid_len", {{"wiki", 231}, {"nus", 5000}, {"xmedianet", 4000}, {"", 0}},
                                  "MRL `src/noisydataset.py` valid_len (UOT-RCL's protocol, which its DSCMR row "
                                  "follows; DSCMR itself has no validation split)"));
  d.push_back(Default::always("noise_mode", "symmetric",
                              "UOT-RCL's symmetric noise (one label per pair), the protocol of its table"));
  return d;
}

void check_dscmr(const TrainConfig& c) {
  REMATCH_CHECK(c.lr_update == 0, "--lr_update must be 0 for dscmr (got ", c.lr_update,
                "): DSCMR's main.py trains at a constant learning rate");
  REMATCH_CHECK(c.warmup_epoch == 0, "--warmup_epoch must be 0 for dscmr (got ", c.warmup_epoch,
                "): DSCMR trains with its full loss from the first epoch");
}

}  // namespace rematch::train
