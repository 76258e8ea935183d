// UOT-RCL's MLP encoders and prototypes (models/mlp_prototype.h, docs/methods/uotrcl.md §4.2): names and counts,
// prototype initialisation and renormalisation, golden fixtures from tests/reference/mlp_reference.py in
// float64 and float32, float64 gradchecks, and errors.
#include <string>

#include "models/mlp_prototype.h"
#include "test_util.h"

namespace rematch {
namespace {

using models::MlpPrototypeConfig;
using models::MlpPrototypeModel;
using models::ModalityMlp;
using test::all_close;
using test::random_tensor;

Tensor mlp_fixture(const std::string& name) {
  return load_npy(std::string(REMATCH_FIXTURES) + "/mlp/" + name + ".npy");
}

// The sizes of mlp_reference.py.
MlpPrototypeConfig golden_config() {
  MlpPrototypeConfig c;
  c.img_dim = 7;
  c.txt_dim = 5;
  c.hidden_dim = 9;
  c.output_dim = 6;
  c.num_classes = 4;
  return c;
}

Tensor column_gram(const Tensor& c) { return matmul(transpose(c, 0, 1), c); }

TEST(MlpPrototypeModel, StateDictNamesAndFullSizeCounts) {
  Generator gen(1);
  MlpPrototypeModel model(golden_config(), DType::Float32, &gen);
  const std::vector<std::string> want = {"C",
                                         "img_net.fc1.weight", "img_net.fc1.bias", "img_net.fc2.weight",
                                         "img_net.fc2.bias",   "img_net.fc3.weight", "img_net.fc3.bias",
                                         "txt_net.fc1.weight", "txt_net.fc1.bias", "txt_net.fc2.weight",
                                         "txt_net.fc2.bias",   "txt_net.fc3.weight", "txt_net.fc3.bias"};
  const nn::StateDict sd = model.state_dict();
  ASSERT_EQ(sd.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) EXPECT_EQ(sd[k].first, want[k]);
  EXPECT_EQ(model.prototypes().sizes(), (Shape{6, 4}));

  // MRL's ImageNet(4096 → 4096 → 4096 → 512) and TextNet(300 → ...), XMediaNet's K = 200 prototypes.
  ModalityMlp image(4096, 4096, 512, DType::Float32, &gen), text(300, 4096, 512, DType::Float32, &gen);
  EXPECT_EQ(image.parameter_count(), 35660288);
  EXPECT_EQ(text.parameter_count(), 20111872);
}

TEST(MlpPrototypeModel, PrototypesStartOrthonormal) {
  Generator gen(2);
  MlpPrototypeModel model(golden_config(), DType::Float64, &gen);
  // K = 4 <= L = 6: orthonormal columns, CᵀC = I.
  EXPECT_TRUE(all_close(column_gram(model.prototypes()), eye(4, 4, DType::Float64), 1e-12, 0));
  // K > L: the columns cannot be orthogonal but are still unit length.
  MlpPrototypeConfig wide = golden_config();
  wide.num_classes = 10;
  MlpPrototypeModel many(wide, DType::Float64, &gen);
  const Tensor norms = sum(mul(many.prototypes(), many.prototypes()), {0});
  EXPECT_TRUE(all_close(norms, ones({10}, DType::Float64), 1e-12, 0));
}

TEST(MlpPrototypeModel, RenormalizeKeepsTheHandleAndUnitColumns) {
  Generator gen(3);
  MlpPrototypeModel model(golden_config(), DType::Float64, &gen);
  const Tensor handle = model.prototypes();
  {
    NoGradGuard no_grad;
    kernels::copy_(handle, kernels::binary(kernels::BinaryOp::Mul, handle,
                                           from_vector<double>({0.5, 2.0, 3.0, 0.1}, {1, 4})));
  }
  const Tensor before = kernels::clone(handle);
  model.renormalize_prototypes();
  EXPECT_TRUE(model.prototypes().same(handle));
  EXPECT_TRUE(all_close(column_gram(handle), eye(4, 4, DType::Float64), 1e-12, 0));
  // Directions are unchanged: column 1 was scaled by 2.
  EXPECT_TRUE(all_close(select(handle, 1, 1), div(select(before, 1, 1), 2.0), 1e-14, 0));
}

TEST(MlpPrototypeModel, EmbeddingsAreUnitAndProbabilitiesSumToOne) {
  Generator gen(4);
  MlpPrototypeModel model(golden_config(), DType::Float64, &gen);
  const Tensor z = model.encode_images(random_tensor({8, 7}, DType::Float64, 5, -2, 2));
  // y / (‖y‖ + 1e-8) has squared norm 1 − 2e-8/‖y‖ + ...: unit to within 1e-6 for ‖y‖ >= 0.02.
  EXPECT_TRUE(all_close(sum(mul(z, z), {1}), ones({8}, DType::Float64), 1e-6, 0));
  const Tensor p = model.class_probs(z, 0.3);
  EXPECT_TRUE(all_close(sum(p, {1}), ones({8}, DType::Float64), 1e-12, 0));
  // τ₁ = 1 is the plain softmax of μᵀz.
  EXPECT_TRUE(all_close(model.class_probs(z), softmax(matmul(z, model.prototypes()), 1), 0, 0));
}

void check_golden(DType dtype, double atol, double rtol) {
  Generator gen(5);
  MlpPrototypeModel model(golden_config(), dtype, &gen);
  nn::StateDict official;
  for (const auto& [name, value] : model.state_dict()) official.emplace_back(name, mlp_fixture("state." + name));
  model.load_state_dict(official);
  const double tau = 0.5;
  const Tensor z_img = model.encode_images(kernels::cast(mlp_fixture("x_img"), dtype));
  const Tensor z_txt = model.encode_texts(kernels::cast(mlp_fixture("x_txt"), dtype));
  const Tensor p_img = model.class_probs(z_img, tau), p_txt = model.class_probs(z_txt, tau);
  EXPECT_TRUE(all_close(z_img, mlp_fixture("z_img"), atol, rtol));
  EXPECT_TRUE(all_close(z_txt, mlp_fixture("z_txt"), atol, rtol));
  EXPECT_TRUE(all_close(model.logits(z_img, tau), mlp_fixture("logits_img"), atol, rtol));
  EXPECT_TRUE(all_close(model.logits(z_txt, tau), mlp_fixture("logits_txt"), atol, rtol));
  EXPECT_TRUE(all_close(p_img, mlp_fixture("p_img"), atol, rtol));
  EXPECT_TRUE(all_close(p_txt, mlp_fixture("p_txt"), atol, rtol));
  auto w = [&](int k) { return kernels::cast(mlp_fixture("w" + std::to_string(k)), dtype); };
  const Tensor loss = add(add(sum(mul(p_img, w(1))), sum(mul(p_txt, w(2)))),
                          add(sum(mul(z_img, w(3))), sum(mul(z_txt, w(4)))));
  backward(loss);
  for (const auto& [name, p] : model.named_parameters()) {
    ASSERT_TRUE(p.grad().defined()) << name;
    EXPECT_TRUE(all_close(p.grad(), mlp_fixture("grad." + name), atol, rtol)) << name;
  }
}

TEST(MlpPrototypeModel, MatchesPyTorchInFloat64) {
  // Same arithmetic in the same precision; only summation order differs (observed worst 1.1e-15 absolute).
  check_golden(DType::Float64, 1e-12, 1e-10);
}

TEST(MlpPrototypeModel, MatchesPyTorchInFloat32) {
  // Float32 against the float64 reference: three matrix products of width <= 9, a normalisation and a
  // softmax keep the error at a few ulps of O(1) values. Observed worst: 8e-8 absolute on the outputs,
  // 1.1e-6 on the gradients (the largest is 7.3); 1e-5 absolute plus 1e-4 relative leaves a margin of 10
  // while formula errors are orders of magnitude larger.
  check_golden(DType::Float32, 1e-5, 1e-4);
}

TEST(ModalityMlp, Gradcheck) {
  Generator gen(6);
  ModalityMlp net(3, 4, 3, DType::Float64, &gen);
  TensorList inputs{random_tensor({4, 3}, DType::Float64, 7, -2, 2)};
  for (const Tensor& p : net.parameters()) inputs.push_back(kernels::clone(p));
  EXPECT_GRADCHECK(
      [](const TensorList& in) { return ModalityMlp::forward_with(TensorList(in.begin() + 1, in.end()), in[0]); },
      inputs);
}

TEST(MlpPrototypeModel, GradcheckOfThePrototypeProbabilities) {
  EXPECT_GRADCHECK(
      [](const TensorList& in) { return softmax(MlpPrototypeModel::prototype_logits(in[0], in[1], 0.7), 1); },
      {random_tensor({3, 4}, DType::Float64, 8), random_tensor({4, 5}, DType::Float64, 9)});
}

TEST(MlpPrototypeModel, RejectsBadConfigurationsAndInputs) {
  MlpPrototypeConfig c = golden_config();
  c.num_classes = 0;
  EXPECT_THROWS_WITH(MlpPrototypeModel bad(c), "num_classes 0");
  Generator gen(10);
  MlpPrototypeModel model(golden_config(), DType::Float32, &gen);
  EXPECT_THROWS_WITH(model.encode_images(zeros({2, 5})), "fc1");
  EXPECT_THROWS_WITH(model.class_probs(zeros({2, 5})), "[N, L] and [L, K]");
  EXPECT_THROWS_WITH(model.class_probs(zeros({2, 6}), 0.0), "tau");
}

}  // namespace
}  // namespace rematch
