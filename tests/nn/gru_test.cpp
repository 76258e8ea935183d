// nn::GRU: parameters and init, float64 gradchecks of the whole layer (uni- and bidirectional, mixed lengths),
// golden fixtures from torch.nn.GRU on packed sequences (tests/reference/gru_reference.py) in float64 and
// float32, padding semantics, and the error messages.
#include <cmath>
#include <string>

#include "nn/gru.h"
#include "test_util.h"

namespace rematch {
namespace {

using nn::GRU;
using nn::GRUOutput;
using test::all_close;
using test::random_tensor;

Tensor lengths_of(const std::vector<int64_t>& v) { return from_vector(v); }

// Output and h_n in one vector, so gradcheck covers both.
Tensor flat_outputs(const GRUOutput& r) { return cat({flatten(r.output), flatten(r.h_n)}, 0); }

TEST(GRU, ParametersFollowPyTorchNamesShapesAndInit) {
  Generator gen(7);
  GRU gru(5, 4, true, DType::Float32, &gen);
  const std::vector<std::pair<std::string, Shape>> want = {
      {"weight_ih_l0", {12, 5}},         {"weight_hh_l0", {12, 4}},         {"bias_ih_l0", {12}},
      {"bias_hh_l0", {12}},              {"weight_ih_l0_reverse", {12, 5}}, {"weight_hh_l0_reverse", {12, 4}},
      {"bias_ih_l0_reverse", {12}},      {"bias_hh_l0_reverse", {12}}};
  const nn::NamedTensors params = gru.named_parameters();
  ASSERT_EQ(params.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ(params[k].first, want[k].first);
    EXPECT_EQ(params[k].second.sizes(), want[k].second) << want[k].first;
    EXPECT_TRUE(params[k].second.requires_grad());
    // PyTorch's default: U(-1/sqrt(H), 1/sqrt(H)) = U(-0.5, 0.5) here.
    for (float v : params[k].second.to_vector<float>()) {
      EXPECT_GE(v, -0.5f);
      EXPECT_LT(v, 0.5f);
    }
  }
  EXPECT_EQ(GRU(3, 2, false).named_parameters().size(), 4u);
  // docs/backbones.md §3.3: the SGRAF caption Bi-GRU has 8,146,944 parameters.
  EXPECT_EQ(GRU(300, 1024, true).parameter_count(), 8146944);
  Generator same(7);
  EXPECT_TRUE(all_close(GRU(5, 4, true, DType::Float32, &same).parameter("weight_hh_l0"),
                        gru.parameter("weight_hh_l0"), 0, 0));
}

// Whole-layer gradcheck: B = 3, T = 4, I = 3, H = 2, lengths {4, 1, 3}, w.r.t. x and every parameter.
void gradcheck_layer(bool bidirectional) {
  Generator gen(3);
  GRU gru(3, 2, bidirectional, DType::Float64, &gen);
  TensorList inputs{random_tensor({3, 4, 3}, DType::Float64, 11)};
  for (const Tensor& p : gru.parameters()) inputs.push_back(kernels::clone(p));
  const Tensor lengths = lengths_of({4, 1, 3});
  EXPECT_GRADCHECK(
      [&](const TensorList& in) {
        return flat_outputs(nn::gru(in[0], lengths, TensorList(in.begin() + 1, in.end())));
      },
      inputs);
}

TEST(GRUGrad, Unidirectional) { gradcheck_layer(false); }
TEST(GRUGrad, Bidirectional) { gradcheck_layer(true); }

TEST(GRUGrad, NonContiguousInputAndOnlySomeInputsRequiringGrad) {
  Generator gen(4);
  GRU gru(3, 2, true, DType::Float64, &gen);
  const TensorList params = gru.parameters();
  const Tensor lengths = lengths_of({2, 3});
  // x given as a transposed view [B, T, I] of a [T, B, I] tensor; the weights are constants here.
  EXPECT_GRADCHECK(
      [&](const TensorList& in) { return flat_outputs(nn::gru(transpose(in[0], 0, 1), lengths, params)); },
      {random_tensor({3, 2, 3}, DType::Float64, 12)});
  // Only weight_hh_l0_reverse varies.
  const Tensor x = random_tensor({2, 3, 3}, DType::Float64, 13);
  EXPECT_GRADCHECK(
      [&](const TensorList& in) {
        TensorList w(params.begin(), params.end());
        for (Tensor& t : w) t = t.detach();
        w[5] = in[0];
        return flat_outputs(nn::gru(x, lengths, w));
      },
      {kernels::clone(params[5])});
}

std::string fixture(const std::string& c, const std::string& name) {
  return std::string(REMATCH_FIXTURES) + "/gru/" + c + "/" + name + ".npy";
}

// Loads a fixture case into a GRU of `dtype`, runs forward and the loss (output·r1).sum() + (h_n·r2).sum()
// backward, and compares everything with torch.nn.GRU's float64 results.
void check_fixture(const std::string& c, bool bidirectional, DType dtype, double atol, double rtol) {
  SCOPED_TRACE(c + " " + dtype_name(dtype));
  const Tensor x64 = load_npy(fixture(c, "x"));
  GRU gru(x64.size(2), load_npy(fixture(c, "weight_hh_l0")).size(1), bidirectional, dtype);
  nn::StateDict state;
  for (const auto& [name, p] : gru.named_parameters()) state.emplace_back(name, load_npy(fixture(c, name)));
  gru.load_state_dict(state);

  Tensor x = kernels::cast(x64, dtype);
  x.requires_grad_(true);
  const GRUOutput r = gru(x, load_npy(fixture(c, "lengths")));
  EXPECT_TRUE(all_close(r.output, load_npy(fixture(c, "output")), atol, rtol)) << "output";
  EXPECT_TRUE(all_close(r.h_n, load_npy(fixture(c, "h_n")), atol, rtol)) << "h_n";
  const Tensor r1 = kernels::cast(load_npy(fixture(c, "r1")), dtype);
  const Tensor r2 = kernels::cast(load_npy(fixture(c, "r2")), dtype);
  backward(add(sum(mul(r.output, r1)), sum(mul(r.h_n, r2))));
  EXPECT_TRUE(all_close(x.grad(), load_npy(fixture(c, "grad_x")), atol, rtol)) << "grad_x";
  for (const auto& [name, p] : gru.named_parameters())
    EXPECT_TRUE(all_close(p.grad(), load_npy(fixture(c, "grad_" + name)), atol, rtol)) << "grad_" << name;
}

// float64: the same equations as PyTorch in the same precision, so only rounding differs: 1e-10.
TEST(GRUFixtures, Float64MatchesTorch) {
  check_fixture("uni", false, DType::Float64, 1e-10, 1e-10);
  check_fixture("bi", true, DType::Float64, 1e-10, 1e-10);
  check_fixture("bi_wide", true, DType::Float64, 1e-10, 1e-10);
}

// float32 against torch's float64 truth. Inputs and weights are rounded to float32 (relative 6e-8), every
// GEMM accumulates up to 3H·T terms in float32, fast_expf and tanh = 2σ(2x) − 1 add a few 1e-8 absolute, and
// the state carries its error through up to 9 steps; gradient entries are sums over all steps and rows
// (values up to ~12). Measured worst error: 2.6e-6 absolute on a gradient entry of 10, a tenth of the bound
// 1e-5 absolute + 1e-5 relative, which leaves room for other BLAS kernels without hiding a wrong formula (one
// shows up at 1e-2 and above).
TEST(GRUFixtures, Float32MatchesTorch) {
  check_fixture("uni", false, DType::Float32, 1e-5, 1e-5);
  check_fixture("bi", true, DType::Float32, 1e-5, 1e-5);
  check_fixture("bi_wide", true, DType::Float32, 1e-5, 1e-5);
}

TEST(GRU, ExtraPaddingStepsChangeNothing) {
  // The same batch padded to 4 and to 7 steps: the first 4 steps of the output and h_n agree, the rest is 0.
  Generator gen(5);
  GRU gru(3, 4, true, DType::Float64, &gen);
  const Tensor x = random_tensor({3, 4, 3}, DType::Float64, 14);
  const Tensor lengths = lengths_of({2, 4, 1});
  const GRUOutput a = gru(x, lengths);
  const GRUOutput b = gru(pad(x, 1, 0, 3, 9.0), lengths);
  EXPECT_TRUE(all_close(narrow(b.output, 1, 0, 4), a.output, 0, 0));
  EXPECT_TRUE(all_close(narrow(b.output, 1, 4, 3), zeros({3, 3, 8}, DType::Float64), 0, 0));
  EXPECT_TRUE(all_close(b.h_n, a.h_n, 0, 0));
  // Padding never reaches the output: outputs at t >= length are 0 whatever the padded input holds.
  EXPECT_TRUE(all_close(narrow(select(a.output, 0, 2), 0, 1, 3), zeros({3, 8}, DType::Float64), 0, 0));
}

TEST(GRU, SequencesAreIndependentOfTheirBatch) {
  // Each row alone (its own length, no padding) gives the same output and h_n as inside the mixed batch.
  Generator gen(6);
  GRU gru(2, 3, true, DType::Float64, &gen);
  const Tensor x = random_tensor({3, 5, 2}, DType::Float64, 15);
  const std::vector<int64_t> lens = {3, 5, 1};
  const GRUOutput all = gru(x, lengths_of(lens));
  for (int64_t b = 0; b < 3; ++b) {
    const GRUOutput one = gru(narrow(narrow(x, 0, b, 1), 1, 0, lens[b]), lengths_of({lens[b]}));
    EXPECT_TRUE(all_close(one.output, narrow(narrow(all.output, 0, b, 1), 1, 0, lens[b]), 1e-14, 0)) << b;
    EXPECT_TRUE(all_close(one.h_n, narrow(all.h_n, 1, b, 1), 1e-14, 0)) << b;
  }
}

TEST(GRU, NoGradModeGivesTheSameResultWithoutAGraph) {
  Generator gen(8);
  GRU gru(3, 5, true, DType::Float32, &gen);
  const Tensor x = random_tensor({4, 3, 3}, DType::Float32, 16);
  const Tensor lengths = lengths_of({3, 1, 2, 3});
  const GRUOutput with_graph = gru(x, lengths);
  EXPECT_TRUE(with_graph.output.requires_grad());
  NoGradGuard guard;
  const GRUOutput without = gru(x, lengths);
  EXPECT_FALSE(without.output.requires_grad());
  EXPECT_TRUE(all_close(without.output, with_graph.output, 0, 0));
  EXPECT_TRUE(all_close(without.h_n, with_graph.h_n, 0, 0));
}

TEST(GRU, ErrorsNameTheModuleAndTheNumbers) {
  GRU gru(3, 2, true);
  const Tensor x = random_tensor({2, 4, 3}, DType::Float32, 17);
  const Tensor lengths = lengths_of({4, 2});
  EXPECT_THROWS_WITH(gru(random_tensor({2, 4, 5}, DType::Float32, 1), lengths), "nn::GRU(3, 2, bidirectional)",
                     "5 features", "input_size 3");
  EXPECT_THROWS_WITH(gru(random_tensor({2, 4}, DType::Float32, 1), lengths), "nn::GRU(3, 2, bidirectional)",
                     "[batch, steps, features]");
  EXPECT_THROWS_WITH(gru(x, lengths_of({4, 5})), "nn::GRU(3, 2, bidirectional)", "lengths[1] = 5",
                     "out of range 1..4");
  EXPECT_THROWS_WITH(gru(x, lengths_of({0, 2})), "lengths[0] = 0", "out of range 1..4");
  EXPECT_THROWS_WITH(gru(x, from_vector(std::vector<int32_t>{4, 2})), "nn::GRU(3, 2, bidirectional)", "int64",
                     "int32[2]");
  EXPECT_THROWS_WITH(gru(x, lengths_of({4, 2, 1})), "nn::GRU(3, 2, bidirectional)", "one entry per sequence",
                     "2 for a batch of 2");
  EXPECT_THROWS_WITH(gru(random_tensor({2, 4, 3}, DType::Float64, 1), lengths), "nn::GRU(3, 2, bidirectional)",
                     "float64", "float32", "share a dtype");
  EXPECT_THROWS_WITH(GRU(0, 2, false), "nn::GRU", "positive", "0 and 2");
  // The functional form checks the weights it is given.
  TensorList w = gru.parameters();
  w.pop_back();
  EXPECT_THROWS_WITH(nn::gru(x, lengths, w), "gru", "4 weights per direction", "got 7");
  w = gru.parameters();
  w[6] = zeros({5}, DType::Float32);
  EXPECT_THROWS_WITH(nn::gru(x, lengths, w), "bias_ih_l0_reverse", "[5]", "expected [6]");
  // Input size 0 fits weight_ih [3H, 0] but is no GRU (nn::GRU refuses it above; CUDA could not run it).
  const TensorList no_input = {zeros({6, 0}), zeros({6, 2}), zeros({6}), zeros({6})};
  EXPECT_THROWS_WITH(nn::gru(zeros({2, 4, 0}), lengths, no_input), "gru", "[2, 4, 0]", "input_size 0");
}

}  // namespace
}  // namespace rematch
