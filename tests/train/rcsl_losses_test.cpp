// RCSL's losses (train/methods/rcsl/rcsl_losses.h): float64 gradchecks of every term, the closed forms of
// docs/methods/rcsl.md §3.8 (L_m of a uniform batch, uniformity of identical vectors), hand-computed triplet cases,
// and the golden values and gradients of tests/reference/rcsl_reference.py (a PyTorch transcription of model.py's
// ContrastiveLoss, lalign/lunif and robust_mining_loss, assembled as train_emb does) on fixed inputs.
#include "train/methods/rcsl/rcsl_losses.h"

#include <cmath>
#include <string>

#include "test_util.h"

namespace rematch {
namespace {

using test::all_close;
using test::random_tensor;
using train::rcsl::alignment_loss;
using train::rcsl::paired_triplet_loss;
using train::rcsl::rcm_loss;
using train::rcsl::regularization_loss;
using train::rcsl::robust_mining_loss;
using train::rcsl::uniformity_loss;

Tensor fixture(const std::string& name) { return load_npy(std::string(REMATCH_FIXTURES) + "/rcsl/" + name + ".npy"); }

Tensor unit_rows(const Shape& shape, uint32_t seed) {
  return l2_normalize(random_tensor(shape, DType::Float64, seed), 1);
}

TEST(RcslLosses, TripletByHand) {
  // S with K_p = 2 of B = 3: the block [0,2)×[0,2) keeps its values, the rest is −1.
  const Tensor S = from_vector<double>({0.9, 0.8, 0.5,   //
                                        0.3, 0.4, 0.95,  //
                                        0.1, 0.2, 0.7},
                                       {3, 3});
  // Row 0: max(0.2 − 0.9 + 0.8, 0.2 − 0.9 − 1) = 0.1; row 1: 0.2 − 0.4 + 0.3 = 0.1.
  // Column 0: 0.2 − 0.9 + 0.3 = −0.4 → 0; column 1: 0.2 − 0.4 + 0.8 = 0.6. Row/column 2 are not summed.
  EXPECT_NEAR(paired_triplet_loss(S, 2).item<double>(), 0.1 + 0.1 + 0.0 + 0.6, 1e-12);
  // K_p = 0: nothing is paired, a zero without a graph.
  EXPECT_EQ(paired_triplet_loss(S, 0).item<double>(), 0.0);
  // K_p = 1: only the −1 entries are negatives: [0.2 − 0.9 − 1]_+ = 0 both ways.
  EXPECT_EQ(paired_triplet_loss(S, 1).item<double>(), 0.0);
  // ... unless the positive is below α − 1: S_00 = −0.95 gives 2·(0.2 − 1 + 0.95) = 0.3.
  const Tensor low = from_vector<double>({-0.95, 0.5, 0.5, 0.5}, {2, 2});
  EXPECT_NEAR(paired_triplet_loss(low, 1).item<double>(), 0.3, 1e-12);
}

TEST(RcslLosses, ClosedFormsOfSpecSection9) {
  for (int64_t b : {1, 2, 7, 64}) {
    // L_m of a uniform batch: every p_ii = 1/B, so ½·2B(1 − 1/B) = B(1 − 1/B) per matrix.
    const Tensor uniform = full({b, b}, 0.37, DType::Float64);
    EXPECT_NEAR(robust_mining_loss(uniform, 0.03).item<double>(), static_cast<double>(b) * (1.0 - 1.0 / b), 1e-9)
        << "B = " << b;
  }
  // Uniformity of B identical unit vectors: log mean exp(0) = 0 (float64 and float32).
  for (DType dtype : {DType::Float64, DType::Float32}) {
    const Tensor one = unit_rows({1, 16}, 3);
    const Tensor same = to(expand(one, {9, 16}), dtype);
    EXPECT_NEAR(uniformity_loss(same).item<double>(), 0.0, dtype == DType::Float64 ? 1e-12 : 1e-5);
  }
  // Fewer than two rows: no pair, 0 (the official mean of an empty pdist would be NaN).
  EXPECT_EQ(uniformity_loss(unit_rows({1, 4}, 1)).item<double>(), 0.0);
  // Orthonormal vectors: every squared distance is 2, U = −4.
  EXPECT_NEAR(uniformity_loss(eye(5, 5, DType::Float64)).item<double>(), -4.0, 1e-12);
  // Alignment of identical views is 0.
  const Tensor x = unit_rows({6, 4}, 2);
  EXPECT_EQ(alignment_loss(x, x, 3).item<double>(), 0.0);
}

TEST(RcslLosses, Gradcheck) {
  const Tensor S = random_tensor({5, 5}, DType::Float64, 11);
  for (int64_t kp : {1, 3, 5})
    EXPECT_GRADCHECK([kp](const TensorList& in) { return paired_triplet_loss(in[0], kp); }, {S});
  const Tensor x = random_tensor({5, 4}, DType::Float64, 12), y = random_tensor({5, 4}, DType::Float64, 13);
  EXPECT_GRADCHECK([](const TensorList& in) { return alignment_loss(in[0], in[1], 3); }, {x, y});
  EXPECT_GRADCHECK([](const TensorList& in) { return uniformity_loss(in[0]); }, {x});
  EXPECT_GRADCHECK([](const TensorList& in) { return regularization_loss(in[0], in[1], 2); }, {x, y});
  for (double tau : {0.03, 0.5})
    EXPECT_GRADCHECK([tau](const TensorList& in) { return robust_mining_loss(in[0], tau); }, {S});
  const Tensor mx = random_tensor({5, 4}, DType::Float64, 14), my = random_tensor({5, 4}, DType::Float64, 15);
  for (int64_t kp : {0, 2, 5})
    EXPECT_GRADCHECK([kp](const TensorList& in) { return rcm_loss(in[0], in[1], in[2], in[3], kp, 0.2); },
                     {x, y, mx, my});
}

TEST(RcslLosses, MatchesThePytorchTranscription) {
  for (const std::string name : {"mixed", "one_paired", "all_paired"}) {
    SCOPED_TRACE(name);
    const std::vector<double> meta = fixture(name + ".meta").to_vector<double>();
    const int64_t kp = static_cast<int64_t>(meta[1]);
    const double tau = meta[2];
    TensorList inputs;
    for (const char* k : {"img0", "cap0", "img1", "cap1"}) {
      Tensor t = fixture(name + "." + k);
      t.requires_grad_();
      inputs.push_back(t);
    }
    const Tensor &img0 = inputs[0], &cap0 = inputs[1], &img1 = inputs[2], &cap1 = inputs[3];
    const Tensor triplet = paired_triplet_loss(matmul(img0, transpose(cap0, 0, 1)), kp);
    const Tensor reg = regularization_loss(img0, cap0, kp);
    const Tensor mining = rcm_loss(img0, cap0, img1, cap1, kp, tau);
    const Tensor total = add(add(triplet, reg), mining);
    EXPECT_TRUE(all_close(triplet, fixture(name + ".triplet"), 1e-12, 1e-10));
    EXPECT_TRUE(all_close(alignment_loss(img0, cap0, kp), fixture(name + ".align"), 1e-12, 1e-10));
    EXPECT_TRUE(all_close(uniformity_loss(img0), fixture(name + ".unif_img"), 1e-12, 1e-10));
    EXPECT_TRUE(all_close(uniformity_loss(cap0), fixture(name + ".unif_cap"), 1e-12, 1e-10));
    EXPECT_TRUE(all_close(reg, fixture(name + ".reg"), 1e-12, 1e-10));
    EXPECT_TRUE(all_close(mining, fixture(name + ".mining"), 1e-12, 1e-10));
    EXPECT_TRUE(all_close(total, fixture(name + ".total"), 1e-12, 1e-10));
    const std::vector<std::pair<std::string, Tensor>> terms = {
        {"triplet", triplet}, {"reg", reg}, {"mining", mining}, {"total", total}};
    for (const auto& [term, value] : terms) {
      for (const Tensor& t : inputs) t.zero_grad();
      backward(value, Tensor(), true);
      const char* keys[] = {"img0", "cap0", "img1", "cap1"};
      for (size_t k = 0; k < inputs.size(); ++k) {
        const Tensor want = fixture(name + "." + term + ".grad." + keys[k]);
        const Tensor got = inputs[k].grad().defined() ? inputs[k].grad() : zeros_like(want);
        EXPECT_TRUE(all_close(got, want, 1e-11, 1e-9)) << term << " gradient of " << keys[k];
      }
    }
  }
}

TEST(RcslLosses, Float32AgreesWithFloat64) {
  const Tensor img = unit_rows({8, 6}, 21), cap = unit_rows({8, 6}, 22);
  const Tensor mi = unit_rows({8, 6}, 23), mc = unit_rows({8, 6}, 24);
  auto f32 = [](const Tensor& t) { return to(t, DType::Float32); };
  EXPECT_NEAR(regularization_loss(f32(img), f32(cap), 5).item<double>(),
              regularization_loss(img, cap, 5).item<double>(), 1e-5);
  EXPECT_NEAR(rcm_loss(f32(img), f32(cap), f32(mi), f32(mc), 5, 0.03).item<double>(),
              rcm_loss(img, cap, mi, mc, 5, 0.03).item<double>(), 1e-4);
}

TEST(RcslLosses, ErrorsNameTheProblem) {
  const Tensor S = random_tensor({3, 3}, DType::Float64, 1);
  EXPECT_THROWS_WITH(paired_triplet_loss(S, 4), "num_paired 4", "[0, 3]");
  EXPECT_THROWS_WITH(paired_triplet_loss(random_tensor({3, 2}, DType::Float64, 1), 1), "square");
  EXPECT_THROWS_WITH(robust_mining_loss(S, 0), "tau must be positive");
  const Tensor x = random_tensor({3, 2}, DType::Float64, 2);
  EXPECT_THROWS_WITH(alignment_loss(x, x, 0), "num_paired 0");
  EXPECT_THROWS_WITH(rcm_loss(x, x, x, random_tensor({2, 2}, DType::Float64, 3), 1, 0.1), "one shape");
}

}  // namespace
}  // namespace rematch
