#include "train/cli/labeled_demo.h"

#include <chrono>
#include <iomanip>
#include <sstream>

#include "train/cli/app.h"
#include "train/cli/demo_folder.h"
#include "train/cli/report_pages.h"
#include "train/methods/dscmr/dscmr_options.h"
#include "train/methods/make_method.h"
#include "train/methods/mrl/mrl_options.h"
#include "train/methods/uotrcl/uotrcl_options.h"
#include "train/run/run_folder.h"
#include "viz/plots.h"

namespace rematch::cli {
namespace {

// The model and schedule every method gets alike: MLPs of width 256 into a 64-d common space, batches of 100,
// Adam at 1e-3 (the methods' own 1e-4 needs far more than 20 epochs at this size), `epochs` epochs.
constexpr int64_t kHidden = 256, kCommon = 64, kBatch = 100;
constexpr double kLearningRate = 1e-3;

std::string fixed(double v, int digits) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << v;
  return s.str();
}

}  // namespace

synth::LabeledWorldConfig labeled_demo_world(uint64_t seed) {
  synth::LabeledWorldConfig w;
  w.seed = seed;
  return w;
}

std::vector<LabeledDemoRun> labeled_demo_runs(const LabeledDemoOptions& o, const std::string& data_path) {
  std::vector<LabeledDemoRun> runs;
  for (const std::string row : {"ce", "mrl", "dscmr", "uotrcl"}) {
    train::TrainConfig c;
    c.method = row == "ce" ? "mrl" : row;
    c.device = o.device;
    c.seed = o.seed;
    c.data_path = data_path;
    c.valid_len = 0;  // the world has its own validation split
    c.noise_ratio = o.noise_ratio;
    c.noise_mode = train::NoiseMode::Symmetric;
    c.noise_seed = static_cast<int64_t>(o.seed) + 100;
    c.batch_size = kBatch;
    c.learning_rate = kLearningRate;
    c.num_epochs = o.epochs;
    c.eval_batch = 1000;
    if (c.method == "mrl") {
      train::MrlOptions& m = c.options<train::MrlOptions>();
      m.hidden_dim = kHidden;
      m.output_dim = kCommon;
      // "ce": MRL's cross-entropy configuration (`utils/config.py`: --loss CE --beta 1); mrl: the README's
      // Wikipedia command, β = 0.7 (the `wiki` preset's).
      m.label_loss = row == "ce" ? train::MrlLabelLoss::Ce : train::MrlLabelLoss::Mce;
      m.beta = row == "ce" ? 1.0 : 0.7;
    } else if (c.method == "dscmr") {
      train::DscmrOptions& d = c.options<train::DscmrOptions>();
      d.hidden_dim = kHidden;
      d.common_dim = kCommon;
    } else {
      train::UotrclOptions& u = c.options<train::UotrclOptions>();
      u.hidden_dim = kHidden;
      u.output_dim = kCommon;
      u.knn = 100;  // 𝒦 ≈ 5 % of the 2,000 training pairs (UOT-RCL §V-B)
      c.warmup_epoch = 2;
    }
    c.run_dir = o.out + "/" + row;
    c.overwrite = true;
    c.progress = run::parse_progress_style(o.progress);
    c.log_step = 5;
    train::resolve_defaults(c);
    runs.push_back({row, c});
  }
  return runs;
}

void run_labeled_demo(const LabeledDemoOptions& o, std::ostream& out, std::ostream& err) {
  if (!(o.noise_ratio >= 0 && o.noise_ratio < 1)) throw UsageError("--noise_ratio must be in [0, 1)");
  if (o.epochs <= 2) throw UsageError("--epochs must exceed UOT-RCL's 2 warm-up epochs (got " +
                                      std::to_string(o.epochs) + ")");
  device_flag(o.device);
  std::vector<std::string> folders = {"ce"};
  for (const train::MethodSpec* m : train::registered_methods()) folders.push_back(m->name);
  const std::string in_the_way = demo_folder_problem(o.out, folders);
  if (!in_the_way.empty()) throw UsageError(in_the_way);
  const auto start = std::chrono::steady_clock::now();
  const synth::LabeledWorldConfig wc = labeled_demo_world(o.seed);
  const std::string data_path = synth::write_labeled_world(synth::make_labeled_world(wc), o.out + "/data");
  const std::vector<LabeledDemoRun> runs = labeled_demo_runs(o, data_path);
  out << "rematch demo --labeled: synthetic class-labelled benchmark (" << wc.train_samples << " training pairs, "
      << wc.classes << " classes, " << wc.img_dim << "-d image and " << wc.txt_dim << "-d text features) in "
      << data_path << "\n  " << fixed(100 * o.noise_ratio, 0)
      << "% of the training labels replaced uniformly at random (symmetric noise), seed " << o.seed << ", device "
      << o.device << "\n\n";

  struct Row {
    std::string name;
    train::TrainOutcome outcome;
    std::string run_dir;
  };
  std::vector<Row> rows;
  std::vector<run::Series> curves;
  for (const LabeledDemoRun& r : runs) {
    out << "training " << r.row << (r.row == "ce" ? " (mrl --label_loss ce --beta 1)" : "") << " ..." << std::endl;
    train::NewRun n = train::train_new_run(r.config, err);
    if (n.outcome.interrupted)
      throw Interrupted("interrupted during " + r.row + "; its run can continue with: rematch train --resume " +
                        n.run_dir);
    rows.push_back({r.row, n.outcome, n.run_dir});
    run::Series s{r.row, {}, {}, std::nullopt};
    for (const run::MetricRecord& m : run::read_metrics(n.run_dir + "/metrics.jsonl"))
      if (m.kind == "val") {
        s.xs.push_back(static_cast<double>(m.epoch + 1));
        s.ys.push_back(m.get("score"));
      }
    curves.push_back(s);
  }
  run::line_plot(o.out + "/validation_map.png",
                 "validation mAP (mean of both directions), " + fixed(100 * o.noise_ratio, 0) + "% noisy labels",
                 "epoch", "mAP", curves);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out << "\nTest split (" << wc.test_samples << " pairs), mAP@all at the best validated epoch of each method:\n\n"
      << "| method | Img→Txt mAP | Txt→Img mAP | average | label accuracy |\n"
      << "|--------|-------------|-------------|---------|----------------|\n";
  for (const Row& r : rows) {
    const train::Scalars& m = r.outcome.test.metrics;
    const auto acc = r.outcome.last_epoch_stats.find("label_accuracy");
    out << "| " << std::left << std::setw(6) << r.name << std::right << " | " << std::setw(11)
        << fixed(m.at("map_i2t"), 4) << " | " << std::setw(11) << fixed(m.at("map_t2i"), 4) << " | " << std::setw(7)
        << fixed(m.at("map_avg"), 4) << " | " << std::setw(14)
        << (acc == r.outcome.last_epoch_stats.end() ? "-" : fixed(acc->second, 3)) << " |\n";
  }
  const auto noisy = rows.front().outcome.last_epoch_stats.find("noisy_accuracy");
  out << "\nlabel accuracy: share of UOT-RCL's corrected training labels (its last epoch) that equal the clean ones";
  if (noisy != rows.front().outcome.last_epoch_stats.end())
    out << "; the noisy labels every method trains on are " << fixed(noisy->second, 3) << " correct";
  out << ".\nRun folders (config.json, metrics.jsonl, checkpoints, results.md, plots/): ";
  for (const Row& r : rows) out << r.run_dir << " ";
  out << "\nValidation curves: " << o.out << "/validation_map.png\nTotal time " << fixed(seconds / 60, 1)
      << " min.\n";
  // UOT-RCL's page: its corrected labels against the clean ones (plots/corrected_labels.png, splits/).
  const std::string report = write_run_report(rows.back().run_dir, o.out + "/report", {}, err);
  out << "Report (open it in a browser): " << report << "\n";
}

}  // namespace rematch::cli
