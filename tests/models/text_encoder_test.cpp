// TextEncoder (docs/backbones.md §3.3): names, embedding initialisation, packed semantics (zeros after each
// length, extra padding columns ignored), averaged directions against nn::GRU run directly, dropout only in
// training, and float64 gradients of every parameter.
#include "models/text_encoder.h"

#include <cmath>

#include "model_test_util.h"

namespace rematch::models {
namespace {

Tensor ids_for(const std::vector<int64_t>& lengths, int64_t vocab, int64_t columns, uint32_t seed) {
  std::vector<int64_t> ids(lengths.size() * columns, 0);
  const std::vector<int64_t> words =
      test::random_index({static_cast<int64_t>(ids.size())}, vocab - 4, seed).to_vector<int64_t>();
  for (size_t b = 0; b < lengths.size(); ++b)
    for (int64_t t = 0; t < lengths[b]; ++t)
      ids[b * columns + t] = t == 0 ? 1 : t == lengths[b] - 1 ? 2 : 4 + words[b * columns + t];
  return from_vector(ids, {static_cast<int64_t>(lengths.size()), columns});
}

TEST(TextEncoder, NamesAndInitialisation) {
  Generator gen(5);
  TextEncoder enc(30, 6, 4, 0.4, DType::Float32, &gen);
  std::vector<std::string> names;
  for (const auto& [n, t] : enc.state_dict()) names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"embed.weight", "cap_rnn.weight_ih_l0", "cap_rnn.weight_hh_l0",
                                             "cap_rnn.bias_ih_l0", "cap_rnn.bias_hh_l0", "cap_rnn.weight_ih_l0_reverse",
                                             "cap_rnn.weight_hh_l0_reverse", "cap_rnn.bias_ih_l0_reverse",
                                             "cap_rnn.bias_hh_l0_reverse"}));
  const std::vector<float> e = enc.state_dict()[0].second.to_vector<float>();
  for (float v : e) EXPECT_LE(std::fabs(v), 0.1f);  // U(-0.1, 0.1), §1
  EXPECT_EQ(enc.vocab_size(), 30);
  EXPECT_EQ(enc.word_dim(), 6);
  EXPECT_EQ(enc.embed_size(), 4);
}

TEST(TextEncoder, AveragedDirectionsUnitAtWordsZeroAfter) {
  TextEncoder enc(20, 5, 4, 0.4, DType::Float64);
  enc.eval();
  const std::vector<int64_t> len = {4, 2, 3};
  const Tensor lengths = test::lengths_tensor(len);
  const Tensor ids = ids_for(len, 20, 4, 1);
  const Tensor out = enc(ids, lengths);
  ASSERT_EQ(out.sizes(), (Shape{3, 4, 4}));
  // By hand: nn::gru on the embedded words, (forward + backward) / 2, l2n.
  const auto sd = enc.state_dict();
  TensorList weights;
  for (size_t i = 1; i < sd.size(); ++i) weights.push_back(sd[i].second);
  const Tensor h = nn::gru(embedding(sd[0].second, ids), lengths, weights).output;
  const Tensor want = l2_normalize(mul(add(narrow(h, 2, 0, 4), narrow(h, 2, 4, 4)), 0.5), -1);
  EXPECT_TRUE(test::all_close(out, want, 1e-14, 0));
  const std::vector<double> norms = norm(out, 2, {2}).to_vector<double>();
  for (size_t b = 0; b < len.size(); ++b)
    for (int64_t t = 0; t < 4; ++t)
      EXPECT_NEAR(norms[b * 4 + t], t < len[b] ? 1.0 : 0.0, 1e-6);  // eps 1e-8 on the norm
  // Columns past the longest caption are dropped, whatever they hold.
  Tensor wider = pad(ids, 1, 0, 2, 7);
  EXPECT_TRUE(test::all_close(enc(wider, lengths), out, 0, 0));
}

TEST(TextEncoder, DropoutOnlyInTraining) {
  Generator gen(9);
  TextEncoder enc(20, 5, 4, 0.4, DType::Float64, &gen);
  const Tensor lengths = test::lengths_tensor({4, 3});
  const Tensor ids = ids_for({4, 3}, 20, 4, 2);
  enc.eval();
  const Tensor a = enc(ids, lengths), b = enc(ids, lengths);
  EXPECT_TRUE(test::all_close(a, b, 0, 0));
  enc.train();
  EXPECT_FALSE(test::all_close(enc(ids, lengths), a, 1e-6, 0));
  TextEncoder no_dropout(20, 5, 4, 0.0, DType::Float64, &gen);
  no_dropout.train();
  const Tensor c = no_dropout(ids, lengths);
  no_dropout.eval();
  EXPECT_TRUE(test::all_close(no_dropout(ids, lengths), c, 0, 0));
}

TEST(TextEncoder, Errors) {
  TextEncoder enc(20, 5, 4);
  EXPECT_THROWS_WITH(enc(zeros({2, 3}), test::lengths_tensor({3, 3})), "txt_enc", "integer caption ids");
  EXPECT_THROWS_WITH(enc(zeros({2, 3}, DType::Int64), test::lengths_tensor({3, 4})), "txt_enc", "caption 1",
                     "length 4");
}

TEST(TextEncoder, GradcheckOfEveryParameter) {
  TextEncoder enc(8, 3, 2, 0.0, DType::Float64);
  enc.train();  // dropout p = 0: training mode is deterministic
  const std::vector<int64_t> len = {3, 1, 2};
  const Tensor ids = ids_for(len, 8, 3, 3), lengths = test::lengths_tensor(len);
  auto f = [&](const TensorList&) { return enc(ids, lengths); };
  EXPECT_GRADCHECK(test::over_parameters(enc, f, 0), test::with_parameters(enc, {}));
}

}  // namespace
}  // namespace rematch::models
