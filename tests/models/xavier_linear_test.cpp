// xavier_linear (docs/backbones.md §1): weight ~ U(-a, a) with a = √(6 / (in + out)) filling the interval, zero
// bias, reproducible from the generator.
#include "models/xavier_linear.h"

#include <algorithm>
#include <cmath>

#include "model_test_util.h"

namespace rematch::models {
namespace {

TEST(XavierLinear, UniformWithinTheGlorotBoundAndZeroBias) {
  Generator gen(4);
  const auto layer = xavier_linear(48, 16, DType::Float64, &gen);
  const double a = std::sqrt(6.0 / (48 + 16));
  const std::vector<double> w = layer->weight().to_vector<double>();
  EXPECT_LE(*std::max_element(w.begin(), w.end()), a);
  EXPECT_GE(*std::min_element(w.begin(), w.end()), -a);
  EXPECT_GT(*std::max_element(w.begin(), w.end()), 0.9 * a);
  EXPECT_LT(*std::min_element(w.begin(), w.end()), -0.9 * a);
  EXPECT_TRUE(test::values_equal(layer->bias(), std::vector<double>(16, 0.0)));
  Generator same(4);
  EXPECT_TRUE(test::all_close(xavier_linear(48, 16, DType::Float64, &same)->weight(), layer->weight(), 0, 0));
}

}  // namespace
}  // namespace rematch::models
