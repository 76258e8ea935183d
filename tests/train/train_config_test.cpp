// rematch train's options: the method and preset defaults of the official scripts (docs/methods/l2rm.md §1.1,
// rcl.md §2.2, rcsl.md §3.5, uotrcl.md §4.3), the checks that refuse a bad combination before any work, and the
// config.json round trip.
#include "train/methods/train_config.h"

#include <gtest/gtest.h>

#include <cmath>

#include "test_util.h"

namespace rematch::train {
namespace {

TrainConfig base(const std::string& method, const std::string& preset = "") {
  TrainConfig c;
  c.method = method;
  c.preset = preset;
  c.data_path = "/data";
  if (preset.empty()) c.data_name = "x_precomp";
  return c;
}

TEST(TrainConfig, L2rmPresetsFollowTheScripts) {
  TrainConfig f30k = base("l2rm", "f30k");
  resolve_defaults(f30k);
  EXPECT_EQ(f30k.data_name, "f30k_precomp");
  EXPECT_EQ(f30k.warmup_epoch, 5);
  EXPECT_EQ(f30k.num_epochs, 35);
  EXPECT_EQ(f30k.lr_update, 15);
  EXPECT_DOUBLE_EQ(f30k.reg, 0.01);
  EXPECT_DOUBLE_EQ(f30k.learning_rate, 2e-4);
  EXPECT_EQ(f30k.batch_size, 128);
  EXPECT_EQ(f30k.max_reserved, 12);  // ⌊0.1·128⌋
  EXPECT_DOUBLE_EQ(f30k.tau, 0.05);
  TrainConfig coco = base("l2rm", "coco");
  resolve_defaults(coco);
  EXPECT_EQ(coco.warmup_epoch, 10);
  EXPECT_EQ(coco.num_epochs, 20);
  EXPECT_EQ(coco.lr_update, 10);
  EXPECT_DOUBLE_EQ(coco.reg, 0.07);
  TrainConfig cc = base("l2rm", "cc152k");
  resolve_defaults(cc);
  EXPECT_EQ(cc.num_epochs, 40);
  EXPECT_EQ(cc.lr_update, 20);
  EXPECT_EQ(cc.mask_positives, "off");  // the code forces noise_ratio = 0 on CC152K
}

// One rule for L2RM's positives mask (issue 15 point 6): auto is on iff noise is injected — a --noise_ratio > 0
// or a --noise_file (which injects its index whatever the ratio) — and config.json records on or off.
TEST(TrainConfig, L2rmPositivesMaskIsOnIffNoiseIsInjected) {
  auto mask = [](double ratio, const std::string& file, const std::string& preset, const std::string& flag) {
    TrainConfig c = base("l2rm", preset);
    c.noise_ratio = ratio;
    c.noise_file = file;
    c.mask_positives = flag;
    resolve_defaults(c);
    return c.mask_positives;
  };
  EXPECT_EQ(mask(0.2, "", "f30k", "auto"), "on");
  EXPECT_EQ(mask(0, "", "f30k", "auto"), "off");
  EXPECT_EQ(mask(0, "noise_index/f30k_precomp_0.2.npy", "f30k", "auto"), "on");  // the file injects noise
  EXPECT_EQ(mask(0, "", "cc152k", "auto"), "off");  // real noise, none injected (the code forces noise_ratio 0)
  EXPECT_EQ(mask(0.2, "", "f30k", "off"), "off");   // Table 3: w/o positives masked
  EXPECT_EQ(mask(0, "", "cc152k", "on"), "on");
  TrainConfig rcl = base("rcl");
  resolve_defaults(rcl);
  EXPECT_EQ(rcl.mask_positives, "auto");  // not an L2RM run: nothing to resolve
}

// The noise protocol of each method when --noise_mode is not given (issue 15 point 5): RCSL-NC follows NCR's
// caption-level shuffling, the pairs methods RCL/DECL's image level (the published index files), uotrcl
// symmetric labels; a given --noise_mode wins.
TEST(TrainConfig, NoiseModeDefaultsPerMethod) {
  auto mode = [](const std::string& method, const std::string& flag) {
    TrainConfig c = base(method);
    c.noise_ratio = 0.2;
    c.noise_mode = flag;
    resolve_defaults(c);
    return c.noise_mode;
  };
  EXPECT_EQ(mode("rcsl-nc", ""), "caption");
  EXPECT_EQ(mode("rcsl-nc", "image"), "image");
  EXPECT_EQ(mode("l2rm", ""), "image");
  EXPECT_EQ(mode("rcl", ""), "image");
  EXPECT_EQ(mode("uotrcl", ""), "symmetric");
  EXPECT_EQ(mode("uotrcl", "mrl"), "mrl");
  EXPECT_THROWS_WITH(mode("rcsl-nc", "symmetric"), "--noise_mode", "symmetric");
}

TEST(TrainConfig, RclCocoUsesTheOptsDefaultLearningRate) {
  TrainConfig f30k = base("rcl", "f30k");
  resolve_defaults(f30k);
  EXPECT_EQ(f30k.num_epochs, 30);
  EXPECT_EQ(f30k.lr_update, 15);
  EXPECT_DOUBLE_EQ(f30k.learning_rate, 2e-4);
  TrainConfig coco = base("rcl", "coco");
  resolve_defaults(coco);
  EXPECT_EQ(coco.num_epochs, 20);
  EXPECT_DOUBLE_EQ(coco.learning_rate, 5e-4);
}

TEST(TrainConfig, RcslAndUotrclDefaults) {
  TrainConfig r = base("rcsl", "coco");
  r.paired_length = 500;
  resolve_defaults(r);
  EXPECT_EQ(r.batch_size, 256);
  EXPECT_EQ(r.mine_epoch, 25);
  EXPECT_EQ(r.num_epochs, 40);
  EXPECT_DOUBLE_EQ(r.tau, 0.03);
  EXPECT_DOUBLE_EQ(r.unpaired_keep, 0.2);
  EXPECT_EQ(r.lr_milestones, (std::vector<int64_t>{15, 30, 45}));
  TrainConfig u = base("uotrcl", "nus");
  resolve_defaults(u);
  EXPECT_EQ(u.batch_size, 500);
  EXPECT_EQ(u.knn, 200);
  EXPECT_EQ(u.valid_len, 5000);
  EXPECT_EQ(u.num_epochs, 100);
  EXPECT_EQ(u.warmup_epoch, 2);
  EXPECT_EQ(u.noise_mode, "symmetric");
}

TEST(TrainConfig, ExplicitFlagsWinOverPresets) {
  TrainConfig c = base("l2rm", "f30k");
  c.num_epochs = 3;
  c.reg = 0.2;
  resolve_defaults(c);
  EXPECT_EQ(c.num_epochs, 3);
  EXPECT_DOUBLE_EQ(c.reg, 0.2);
}

// resolve_defaults on a copy, so a temporary can be checked in one line.
void resolve(TrainConfig c) { resolve_defaults(c); }

TEST(TrainConfig, BadCombinationsNameTheFlag) {
  TrainConfig none;
  none.data_path = "/d";
  EXPECT_THROWS_WITH(resolve(none), "--method is required");
  EXPECT_THROWS_WITH(resolve(base("frobnicate")), "--method", "frobnicate", "l2rm");
  EXPECT_THROWS_WITH(resolve(base("rcsl")), "--paired_length");
  EXPECT_THROWS_WITH(resolve(base("l2rm", "wiki")), "--preset", "wiki");
  TrainConfig loss = base("rcl");
  loss.loss = "hinge";
  EXPECT_THROWS_WITH(resolve(loss), "--loss", "hinge");
  TrainConfig noise = base("l2rm");
  noise.noise_ratio = 1.5;
  EXPECT_THROWS_WITH(resolve(noise), "--noise_ratio", "1.5");
  TrainConfig no_data = base("triplet");
  no_data.data_path.clear();
  EXPECT_THROWS_WITH(resolve(no_data), "--data_path");
}

TEST(TrainConfig, JsonRoundTripKeepsEveryField) {
  TrainConfig c = base("rcsl", "f30k");
  c.paired_length = 1000;
  c.lr_milestones = {3, 7};
  c.word_vectors = "glove.txt";
  resolve_defaults(c);
  const TrainConfig back = train_config_from_json(to_json(c));
  EXPECT_EQ(to_json(back), to_json(c));
  EXPECT_EQ(back.paired_length, 1000);
  EXPECT_TRUE(std::isnan(back.reg));  // unused by rcsl: null in JSON, NaN again when read
  EXPECT_THROWS_WITH(train_config_from_json("{\"bogus\": 1}"), "unknown field", "bogus");
  EXPECT_THROWS_WITH(train_config_from_json("{\"batch_size\": \"x\"}"), "batch_size", "wrong type");
  EXPECT_THROWS_WITH(train_config_from_json("{"), "not valid JSON");
}

// Numbers are checked for the field's type before they are converted: nlohmann's plain casts would truncate a
// fraction and convert an out-of-range number with undefined behaviour (fuzz/regressions/train_config).
TEST(TrainConfig, JsonNumbersMustFitTheirField) {
  EXPECT_THROWS_WITH(train_config_from_json("{\"batch_size\": 1.5e300}"), "batch_size", "expected an integer", "1.5e+300");
  EXPECT_THROWS_WITH(train_config_from_json("{\"batch_size\": 8.5}"), "batch_size", "expected an integer");
  EXPECT_THROWS_WITH(train_config_from_json("{\"batch_size\": 9223372036854775808}"), "batch_size", "an integer");
  EXPECT_THROWS_WITH(train_config_from_json("{\"seed\": -1}"), "seed", "non-negative integer");
  EXPECT_THROWS_WITH(train_config_from_json("{\"lr_milestones\": [3, 1e30]}"), "lr_milestones", "list of integers");
  EXPECT_THROWS_WITH(train_config_from_json("{\"plots\": 1}"), "plots", "true or false");
  EXPECT_EQ(train_config_from_json("{\"learning_rate\": 1}").learning_rate, 1.0);
}

// A resumed run's config.json is checked like the flags of a new run, and its errors name the file.
TEST(TrainConfig, ResumedConfigIsCheckedAndNamesTheFile) {
  TrainConfig c = base("l2rm", "f30k");
  resolve_defaults(c);
  EXPECT_EQ(to_json(resumed_train_config(to_json(c), "runs/x/config.json")), to_json(c));
  c.batch_size = 1;
  EXPECT_THROWS_WITH(resumed_train_config(to_json(c), "runs/x/config.json"), "runs/x/config.json",
                     "--batch_size must be at least 2");
  EXPECT_THROWS_WITH(resumed_train_config("[]", "runs/x/config.json"), "runs/x/config.json", "JSON object");
}

}  // namespace
}  // namespace rematch::train
