// nn/functional.h: cross_entropy (hard and soft), kl_div, cosine_similarity_matrix, hinge and the VSE++
// hardest-negative triplet loss — PyTorch fixtures (tests/fixtures/nn_layers/{cross_entropy,
// cross_entropy_soft,kl_div,triplet}) for values and gradients in float64 and float32, float64 gradchecks
// w.r.t. every floating input, the reductions, and input errors.
#include <cmath>

#include "nn/nn.h"
#include "nn_layers_fixture.h"

namespace rematch {
namespace {

using nn::Reduction;
using test::nn_fixture;
using test::random_tensor;

Tensor rnd(const Shape& s, uint32_t seed, double lo = -2, double hi = 2) {
  return random_tensor(s, DType::Float64, seed, lo, hi);
}

// Rows that are probability distributions (all entries > 0).
Tensor probs(const Shape& s, uint32_t seed) { return softmax(rnd(s, seed), 1); }

// float32 tolerance of the golden checks below: the losses are log-softmax sums over K = 5 classes and at most
// 5 rows of O(1) values, so rounding the inputs to float32 and computing in float32 moves them by a few 1e-7
// (4e-7 measured, the triplet sum); 2e-6 absolute and relative keeps a margin while any formula error shows
// at 1e-2 or more.
constexpr double kF32Tol = 2e-6;

void check_cross_entropy(DType dtype, double tol) {
  Tensor logits = nn_fixture("cross_entropy", "logits", dtype);
  const Tensor target = nn_fixture("cross_entropy", "target");
  logits.requires_grad_(true);
  Tensor loss = nn::cross_entropy(logits, target);
  EXPECT_TRUE(test::all_close(loss, nn_fixture("cross_entropy", "loss_mean"), tol, tol));
  EXPECT_TRUE(test::all_close(nn::cross_entropy(logits, target, Reduction::Sum),
                              nn_fixture("cross_entropy", "loss_sum"), tol, tol));
  EXPECT_TRUE(test::all_close(nn::cross_entropy(logits, target, Reduction::None),
                              nn_fixture("cross_entropy", "loss_none"), tol, tol));
  backward(loss);
  EXPECT_TRUE(test::all_close(logits.grad(), nn_fixture("cross_entropy", "grad_logits"), tol, tol));
}

TEST(CrossEntropyGolden, MatchesTorchFloat64) { check_cross_entropy(DType::Float64, 1e-13); }
TEST(CrossEntropyGolden, MatchesTorchFloat32) { check_cross_entropy(DType::Float32, kF32Tol); }

void check_cross_entropy_soft(DType dtype, double tol) {
  Tensor logits = nn_fixture("cross_entropy_soft", "logits", dtype);
  Tensor p = nn_fixture("cross_entropy_soft", "probs", dtype);
  logits.requires_grad_(true);
  p.requires_grad_(true);
  Tensor loss = nn::cross_entropy_soft(logits, p);
  EXPECT_TRUE(test::all_close(loss, nn_fixture("cross_entropy_soft", "loss"), tol, tol));
  backward(loss);
  EXPECT_TRUE(test::all_close(logits.grad(), nn_fixture("cross_entropy_soft", "grad_logits"), tol, tol));
  EXPECT_TRUE(test::all_close(p.grad(), nn_fixture("cross_entropy_soft", "grad_probs"), tol, tol));
}

TEST(CrossEntropySoftGolden, MatchesTorchFloat64) { check_cross_entropy_soft(DType::Float64, 1e-13); }
TEST(CrossEntropySoftGolden, MatchesTorchFloat32) { check_cross_entropy_soft(DType::Float32, kF32Tol); }

// The fixture's target has one exact zero at [1, 2]: the loss uses 0·log 0 = 0 there; PyTorch's target
// gradient is NaN at that entry while ours is −input/N (functional.h), checked separately.
void check_kl_div(DType dtype, double tol) {
  Tensor input = nn_fixture("kl_div", "input", dtype), target = nn_fixture("kl_div", "target", dtype);
  input.requires_grad_(true);
  target.requires_grad_(true);
  Tensor loss = nn::kl_div(input, target);
  EXPECT_TRUE(test::all_close(loss, nn_fixture("kl_div", "loss"), tol, tol));
  EXPECT_TRUE(test::all_close(nn::kl_div(input, target, Reduction::None), nn_fixture("kl_div", "loss_none"), tol, tol));
  backward(loss);
  EXPECT_TRUE(test::all_close(input.grad(), nn_fixture("kl_div", "grad_input"), tol, tol));
  const std::vector<double> got = target.grad().to_vector<double>();
  const std::vector<double> want = nn_fixture("kl_div", "grad_target").to_vector<double>();
  const std::vector<double> in = nn_fixture("kl_div", "input").to_vector<double>();
  const int64_t n = input.size(0), zero_at = 1 * 5 + 2;
  ASSERT_TRUE(std::isnan(want[zero_at]));
  for (int64_t i = 0; i < static_cast<int64_t>(got.size()); ++i) {
    const double w = i == zero_at ? -in[i] / static_cast<double>(n) : want[i];
    EXPECT_NEAR(got[i], w, tol + tol * std::fabs(w)) << "element " << i;
  }
}

TEST(KlDivGolden, MatchesTorchFloat64) { check_kl_div(DType::Float64, 1e-13); }
TEST(KlDivGolden, MatchesTorchFloat32) { check_kl_div(DType::Float32, kF32Tol); }

void check_triplet(DType dtype, double tol) {
  const double margin = nn_fixture("triplet", "margin").item<double>();
  for (const char* tag : {"max", "sum"}) {
    Tensor s = nn_fixture("triplet", "scores", dtype);
    s.requires_grad_(true);
    Tensor loss = nn::hardest_negative_triplet(s, margin, std::string(tag) == "max");
    EXPECT_TRUE(test::all_close(loss, nn_fixture("triplet", std::string("loss_") + tag), tol, tol)) << tag;
    backward(loss);
    EXPECT_TRUE(test::all_close(s.grad(), nn_fixture("triplet", std::string("grad_") + tag), tol, tol)) << tag;
  }
}

TEST(TripletGolden, MatchesVsePlusPlusFloat64) { check_triplet(DType::Float64, 1e-13); }
TEST(TripletGolden, MatchesVsePlusPlusFloat32) { check_triplet(DType::Float32, kF32Tol); }

TEST(FunctionalGrad, CrossEntropyEveryReduction) {
  const Tensor target = from_vector<int64_t>({2, 0, 3});
  for (Reduction r : {Reduction::Mean, Reduction::Sum, Reduction::None})
    EXPECT_GRADCHECK([&](const TensorList& t) { return nn::cross_entropy(t[0], target, r); }, {rnd({3, 4}, 1)});
}

TEST(FunctionalGrad, CrossEntropySoftBothInputs) {
  EXPECT_GRADCHECK([](const TensorList& t) { return nn::cross_entropy_soft(t[0], t[1]); },
                   {rnd({3, 4}, 2), probs({3, 4}, 3)});
}

TEST(FunctionalGrad, KlDivBothInputs) {
  for (Reduction r : {Reduction::BatchMean, Reduction::Mean, Reduction::None})
    EXPECT_GRADCHECK([&](const TensorList& t) { return nn::kl_div(t[0], t[1], r); },
                     {log_softmax(rnd({3, 4}, 4), 1), probs({3, 4}, 5)});
}

TEST(FunctionalGrad, CosineSimilarityMatrixBothInputs) {
  EXPECT_GRADCHECK([](const TensorList& t) { return nn::cosine_similarity_matrix(t[0], t[1]); },
                   {rnd({3, 4}, 6), rnd({5, 4}, 7)});
}

TEST(FunctionalGrad, Hinge) {
  EXPECT_GRADCHECK([](const TensorList& t) { return nn::hinge(t[0], 0.3); }, {rnd({4, 3}, 8)});
}

TEST(FunctionalGrad, HardestNegativeTripletBothModes) {
  for (bool max_violation : {true, false})
    EXPECT_GRADCHECK([&](const TensorList& t) { return nn::hardest_negative_triplet(t[0], 0.2, max_violation); },
                     {rnd({4, 4}, 9, 0, 1)});
}

TEST(Functional, ReductionsAgree) {
  Tensor input = log_softmax(rnd({3, 4}, 10), 1), target = probs({3, 4}, 11);
  const double total = nn::kl_div(input, target, Reduction::Sum).item<double>();
  EXPECT_NEAR(nn::kl_div(input, target).item<double>(), total / 3, 1e-15);
  EXPECT_NEAR(nn::kl_div(input, target, Reduction::Mean).item<double>(), total / 12, 1e-15);
  EXPECT_NEAR(sum(nn::kl_div(input, target, Reduction::None)).item<double>(), total, 1e-15);
  // KL of a distribution with itself is 0, also where it has zeros.
  Tensor p = from_vector<double>({0.5, 0.5, 0, 1}, {2, 2});
  EXPECT_TRUE(test::values_equal(nn::kl_div(log(p), p, Reduction::None), {0, 0, 0, 0}, 1e-16));
}

TEST(Functional, CosineSimilarityMatrixValues) {
  Tensor a = from_vector<double>({3, 4, 0, 0, 1, 0}, {3, 2}), b = from_vector<double>({0, 2, -1, 0}, {2, 2});
  // Rows of a: (0.6, 0.8), zero, (1, 0); rows of b: (0, 1), (-1, 0); eps = 1e-8 on the norms moves these by
  // ~2e-8 relative.
  EXPECT_TRUE(test::values_equal(nn::cosine_similarity_matrix(a, b), {0.8, -0.6, 0, 0, 0, -1}, 1e-7));
}

TEST(Functional, TripletHandWorked) {
  // S = [[0.9, 0.8], [0.3, 0.5]], margin 0.2. Image 0: [0.2 + 0.8 − 0.9]_+ = 0.1; image 1: [0.2 + 0.3 − 0.5]_+
  // = 0; caption 0 (column 0): [0.2 + 0.3 − 0.9]_+ = 0; caption 1: [0.2 + 0.8 − 0.5]_+ = 0.5. Total 0.6.
  Tensor s = from_vector<double>({0.9, 0.8, 0.3, 0.5}, {2, 2});
  EXPECT_NEAR(nn::hardest_negative_triplet(s, 0.2, true).item<double>(), 0.6, 1e-15);
  EXPECT_NEAR(nn::hardest_negative_triplet(s, 0.2, false).item<double>(), 0.6, 1e-15);  // one negative each
}

TEST(Functional, Errors) {
  EXPECT_THROWS_WITH(nn::cross_entropy(zeros({3, 4}), from_vector<int64_t>({1, 2})), "cross_entropy", "[3]",
                     "[3, 4]", "[2]");
  EXPECT_THROWS_WITH(nn::cross_entropy(zeros({2, 4}), from_vector<int64_t>({1, 4})), "cross_entropy", "[0, 4)");
  EXPECT_THROWS_WITH(nn::cross_entropy_soft(zeros({2, 4}), zeros({2, 3})), "cross_entropy_soft", "[2, 3]", "[2, 4]");
  EXPECT_THROWS_WITH(nn::kl_div(zeros({2, 4}), zeros({4, 2})), "kl_div", "[2, 4]", "[4, 2]");
  EXPECT_THROWS_WITH(nn::cosine_similarity_matrix(zeros({2, 4}), zeros({3, 5})), "cosine_similarity_matrix",
                     "[2, 4]", "[3, 5]");
  EXPECT_THROWS_WITH(nn::hardest_negative_triplet(zeros({2, 3})), "hardest_negative_triplet", "square", "[2, 3]");
}

}  // namespace
}  // namespace rematch
