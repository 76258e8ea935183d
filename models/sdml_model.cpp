#include "models/sdml_model.h"

namespace rematch::models {

SdmlView::SdmlView(int64_t input_dim, int64_t hidden_dim, int64_t output_dim, DType dtype, Generator* gen) {
  // SDML.py train_view: Net = Dense_Net(input_dim, out_dim=output_shape), then AE = Dense_Net(output_shape, input_dim)
  net_ = register_module("net", std::make_shared<ModalityMlp>(input_dim, hidden_dim, output_dim, dtype, gen, 0.0));
  ae_ = register_module("ae", std::make_shared<ModalityMlp>(output_dim, hidden_dim, input_dim, dtype, gen, 0.0));
}

SdmlModel::SdmlModel(const SdmlConfig& config, DType dtype, Generator* gen) {
  REMATCH_CHECK(config.num_classes > 0 && config.num_classes <= config.output_dim && config.hidden_dim > 0 &&
                    config.img_dim > 0 && config.txt_dim > 0,
                "SdmlModel: widths must be positive and num_classes in 1..output_dim (img_dim ", config.img_dim,
                ", txt_dim ", config.txt_dim, ", hidden_dim ", config.hidden_dim, ", output_dim ", config.output_dim,
                ", num_classes ", config.num_classes, ")");
  // Solver.__init__: W = orthogonal(L×L)[:, :K] (or the repository's OrthP_512X512.mat when present).
  Tensor w = empty({config.output_dim, config.output_dim}, dtype);
  nn::orthogonal_(w, 1.0, gen);
  register_buffer("W", contiguous(narrow(w, 1, 0, config.num_classes)));
  img_ = register_module("img", std::make_shared<SdmlView>(config.img_dim, config.hidden_dim, config.output_dim, dtype,
                                                           gen));
  txt_ = register_module("txt", std::make_shared<SdmlView>(config.txt_dim, config.hidden_dim, config.output_dim, dtype,
                                                           gen));
}

}  // namespace rematch::models
