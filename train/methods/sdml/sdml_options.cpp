#include "train/methods/sdml/sdml_options.h"

#include "tensor/error.h"
#include "train/methods/train_config.h"

namespace rematch::train {
namespace {

OptionTable make_sdml_flags() {
  FlagTable<SdmlOptions> t(
      "SDML (--method sdml; docs/methods/sdml.md)",
      [](TrainConfig& c) -> SdmlOptions& { return c.options<SdmlOptions>(); },
      [](const TrainConfig& c) -> const SdmlOptions& { return c.options<SdmlOptions>(); });
  t.integer("sdml_hidden_dim", &SdmlOptions::hidden_dim, "SDML Dense_Net width (mid_num) of encoders and decoders")
      .at_least(1);
  t.integer("output_dim", &SdmlOptions::output_dim, "SDML predefined common space size (--output_shape)")
      .at_least(1)
      .from("SDML `main_SDML.py` `--output_shape 512`");
  t.real("sdml_alpha", &SdmlOptions::alpha, "SDML weight of the reconstruction loss: alpha·L_ae + (1 − alpha)·L_d")
      .at_least(0)
      .at_most(1);
  t.real("sdml_text_lr", &SdmlOptions::text_lr, "SDML Adam learning rate of the text view (--learning_rate: image)")
      .above(0);
  return finish_table(t.table());
}

}  // namespace

const OptionTable& sdml_flags() {
  static const OptionTable table = make_sdml_flags();
  return table;
}

std::vector<Default> sdml_defaults() {
  const std::string main = "SDML `main_SDML.py`";
  std::vector<Default> d;
  d.push_back(Default::always("sdml_hidden_dim", 1024, "SDML `model.py` Dense_Net mid_num = 1024"));
  d.push_back(Default::always("sdml_alpha", 0.5, main + " `--alpha 0.5`"));
  d.push_back(Default::always("learning_rate", 1e-4, main + " `--lr [1e-4, 2e-4, ...]`: the first view's (image)"));
  d.push_back(Default::always("sdml_text_lr", 2e-4, main + " `--lr [1e-4, 2e-4, ...]`: the second view's (text)"));
  d.push_back(Default::always("num_epochs", 200, main + " `--epochs 200`"));
  d.push_back(Default::always("batch_size", 100, main + " `--batch_size 100`"));
  d.push_back(Default::always("warmup_epoch", 0, "SDML has no warm-up"));
  d.push_back(Default::always("lr_update", 0, "SDML: a constant learning rate, no scheduler"));
  d.push_back(Default::always("grad_clip", 0.0, "SDML does not clip"));
  d.push_back(Default::per_preset("valid_len", {{"wiki", 231}, {"nus", 5000}, {"xmedianet", 4000}, {"", 0}},
                                  "SDML `data_loader.py` valid_len (231 Wikipedia, 5,000 NUS-WIDE), MRL's for "
                                  "XMediaNet (UOT-RCL's protocol)"));
  d.push_back(Default::always("noise_mode", "symmetric",
                              "UOT-RCL's symmetric noise (one label per pair), the protocol of its table"));
  return d;
}

void check_sdml(const TrainConfig& c) {
  REMATCH_CHECK(c.lr_update == 0, "--lr_update must be 0 for sdml (got ", c.lr_update,
                "): SDML trains at a constant learning rate");
  REMATCH_CHECK(c.warmup_epoch == 0, "--warmup_epoch must be 0 for sdml (got ", c.warmup_epoch, ")");
}

}  // namespace rematch::train
