// SgrafConfig: JSON round trip (what checkpoints store), defaults of the public code, and errors that name
// the bad field.
#include "models/sgraf_config.h"

#include "models/sgraf_model.h"
#include "test_util.h"

namespace rematch::models {
namespace {

TEST(SgrafConfig, DefaultsAreTheOfficialFlags) {
  const SgrafConfig c;
  EXPECT_EQ(c.module, SimilarityModule::SGR);
  EXPECT_EQ(c.img_dim, 2048);
  EXPECT_EQ(c.word_dim, 300);
  EXPECT_EQ(c.embed_size, 1024);
  EXPECT_EQ(c.sim_dim, 256);
  EXPECT_EQ(c.num_regions, 36);
  EXPECT_EQ(c.sgr_step, 3);
  EXPECT_DOUBLE_EQ(c.dropout, 0.4);
}

// What load_sgraf_model checks a file against before it allocates the model: the size of the real state dict.
TEST(SgrafConfig, StateDictSizeIsTheModels) {
  for (SimilarityModule module : {SimilarityModule::SGR, SimilarityModule::SAF})
    for (int64_t steps : {1, 3}) {
      SgrafConfig c;
      c.module = module;
      c.vocab_size = 11;
      c.img_dim = 7;
      c.word_dim = 5;
      c.embed_size = 6;
      c.sim_dim = 4;
      c.num_regions = 3;
      c.sgr_step = steps;
      int64_t n = 0;
      for (const auto& [name, t] : SgrafModel(c).state_dict()) n += t.numel();
      EXPECT_EQ(state_dict_size(c), static_cast<double>(n)) << module_name(module) << " steps " << steps;
    }
}

TEST(SgrafConfig, JsonRoundTrip) {
  SgrafConfig c;
  c.module = SimilarityModule::SAF;
  c.vocab_size = 8481;
  c.img_dim = 64;
  c.word_dim = 32;
  c.embed_size = 48;
  c.sim_dim = 16;
  c.num_regions = 12;
  c.sgr_step = 2;
  c.dropout = 0.25;
  const SgrafConfig back = sgraf_config_from_json(to_json(c));
  EXPECT_EQ(back.module, c.module);
  EXPECT_EQ(back.vocab_size, c.vocab_size);
  EXPECT_EQ(back.img_dim, c.img_dim);
  EXPECT_EQ(back.word_dim, c.word_dim);
  EXPECT_EQ(back.embed_size, c.embed_size);
  EXPECT_EQ(back.sim_dim, c.sim_dim);
  EXPECT_EQ(back.num_regions, c.num_regions);
  EXPECT_EQ(back.sgr_step, c.sgr_step);
  EXPECT_DOUBLE_EQ(back.dropout, c.dropout);
  EXPECT_NE(to_json(c).find("\"module_name\":\"SAF\""), std::string::npos);
  EXPECT_EQ(describe(c), "SAF (V=8481, img_dim=64, word_dim=32, embed=48, sim_dim=16, R=12)");
}

TEST(SgrafConfig, MissingFieldsKeepDefaultsButVocabularyIsRequired) {
  const SgrafConfig c = sgraf_config_from_json(R"({"vocab_size": 30, "module_name": "SGR"})");
  EXPECT_EQ(c.vocab_size, 30);
  EXPECT_EQ(c.embed_size, 1024);
  EXPECT_THROWS_WITH(sgraf_config_from_json(R"({"module_name": "SGR"})"), "vocab_size", "required");
}

TEST(SgrafConfig, ErrorsNameTheField) {
  EXPECT_THROWS_WITH(sgraf_config_from_json("{not json"), "not valid JSON");
  EXPECT_THROWS_WITH(sgraf_config_from_json("[1, 2]"), "JSON object");
  EXPECT_THROWS_WITH(sgraf_config_from_json(R"({"vocab_size": 3, "module_name": "AVE"})"), "SGR or SAF", "AVE");
  EXPECT_THROWS_WITH(sgraf_config_from_json(R"({"vocab_size": 3, "sim_dim": 0})"), "sim_dim", "positive");
  EXPECT_THROWS_WITH(sgraf_config_from_json(R"({"vocab_size": 3, "img_dim": "big"})"), "img_dim", "integer");
  EXPECT_THROWS_WITH(sgraf_config_from_json(R"({"vocab_size": 3, "dropout": 1.0})"), "dropout");
  EXPECT_THROWS_WITH(sgraf_config_from_json(R"({"model": "vse", "vocab_size": 3})"), "vse", "not an SGRAF");
  EXPECT_THROWS_WITH(parse_module_name("sgr"), "SGR or SAF");
}

}  // namespace
}  // namespace rematch::models
