// The training loop (train/methods/trainer.h) around a small deterministic Method: metrics.jsonl and the
// checkpoints it writes, best-state selection, an interrupted run resumed to exactly the metrics of an
// uninterrupted one, and a NaN loss that stops the run naming the step and the op without touching the last
// good checkpoint, and a disk that fills up mid-run: the error names the file and the intact checkpoint, and the
// run resumes from it to the metrics of an uninterrupted run once there is room. Also TrainingState's round trip
// and its errors.
#include "train/methods/trainer.h"

#include <gtest/gtest.h>

#include <optional>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <sstream>

#include "autograd/autograd.h"
#include "disk_faults.h"
#include "test_util.h"

namespace rematch::train {
namespace {

// Linear regression on fixed data with shuffled mini-batches drawn from its own generator: every part of a
// real method's state (weights, Adam moments, a generator, an epoch plan) without the cost.
struct Faults {
  int64_t interrupt_epoch = -1, interrupt_step = -1;  // raise(SIGINT) inside this step
  int64_t nan_epoch = -1, nan_step = -1;              // this step's loss goes through log(-1)
  int64_t disk_epoch = -1, disk_step = -1;            // disk_fault() runs at the start of this step
  std::function<void()> disk_fault;
};

class ToyMethod : public Method {
 public:
  explicit ToyMethod(Faults faults = {}) : faults_(faults), gen_(7), net_(4, 1, true, DType::Float64, &gen_) {
    x_ = test::random_tensor({40, 4}, DType::Float64, 1);
    y_ = test::random_tensor({40, 1}, DType::Float64, 2);
    optimizer_ = std::make_unique<nn::Adam>(net_.parameters(), 0.05);
  }

  std::string name() const override { return "toy"; }
  int64_t num_epochs() const override { return 3; }
  EpochInfo begin_epoch(int64_t epoch) override {
    epoch_ = epoch;
    order_ = randperm(40, Device::cpu(), &gen_).to_vector<int64_t>();
    ++begin_calls;
    return current_epoch();
  }
  StepResult train_step(int64_t epoch, int64_t step) override {
    if (epoch == faults_.interrupt_epoch && step == faults_.interrupt_step) std::raise(SIGINT);
    if (epoch == faults_.disk_epoch && step == faults_.disk_step) faults_.disk_fault();
    const std::vector<int64_t> rows(order_.begin() + step * 8, order_.begin() + step * 8 + 8);
    const Tensor idx = from_vector(rows);
    Tensor pred = net_.forward(index_select(x_, 0, idx));
    if (epoch == faults_.nan_epoch && step == faults_.nan_step) pred = pred + log(sum(pred) * 0.0 - 1.0);
    const Tensor loss = mean(square(pred - index_select(y_, 0, idx)));
    StepResult r;
    r.loss = loss.item<double>();
    r.parts["mse"] = r.loss;
    check_finite_loss(name(), epoch, step, "mse", r.loss);
    optimizer_->zero_grad();
    backward(loss);
    optimizer_->step();
    r.pairs = 8;
    return r;
  }
  void end_epoch(int64_t) override {}
  EpochInfo current_epoch() const override { return EpochInfo{"train", 5, {{"epoch_stat", double(epoch_)}}}; }
  EvalResult validate() override {
    NoGradGuard no_grad;
    const double mse = mean(square(net_.forward(x_) - y_)).item<double>();
    EvalResult r;
    r.score = -mse;
    r.metrics["mse"] = mse;
    r.table = "mse " + std::to_string(mse);
    return r;
  }
  EvalResult test() override { return validate(); }
  void save_state(TrainingState& s) const override {
    s.put_module("net.", net_);
    s.put_optimizer("optim.", *optimizer_);
    s.put_generator("gen", gen_);
    s.put_int("epoch", epoch_);
    s.put_int_vector("order", order_);
  }
  void load_state(const TrainingState& s) override {
    s.get_module("net.", net_);
    s.get_optimizer("optim.", *optimizer_);
    s.get_generator("gen", gen_);
    epoch_ = s.get_int("epoch");
    order_ = s.get_int_vector("order");
  }
  std::vector<Generator*> generators() override { return {&gen_}; }
  double learning_rate() const override { return optimizer_->lr(); }

  int begin_calls = 0;

 private:
  Faults faults_;
  Generator gen_;
  nn::Linear net_;
  std::unique_ptr<nn::Adam> optimizer_;
  Tensor x_, y_;
  std::vector<int64_t> order_;
  int64_t epoch_ = -1;
};

TrainConfig toy_config() {
  TrainConfig c;
  c.method = "toy";
  c.progress = run::ProgressStyle::None;
  c.log_step = 1;
  return c;
}

// The train and val records of a run folder, as text (exact equality = identical numbers).
std::vector<std::string> logged(const std::string& dir) {
  std::vector<std::string> out;
  for (const run::MetricRecord& r : run::read_metrics(dir + "/metrics.jsonl")) {
    std::ostringstream s;
    s.precision(17);
    s << r.kind << " " << r.epoch << " " << r.step;
    for (const auto& [k, v] : r.values) s << " " << k << "=" << v;
    out.push_back(s.str());
  }
  return out;
}

class TrainerTest : public test::TempDirTest {};

TEST_F(TrainerTest, WritesMetricsCheckpointsAndResults) {
  ToyMethod m;
  run::RunFolder folder(path("run"), run::RunStart::Fresh);
  std::ostringstream out;
  const TrainOutcome o = run_training(m, toy_config(), folder, false, out);
  EXPECT_FALSE(o.interrupted);
  const std::vector<run::MetricRecord> records = run::read_metrics(folder.metrics_path());
  int train = 0, val = 0, test = 0;
  double best = -1e300;
  for (const auto& r : records) {
    train += r.kind == "train";
    val += r.kind == "val";
    test += r.kind == "test";
    if (r.kind == "val") best = std::max(best, r.get("score"));
  }
  EXPECT_EQ(train, 15);  // 3 epochs × 5 steps, log_step 1
  EXPECT_EQ(val, 3);
  EXPECT_EQ(test, 1);
  EXPECT_DOUBLE_EQ(o.best_score, best);
  EXPECT_TRUE(std::filesystem::exists(folder.checkpoint_latest_path()));
  EXPECT_TRUE(std::filesystem::exists(folder.checkpoint_best_path()));
  EXPECT_TRUE(std::filesystem::exists(folder.results_path()));
  EXPECT_TRUE(std::filesystem::exists(folder.plot_path("loss.png")));
  EXPECT_TRUE(std::filesystem::exists(folder.plot_path("validation.png")));
  // The test ran on the best state: its mse is the best validation mse (validation = test data here).
  EXPECT_DOUBLE_EQ(o.test.metrics.at("mse"), -best);
}

// The trainer knows no statistic by name: it shows what the method declares, where it says.
class ToyWithStats : public ToyMethod {
 public:
  std::vector<EpochStat> epoch_stats() const override { return {{"epoch_stat", 1, true, true, true}}; }
};

TEST_F(TrainerTest, ShowsTheEpochStatisticsTheMethodDeclares) {
  TrainConfig c = toy_config();
  c.progress = run::ProgressStyle::Plain;
  {
    ToyMethod silent;
    run::RunFolder folder(path("silent"), run::RunStart::Fresh);
    std::ostringstream out;
    run_training(silent, c, folder, false, out);
    EXPECT_EQ(out.str().find("epoch_stat"), std::string::npos) << out.str();
    EXPECT_FALSE(std::filesystem::exists(folder.plot_path("epoch_stat.png")));
  }
  ToyWithStats m;
  run::RunFolder folder(path("run"), run::RunStart::Fresh);
  std::ostringstream out;
  const TrainOutcome o = run_training(m, c, folder, false, out);
  EXPECT_NE(out.str().find("  epoch_stat 0.0"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("  epoch_stat 2.0"), std::string::npos) << out.str();
  EXPECT_TRUE(std::filesystem::exists(folder.plot_path("epoch_stat.png")));
  std::ifstream results(folder.results_path());
  const std::string text((std::istreambuf_iterator<char>(results)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("- epoch_stat (epoch " + std::to_string(o.best_epoch + 1) + "): " +
                      std::to_string(o.best_epoch).substr(0, 1)),
            std::string::npos)
      << text;
}

// memory.md (train/run/memory_tally.h, docs/memory.md §1): a step that holds 32 MiB at once shows as the steps' peak, the
// block it freed is cached and given back after validation, and results.md points to the file.
class ToyWithABigTemporary : public ToyMethod {
 public:
  StepResult train_step(int64_t epoch, int64_t step) override {
    {
      const Tensor big = zeros({int64_t{32} << 20 >> 3}, DType::Float64);  // 32 MiB
      sum(big).item<double>();
    }
    return ToyMethod::train_step(epoch, step);
  }
};

double mib_in_row(const std::string& text, const std::string& row) {
  const size_t at = text.find("| " + row + " | ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + row.size() + 5));
}

TEST_F(TrainerTest, WritesTheRunsMemoryToMemoryMd) {
  TrainConfig c = toy_config();
  c.progress = run::ProgressStyle::Plain;
  ToyWithABigTemporary m;
  run::RunFolder folder(path("run"), run::RunStart::Fresh);
  std::ostringstream out;
  run_training(m, c, folder, false, out);
  std::ifstream in(folder.dir() + "/memory.md");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_GE(mib_in_row(text, "peak live, training steps"), 32.0) << text;
  EXPECT_LT(mib_in_row(text, "peak live, validation"), 32.0) << text;
  EXPECT_GE(mib_in_row(text, "cache given back between epochs (total)"), 3 * 32.0) << text;  // 3 epochs
  EXPECT_NE(out.str().find("memory: peak tensor memory "), std::string::npos) << out.str();
  std::ifstream results(folder.results_path());
  const std::string r((std::istreambuf_iterator<char>(results)), std::istreambuf_iterator<char>());
  EXPECT_NE(r.find("memory.md"), std::string::npos) << r;
}

TEST_F(TrainerTest, InterruptedRunResumesToIdenticalMetrics) {
  std::ostringstream out;
  ToyMethod plain;
  run::RunFolder a(path("a"), run::RunStart::Fresh);
  run_training(plain, toy_config(), a, false, out);

  Faults f;
  f.interrupt_epoch = 1;
  f.interrupt_step = 2;
  ToyMethod first(f);
  {
    run::RunFolder b(path("b"), run::RunStart::Fresh);  // released at the end of this block, as by a process's end
    b.write_config("{}");  // the caller's part of a fresh run (rematch train writes the resolved config)
    const TrainOutcome stopped = run_training(first, toy_config(), b, false, out);
    ASSERT_TRUE(stopped.interrupted);
    // The step that saw the signal finished; the checkpoint holds epoch 1 with 3 steps done.
    const TrainingState saved = TrainingState::load(b.checkpoint_latest_path());
    EXPECT_EQ(saved.get_int("trainer.epoch"), 1);
    EXPECT_EQ(saved.get_int("trainer.step"), 3);
  }

  ToyMethod second;  // a fresh process: nothing but the checkpoint carries over
  const std::string b_dir = path("b");
  run::RunFolder b_again(b_dir, run::RunStart::Resume);
  const TrainOutcome resumed = run_training(second, toy_config(), b_again, true, out);
  EXPECT_FALSE(resumed.interrupted);
  EXPECT_EQ(second.begin_calls, 1);  // epoch 1 continued from the checkpoint, only epoch 2 began anew
  EXPECT_EQ(logged(b_dir), logged(a.dir()));
}

TEST_F(TrainerTest, NanLossNamesStepAndOpAndKeepsTheCheckpoint) {
  Faults f;
  f.nan_epoch = 1;
  f.nan_step = 3;
  ToyMethod m(f);
  run::RunFolder folder(path("run"), run::RunStart::Fresh);
  std::ostringstream out;
  EXPECT_THROWS_WITH(run_training(m, toy_config(), folder, false, out), "epoch 1, step 3", "mse", "log",
                     "no checkpoint");
  // The checkpoint of epoch 0's end is still the latest, and whole.
  const TrainingState s = TrainingState::load(folder.checkpoint_latest_path());
  EXPECT_EQ(s.get_int("trainer.epoch"), 0);
  EXPECT_EQ(s.get_int("trainer.epoch_done"), 1);
}

// The disk fills up in epoch 1 (a file-size limit just past the metrics log, which works anywhere): the next
// metrics line gets only part way, is cut off again, and the run stops naming the file, the cause, the
// checkpoint of epoch 0 (intact) and the command that continues. Without the limit, it does.
TEST_F(TrainerTest, AFullDiskStopsTheRunAndItResumesFromTheLastCheckpoint) {
  std::ostringstream out;
  ToyMethod plain;
  run::RunFolder a(path("a"), run::RunStart::Fresh);
  run_training(plain, toy_config(), a, false, out);

  std::optional<run::RunFolder> b_holder(std::in_place, path("b"), run::RunStart::Fresh);  // one process's
  run::RunFolder& b = *b_holder;
  b.write_config("{}");
  std::unique_ptr<test::FileSizeLimit> disk_full;
  Faults f;
  f.disk_epoch = 1;
  f.disk_step = 2;
  f.disk_fault = [&] {
    disk_full = std::make_unique<test::FileSizeLimit>(std::filesystem::file_size(b.metrics_path()) + 20);
    ASSERT_TRUE(disk_full->ok());
  };
  ToyMethod first(f);
  const std::string before_fault = "the last checkpoint, " + b.checkpoint_latest_path() + " (the end of epoch 1)";
  EXPECT_THROWS_WITH(run_training(first, toy_config(), b, false, out), "metrics log '" + b.metrics_path() + "'",
                     "cannot append a line (20 of", "File too large", before_fault + ", is intact",
                     "continue with: rematch train --resume " + b.dir());
  disk_full.reset();
  std::ifstream metrics(b.metrics_path(), std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(metrics)), {});
  EXPECT_EQ(text.back(), '\n');  // whole lines only
  const TrainingState saved = TrainingState::load(b.checkpoint_latest_path());
  EXPECT_EQ(saved.get_int("trainer.epoch"), 0);
  EXPECT_EQ(saved.get_int("trainer.epoch_done"), 1);

  ToyMethod second;
  const std::string b_dir = b.dir();
  b_holder.reset();  // that process ended, and its lock of the folder with it
  run::RunFolder b_again(path("b"), run::RunStart::Resume);
  EXPECT_FALSE(run_training(second, toy_config(), b_again, true, out).interrupted);
  EXPECT_EQ(logged(b_dir), logged(a.dir()));
}

// A real full disk (a small tmpfs, where mounting is allowed): filled up in epoch 1, the next file the run
// writes fails with ENOSPC; every file of the folder is whole, and the run resumes once space is freed.
TEST_F(TrainerTest, AFullTmpfsStopsTheRunAndItResumesOnceSpaceIsFreed) {
  std::filesystem::create_directory(path("disk"));
  test::SmallTmpfs tmpfs(path("disk"), 1 << 20);
  if (!tmpfs.available()) GTEST_SKIP() << tmpfs.skip_reason();
  std::ostringstream out;
  ToyMethod plain;
  run::RunFolder a(path("a"), run::RunStart::Fresh);
  run_training(plain, toy_config(), a, false, out);
  std::optional<run::RunFolder> b_holder(std::in_place, path("disk/b"), run::RunStart::Fresh);  // one process's
  run::RunFolder& b = *b_holder;
  b.write_config("{}");
  const std::string filler = path("disk/filler");
  Faults f;
  f.disk_epoch = 1;
  f.disk_step = 2;
  f.disk_fault = [&] {
    std::ofstream fill(filler, std::ios::binary);
    const std::string block(4096, 'x');
    while (fill.write(block.data(), block.size())) fill.flush();
  };
  ToyMethod first(f);
  EXPECT_THROWS_WITH(run_training(first, toy_config(), b, false, out), "'" + b.dir() + "/",
                     "No space left on device (the file system is full",
                     "the last checkpoint, " + b.checkpoint_latest_path() + " (the end of epoch 1), is intact",
                     "continue with: rematch train --resume " + b.dir());
  std::filesystem::remove(filler);
  for (const auto& e : std::filesystem::directory_iterator(b.dir()))
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << e.path();
  EXPECT_EQ(TrainingState::load(b.checkpoint_latest_path()).get_int("trainer.epoch"), 0);

  ToyMethod second;
  const std::string b_dir = b.dir();
  b_holder.reset();  // that process ended, and its lock of the folder with it
  run::RunFolder b_again(path("disk/b"), run::RunStart::Resume);
  EXPECT_FALSE(run_training(second, toy_config(), b_again, true, out).interrupted);
  EXPECT_EQ(logged(b_dir), logged(a.dir()));
}

// A write that fails before the first checkpoint says so: there is nothing to resume.
TEST_F(TrainerTest, AWriteFailureBeforeTheFirstCheckpointSaysToStartAgain) {
  run::RunFolder folder(path("run"), run::RunStart::Fresh);
  std::unique_ptr<test::FileSizeLimit> disk_full;
  Faults f;
  f.disk_epoch = 0;
  f.disk_step = 4;
  f.disk_fault = [&] { disk_full = std::make_unique<test::FileSizeLimit>(1); };
  ToyMethod m(f);
  std::ostringstream out;
  EXPECT_THROWS_WITH(run_training(m, toy_config(), folder, false, out), "File too large",
                     "Training stopped before its first checkpoint", "start again with --overwrite, or pick another "
                     "--run_dir");
  disk_full.reset();
  EXPECT_FALSE(std::filesystem::exists(folder.checkpoint_latest_path()));
}

TEST(ClipCheckedGradients, ClipsOrOnlyMeasuresAndStopsANonFiniteNorm) {
  // One weight w with gradient d(sum(w * c))/dw = c.
  const auto grad_of = [](const std::vector<double>& c) {
    Tensor w = zeros({3}, DType::Float64);
    w.requires_grad_();
    backward(sum(mul(w, from_vector(c, {3}))));
    return w;
  };
  const Tensor w = grad_of({3, 0, 4});  // norm 5
  clip_checked_gradients("m", 0, 0, {w}, 0);  // no clipping: the gradient stays
  EXPECT_TRUE(test::all_close(w.grad(), from_vector(std::vector<double>{3, 0, 4}, {3}), 0, 0));
  clip_checked_gradients("m", 0, 0, {w}, 1);  // clipped to norm 1 (up to the 1e-6 of torch's rule)
  EXPECT_TRUE(test::all_close(w.grad(), from_vector(std::vector<double>{0.6, 0, 0.8}, {3}), 1e-6, 0));
  for (const double max_norm : {0.0, 2.0}) {
    const Tensor bad = grad_of({1, std::numeric_limits<double>::quiet_NaN(), 0});
    EXPECT_THROWS_WITH(clip_checked_gradients("rcsl", 2, 7, {bad}, max_norm), "rcsl", "'gradient norm'", "nan",
                       "epoch 2, step 7");
  }
}

TEST_F(TrainerTest, TrainingStateRoundTripAndErrors) {
  Generator g(3);
  nn::Linear a(3, 2, true, DType::Float32, &g), b(3, 2, true, DType::Float32, &g);
  nn::Adam opt_a(a.parameters(), 0.1), opt_b(b.parameters(), 0.5);
  backward(sum(a.forward(ones({1, 3}))));
  opt_a.step();
  TrainingState s;
  s.put_module("m.", a);
  s.put_optimizer("o.", opt_a);
  s.put_generator("g", g);
  s.put_double("x", 0.1);
  s.put_int_vector("v", {4, 5, 6});
  s.save(path("state.safetensors"));
  const TrainingState back = TrainingState::load(path("state.safetensors"));
  back.get_module("m.", b);
  back.get_optimizer("o.", opt_b);
  Generator h(99);
  back.get_generator("g", h);
  EXPECT_TRUE(test::all_close(b.weight(), a.weight(), 0, 0));
  EXPECT_DOUBLE_EQ(opt_b.lr(), 0.1);
  EXPECT_EQ(h.state().seed, g.state().seed);
  EXPECT_EQ(h.state().offset, g.state().offset);
  EXPECT_DOUBLE_EQ(back.get_double("x"), 0.1);
  EXPECT_EQ(back.get_int_vector("v"), (std::vector<int64_t>{4, 5, 6}));
  EXPECT_THROWS_WITH(back.get_entry("missing"), path("state.safetensors"), "no entry 'missing'");
  nn::Linear wrong(4, 2);
  EXPECT_THROWS_WITH(back.get_module("m.", wrong), "module 'm.'");
  std::ofstream(path("junk.safetensors")) << "not a checkpoint";
  EXPECT_THROWS_WITH(TrainingState::load(path("junk.safetensors")), "junk.safetensors");
}

}  // namespace
}  // namespace rematch::train
