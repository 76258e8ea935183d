// write_label_report (report_pages.h): the labels a run corrected (UOT-RCL), read back from its run folder.
#include <filesystem>
#include <nlohmann/json.hpp>

#include "tensor/error.h"
#include "tensor/file_io.h"
#include "tensor/npy.h"
#include "tensor/npy_integers.h"
#include "tensor/tensor.h"
#include "train/cli/report_pages.h"
#include "train/cli/run_config_json.h"
#include "train/data/labeled_dataset.h"
#include "viz/epoch_splits.h"
#include "viz/html.h"
#include "viz/label_page.h"
#include "viz/plots.h"

namespace rematch::cli {

namespace fs = std::filesystem;

std::string write_label_report(const std::string& run_dir, const CaughtReportOptions& o, std::ostream& log) {
  const nlohmann::json config = read_run_config_json(run_dir);
  const std::string method = config_string(config, run_dir, "method", "the run");
  const std::string data_path = config_string(config, run_dir, "data_path");
  const int64_t valid_len = config_integer(config, run_dir, "valid_len", -1);
  REMATCH_CHECK(!data_path.empty(), "'", run_dir, "/config.json' names no --data_path");

  // The truth: the data set's clean training labels (one per pair; both modalities share it in UOT-RCL's data).
  const std::vector<int64_t> clean = data::load_labeled(data_path, valid_len).train.image_labels;
  const int64_t n = static_cast<int64_t>(clean.size());
  // What the run was given: noisy_labels.npy, int64 [2, N] (image labels, text labels; label_noise.cpp).
  const std::string noisy_path = run_dir + "/noisy_labels.npy";
  REMATCH_CHECK(fs::exists(noisy_path), "run folder '", run_dir, "' has no noisy_labels.npy: the labels ",
                "the run trained on are unknown (a run writes it when it starts)");
  const IntegerNpy noisy_both = load_integer_npy(noisy_path, "noisy labels");
  REMATCH_CHECK(noisy_both.shape == Shape({2, n}), "noisy labels '", noisy_path, "' have shape ",
                shape_str(noisy_both.shape), "; the training split of ", data_path, " has ", n,
                " pairs (expected int64 [2, ", n, "])");
  check_integer_range(noisy_both, "noisy labels", 0, int64_t{1} << 31, "class labels are integers >= 0");
  const std::vector<int64_t>& both = noisy_both.values;
  const std::vector<int64_t> noisy(both.begin(), both.begin() + n);  // the image labels (row 0)

  viz::LabelPage page;
  page.title = "Labels " + method + " corrected: " + run_dir;
  page.links = o.links;
  std::vector<viz::EpochSplit> splits;
  for (viz::EpochSplit& s : viz::read_epoch_splits(run_dir))
    if (s.kind == viz::SplitKind::label) splits.push_back(std::move(s));
  std::vector<int64_t> last;
  for (const viz::EpochSplit& s : splits) {
    REMATCH_CHECK(static_cast<int64_t>(s.values.size()) == n, "the labels of epoch ", s.epoch, " in '", run_dir,
                  "/splits' are ", s.values.size(), "; the training split has ", n, " pairs");
    last.assign(s.values.begin(), s.values.end());
    page.per_epoch.push_back(viz::label_epoch(s.epoch, clean, noisy, last));
  }
  fs::create_directories(o.out_dir);
  if (splits.empty()) {
    page.summary = "This run recorded no corrected labels (it stopped in its warm-up, or its method corrects none); " +
                   std::to_string(n) + " training pairs.";
  } else {
    const viz::LabelEpoch& e = page.per_epoch.back();
    page.summary = method + "'s labels at epoch " + std::to_string(e.epoch + 1) + ": " +
                   viz::fixed_str(100 * e.corrected_accuracy, 1) + "% of the " + std::to_string(n) +
                   " training pairs carry their clean class, against " + viz::fixed_str(100 * e.noisy_accuracy, 1) +
                   "% of the noisy labels it was given (" + noisy_path + ").";
    std::vector<int64_t> fixed, broken, still_wrong, right;
    for (int64_t i = 0; i < n; ++i) {
      const size_t k = static_cast<size_t>(i);
      const bool r = last[k] == clean[k], nr = noisy[k] == clean[k];
      (r ? (nr ? right : fixed) : (nr ? broken : still_wrong)).push_back(i);
    }
    auto section = [&](const std::string& title, const std::string& note, const std::vector<int64_t>& members,
                       uint64_t salt) {
      viz::LabelSection s{title, note, static_cast<int64_t>(members.size()), {}};
      for (int64_t i : seeded_sample(members, o.per_section, o.seed + salt))
        s.cards.push_back({i, clean[static_cast<size_t>(i)], noisy[static_cast<size_t>(i)], last[static_cast<size_t>(i)]});
      page.sections.push_back(std::move(s));
    };
    section("Fixed: the noisy label was wrong, the corrected one is right", "", fixed, 1);
    section("Broken: the noisy label was right, the corrected one is wrong", "", broken, 2);
    section("Still wrong", "Neither the noisy nor the corrected label is the clean class.", still_wrong, 3);
    section("Right before and after", "", right, 4);
    run::Series corrected{"corrected labels", {}, {}, std::nullopt}, given{"noisy labels", {}, {}, std::nullopt};
    for (const viz::LabelEpoch& ep : page.per_epoch) {
      corrected.xs.push_back(static_cast<double>(ep.epoch + 1));
      corrected.ys.push_back(ep.corrected_accuracy);
      given.xs.push_back(static_cast<double>(ep.epoch + 1));
      given.ys.push_back(ep.noisy_accuracy);
    }
    run::line_plot((fs::path(o.out_dir) / "labels.png").string(), method + ": share of training labels that are right",
                   "epoch", "share", {corrected, given});
    page.plot = "labels.png";
  }
  const std::string path = (fs::path(o.out_dir) / o.page_name).string();
  io::write_file_atomically(path, viz::label_html(page), "rematch retrieve --run");
  log << "rematch: wrote " << path << "\n";
  return path;
}

}  // namespace rematch::cli
