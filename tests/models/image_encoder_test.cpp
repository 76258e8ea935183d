// ImageEncoder (docs/backbones.md §2): names and shapes, Xavier initialisation, unit region vectors, the shape
// error, and float64 gradients w.r.t. the features and both parameters.
#include "models/image_encoder.h"

#include <algorithm>
#include <cmath>

#include "model_test_util.h"

namespace rematch::models {
namespace {

TEST(ImageEncoder, NamesShapesAndXavierInit) {
  Generator gen(3);
  ImageEncoder enc(20, 12, DType::Float32, &gen);
  const nn::StateDict sd = enc.state_dict();
  ASSERT_EQ(sd.size(), 2u);
  EXPECT_EQ(sd[0].first, "fc.weight");
  EXPECT_EQ(sd[0].second.sizes(), (Shape{12, 20}));
  EXPECT_EQ(sd[1].first, "fc.bias");
  const double bound = std::sqrt(6.0 / (20 + 12));
  const std::vector<float> w = sd[0].second.to_vector<float>();
  for (float v : w) EXPECT_LE(std::fabs(v), bound);
  EXPECT_GT(*std::max_element(w.begin(), w.end()), 0.8 * bound);
  EXPECT_TRUE(test::values_equal(sd[1].second, std::vector<double>(12, 0.0)));
}

TEST(ImageEncoder, RegionVectorsAreUnit) {
  ImageEncoder enc(6, 5, DType::Float64);
  const Tensor out = enc(test::random_tensor({2, 3, 6}, DType::Float64, 1, 0, 1));
  EXPECT_EQ(out.sizes(), (Shape{2, 3, 5}));
  EXPECT_TRUE(test::all_close(norm(out, 2, {2}), ones({2, 3}, DType::Float64), 1e-6, 0));  // eps 1e-8 on the norm
  EXPECT_THROWS_WITH(enc(zeros({2, 3, 7}, DType::Float64)), "img_enc", "[B, R, 6]", "[2, 3, 7]");
}

TEST(ImageEncoder, Gradcheck) {
  ImageEncoder enc(4, 3, DType::Float64);
  auto f = [&](const TensorList& t) { return enc(t[0]); };
  EXPECT_GRADCHECK(test::over_parameters(enc, f, 1),
                   test::with_parameters(enc, {test::random_tensor({2, 2, 4}, DType::Float64, 2, 0, 1)}));
}

}  // namespace
}  // namespace rematch::models
