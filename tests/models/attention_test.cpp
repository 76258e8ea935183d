// Text-to-image attention (docs/backbones.md §4.3): the batched weights against the five steps written out per
// pair with scalar loops on the caption's real words only, padding values without effect, and float64
// gradients of the weights and of the attended vectors.
#include "models/attention.h"

#include <cmath>

#include "model_test_util.h"
#include "models/padding.h"

namespace rematch::models {
namespace {

// α for one image and one caption of `len` real words, straight from §4.3 (regions [R, d], words [L, d]).
std::vector<double> alpha_by_hand(const Tensor& regions, const Tensor& words, int64_t len) {
  const int64_t R = regions.size(0), d = regions.size(1);
  const std::vector<double> v = regions.to_vector<double>(), w = words.to_vector<double>();
  std::vector<double> s(R * len), alpha(len * R);
  for (int64_t r = 0; r < R; ++r) {
    double sq = 0;
    for (int64_t t = 0; t < len; ++t) {
      double dot = 0;
      for (int64_t k = 0; k < d; ++k) dot += v[r * d + k] * w[t * d + k];
      s[r * len + t] = dot > 0 ? dot : 0.1 * dot;
      sq += s[r * len + t] * s[r * len + t];
    }
    for (int64_t t = 0; t < len; ++t) s[r * len + t] /= std::sqrt(sq) + 1e-8;
  }
  for (int64_t t = 0; t < len; ++t) {
    double z = 0;
    for (int64_t r = 0; r < R; ++r) z += std::exp(9 * s[r * len + t]);
    for (int64_t r = 0; r < R; ++r) alpha[t * R + r] = std::exp(9 * s[r * len + t]) / z;
  }
  return alpha;
}

TEST(Attention, WeightsEqualThePerPairDefinition) {
  const std::vector<int64_t> len = {4, 2, 3};
  const Tensor regions = test::unit_rows({2, 5, 6}, 1), words = test::unit_rows({3, 4, 6}, 2);
  const Tensor mask = word_mask(test::lengths_tensor(len), 4);
  const Tensor alpha = attention_weights(regions, words, mask);
  ASSERT_EQ(alpha.sizes(), (Shape{2, 3, 4, 5}));
  for (int64_t k = 0; k < 2; ++k)
    for (int64_t c = 0; c < 3; ++c) {
      const Tensor real = narrow(select(select(alpha, 0, k), 0, c), 0, 0, len[c]);
      const Tensor caption = narrow(select(words, 0, c), 0, 0, len[c]);
      EXPECT_TRUE(test::values_equal(real, alpha_by_hand(select(regions, 0, k), caption, len[c]), 1e-13))
          << "image " << k << " caption " << c;
    }
  // The attended vectors: l2n(Σ_r α v_r).
  const Tensor a = attended_regions(alpha, regions);
  ASSERT_EQ(a.sizes(), (Shape{2, 3, 4, 6}));
  const Tensor one = l2_normalize(matmul(select(select(alpha, 0, 1), 0, 2), select(regions, 0, 1)), -1);
  EXPECT_TRUE(test::all_close(select(select(a, 0, 1), 0, 2), one, 1e-14, 0));
}

TEST(Attention, PaddingValuesChangeNoRealWord) {
  const Tensor regions = test::unit_rows({2, 3, 4}, 3), words = test::unit_rows({2, 3, 4}, 4);
  const Tensor mask = word_mask(test::lengths_tensor({3, 1}), 3);
  const Tensor noisy = where(unsqueeze(mask, 2), words, full({}, 5.0, DType::Float64));
  const Tensor a = attention_weights(regions, words, mask), b = attention_weights(regions, noisy, mask);
  EXPECT_TRUE(test::all_close(select(a, 1, 0), select(b, 1, 0), 0, 0));
  EXPECT_TRUE(test::all_close(narrow(select(a, 1, 1), 1, 0, 1), narrow(select(b, 1, 1), 1, 0, 1), 0, 0));
}

TEST(Attention, Errors) {
  const Tensor mask = word_mask(test::lengths_tensor({2}), 2);
  EXPECT_THROWS_WITH(attention_weights(zeros({2, 3, 4}), zeros({1, 2, 5}), mask), "attention_weights", "[2, 3, 4]",
                     "[1, 2, 5]");
  EXPECT_THROWS_WITH(attention_weights(zeros({2, 3, 4}), zeros({1, 3, 4}), mask), "word_mask", "[1, 3]");
  EXPECT_THROWS_WITH(attended_regions(zeros({2, 1, 2, 3}), zeros({2, 4, 5})), "attended_regions");
}

TEST(Attention, Gradcheck) {
  const Tensor mask = word_mask(test::lengths_tensor({3, 2}), 3);
  EXPECT_GRADCHECK([&](const TensorList& t) { return attention_weights(t[0], t[1], mask); },
                   {test::unit_rows({2, 3, 3}, 5), test::unit_rows({2, 3, 3}, 6)});
  EXPECT_GRADCHECK([&](const TensorList& t) { return attended_regions(softmax(t[0], -1), t[1]); },
                   {test::random_tensor({2, 2, 3, 3}, DType::Float64, 7), test::unit_rows({2, 3, 4}, 8)});
}

}  // namespace
}  // namespace rematch::models
