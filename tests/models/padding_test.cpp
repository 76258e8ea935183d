// Caption masks of the batched similarity computation and the length checks.
#include "models/padding.h"

#include "model_test_util.h"

namespace rematch::models {
namespace {

TEST(Padding, WordAndNodeMasks) {
  const Tensor lengths = test::lengths_tensor({3, 1, 4});
  EXPECT_TRUE(test::values_equal(word_mask(lengths, 4), {1, 1, 1, 0, 1, 0, 0, 0, 1, 1, 1, 1}));
  EXPECT_EQ(word_mask(lengths, 4).dtype(), DType::Bool);
  // Node 0 is the global alignment and always real; node t + 1 is word t.
  EXPECT_TRUE(test::values_equal(node_mask(lengths, 4), {1, 1, 1, 1, 0, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1}));
}

TEST(Padding, LengthChecksNameTheCaller) {
  check_lengths(test::lengths_tensor({2, 5}), 2, 5, "who");
  EXPECT_THROWS_WITH(check_lengths(test::lengths_tensor({2, 6}), 2, 5, "who"), "who", "caption 1", "6", "1..5");
  EXPECT_THROWS_WITH(check_lengths(test::lengths_tensor({0}), 1, 5, "who"), "caption 0", "length 0");
  EXPECT_THROWS_WITH(check_lengths(test::lengths_tensor({2, 2}), 3, 5, "who"), "int64 [3]");
  EXPECT_THROWS_WITH(check_lengths(from_vector(std::vector<int32_t>{2}), 1, 5, "who"), "int64 [1]", "int32");
}

}  // namespace
}  // namespace rematch::models
