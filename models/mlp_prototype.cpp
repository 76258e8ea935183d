#include "models/mlp_prototype.h"

namespace rematch::models {

ModalityMlp::ModalityMlp(int64_t input_dim, int64_t hidden_dim, int64_t output_dim, DType dtype, Generator* gen,
                         double norm_eps)
    : norm_eps_(norm_eps) {
  REMATCH_CHECK(norm_eps >= 0, "ModalityMlp: norm_eps must be at least 0, got ", norm_eps);
  fc1_ = register_module("fc1", std::make_shared<nn::Linear>(input_dim, hidden_dim, true, dtype, gen));
  fc2_ = register_module("fc2", std::make_shared<nn::Linear>(hidden_dim, hidden_dim, true, dtype, gen));
  fc3_ = register_module("fc3", std::make_shared<nn::Linear>(hidden_dim, output_dim, true, dtype, gen));
}

Tensor ModalityMlp::forward(const Tensor& x) { return forward_with(parameters(), x, norm_eps_); }

Tensor ModalityMlp::forward_with(const TensorList& params, const Tensor& x, double norm_eps) {
  REMATCH_CHECK(params.size() == kNumParams, "ModalityMlp: expected ", kNumParams, " parameter tensors, got ",
                params.size());
  REMATCH_CHECK(x.defined() && x.dim() == 2, "ModalityMlp: input must be [N, d_in], got ",
                x.defined() ? x.describe() : "undefined");
  // MRL ImageNet.forward: relu(fc1), relu(fc2), fc3, divide by the row norm.
  Tensor h = relu(nn::linear(x, params[0], params[1], "ModalityMlp fc1"));
  h = relu(nn::linear(h, params[2], params[3], "ModalityMlp fc2"));
  return l2_normalize(nn::linear(h, params[4], params[5], "ModalityMlp fc3"), 1, norm_eps);
}

MlpPrototypeModel::MlpPrototypeModel(const MlpPrototypeConfig& config, DType dtype, Generator* gen)
    : config_(config) {
  REMATCH_CHECK(config.num_classes > 0 && config.output_dim > 0 && config.hidden_dim > 0 && config.img_dim > 0 &&
                    config.txt_dim > 0,
                "MlpPrototypeModel: every width and num_classes must be positive (img_dim ", config.img_dim,
                ", txt_dim ", config.txt_dim, ", hidden_dim ", config.hidden_dim, ", output_dim ", config.output_dim,
                ", num_classes ", config.num_classes, ")");
  prototypes_ = register_parameter("C", empty({config.output_dim, config.num_classes}, dtype));
  const int64_t hidden = config.hidden_dim, out = config.output_dim;
  img_net_ = register_module("img_net", std::make_shared<ModalityMlp>(config.img_dim, hidden, out, dtype, gen,
                                                                           config.norm_eps));
  txt_net_ = register_module("txt_net", std::make_shared<ModalityMlp>(config.txt_dim, hidden, out, dtype, gen,
                                                                           config.norm_eps));
  // MRL: orthogonal(L×L)[:, :K]. orthogonal_ on [L, K] draws the same (Haar) distribution of K orthonormal
  // columns when K <= L; when K > L the rows are orthonormal instead and the columns are then scaled to 1.
  nn::orthogonal_(prototypes_, 1.0, gen);
  renormalize_prototypes();
}

Tensor MlpPrototypeModel::prototype_logits(const Tensor& z, const Tensor& prototypes, double tau) {
  REMATCH_CHECK(tau > 0, "MlpPrototypeModel: tau must be positive, got ", tau);
  REMATCH_CHECK(z.dim() == 2 && prototypes.dim() == 2 && z.size(1) == prototypes.size(0),
                "MlpPrototypeModel: embeddings ", z.describe(), " and prototypes ", prototypes.describe(),
                " must be [N, L] and [L, K]");
  const Tensor scores = matmul(z, prototypes);
  return tau == 1.0 ? scores : div(scores, tau);
}

Tensor MlpPrototypeModel::class_probs(const Tensor& z, double tau) const {
  return softmax(prototype_logits(z, prototypes_, tau), 1);
}

void MlpPrototypeModel::renormalize_prototypes() {
  NoGradGuard no_grad;
  const Tensor squares = kernels::binary(kernels::BinaryOp::Mul, prototypes_, prototypes_);
  const Tensor norms =
      kernels::unary(kernels::UnaryOp::Sqrt, kernels::reduce(kernels::ReduceOp::Sum, squares, {0}, true));
  kernels::copy_(prototypes_, kernels::binary(kernels::BinaryOp::Div, prototypes_, norms));
}

}  // namespace rematch::models
