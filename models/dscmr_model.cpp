#include "models/dscmr_model.h"

namespace rematch::models {

DscmrModel::Branch::Branch(int64_t in, int64_t out, DType dtype, Generator* gen) {
  dense = register_module("denseL1", std::make_shared<nn::Linear>(in, out, true, dtype, gen));
}

DscmrModel::DscmrModel(const DscmrConfig& config, DType dtype, Generator* gen) : config_(config) {
  REMATCH_CHECK(config.num_classes > 0 && config.hidden_dim > 0 && config.common_dim > 0 && config.img_dim > 0 &&
                    config.txt_dim > 0,
                "DscmrModel: every width and num_classes must be positive (img_dim ", config.img_dim, ", txt_dim ",
                config.txt_dim, ", hidden_dim ", config.hidden_dim, ", common_dim ", config.common_dim,
                ", num_classes ", config.num_classes, ")");
  // IDCM_NN.__init__ order: img_net, text_net, linearLayer, linearLayer2 (PyTorch draws their inits in turn).
  img_net_ = register_module("img_net", std::make_shared<Branch>(config.img_dim, config.hidden_dim, dtype, gen));
  text_net_ = register_module("text_net", std::make_shared<Branch>(config.txt_dim, config.hidden_dim, dtype, gen));
  common_ = register_module("linearLayer",
                            std::make_shared<nn::Linear>(config.hidden_dim, config.common_dim, true, dtype, gen));
  classifier_ = register_module(
      "linearLayer2", std::make_shared<nn::Linear>(config.common_dim, config.num_classes, true, dtype, gen));
}

// IDCM_NN.forward: view1_feature = linearLayer(img_net(img)) with ImgNN.forward = relu(denseL1(x)).
Tensor DscmrModel::encode_images(const Tensor& x) {
  return nn::linear(relu(nn::linear(x, img_net_->dense->weight(), img_net_->dense->bias(), "DSCMR ImgNN")),
                    common_->weight(), common_->bias(), "DSCMR linearLayer");
}

Tensor DscmrModel::encode_texts(const Tensor& x) {
  return nn::linear(relu(nn::linear(x, text_net_->dense->weight(), text_net_->dense->bias(), "DSCMR TextNN")),
                    common_->weight(), common_->bias(), "DSCMR linearLayer");
}

Tensor DscmrModel::classify(const Tensor& features) {
  return nn::linear(features, classifier_->weight(), classifier_->bias(), "DSCMR linearLayer2");
}

}  // namespace rematch::models
