#include "models/vse_image_encoder.h"

#include "models/vse_pooling.h"

namespace rematch::models {
namespace {

// EncoderImageAggr.init_weights on a direct Linear child: U(-r, r), r = √6 / √(in + out), bias 0.
void xavier_zero_bias(nn::Linear& layer, Generator* gen) {
  nn::xavier_uniform_(layer.weight(), 1.0, gen);
  nn::zeros_(layer.bias());
}

void check_params(const TensorList& params, size_t want, const char* who) {
  REMATCH_CHECK(params.size() == want, who, ": expected ", want, " parameter tensors, got ", params.size());
  for (size_t k = 0; k < params.size(); ++k)
    REMATCH_CHECK(params[k].defined(), who, ": parameter ", k, " is undefined");
}

}  // namespace

VseResidualMlp::VseResidualMlp(int64_t input_dim, int64_t hidden_dim, int64_t output_dim, DType dtype,
                               Generator* gen) {
  layers_ = register_module("layers", std::make_shared<nn::Sequential>());
  layers_->push_back(std::make_shared<nn::Linear>(input_dim, hidden_dim, true, dtype, gen));
  layers_->push_back(std::make_shared<nn::Linear>(hidden_dim, output_dim, true, dtype, gen));
  bns_ = register_module("bns", std::make_shared<nn::Sequential>());
  bns_->push_back(std::make_shared<nn::BatchNorm1d>(hidden_dim, 1e-5, 0.1, true, dtype));
  bns_->push_back(std::make_shared<nn::BatchNorm1d>(output_dim, 1e-5, 0.1, true, dtype));
}

Tensor VseResidualMlp::forward_with(const TensorList& params, const Tensor& x) {
  check_params(params, kNumParams, "VseResidualMlp");
  const auto& bn = static_cast<const nn::BatchNorm1d&>(*(*bns_)[0]);
  // encoders.py MLP.forward with num_layers = 2: relu(bns[0](layers[0](x))), then layers[1] with no BatchNorm.
  Tensor h = nn::linear(x, params[0], params[1], "VseResidualMlp layers.0");
  h = nn::batch_norm(h, params[4], params[5], bn.buffer("running_mean"), bn.buffer("running_var"), is_training(),
                     bn.momentum(), bn.eps(), "VseResidualMlp bns.0");
  if (is_training()) {
    const Tensor& count = bn.buffer("num_batches_tracked");
    kernels::copy_(count, kernels::scalar_op(kernels::ScalarOp::Add, count, 1));
  }
  return nn::linear(relu(h), params[2], params[3], "VseResidualMlp layers.1");
}

VseImageEncoder::VseImageEncoder(int64_t img_dim, int64_t embed_size, bool no_imgnorm, DType dtype, Generator* gen)
    : img_dim_(img_dim), embed_size_(embed_size), no_imgnorm_(no_imgnorm) {
  REMATCH_CHECK(img_dim > 0 && embed_size >= 2,
                "VseImageEncoder: img_dim must be positive and embed_size at least 2, got ", img_dim, " and ",
                embed_size);
  fc_ = register_module("fc", std::make_shared<nn::Linear>(img_dim, embed_size, true, dtype, gen));
  mlp_ = register_module("mlp", std::make_shared<VseResidualMlp>(img_dim, embed_size / 2, embed_size, dtype, gen));
  linear1_ = register_module("linear1", std::make_shared<nn::Linear>(embed_size, embed_size, true, dtype, gen));
  xavier_zero_bias(*fc_, gen);
  xavier_zero_bias(*linear1_, gen);
}

Tensor VseImageEncoder::forward(const Tensor& images, const Tensor& lengths) {
  return forward_with(parameters(), images, lengths);
}

Tensor VseImageEncoder::forward_with(const TensorList& params, const Tensor& images, const Tensor& lengths) {
  check_params(params, kNumParams, "VseImageEncoder");
  REMATCH_CHECK(images.defined() && images.dim() == 3 && images.size(2) == img_dim_,
                "VseImageEncoder: images must be [B, R, ", img_dim_, "], got ",
                images.defined() ? images.describe() : "undefined");
  const int64_t B = images.size(0);
  const int64_t R = checked_max_length(lengths, B, images.size(1), "VseImageEncoder");
  // Padding beyond the longest image is dropped, as the official collate never produces it (see the header).
  const Tensor x = R < images.size(1) ? narrow(images, 1, 0, R) : images;

  const Tensor direct = nn::linear(x, params[0], params[1], "VseImageEncoder fc");  // [B, R, E]
  const TensorList mlp_params(params.begin() + 2, params.begin() + 2 + VseResidualMlp::kNumParams);
  const Tensor residual = reshape(mlp_->forward_with(mlp_params, reshape(x, {B * R, img_dim_})), {B, R, embed_size_});
  const Tensor h = add(direct, residual);
  const Tensor logits = nn::linear(h, params[kNumParams - 2], params[kNumParams - 1], "VseImageEncoder linear1");
  const Tensor pooled = vse_attention_pool(h, logits, vse_padding_mask(lengths, R, h.device()));
  return no_imgnorm_ ? pooled : l2_normalize(pooled, 1, 1e-8);
}

}  // namespace rematch::models
