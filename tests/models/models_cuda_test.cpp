// Every model on the GPU against the same model on the CPU: SGR, SAF, RCSL's VSE, UOT-RCL's
// MLP + prototypes and L2RM's cost net, each built twice from the same seed (identical weights), one copy moved
// to cuda:0. In training mode (dropout masks from the same Philox stream on both devices, BatchNorm on batch
// statistics) the forward outputs, the gradient of every parameter after one backward pass and the BatchNorm
// running statistics agree: in float64 to 1e-9 (both sides exact to ~1e-15 per op; what differs is the order
// of sums), in float32 at a larger size to 2e-4 relative (a few ulp per op through ~40 ops).
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "models/cost_net.h"
#include "models/mlp_prototype.h"
#include "models/sgraf_model.h"
#include "models/vse_model.h"
#include "test_util.h"

namespace rematch {
namespace {

using test::random_index;
using test::random_tensor;

Tensor on(const Tensor& x, Device device) { return to(x, device); }
Tensor host(const Tensor& x) { return to(x, Device::cpu()); }

double atol_for(DType dtype) { return dtype == DType::Float64 ? 1e-9 : 2e-5; }
double rtol_for(DType dtype) { return dtype == DType::Float64 ? 1e-9 : 2e-4; }

// The CPU model's and the GPU model's parameters' gradients and buffers, name by name.
void expect_same_state(const nn::Module& gpu, const nn::Module& cpu, DType dtype, const std::string& what) {
  const nn::NamedTensors g = gpu.named_parameters(), c = cpu.named_parameters();
  ASSERT_EQ(g.size(), c.size()) << what;
  for (size_t i = 0; i < c.size(); ++i) {
    ASSERT_EQ(g[i].first, c[i].first) << what;
    ASSERT_TRUE(g[i].second.device().is_cuda()) << what << ": " << g[i].first << " is not on the GPU";
    // A parameter the forward never reads (VSE's unused mlp.bns.1, as in the official encoder) has none on both.
    ASSERT_EQ(g[i].second.grad().defined(), c[i].second.grad().defined()) << what << ": gradient of " << c[i].first;
    if (!c[i].second.grad().defined()) continue;
    EXPECT_TRUE(test::all_close(host(g[i].second.grad()), c[i].second.grad(), atol_for(dtype), rtol_for(dtype)))
        << what << ": gradient of " << c[i].first;
  }
  const nn::NamedTensors gb = gpu.named_buffers(), cb = cpu.named_buffers();
  ASSERT_EQ(gb.size(), cb.size()) << what;
  for (size_t i = 0; i < cb.size(); ++i)
    EXPECT_TRUE(test::all_close(host(gb[i].second), cb[i].second, atol_for(dtype), rtol_for(dtype)))
        << what << ": buffer " << cb[i].first;
}

// Σ w ⊙ y with fixed random weights w: a scalar whose gradient reaches every output entry differently.
Tensor weighted_sum(const Tensor& y, uint32_t seed) {
  const Tensor w = on(random_tensor(y.sizes(), y.dtype(), seed), y.device());
  return sum(mul(y, w));
}

struct CaptionBatch {
  Tensor ids, lengths;  // ids [B, T] (moved to the model's device), lengths int64 [B] (host)
};

// Captions of lengths `lengths` with <start>=1 … <end>=2 and ids in [4, vocab), <pad>=0 after.
CaptionBatch captions(const std::vector<int64_t>& lengths, int64_t vocab, uint32_t seed) {
  int64_t longest = 0;
  for (int64_t l : lengths) longest = std::max(longest, l);
  const int64_t n = static_cast<int64_t>(lengths.size());
  std::vector<int64_t> words = random_index({n, longest}, vocab - 4, seed).to_vector<int64_t>();
  std::vector<int64_t> ids(static_cast<size_t>(n * longest), 0);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t t = 0; t < lengths[static_cast<size_t>(b)]; ++t)
      ids[static_cast<size_t>(b * longest + t)] =
          t == 0 ? 1 : t + 1 == lengths[static_cast<size_t>(b)] ? 2 : 4 + words[static_cast<size_t>(b * longest + t)];
  return {from_vector(ids, {n, longest}), from_vector(lengths)};
}

models::SgrafConfig sgraf_config(models::SimilarityModule module, bool large) {
  models::SgrafConfig c;
  c.module = module;
  c.vocab_size = large ? 300 : 20;
  c.img_dim = large ? 64 : 6;
  c.word_dim = large ? 32 : 5;
  c.embed_size = large ? 64 : 8;
  c.sim_dim = large ? 32 : 4;
  c.num_regions = large ? 36 : 4;
  return c;  // sgr_step 3, dropout 0.4
}

// One training-mode forward of the B_img × B_cap score matrix and one backward, on both devices.
void expect_sgraf_matches(models::SimilarityModule module, DType dtype, bool large) {
  SKIP_WITHOUT_CUDA();
  const models::SgrafConfig config = sgraf_config(module, large);
  const std::string what = std::string(models::module_name(module)) + (large ? " float32, 36 regions" : " float64");
  Generator gen_cpu(7), gen_gpu(7);
  models::SgrafModel cpu(config, dtype, &gen_cpu), gpu(config, dtype, &gen_gpu);
  gpu.to(Device::cuda());
  const int64_t images = large ? 6 : 3;
  const Tensor regions = random_tensor({images, config.num_regions, config.img_dim}, dtype, 11, 0, 1);
  const CaptionBatch caps = captions(large ? std::vector<int64_t>{9, 19, 12, 14, 3, 11, 16}
                                           : std::vector<int64_t>{5, 3, 6, 2},
                                     config.vocab_size, 12);
  cpu.train();
  gpu.train();
  const Tensor want = cpu(regions, caps.ids, caps.lengths);
  const Tensor got = gpu(on(regions, Device::cuda()), on(caps.ids, Device::cuda()), caps.lengths);
  ASSERT_TRUE(got.device().is_cuda()) << what;
  EXPECT_TRUE(test::all_close(host(got), want, atol_for(dtype), rtol_for(dtype))) << what << ": scores";
  backward(weighted_sum(want, 13));
  backward(weighted_sum(got, 13));
  expect_same_state(gpu, cpu, dtype, what);

  // Evaluation mode: BatchNorm on the running statistics just updated, no dropout.
  cpu.eval();
  gpu.eval();
  NoGradGuard no_grad;
  EXPECT_TRUE(test::all_close(host(gpu(on(regions, Device::cuda()), on(caps.ids, Device::cuda()), caps.lengths)),
                              cpu(regions, caps.ids, caps.lengths), atol_for(dtype), rtol_for(dtype)))
      << what << ": eval-mode scores";
}

TEST(ModelsCuda, SgrFloat64) { expect_sgraf_matches(models::SimilarityModule::SGR, DType::Float64, false); }
TEST(ModelsCuda, SafFloat64) { expect_sgraf_matches(models::SimilarityModule::SAF, DType::Float64, false); }
TEST(ModelsCuda, SgrFloat32ThirtySixRegions) {
  expect_sgraf_matches(models::SimilarityModule::SGR, DType::Float32, true);
}
TEST(ModelsCuda, SafFloat32ThirtySixRegions) {
  expect_sgraf_matches(models::SimilarityModule::SAF, DType::Float32, true);
}

TEST(ModelsCuda, VseFloat64) {
  SKIP_WITHOUT_CUDA();
  models::VseConfig config;
  config.vocab_size = 20;
  config.img_dim = 6;
  config.word_dim = 5;
  config.embed_size = 8;  // text dropout 0.1 as configured
  Generator gen_cpu(3), gen_gpu(3);
  models::VseModel cpu(config, DType::Float64, &gen_cpu), gpu(config, DType::Float64, &gen_gpu);
  gpu.to(Device::cuda());
  const Tensor images = random_tensor({3, 5, 6}, DType::Float64, 21, 0, 1);
  const Tensor image_lengths = from_vector<int64_t>({5, 2, 4});
  const CaptionBatch caps = captions({6, 3, 4, 2}, config.vocab_size, 22);
  cpu.train();
  gpu.train();
  const models::VseEmbeddings want = cpu.forward(images, image_lengths, caps.ids, caps.lengths);
  const models::VseEmbeddings got =
      gpu.forward(on(images, Device::cuda()), image_lengths, on(caps.ids, Device::cuda()), caps.lengths);
  EXPECT_TRUE(test::all_close(host(got.images), want.images, 1e-9, 1e-9)) << "image embeddings";
  EXPECT_TRUE(test::all_close(host(got.captions), want.captions, 1e-9, 1e-9)) << "caption embeddings";
  backward(weighted_sum(models::VseModel::similarity(want.images, want.captions), 23));
  backward(weighted_sum(models::VseModel::similarity(got.images, got.captions), 23));
  expect_same_state(gpu, cpu, DType::Float64, "VSE");
}

TEST(ModelsCuda, MlpPrototypeFloat64) {
  SKIP_WITHOUT_CUDA();
  models::MlpPrototypeConfig config;
  config.img_dim = 12;
  config.txt_dim = 8;
  config.hidden_dim = 16;
  config.output_dim = 6;
  config.num_classes = 4;
  Generator gen_cpu(5), gen_gpu(5);
  models::MlpPrototypeModel cpu(config, DType::Float64, &gen_cpu), gpu(config, DType::Float64, &gen_gpu);
  gpu.to(Device::cuda());
  const Tensor x_v = random_tensor({10, 12}, DType::Float64, 31), x_t = random_tensor({10, 8}, DType::Float64, 32);
  const auto loss = [](models::MlpPrototypeModel& m, const Tensor& v, const Tensor& t) {
    return add(weighted_sum(m.logits(m.encode_images(v)), 33), weighted_sum(m.class_probs(m.encode_texts(t)), 34));
  };
  const Tensor want = loss(cpu, x_v, x_t);
  const Tensor got = loss(gpu, on(x_v, Device::cuda()), on(x_t, Device::cuda()));
  EXPECT_NEAR(host(got).item<double>(), want.item<double>(), 1e-9);
  backward(want);
  backward(got);
  expect_same_state(gpu, cpu, DType::Float64, "MLP + prototypes");
  cpu.renormalize_prototypes();
  gpu.renormalize_prototypes();
  EXPECT_TRUE(test::all_close(host(gpu.prototypes()), cpu.prototypes(), 1e-12, 1e-12)) << "renormalised prototypes";
}

TEST(ModelsCuda, CostNetFloat64) {
  SKIP_WITHOUT_CUDA();
  models::CostNet cpu(16, DType::Float64), gpu(16, DType::Float64);
  gpu.to(Device::cuda());
  const Tensor S = random_tensor({16, 16}, DType::Float64, 41, 0, 1);
  const Tensor want = cpu.forward(S);
  const Tensor got = gpu.forward(on(S, Device::cuda()));
  EXPECT_TRUE(test::all_close(host(got), want, 1e-12, 1e-12));
  backward(weighted_sum(want, 42));
  backward(weighted_sum(got, 42));
  expect_same_state(gpu, cpu, DType::Float64, "cost net");
}

}  // namespace
}  // namespace rematch
