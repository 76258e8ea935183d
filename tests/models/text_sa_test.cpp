// TextSA (docs/backbones.md §4.2): names, a padded batch equal to each caption run alone on its real words (the
// official per-caption call), padding values without effect, and float64 gradients through the masks.
#include "models/text_sa.h"

#include "model_test_util.h"
#include "models/padding.h"

namespace rematch::models {
namespace {

TEST(TextSA, StateDictNames) {
  TextSA sa(6);
  std::vector<std::string> names;
  for (const auto& [n, t] : sa.state_dict()) names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"embedding_local.0.weight", "embedding_local.0.bias",
                                             "embedding_global.0.weight", "embedding_global.0.bias",
                                             "embedding_common.0.weight", "embedding_common.0.bias"}));
}

TEST(TextSA, PaddedBatchEqualsEachCaptionAlone) {
  TextSA sa(4, 0.4, DType::Float64);
  sa.eval();
  const std::vector<int64_t> len = {5, 2, 3};
  const Tensor lengths = test::lengths_tensor(len);
  Tensor words = test::unit_rows({3, 5, 4}, 1);
  const Tensor mask = word_mask(lengths, 5);
  const Tensor batched = sa(words, mask);
  for (int64_t c = 0; c < 3; ++c) {
    const Tensor alone = narrow(narrow(words, 0, c, 1), 1, 0, len[c]);
    const Tensor want = sa(alone, word_mask(test::lengths_tensor({len[c]}), len[c]));
    EXPECT_TRUE(test::all_close(narrow(batched, 0, c, 1), want, 1e-14, 0)) << "caption " << c;
  }
  // Garbage in the padding changes nothing.
  const Tensor noisy = where(unsqueeze(mask, 2), words, full({}, 7.0, DType::Float64));
  EXPECT_TRUE(test::all_close(sa(noisy, mask), batched, 0, 0));
}

TEST(TextSA, Gradcheck) {
  TextSA sa(3, 0.0, DType::Float64);
  sa.train();
  const Tensor mask = word_mask(test::lengths_tensor({3, 1}), 3);
  auto f = [&](const TensorList& t) { return sa(t[0], mask); };
  EXPECT_GRADCHECK(test::over_parameters(sa, f, 1), test::with_parameters(sa, {test::unit_rows({2, 3, 3}, 2)}));
}

}  // namespace
}  // namespace rematch::models
