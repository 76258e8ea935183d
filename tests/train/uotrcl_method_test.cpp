// The UOT-RCL method: options from a TrainConfig, the factory on the .npy layout, exact resumption from a
// saved state (the next step's loss is identical), and the behaviour on the synthetic labelled benchmark at 60 %
// symmetric label noise: the corrected labels beat the noisy ones by at least 20 accuracy points.
#include "train/methods/uotrcl/uotrcl_method.h"

#include "train/methods/make_method.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <limits>
#include <sstream>

#include "test_util.h"
#include "train/run/training_state.h"
#include "uotrcl_test_util.h"

namespace rematch::train {
namespace {

using uotrcl_test::tiny_config;
using uotrcl_test::tiny_options;
using uotrcl_test::tiny_world;

TEST(UotrclMethod, OptionsComeFromTheConfigAndNameTheBadFlag) {
  const TrainConfig c = tiny_config("/data");
  const UotrclOptions& o = c.options<UotrclOptions>();
  EXPECT_EQ(c.noise_seed, 7);
  EXPECT_EQ(c.warmup_epoch, 1);
  EXPECT_EQ(o.knn, 12);
  EXPECT_DOUBLE_EQ(o.lc_eps, 0.1);
  EXPECT_EQ(o.lc_iters, 1000);
  EXPECT_DOUBLE_EQ(o.rel_eps, 0.1);
  EXPECT_EQ(o.rel_iters, 100);
  TrainConfig bad = c;
  bad.options<UotrclOptions>().lc_eps = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROWS_WITH(check_config(bad), "--lc_eps");
  bad = c;
  bad.warmup_epoch = 4;
  EXPECT_THROWS_WITH(check_config(bad), "--warmup_epoch");
  bad = c;
  bad.noise_mode = NoiseMode::Image;
  EXPECT_THROWS_WITH(check_config(bad), "symmetric");
  for (TargetUpdate u : {TargetUpdate::Epoch, TargetUpdate::Batch})
    EXPECT_EQ(parse_target_update(target_update_name(u)), u);
  EXPECT_THROWS_WITH(parse_target_update("step"), "'epoch' or 'batch'");
}

class UotrclMethodFiles : public test::TempDirTest {};

TEST_F(UotrclMethodFiles, FactoryReadsTheNpyLayoutAndANoiseFile) {
  const std::string dir = synth::write_labeled_world(synth::make_labeled_world(tiny_world()), path("data"));
  std::ostringstream log;
  std::unique_ptr<Method> m = make_method(tiny_config(dir), log);
  EXPECT_EQ(m->name(), "uotrcl");
  EXPECT_EQ(m->num_epochs(), 3);
  auto& u = dynamic_cast<UotrclMethod&>(*m);
  int64_t noisy = 0;
  for (size_t i = 0; i < u.clean_labels().size(); ++i) noisy += u.noisy_labels().image_labels[i] != u.clean_labels()[i];
  EXPECT_GT(noisy, 0);
  EXPECT_LE(noisy, 48);  // ⌊0.2·240⌋ pairs relabelled, some to their own class
  EXPECT_NE(log.str().find("240 training pairs"), std::string::npos) << log.str();

  // plots/corrected_labels.png: nothing during the warm-up, the confusion matrix once Ŷ exists.
  const std::string plots = path("plots");
  std::filesystem::create_directories(plots);
  m->begin_epoch(0);
  m->write_plots(plots, 0);
  EXPECT_FALSE(std::filesystem::exists(plots + "/corrected_labels.png"));
  m->begin_epoch(1);
  m->write_plots(plots, 1);
  EXPECT_TRUE(std::filesystem::exists(plots + "/corrected_labels.png"));

  // The noise used, saved as the lead's run folder does, read back with --noise_file.
  const std::string noise = data::save_label_noise(u.noisy_labels(), path(""));
  TrainConfig from_file = tiny_config(dir);
  from_file.noise_file = noise;
  from_file.noise_ratio = 0;
  std::unique_ptr<Method> m2 = make_method(from_file, log);
  EXPECT_EQ(dynamic_cast<UotrclMethod&>(*m2).noisy_labels().image_labels, u.noisy_labels().image_labels);
}

// Sparse class ids (4 classes in use of 100,000): the corrected-labels plot counts only the classes in use; its
// 100,000² counts (80 GB) ended a finished run with std::bad_alloc.
TEST_F(UotrclMethodFiles, CorrectedLabelsPlotOfSparseClassIdsCountsOnlyTheClassesInUse) {
  synth::LabeledWorldConfig w = tiny_world();
  w.train_samples = 40, w.valid_samples = 8, w.test_samples = 8;
  data::LabeledDataset d = uotrcl_test::synthetic_dataset(w);
  for (data::LabeledSplit* s : {&d.train, &d.valid, &d.test})
    for (std::vector<int64_t>* labels : {&s->image_labels, &s->text_labels})
      for (int64_t& l : *labels) l = l == 3 ? 99999 : l;
  d.num_classes = 100000;
  TrainConfig c = tiny_options(2);
  c.batch_size = 20;
  c.options<UotrclOptions>().lc_iters = 5;
  c.options<UotrclOptions>().rel_iters = 5;
  c.options<UotrclOptions>().knn = 4;
  std::ostringstream log;
  UotrclMethod m = uotrcl_test::make(c, std::move(d), log);
  const std::string plots = path("plots");
  std::filesystem::create_directories(plots);
  m.begin_epoch(0);
  m.end_epoch(0);
  m.begin_epoch(1);
  m.write_plots(plots, 1);
  EXPECT_TRUE(std::filesystem::exists(plots + "/corrected_labels.png")) << log.str();
}

// Runs epochs [0, epochs) fully, then begin_epoch(epochs) and `steps` steps of it.
void advance(UotrclMethod& m, int64_t epochs, int64_t steps) {
  for (int64_t e = 0; e < epochs; ++e) {
    const EpochInfo info = m.begin_epoch(e);
    for (int64_t s = 0; s < info.steps; ++s) m.train_step(e, s);
    m.end_epoch(e);
  }
  m.begin_epoch(epochs);
  for (int64_t s = 0; s < steps; ++s) m.train_step(epochs, s);
}

class UotrclResume : public test::TempDirTest, public ::testing::WithParamInterface<TargetUpdate> {};

TEST_P(UotrclResume, SavedStateGivesTheSameNextSteps) {
  const data::LabeledDataset data = uotrcl_test::synthetic_dataset(tiny_world());
  TrainConfig o = tiny_options();
  o.options<UotrclOptions>().target_update = GetParam();
  std::ostringstream log;
  for (const int64_t epoch : {int64_t{0}, int64_t{2}}) {  // inside the warm-up, and inside a main epoch
    UotrclMethod a = uotrcl_test::make(o, data, log);
    advance(a, epoch, 2);
    TrainingState saved;
    a.save_state(saved);
    saved.save(path("state.safetensors"));
    const StepResult next = a.train_step(epoch, 2);
    const StepResult middle = a.train_step(epoch, 3);
    const StepResult last = a.train_step(epoch, 4);

    UotrclMethod b = uotrcl_test::make(o, data, log);
    b.load_state(TrainingState::load(path("state.safetensors")));
    EXPECT_EQ(b.current_epoch().phase, a.current_epoch().phase);
    EXPECT_EQ(b.current_epoch().stats, a.current_epoch().stats);
    const StepResult next_b = b.train_step(epoch, 2);
    const StepResult middle_b = b.train_step(epoch, 3);
    const StepResult last_b = b.train_step(epoch, 4);
    EXPECT_EQ(next_b.loss, next.loss) << "epoch " << epoch;
    EXPECT_EQ(next_b.parts, next.parts);
    EXPECT_EQ(middle_b.loss, middle.loss) << "epoch " << epoch;
    EXPECT_EQ(last_b.loss, last.loss) << "epoch " << epoch;
    EXPECT_EQ(last_b.pairs, 40);  // 240 = 4·50 + 40: the last batch is kept (MRL's drop_last=False)
    EXPECT_TRUE(test::all_close(b.targets(), a.targets(), 0, 0));
    // The rest of the run, including the next epoch's label correction, agrees too.
    b.end_epoch(epoch);
    a.end_epoch(epoch);
    EXPECT_EQ(b.begin_epoch(epoch + 1).stats, a.begin_epoch(epoch + 1).stats);
    EXPECT_EQ(b.train_step(epoch + 1, 0).loss, a.train_step(epoch + 1, 0).loss);
  }
}

INSTANTIATE_TEST_SUITE_P(Uotrcl, UotrclResume, ::testing::Values(TargetUpdate::Epoch, TargetUpdate::Batch),
                         [](const auto& info) { return std::string(target_update_name(info.param)); });

TEST(UotrclMethod, LoadStateRefusesOtherNoisyLabels) {
  const data::LabeledDataset data = uotrcl_test::synthetic_dataset(tiny_world());
  std::ostringstream log;
  UotrclMethod a = uotrcl_test::make(tiny_options(), data, log);
  a.begin_epoch(0);
  TrainingState saved;
  a.save_state(saved);
  TrainConfig other = tiny_options();
  other.noise_seed = 12;
  UotrclMethod b = uotrcl_test::make(other, data, log);
  EXPECT_THROWS_WITH(b.load_state(saved), "other noisy labels");
}

TEST(UotrclMethod, LrUpdateDividesTheLearningRateByTenEveryLrUpdateEpochs) {
  const data::LabeledDataset data = uotrcl_test::synthetic_dataset(tiny_world());
  TrainConfig o = tiny_options();
  std::ostringstream log;
  UotrclMethod constant = uotrcl_test::make(o, data, log);
  constant.begin_epoch(3);
  EXPECT_DOUBLE_EQ(constant.learning_rate(), 1e-3);
  o.lr_update = 2;
  UotrclMethod stepped = uotrcl_test::make(o, data, log);
  stepped.begin_epoch(1);
  EXPECT_DOUBLE_EQ(stepped.learning_rate(), 1e-3);
  stepped.begin_epoch(2);
  EXPECT_NEAR(stepped.learning_rate(), 1e-4, 1e-18);
}

TEST(UotrclMethod, ValidationScoreIsTheMeanOfTheTwoMaps) {
  const data::LabeledDataset data = uotrcl_test::synthetic_dataset(tiny_world());
  std::ostringstream log;
  UotrclMethod m = uotrcl_test::make(tiny_options(), data, log);
  const EvalResult v = m.validate();
  EXPECT_NEAR(v.score, 0.5 * (v.metrics.at("map_i2t") + v.metrics.at("map_t2i")), 1e-15);
  EXPECT_DOUBLE_EQ(v.metrics.at("map_avg"), v.score);
  EXPECT_GT(v.score, 0);
  EXPECT_LE(v.score, 1);
  EXPECT_NE(v.table.find("Img→Txt"), std::string::npos);
}

TEST(UotrclMethod, CorrectedLabelsBeatSixtyPercentSymmetricNoiseByTwentyPoints) {
  const data::LabeledDataset data = uotrcl_test::synthetic_dataset(uotrcl_test::study_world());
  TrainConfig o = uotrcl_test::study_options(0.6);
  o.num_epochs = 8;  // 2 warm-up + 6 main epochs: the study's 20 reach the same accuracy (docs/uotrcl-choices.md)
  std::ostringstream log;
  UotrclMethod m = uotrcl_test::make(o, data, log);
  EpochInfo info;
  for (int64_t e = 0; e < m.num_epochs(); ++e) {
    info = m.begin_epoch(e);
    for (int64_t s = 0; s < info.steps; ++s) m.train_step(e, s);
    m.end_epoch(e);
  }
  const double corrected = info.stats.at("label_accuracy"), noisy = info.stats.at("noisy_accuracy");
  const double targets = info.stats.at("target_accuracy");
  const EvalResult test = m.test();
  std::cout << "[ uotrcl ] 60% symmetric noise, " << m.num_epochs() << " epochs: corrected labels (argmax of N·T) "
            << corrected << ", targets y " << targets << ", noisy labels " << noisy << "; test mAP i2t "
            << test.metrics.at("map_i2t") << " t2i " << test.metrics.at("map_t2i") << "\n";
  EXPECT_GE(corrected - noisy, 0.20);
  // What the run folder keeps of the last epoch (splits/, docs/viz.md §4.1): the corrected class of every
  // training pair, as accurate as the epoch's label_accuracy says; nothing for a warm-up epoch.
  EXPECT_FALSE(m.epoch_split(0).has_value());
  const std::optional<viz::EpochSplit> split = m.epoch_split(m.num_epochs() - 1);
  ASSERT_TRUE(split.has_value());
  EXPECT_EQ(split->kind, viz::SplitKind::label);
  const std::vector<int64_t>& clean = data.train.image_labels;
  ASSERT_EQ(split->values.size(), clean.size());
  int64_t right = 0;
  for (size_t i = 0; i < clean.size(); ++i) right += split->values[i] == static_cast<double>(clean[i]);
  EXPECT_DOUBLE_EQ(static_cast<double>(right) / static_cast<double>(clean.size()), corrected);
}

}  // namespace
}  // namespace rematch::train
