// SGR/SAF scoring under a memory budget (docs/memory.md §2; SimilarityEncoder::per_caption_logits,
// models/scoring_budget.h): in training mode, whenever the budget is smaller than one pass needs, the
// [B_img, B_cap] logits and every gradient (each parameter of the encoder, the image and caption embeddings)
// are the same to the bit at every such budget and at 1 and 2 threads, and equal the one pass's to rounding;
// SAF's running statistics move as in one pass and backward does not move them again; the budget decides.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <omp.h>

#include "models/scoring_budget.h"
#include "models/similarity_encoder.h"
#include "model_test_util.h"

namespace rematch::models {
namespace {

SgrafConfig small(SimilarityModule module) {
  SgrafConfig c;
  c.module = module;
  c.vocab_size = 10;
  c.embed_size = 8;
  c.sim_dim = 6;
  c.num_regions = 5;
  c.sgr_step = 3;
  c.dropout = 0.0;
  return c;
}

Tensor padded_words(const std::vector<int64_t>& len, int64_t L, int64_t d, uint32_t seed, DType dtype) {
  const Tensor mask =
      unsqueeze(rematch::to(lt(unsqueeze(arange(L), 0), unsqueeze(test::lengths_tensor(len), 1)), dtype), 2);
  return mul(rematch::to(test::unit_rows({static_cast<int64_t>(len.size()), L, d}, seed), dtype), mask);
}

struct Result {
  Tensor logits;
  std::vector<Tensor> grads;  // every parameter's, then the image and caption embeddings'
  std::vector<double> buffers;
  std::vector<std::string> names;
};

// One training step of the encoder alone, through logits() under `budget` (bytes; 0: no limit, one pass).
Result step(SimilarityEncoder& enc, const nn::StateDict& start, const Tensor& img0, const Tensor& cap0,
            const Tensor& lengths, const Tensor& weights, int64_t budget) {
  set_scoring_memory_budget(budget);
  enc.load_state_dict(start);
  enc.zero_grad();
  const Tensor img = img0.detach().requires_grad_(true), cap = cap0.detach().requires_grad_(true);
  const CaptionSide captions = enc.encode_captions(cap, lengths);
  const ImageSide images = enc.encode_images(img);
  Result r;
  EXPECT_EQ(enc.over_budget(images, captions), budget > 0);
  r.logits = enc.logits(images, captions);
  for (const auto& [name, b] : enc.named_buffers())
    if (name.rfind("SAF_module", 0) == 0) r.buffers.push_back(b.item<double>());
  backward(sum(mul(r.logits, weights)));
  for (const auto& [name, b] : enc.named_buffers())
    if (name.rfind("SAF_module", 0) == 0) r.buffers.push_back(b.item<double>());
  set_scoring_memory_budget(std::nullopt);
  for (const auto& [name, p] : enc.named_parameters()) {
    r.names.push_back(name);
    r.grads.push_back(p.grad().defined() ? p.grad() : zeros_like(p));
  }
  r.grads.push_back(img.grad());
  r.grads.push_back(cap.grad());
  return r;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.sizes() != b.sizes()) return false;
  const std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i)
    if (!(x[i] == y[i] || (std::isnan(x[i]) && std::isnan(y[i])))) return false;
  return true;
}

double max_difference(const Tensor& a, const Tensor& b) {
  const std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  double diff = 0;
  for (size_t i = 0; i < x.size(); ++i) diff = std::max(diff, std::abs(x[i] - y[i]));
  return diff;
}

double max_abs(const std::vector<Tensor>& ts) {
  double m = 0;
  for (const Tensor& t : ts)
    for (double v : t.to_vector<double>()) m = std::max(m, std::abs(v));
  return m;
}

// A copy that does not follow the model (state_dict() returns its live tensors).
nn::StateDict copied(const nn::StateDict& state) {
  nn::StateDict out;
  for (const auto& [name, t] : state) out.emplace_back(name, kernels::clone(t));
  return out;
}

void check_budgets(SimilarityModule module, DType dtype, double rounding) {
  const std::vector<int64_t> len = {6, 3, 1, 5, 4, 2, 6};
  const int64_t n_img = 5, n_cap = static_cast<int64_t>(len.size()), L = 6;
  SimilarityEncoder enc(small(module), dtype);
  enc.train();
  const nn::StateDict start = copied(enc.state_dict());
  const Tensor img = rematch::to(test::unit_rows({n_img, 5, 8}, 1), dtype);
  const Tensor cap = padded_words(len, L, 8, 2, dtype);
  const Tensor lengths = test::lengths_tensor(len);
  const Tensor weights = rematch::to(test::unit_rows({n_img, n_cap}, 3), dtype);
  const int64_t per_caption = pair_bytes_per_caption(n_img, L, 5, 8, 6, module == SimilarityModule::SGR ? 3 : 0, dtype);
  const Result one = step(enc, start, img, cap, lengths, weights, 0);
  const Result first = step(enc, start, img, cap, lengths, weights, 1);
  const double scale = max_abs(one.grads);
  for (int64_t budget : {int64_t{1}, per_caption, 3 * per_caption, (n_cap - 1) * per_caption}) {
    for (int threads : {1, 2}) {
      SCOPED_TRACE("budget " + std::to_string(budget) + " bytes, " + std::to_string(threads) + " threads");
      const int before = omp_get_max_threads();
      omp_set_num_threads(threads);
      const Result r = step(enc, start, img, cap, lengths, weights, budget);
      omp_set_num_threads(before);
      EXPECT_TRUE(same_bits(r.logits, first.logits)) << "logits differ between budgets";
      EXPECT_LE(max_difference(r.logits, one.logits), rounding) << "logits against the one pass";
      ASSERT_EQ(r.grads.size(), one.grads.size());
      for (size_t k = 0; k < r.grads.size(); ++k) {
        const std::string what = k < one.names.size() ? one.names[k] : k == one.names.size() ? "images" : "captions";
        EXPECT_TRUE(same_bits(r.grads[k], first.grads[k])) << "gradient of " << what << " differs between budgets";
        // Against the scale of all gradients: some are 0 but for rounding (the biases before a softmax).
        EXPECT_LE(max_difference(r.grads[k], one.grads[k]), rounding * scale) << "gradient of " << what;
        // Every gradient that is more than rounding reaches its tensor (a bias before a softmax has gradient 0 but
        // for rounding, which may well round to 0 exactly).
        if (max_abs({one.grads[k]}) > rounding * scale) EXPECT_GT(max_abs({r.grads[k]}), 0.0) << what;
      }
      EXPECT_EQ(r.buffers, first.buffers);
    }
  }
  if (module == SimilarityModule::SAF) {
    // (mean, var, count) after the forward pass, then after backward: backward leaves them; one pass's to rounding.
    ASSERT_EQ(first.buffers.size(), 6u);
    EXPECT_EQ(std::vector<double>(first.buffers.begin(), first.buffers.begin() + 3),
              std::vector<double>(first.buffers.begin() + 3, first.buffers.end()));
    for (size_t i = 0; i < 6; ++i) EXPECT_NEAR(first.buffers[i], one.buffers[i], rounding * 10) << i;
    EXPECT_EQ(first.buffers[2], static_cast<double>(n_cap));  // one update per caption
  }
}

TEST(ChunkedScoring, SgrIsTheSameToTheBitAtEveryBudgetFloat64) { check_budgets(SimilarityModule::SGR, DType::Float64, 1e-13); }
TEST(ChunkedScoring, SafIsTheSameToTheBitAtEveryBudgetFloat64) { check_budgets(SimilarityModule::SAF, DType::Float64, 1e-13); }
TEST(ChunkedScoring, SgrIsTheSameToTheBitAtEveryBudgetFloat32) { check_budgets(SimilarityModule::SGR, DType::Float32, 1e-5); }
TEST(ChunkedScoring, SafIsTheSameToTheBitAtEveryBudgetFloat32) { check_budgets(SimilarityModule::SAF, DType::Float32, 1e-5); }

TEST(ChunkedScoring, TheBudgetDecidesAndNoneIsOnePass) {
  SimilarityEncoder enc(small(SimilarityModule::SGR), DType::Float32);
  enc.train();
  const std::vector<int64_t> len = {6, 3, 1, 5};
  const CaptionSide captions = enc.encode_captions(padded_words(len, 6, 8, 2, DType::Float32), test::lengths_tensor(len));
  const ImageSide images = enc.encode_images(rematch::to(test::unit_rows({5, 5, 8}, 1), DType::Float32));
  const int64_t per_caption = pair_bytes_per_caption(5, 6, 5, 8, 6, 3, DType::Float32);
  set_scoring_memory_budget(4 * per_caption);  // one pass fits
  EXPECT_FALSE(enc.over_budget(images, captions));
  set_scoring_memory_budget(4 * per_caption - 1);
  EXPECT_TRUE(enc.over_budget(images, captions));
  set_scoring_memory_budget(0);  // none
  EXPECT_FALSE(enc.over_budget(images, captions));
  set_scoring_memory_budget(1);
  {
    NoGradGuard no_grad;  // nothing kept: one pass
    EXPECT_FALSE(enc.over_budget(images, captions));
  }
  set_scoring_memory_budget(std::nullopt);
  EXPECT_GT(scoring_memory_budget(Device::cpu()), 0);
}

TEST(ChunkedScoring, TheBudgetFlagParsesSizesAndNamesWhatItAccepts) {
  EXPECT_EQ(parse_memory_budget("auto", "--memory_budget"), std::nullopt);
  EXPECT_EQ(parse_memory_budget("none", "--memory_budget"), 0);
  EXPECT_EQ(parse_memory_budget("512MiB", "--memory_budget"), int64_t{512} << 20);
  EXPECT_EQ(parse_memory_budget("2GiB", "--memory_budget"), int64_t{2} << 30);
  EXPECT_EQ(parse_memory_budget("1500", "--memory_budget"), 1500);
  EXPECT_EQ(parse_memory_budget("3GB", "--memory_budget"), 3000000000);
  EXPECT_THROWS_WITH(parse_memory_budget("lots", "--memory_budget"), "--memory_budget lots", "512MiB");
  EXPECT_THROWS_WITH(parse_memory_budget("0MiB", "--memory_budget"), "must be positive");
  EXPECT_THROWS_WITH(parse_memory_budget("12XB", "--memory_budget"), "expected auto, none");
}

}  // namespace
}  // namespace rematch::models
