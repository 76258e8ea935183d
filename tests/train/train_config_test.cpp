// rematch train's options: the method and preset defaults of the official scripts (docs/methods/l2rm.md §1.1,
// rcl.md §2.2, rcsl.md §3.5, uotrcl.md §4.3), the checks that refuse a bad combination before any work, and the
// config.json round trip.
#include "train/methods/train_config.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "test_util.h"
#include "train/methods/make_method.h"
#include "train/methods/l2rm/l2rm_options.h"
#include "train/methods/rcsl/rcsl_options.h"
#include "train/methods/uotrcl/uotrcl_options.h"

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
  EXPECT_DOUBLE_EQ(f30k.options<L2rmOptions>().reg, 0.01);
  EXPECT_DOUBLE_EQ(f30k.learning_rate, 2e-4);
  EXPECT_EQ(f30k.batch_size, 128);
  EXPECT_EQ(f30k.options<L2rmOptions>().max_reserved, 12);  // ⌊0.1·128⌋
  EXPECT_DOUBLE_EQ(f30k.options<L2rmOptions>().tau, 0.05);
  TrainConfig coco = base("l2rm", "coco");
  resolve_defaults(coco);
  EXPECT_EQ(coco.warmup_epoch, 10);
  EXPECT_EQ(coco.num_epochs, 20);
  EXPECT_EQ(coco.lr_update, 10);
  EXPECT_DOUBLE_EQ(coco.options<L2rmOptions>().reg, 0.07);
  TrainConfig cc = base("l2rm", "cc152k");
  resolve_defaults(cc);
  EXPECT_EQ(cc.num_epochs, 40);
  EXPECT_EQ(cc.lr_update, 20);
  EXPECT_EQ(cc.options<L2rmOptions>().mask_positives, MaskPositives::Off);  // the code forces noise_ratio = 0 on CC152K
}

// One rule for L2RM's positives mask: auto is on iff noise is injected — a --noise_ratio > 0
// or a --noise_file (which injects its index whatever the ratio) — and config.json records on or off.
TEST(TrainConfig, L2rmPositivesMaskIsOnIffNoiseIsInjected) {
  using M = MaskPositives;
  auto mask = [](double ratio, const std::string& file, const std::string& preset, M flag) {
    TrainConfig c = base("l2rm", preset);
    c.noise_ratio = ratio;
    c.noise_file = file;
    c.options<L2rmOptions>().mask_positives = flag;
    resolve_defaults(c);
    return c.options<L2rmOptions>().mask_positives;
  };
  EXPECT_EQ(mask(0.2, "", "f30k", M::Auto), M::On);
  EXPECT_EQ(mask(0, "", "f30k", M::Auto), M::Off);
  EXPECT_EQ(mask(0, "noise_index/f30k_precomp_0.2.npy", "f30k", M::Auto), M::On);  // the file injects noise
  EXPECT_EQ(mask(0, "", "cc152k", M::Auto), M::Off);  // real noise, none injected (the code forces noise_ratio 0)
  EXPECT_EQ(mask(0.2, "", "f30k", M::Off), M::Off);   // Table 3: w/o positives masked
  EXPECT_EQ(mask(0, "", "cc152k", M::On), M::On);
  TrainConfig rcl = base("rcl");
  resolve_defaults(rcl);
  EXPECT_EQ(rcl.options<L2rmOptions>().mask_positives, M::Auto);  // not an L2RM run: nothing to resolve
  EXPECT_NE(to_json(rcl).find("\"mask_positives\": \"auto\""), std::string::npos);
}

// The noise protocol of each method when --noise_mode is not given: RCSL-NC follows NCR's
// caption-level shuffling, the pairs methods RCL/DECL's image level (the published index files), uotrcl
// symmetric labels; a given --noise_mode wins.
TEST(TrainConfig, NoiseModeDefaultsPerMethod) {
  using N = NoiseMode;
  auto mode = [](const std::string& method, std::optional<N> flag) {
    TrainConfig c = base(method);
    c.noise_ratio = 0.2;
    c.noise_mode = flag;
    resolve_defaults(c);
    return *c.noise_mode;
  };
  EXPECT_EQ(mode("rcsl-nc", std::nullopt), N::Caption);
  EXPECT_EQ(mode("rcsl-nc", N::Image), N::Image);
  EXPECT_EQ(mode("l2rm", std::nullopt), N::Image);
  EXPECT_EQ(mode("rcl", std::nullopt), N::Image);
  EXPECT_EQ(mode("uotrcl", std::nullopt), N::Symmetric);
  EXPECT_EQ(mode("uotrcl", N::Mrl), N::Mrl);
  EXPECT_THROWS_WITH(mode("rcsl-nc", N::Symmetric), "--noise_mode", "symmetric");
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
  r.options<RcslOptions>().paired_length = 500;
  resolve_defaults(r);
  const RcslOptions& ro = r.options<RcslOptions>();
  EXPECT_EQ(r.batch_size, 256);
  EXPECT_EQ(ro.mine_epoch, 25);
  EXPECT_EQ(r.num_epochs, 40);
  EXPECT_DOUBLE_EQ(ro.tau, 0.03);
  EXPECT_DOUBLE_EQ(ro.unpaired_keep, 0.2);
  EXPECT_EQ(ro.lr_milestones, (std::vector<int64_t>{15, 30, 45}));
  TrainConfig u = base("uotrcl", "nus");
  resolve_defaults(u);
  EXPECT_EQ(u.batch_size, 500);
  EXPECT_EQ(u.options<UotrclOptions>().knn, 200);
  EXPECT_EQ(u.valid_len, 5000);
  EXPECT_EQ(u.num_epochs, 100);
  EXPECT_EQ(u.warmup_epoch, 2);
  EXPECT_EQ(u.noise_mode, NoiseMode::Symmetric);
}

TEST(TrainConfig, ExplicitFlagsWinOverPresets) {
  TrainConfig c = base("l2rm", "f30k");
  c.num_epochs = 3;
  c.options<L2rmOptions>().reg = 0.2;
  resolve_defaults(c);
  EXPECT_EQ(c.num_epochs, 3);
  EXPECT_DOUBLE_EQ(c.options<L2rmOptions>().reg, 0.2);
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
  EXPECT_THROWS_WITH(train_config_from_json(R"({"method": "rcl", "loss": "hinge"})"), "--loss", "hinge");
  TrainConfig noise = base("l2rm");
  noise.noise_ratio = 1.5;
  EXPECT_THROWS_WITH(resolve(noise), "--noise_ratio", "1.5");
  TrainConfig no_data = base("triplet");
  no_data.data_path.clear();
  EXPECT_THROWS_WITH(resolve(no_data), "--data_path");
}

TEST(TrainConfig, JsonRoundTripKeepsEveryField) {
  TrainConfig c = base("rcsl", "f30k");
  c.options<RcslOptions>().paired_length = 1000;
  c.options<RcslOptions>().lr_milestones = {3, 7};
  c.options<RcslOptions>().word_vectors = "glove.txt";
  resolve_defaults(c);
  const TrainConfig back = train_config_from_json(to_json(c));
  EXPECT_EQ(to_json(back), to_json(c));
  EXPECT_EQ(back.options<RcslOptions>().paired_length, 1000);
  EXPECT_TRUE(std::isnan(back.options<L2rmOptions>().reg));  // unused by rcsl: null in JSON, NaN again when read
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

// The flag tables: a name several methods declare (--margin, --tau, ...) is one flag, of one
// kind, default and set of choices; every method's option has a source for its default or a default of its
// method; config.json has exactly the flat keys an earlier rematch wrote (tests/fixtures/old_run).
TEST(TrainConfig, SharedFlagsAgreeAcrossTheirTables) {
  for (const TrainFlag& f : train_flags())
    for (const auto& [table, flag] : f.instances) {
      EXPECT_EQ(flag->kind, f.first().kind) << f.name << " in " << table->title;
      EXPECT_EQ(flag->initial, f.first().initial) << f.name << " in " << table->title;
      EXPECT_EQ(flag->choices, f.first().choices) << f.name << " in " << table->title;
      EXPECT_EQ(flag->ablation, f.first().ablation) << f.name << " in " << table->title;
    }
}

TEST(TrainConfig, EveryMethodOptionSaysWhereItsDefaultComesFrom) {
  for (const MethodSpec* m : registered_methods()) {
    for (const Default& d : m->defaults) {
      EXPECT_NE(find_train_flag(d.flag), nullptr) << m->name << " sets --" << d.flag;
      EXPECT_FALSE(d.source.empty()) << m->name << " --" << d.flag;
    }
    for (const OptionTable* t : m->tables)
      for (const Flag& f : t->flags) {
        bool method_default = false;
        for (const MethodSpec* other : registered_methods())
          for (const Default& d : other->defaults) method_default |= d.flag == f.name;
        EXPECT_TRUE(method_default || !f.source.empty() || f.ablation) << m->name << " --" << f.name;
      }
  }
}

TEST(TrainConfig, JsonKeepsTheFlatKeysOfEarlierRunFolders) {
  std::ifstream in(std::string(REMATCH_FIXTURES) + "/old_run/runs/l2rm/config.json");
  const nlohmann::json old = nlohmann::json::parse(in);
  const nlohmann::json now = nlohmann::json::parse(to_json(TrainConfig{}));
  std::vector<std::string> old_keys, new_keys;
  for (const auto& [k, v] : old.items()) old_keys.push_back(k);
  for (const auto& [k, v] : now.items()) new_keys.push_back(k);
  // Every key of the earlier folder is still written (its runs resume); a method added since (crcl, ...) adds
  // keys, each a registered flag.
  for (const std::string& k : old_keys)
    EXPECT_NE(std::find(new_keys.begin(), new_keys.end(), k), new_keys.end()) << k;
  for (const std::string& k : new_keys)
    EXPECT_TRUE(std::find(old_keys.begin(), old_keys.end(), k) != old_keys.end() || find_train_flag(k) != nullptr)
        << k;
}

// A flag a method does not declare keeps its default in a run of that method; an ablation switch is refused, a
// plain option of another method is recorded as given (config.json holds every flag).
TEST(TrainConfig, EachMethodReadsItsOwnSection) {
  TrainConfig c = base("rcsl", "f30k");
  c.options<RcslOptions>().paired_length = 500;
  c.options<RcslOptions>().tau = 0.5;
  resolve_defaults(c);
  EXPECT_DOUBLE_EQ(c.options<RcslOptions>().tau, 0.5);
  EXPECT_TRUE(std::isnan(c.options<PairsOptions>().tau));  // triplet's, infonce's and rcl's: not this run's
  const nlohmann::json j = nlohmann::json::parse(to_json(c));
  EXPECT_EQ(j.at("tau"), 0.5);  // the run's method's value
  const TrainConfig back = train_config_from_json(to_json(c));
  EXPECT_DOUBLE_EQ(back.options<RcslOptions>().tau, 0.5);
  EXPECT_DOUBLE_EQ(back.options<L2rmOptions>().tau, 0.5);  // config.json's key sets every table's field
}

}  // namespace
}  // namespace rematch::train
