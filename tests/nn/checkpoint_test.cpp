// Training checkpoints: an interrupted run resumed from a checkpoint reproduces the uninterrupted run bit for
// bit; what a checkpoint holds; the errors of mismatched or damaged checkpoints; and PyTorch checkpoints
// converted by tools/convert_pth.py.
#include "nn/checkpoint.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "nn/safetensors.h"
#include "test_util.h"

namespace rematch::nn {
namespace {

namespace fs = std::filesystem;
using test::all_close;

// A two-layer MLP with dropout drawn from default_generator() and a running-mean buffer, built from Module
// alone so this test depends on nothing but the base class.
class TinyMLP : public UnaryModule {
 public:
  TinyMLP(uint32_t seed, int64_t hidden = 16) {
    w1_ = register_parameter("w1", test::random_tensor({6, hidden}, DType::Float32, seed, -0.5, 0.5));
    b1_ = register_parameter("b1", zeros({hidden}));
    w2_ = register_parameter("w2", test::random_tensor({hidden, 2}, DType::Float32, seed + 1, -0.5, 0.5));
    b2_ = register_parameter("b2", zeros({2}));
    running_ = register_buffer("running_mean", zeros({hidden}));
  }
  Tensor forward(const Tensor& x) override {
    Tensor h = relu(matmul(x, w1_) + b1_);
    if (is_training()) {
      h = h * kernels::cast(bernoulli(h.sizes(), 0.8), DType::Float32) / 0.8;
      NoGradGuard no_grad;
      set_buffer("running_mean", running_ * 0.9 + mean(h.detach(), {0}) * 0.1);
    }
    return matmul(h, w2_) + b2_;
  }

 private:
  Tensor w1_, b1_, w2_, b2_, running_;
};

// A model with its optimizer and schedule, as a training run holds them.
struct TrainingRun {
  explicit TrainingRun(uint32_t seed) : model(seed), opt(model.parameters(), 0.01), schedule(opt, 3, 0.5) {}
  TinyMLP model;
  Adam opt;
  StepLR schedule;
};

const Tensor& data_x() {
  static const Tensor x = test::random_tensor({16, 6}, DType::Float32, 11);
  return x;
}
const Tensor& data_y() {
  static const Tensor y = test::random_tensor({16, 2}, DType::Float32, 12);
  return y;
}

// Steps first..last (1-based): a random minibatch of 8 (randperm) through the model with dropout, Adam,
// then the schedule; returns each step's loss.
std::vector<float> train(TrainingRun& run, int first, int last) {
  std::vector<float> losses;
  for (int step = first; step <= last; ++step) {
    const Tensor idx = kernels::slice(randperm(16), 0, 0, 8);
    run.opt.zero_grad();
    const Tensor loss = mean(square(run.model(index_select(data_x(), 0, idx)) - index_select(data_y(), 0, idx)));
    backward(loss);
    losses.push_back(loss.item<float>());
    run.opt.step();
    run.schedule.step();
  }
  return losses;
}

class Checkpoint : public test::TempDirTest {};

const char* kConfig = R"({"model": "tiny_mlp", "hidden": 16})";

// The issue's "done when": ten steps uninterrupted, and five steps + checkpoint + five steps in fresh
// objects (other weights, a reseeded generator) give bitwise the same losses and the same final state.
TEST_F(Checkpoint, ResumedRunMatchesUninterruptedRunBitwise) {
  manual_seed(2024);
  TrainingRun whole(1);
  const std::vector<float> want = train(whole, 1, 10);
  const GeneratorState full_end = default_generator().state();

  manual_seed(2024);
  TrainingRun first(1);
  const std::vector<float> head = train(first, 1, 5);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(head[i], want[i]) << "step " << i + 1;
  save_training_checkpoint(path("step5.safetensors"), first.model, first.opt, &first.schedule, {kConfig, 5, 5, {}});

  manual_seed(999);  // the resumed run must not depend on the generator's state before loading
  TrainingRun resumed(77);
  const CheckpointInfo info =
      load_training_checkpoint(path("step5.safetensors"), resumed.model, resumed.opt, &resumed.schedule);
  EXPECT_EQ(info.model_config, kConfig);
  EXPECT_EQ(info.epoch, 5);
  EXPECT_EQ(info.step, 5);
  EXPECT_EQ(resumed.schedule.last_epoch(), 5);
  EXPECT_EQ(resumed.opt.lr(), first.opt.lr());
  const std::vector<float> tail = train(resumed, 6, 10);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(tail[i], want[5 + i]) << "step " << i + 6;
  const StateDict a = whole.model.state_dict(), b = resumed.model.state_dict();
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(all_close(b[i].second, a[i].second, 0, 0)) << a[i].first;
  EXPECT_EQ(default_generator().seed(), full_end.seed);
  EXPECT_EQ(default_generator().offset(), full_end.offset);

  // The generator's state matters: continuing from the checkpoint with another stream diverges.
  TrainingRun other(77);
  load_training_checkpoint(path("step5.safetensors"), other.model, other.opt, &other.schedule);
  default_generator().set_state({123, 0});
  EXPECT_NE(train(other, 6, 10), std::vector<float>(want.begin() + 5, want.end()));
}

TEST_F(Checkpoint, HoldsModelOptimizerScheduleAndRngUnderDocumentedNames) {
  manual_seed(5);
  TrainingRun run(1);
  train(run, 1, 2);
  save_training_checkpoint(path("c.safetensors"), run.model, run.opt, &run.schedule,
                           {kConfig, 1, 2, {{"best_rsum", "512.25"}}});
  const SafetensorsFile f = load_safetensors(path("c.safetensors"));
  std::vector<std::string> names;
  for (const auto& [n, t] : f.tensors) names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"model.w1", "model.b1", "model.w2", "model.b2", "model.running_mean",
                                             "optim.state.0.exp_avg", "optim.state.0.exp_avg_sq",
                                             "optim.state.1.exp_avg", "optim.state.1.exp_avg_sq",
                                             "optim.state.2.exp_avg", "optim.state.2.exp_avg_sq",
                                             "optim.state.3.exp_avg", "optim.state.3.exp_avg_sq"}));
  EXPECT_EQ(f.metadata.at("format"), "rematch.training_checkpoint");
  EXPECT_EQ(f.metadata.at("format_version"), "1");
  EXPECT_EQ(f.metadata.at("model_config"), kConfig);
  EXPECT_EQ(f.metadata.at("epoch"), "1");
  EXPECT_EQ(f.metadata.at("step"), "2");
  const auto optim = nlohmann::json::parse(f.metadata.at("optimizer"));
  EXPECT_EQ(optim["kind"], "Adam");
  EXPECT_EQ(optim["steps"].get<std::vector<int64_t>>(), (std::vector<int64_t>{2, 2, 2, 2}));
  EXPECT_EQ(optim["lrs"][0].get<double>(), run.opt.lr());
  const auto sched = nlohmann::json::parse(f.metadata.at("schedule"));
  EXPECT_EQ(sched["kind"], "StepLR");
  EXPECT_EQ(sched["last_epoch"], 2);
  const auto rng = nlohmann::json::parse(f.metadata.at("rng"));
  EXPECT_EQ(rng["seed"].get<uint64_t>(), 5u);
  EXPECT_EQ(rng["offset"].get<uint64_t>(), default_generator().offset());

  const CheckpointInfo info = read_checkpoint_info(path("c.safetensors"));
  EXPECT_EQ(info.step, 2);
  EXPECT_EQ(info.extra, (std::map<std::string, std::string>{{"best_rsum", "512.25"}}));
  EXPECT_EQ(f.metadata.at("extra.best_rsum"), "512.25");
  TinyMLP weights_only(42);
  load_model_weights(path("c.safetensors"), weights_only);
  EXPECT_TRUE(all_close(weights_only.parameter("w2"), run.model.parameter("w2"), 0, 0));
}

TEST_F(Checkpoint, MismatchesAreErrorsNamingTheFile) {
  TrainingRun run(1);
  const std::string p = path("c.safetensors");
  save_training_checkpoint(p, run.model, run.opt, &run.schedule, {kConfig, 0, 0, {}});
  {
    TinyMLP wide(1, 8);
    Adam opt(wide.parameters(), 0.01);
    StepLR sched(opt, 3);
    EXPECT_THROWS_WITH(load_training_checkpoint(p, wide, opt, &sched), p, "wrong shapes", "w1 (expected [6, 8]");
  }
  {
    TinyMLP model(1);
    SGD sgd(model.parameters(), 0.1);
    StepLR step(sgd, 3);
    EXPECT_THROWS_WITH(load_training_checkpoint(p, model, sgd, &step), p, "belongs to a Adam optimizer");
    EXPECT_THROWS_WITH(load_training_checkpoint(p, model, sgd, nullptr), p, "pass the run's schedule");
    TrainingRun fresh(2);
    CosineAnnealingLR fresh_cosine(fresh.opt, 10);
    EXPECT_THROWS_WITH(load_training_checkpoint(p, fresh.model, fresh.opt, &fresh_cosine), p,
                       "belongs to a StepLR schedule");
  }
  save_training_checkpoint(path("nosched.safetensors"), run.model, run.opt, nullptr, {});
  EXPECT_THROWS_WITH(load_training_checkpoint(path("nosched.safetensors"), run.model, run.opt, &run.schedule),
                     "holds no learning-rate schedule, but a StepLR was passed");
  EXPECT_THROWS_WITH(save_training_checkpoint(path("bad.safetensors"), run.model, run.opt, nullptr, {"{oops", 0, 0, {}}),
                     "bad.safetensors", "model config is not valid JSON");
  EXPECT_FALSE(fs::exists(path("bad.safetensors")));
}

TEST_F(Checkpoint, ForeignOrDamagedFilesAreRejected) {
  TrainingRun run(1);
  const std::string p = path("c.safetensors");
  save_training_checkpoint(p, run.model, run.opt, &run.schedule, {kConfig, 0, 0, {}});
  SafetensorsFile f = load_safetensors(p);

  save_safetensors(path("plain.safetensors"), f.tensors);
  EXPECT_THROWS_WITH(load_training_checkpoint(path("plain.safetensors"), run.model, run.opt, &run.schedule),
                     "plain.safetensors", "not a rematch training checkpoint");
  auto rewrite = [&](const std::string& key, const std::string& value) {
    SafetensorsMetadata meta = f.metadata;
    meta[key] = value;
    save_safetensors(path("edited.safetensors"), f.tensors, meta);
    return path("edited.safetensors");
  };
  EXPECT_THROWS_WITH(load_training_checkpoint(rewrite("format_version", "2"), run.model, run.opt, &run.schedule),
                     "format version 2 is not supported");
  EXPECT_THROWS_WITH(load_training_checkpoint(rewrite("rng", "{\"seed\": -1}"), run.model, run.opt, &run.schedule),
                     "metadata 'rng' needs the field 'seed'");
  EXPECT_THROWS_WITH(load_training_checkpoint(rewrite("optimizer", "[1"), run.model, run.opt, &run.schedule),
                     "metadata 'optimizer' is not valid JSON");
  EXPECT_THROWS_WITH(read_checkpoint_info(rewrite("epoch", "1.5")), "metadata 'epoch' is not an integer");
  NamedTensors extra = f.tensors;
  extra.emplace_back("stray.tensor", zeros({1}));
  save_safetensors(path("extra.safetensors"), extra, f.metadata);
  EXPECT_THROWS_WITH(load_training_checkpoint(path("extra.safetensors"), run.model, run.opt, &run.schedule),
                     "unexpected tensor 'stray.tensor'");
}

// ---- PyTorch checkpoints converted by tools/convert_pth.py ----------------------------------------------

const std::string kFixtures = std::string(REMATCH_FIXTURES) + "/checkpoint/";

// The names and shapes tests/reference/make_fake_pth.py writes, in order.
const std::vector<std::pair<std::string, Shape>>& fake_layout() {
  static const std::vector<std::pair<std::string, Shape>> layout = {
      {"img_enc.fc.weight", {8, 6}}, {"img_enc.fc.bias", {8}}, {"txt_enc.embed.weight", {10, 4}},
      {"txt_enc.cap_rnn.weight_ih_l0", {24, 4}}, {"txt_enc.cap_rnn.weight_hh_l0", {24, 8}},
      {"txt_enc.cap_rnn.bias_ih_l0", {24}}, {"txt_enc.cap_rnn.bias_hh_l0", {24}},
      {"txt_enc.cap_rnn.weight_ih_l0_reverse", {24, 4}}, {"sim_enc.SGR_module.0.graph_query_w.weight", {6, 6}},
      {"sim_enc.SGR_module.0.graph_query_w.bias", {6}}, {"sim_enc.sim_eval_w.weight", {1, 6}},
      {"sim_enc.sim_eval_w.bias", {1}}};
  return layout;
}

void expect_fake_model(const SafetensorsFile& f, float offset) {
  ASSERT_EQ(f.tensors.size(), fake_layout().size());
  for (size_t k = 0; k < f.tensors.size(); ++k) {
    const auto& [name, shape] = fake_layout()[k];
    EXPECT_EQ(f.tensors[k].first, name);
    ASSERT_EQ(f.tensors[k].second.sizes(), shape) << name;
    std::vector<float> want(static_cast<size_t>(shape_numel(shape)));
    for (size_t i = 0; i < want.size(); ++i) want[i] = (static_cast<float>(i % 7) - 3) * 0.25f + k + offset;
    EXPECT_TRUE(all_close(f.tensors[k].second, from_vector(want, shape), 0, 0)) << name;
  }
}

TEST(ConvertPth, SgrafCheckpointKeepsTorchNamesValuesAndOptions) {
  const SafetensorsFile f = load_safetensors(kFixtures + "fake_sgraf.safetensors");
  expect_fake_model(f, 0);
  const auto opt = nlohmann::json::parse(f.metadata.at("opt"));
  EXPECT_EQ(opt["learning_rate"].get<double>(), 0.0002);
  EXPECT_EQ(opt["lr_update"], 10);
  EXPECT_EQ(opt["module_name"], "SGR");
  EXPECT_EQ(f.metadata.at("epoch"), "7");
  EXPECT_EQ(f.metadata.at("Eiters"), "1234");
}

TEST(ConvertPth, NcrCheckpointConvertsTheChosenModel) {
  const SafetensorsFile f = load_safetensors(kFixtures + "fake_ncr_B.safetensors");
  expect_fake_model(f, 100);
  EXPECT_EQ(f.metadata.at("best_rsum"), "400.5");
}

// Looks torch up without importing it (an import takes seconds).
bool python_with_torch() {
  return std::system("/usr/bin/python3 -c 'import importlib.util, sys; "
                     "sys.exit(importlib.util.find_spec(\"torch\") is None)' >/dev/null 2>&1") == 0;
}

std::string file_bytes(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Regenerates the fake .pth.tar files with torch and converts them again: the converter's output must be
// byte for byte the committed fixtures, and it refuses an ambiguous NCR checkpoint.
TEST_F(Checkpoint, ConverterReproducesTheFixturesFromTorchFiles) {
  if (!python_with_torch()) GTEST_SKIP() << "/usr/bin/python3 with torch is not available";
  const std::string root = std::string(REMATCH_FIXTURES) + "/../../";
  const std::string python = "/usr/bin/python3 ";
  const std::string quiet = " >/dev/null 2>&1";
  ASSERT_EQ(std::system((python + root + "tests/reference/make_fake_pth.py " + dir_.string() + quiet).c_str()), 0);
  // --no_checks: the fake models are a few real tensor names at toy sizes, not whole SGR models.
  const std::string convert = python + root + "tools/convert_pth.py --no_checks ";
  ASSERT_EQ(std::system((convert + path("fake_sgraf.pth.tar") + " " + path("sgraf.safetensors") + quiet).c_str()), 0);
  ASSERT_EQ(std::system((convert + path("fake_ncr.pth.tar") + " " + path("ncr_B.safetensors") + " --model B" + quiet)
                            .c_str()), 0);
  EXPECT_EQ(file_bytes(path("sgraf.safetensors")), file_bytes(kFixtures + "fake_sgraf.safetensors"));
  EXPECT_EQ(file_bytes(path("ncr_B.safetensors")), file_bytes(kFixtures + "fake_ncr_B.safetensors"));
  EXPECT_NE(std::system((convert + path("fake_ncr.pth.tar") + " " + path("x.safetensors") + quiet).c_str()), 0);
  EXPECT_FALSE(fs::exists(path("x.safetensors")));
}

}  // namespace
}  // namespace rematch::nn
