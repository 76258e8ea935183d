// SimilarityEncoder (docs/backbones.md §4, §5.1): the one-pass B_img × B_cap matrix equals the official
// per-caption computation (each caption alone, sliced to its length) for SGR and SAF, in eval mode and in
// training mode (dropout off; SAF's per-caption BatchNorm running statistics included); the split
// encode_images / encode_captions / scores API gives the same matrix block by block; and float64 gradients
// of the whole encoder w.r.t. its inputs and every parameter.
#include "models/similarity_encoder.h"

#include "model_test_util.h"

namespace rematch::models {
namespace {

SgrafConfig tiny(SimilarityModule module, int64_t d = 4, int64_t m = 3, int64_t R = 3) {
  SgrafConfig c;
  c.module = module;
  c.vocab_size = 10;
  c.embed_size = d;
  c.sim_dim = m;
  c.num_regions = R;
  c.sgr_step = 3;
  c.dropout = 0.0;
  return c;
}

// Caption embeddings as the text encoder leaves them: unit words, exact zeros after each length.
Tensor padded_words(const std::vector<int64_t>& len, int64_t L, int64_t d, uint32_t seed) {
  const Tensor mask =
      unsqueeze(rematch::to(lt(unsqueeze(arange(L), 0), unsqueeze(test::lengths_tensor(len), 1)), DType::Float64), 2);
  return mul(test::unit_rows({static_cast<int64_t>(len.size()), L, d}, seed), mask);
}

// By value: named_buffers() returns a new list each call, so a reference into it would dangle.
Tensor buffer(const nn::Module& m, const std::string& name) {
  for (const auto& [n, t] : m.named_buffers())
    if (n == name) return t;
  throw std::runtime_error("no buffer " + name);
}

TEST(SimilarityEncoder, StateDictOrderIsTheOfficialOne) {
  SimilarityEncoder sgr(tiny(SimilarityModule::SGR)), saf(tiny(SimilarityModule::SAF));
  std::vector<std::string> prefixes;
  for (const auto& [n, t] : sgr.state_dict()) {
    const std::string p = n.substr(0, n.find('.'));
    if (prefixes.empty() || prefixes.back() != p) prefixes.push_back(p);
  }
  EXPECT_EQ(prefixes, (std::vector<std::string>{"v_global_w", "t_global_w", "sim_tranloc_w", "sim_tranglo_w",
                                                "sim_eval_w", "SGR_module"}));
  EXPECT_EQ(saf.state_dict().back().first, "SAF_module.bn.num_batches_tracked");
  EXPECT_EQ(sgr.module(), SimilarityModule::SGR);
}

TEST(SimilarityEncoder, OnePassEqualsThePerCaptionLoop) {
  const std::vector<int64_t> len = {5, 3, 1, 4};
  const Tensor img = test::unit_rows({3, 3, 4}, 1), cap = padded_words(len, 5, 4, 2);
  for (SimilarityModule module : {SimilarityModule::SGR, SimilarityModule::SAF})
    for (bool training : {false, true}) {
      SimilarityEncoder batched(tiny(module), DType::Float64), looped(tiny(module), DType::Float64);
      looped.load_state_dict(batched.state_dict());
      batched.train(training);
      looped.train(training);
      const Tensor all = batched(img, cap, test::lengths_tensor(len));
      ASSERT_EQ(all.sizes(), (Shape{3, 4}));
      for (int64_t c = 0; c < 4; ++c) {
        const Tensor one = narrow(narrow(cap, 0, c, 1), 1, 0, len[c]);
        const Tensor column = looped(img, one, test::lengths_tensor({len[c]}));
        EXPECT_TRUE(test::all_close(narrow(all, 1, c, 1), column, 1e-13, 0))
            << module_name(module) << (training ? " training" : " eval") << ", caption " << c;
      }
      if (module == SimilarityModule::SAF && training)
        for (const char* b : {"SAF_module.bn.running_mean", "SAF_module.bn.running_var"})
          EXPECT_TRUE(test::all_close(buffer(batched, b), buffer(looped, b), 1e-15, 1e-13)) << b;
    }
}

TEST(SimilarityEncoder, BlocksOfTheSplitApiEqualTheWholeMatrix) {
  SimilarityEncoder enc(tiny(SimilarityModule::SGR), DType::Float64);
  enc.eval();
  const std::vector<int64_t> len = {2, 4, 3};
  const Tensor img = test::unit_rows({4, 3, 4}, 3), cap = padded_words(len, 4, 4, 4);
  const Tensor whole = enc(img, cap, test::lengths_tensor(len));
  const ImageSide images = enc.encode_images(narrow(img, 0, 1, 2));
  const CaptionSide captions = enc.encode_captions(narrow(cap, 0, 1, 2), test::lengths_tensor({4, 3}));
  EXPECT_TRUE(test::all_close(enc.scores(images, captions), narrow(narrow(whole, 0, 1, 2), 1, 1, 2), 1e-14, 0));
  EXPECT_THROWS_WITH(enc.scores(images, CaptionSide{}), "encode_captions");
  EXPECT_THROWS_WITH(enc.encode_captions(cap, test::lengths_tensor({2, 5, 3})), "sim_enc", "caption 1");
}

TEST(SimilarityEncoder, GradcheckWholeEncoder) {
  const std::vector<int64_t> len = {3, 1};
  const Tensor lengths = test::lengths_tensor(len);
  for (SimilarityModule module : {SimilarityModule::SGR, SimilarityModule::SAF}) {
    SimilarityEncoder enc(tiny(module, 3, 2, 2), DType::Float64);
    enc.train();  // batch statistics in every BatchNorm; dropout is 0
    auto f = [&](const TensorList& t) { return enc(t[0], t[1], lengths); };
    EXPECT_GRADCHECK(test::over_parameters(enc, f, 2),
                     test::with_parameters(enc, {test::unit_rows({2, 2, 3}, 5), padded_words(len, 3, 3, 6)}))
        << module_name(module);
  }
}

}  // namespace
}  // namespace rematch::models
