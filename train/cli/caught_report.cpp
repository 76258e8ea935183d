// write_caught_report (report_pages.h): the training pairs a run's method flagged, read back from its run folder.
#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>

#include "tensor/error.h"
#include "tensor/file_io.h"
#include "tensor/npy.h"
#include "tensor/npy_integers.h"
#include "tensor/tensor.h"
#include "train/cli/report_pages.h"
#include "train/cli/run_config_json.h"
#include "train/data/precomp_dataset.h"
#include "train/data/vocab.h"
#include "train/run/run_folder.h"
#include "train/run/training_state.h"
#include "viz/caught_page.h"
#include "viz/epoch_splits.h"
#include "viz/html.h"
#include "viz/plots.h"
#include "viz/thumbnails.h"

namespace rematch::cli {

namespace fs = std::filesystem;

namespace {

// The run's last split when it kept no splits/ folder: L2RM keeps the split of its epoch in progress in its
// checkpoint (train/methods/l2rm/l2rm_method.cpp, key "l2rm.clean"); its epoch is the last epoch_start logged.
bool split_from_checkpoint(const std::string& run_dir, viz::EpochSplit& split) {
  const std::string path = run_dir + "/checkpoint_latest.safetensors";
  if (!fs::is_regular_file(path)) return false;
  std::vector<int64_t> clean;
  try {
    clean = train::TrainingState::load(path).get_int_vector("l2rm.clean");
  } catch (const Error&) {
    return false;
  }
  if (clean.empty()) return false;  // a warm-up epoch: no split yet
  split.method = "l2rm";
  split.kind = viz::SplitKind::kept;
  split.values.assign(clean.begin(), clean.end());
  split.epoch = -1;
  const std::string metrics = run_dir + "/metrics.jsonl";
  if (fs::is_regular_file(metrics))
    for (const run::MetricRecord& m : run::read_metrics(metrics))
      if (m.kind == "epoch_start" && m.has("clean_size")) split.epoch = m.epoch;
  return true;
}

// The flagged set's precision and recall per epoch from the clean-set statistics a method logs at each epoch's
// start (clean_size, clean_precision), when the run kept no splits/: with M truly mismatched pairs of N, the
// clean set C holds precision·|C| truly matched pairs, so the N − |C| flagged ones hold (N − M) − precision·|C|
// matched ones.
std::vector<viz::Detection> detection_from_metrics(const std::string& run_dir, int64_t pairs, int64_t mismatched) {
  std::vector<viz::Detection> out;
  const std::string metrics = run_dir + "/metrics.jsonl";
  if (!fs::is_regular_file(metrics)) return out;
  for (const run::MetricRecord& m : run::read_metrics(metrics)) {
    if (m.kind != "epoch_start" || !m.has("clean_size") || !m.has("clean_precision")) continue;
    const double kept = m.get("clean_size"), precision = m.get("clean_precision");
    // A statistic that is not finite or outside its range (a damaged log) cannot be shown: that epoch is left out.
    if (!(kept >= 0 && kept <= static_cast<double>(pairs) && precision >= 0 && precision <= 1)) continue;
    viz::Detection d;
    d.epoch = m.epoch;
    d.pairs = pairs;
    d.truly_mismatched = mismatched;
    d.flagged = pairs - static_cast<int64_t>(kept);
    const int64_t matched_kept = static_cast<int64_t>(std::llround(precision * kept));
    const int64_t matched_flagged = (pairs - mismatched) - matched_kept;
    d.caught = std::max<int64_t>(0, d.flagged - matched_flagged);
    d.precision = d.flagged ? static_cast<double>(d.caught) / static_cast<double>(d.flagged) : 0.0;
    d.recall = mismatched ? static_cast<double>(d.caught) / static_cast<double>(mismatched) : 0.0;
    out.push_back(d);
  }
  return out;
}

}  // namespace

std::vector<int64_t> seeded_sample(std::vector<int64_t> v, int64_t k, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::shuffle(v.begin(), v.end(), rng);
  v.resize(std::min<size_t>(v.size(), static_cast<size_t>(std::max<int64_t>(k, 0))));
  std::sort(v.begin(), v.end());
  return v;
}

std::string write_caught_report(const std::string& run_dir, const CaughtReportOptions& o, std::ostream& log) {
  const nlohmann::json config = read_run_config_json(run_dir);
  const std::string data_path = config_string(config, run_dir, "data_path");
  const std::string method = config_string(config, run_dir, "method");
  const std::string data_name = data::without_trailing_slashes(config_string(config, run_dir, "data_name"));
  REMATCH_CHECK(!data_name.empty(), "run folder '", run_dir, "': its config.json names no image-caption data set (",
                method, " runs on class-labelled data, which this page does not show)");

  // The training pairs: caption j with the image row the run trained it with. Every number read here is checked
  // against the data before anything is indexed with it: the folder may be damaged, or the data changed since.
  const std::vector<std::string> captions = data::read_captions(data::captions_file(data_path, data_name, "train"));
  const std::string train_ims = data_path + "/" + data_name + "/train_ims.npy";
  const NpyHeaderInfo header = read_npy_header(train_ims);
  REMATCH_CHECK(header.shape.size() == 3 && header.shape[0] > 0, "image features file '", train_ims, "' has shape ",
                shape_str(header.shape), "; expected [rows, regions, dim] with rows > 0");
  const int64_t n_cap = static_cast<int64_t>(captions.size()), rows = header.shape[0];
  REMATCH_CHECK(n_cap == rows || n_cap == 5 * rows, "the training captions of ", data_path, "/", data_name, " are ",
                n_cap, " for the ", rows, " rows of '", train_ims, "': expected ", rows, " or ", 5 * rows,
                " (rematch data check --data_path ", data_path, " --data_name ", data_name, " says what is wrong)");
  const int64_t im_div = rows == n_cap ? 1 : 5;
  std::vector<int64_t> to_row(static_cast<size_t>(n_cap));
  for (int64_t j = 0; j < n_cap; ++j) to_row[static_cast<size_t>(j)] = j / im_div;
  const std::string noise = run_dir + "/noise_index.npy";
  const bool noise_known = fs::exists(noise);
  if (noise_known) {
    const IntegerNpy f = load_integer_npy(noise, "noise record");
    REMATCH_CHECK(f.shape.size() == 1 && f.shape[0] == n_cap, "noise record '", noise, "' has shape ",
                  shape_str(f.shape), "; the run's training split has ", n_cap,
                  " captions (one image row per caption): the file is not this data set's");
    check_integer_range(f, "noise record", 0, rows, "the image rows of " + train_ims);
    to_row = f.values;
  }
  std::vector<uint8_t> clean(static_cast<size_t>(n_cap));
  int64_t mismatched = 0;
  for (int64_t j = 0; j < n_cap; ++j) {
    clean[static_cast<size_t>(j)] = to_row[static_cast<size_t>(j)] == j / im_div;
    mismatched += clean[static_cast<size_t>(j)] == 0;
  }

  std::vector<viz::EpochSplit> splits = viz::read_epoch_splits(run_dir);
  std::vector<viz::Detection> per_epoch;
  std::string whence = "splits/";
  if (splits.empty()) {
    viz::EpochSplit s;
    if (split_from_checkpoint(run_dir, s)) splits.push_back(std::move(s));
    whence = "checkpoint_latest";
    if (noise_known) per_epoch = detection_from_metrics(run_dir, n_cap, mismatched);
  } else if (noise_known) {
    for (const viz::EpochSplit& s : splits)
      if (s.kind != viz::SplitKind::label && static_cast<int64_t>(s.values.size()) == n_cap)
        per_epoch.push_back(viz::detection_quality(s.epoch, viz::flagged_pairs(s), clean));
  }

  viz::CaughtPage page;
  page.title = "What " + (method.empty() ? std::string("the run") : method) + " caught: " + run_dir;
  page.links = o.links;
  fs::create_directories(o.out_dir);
  if (splits.empty()) {
    page.summary = "This run recorded no split of its training pairs (its method keeps none, or it stopped in its "
                   "warm-up); " + std::to_string(n_cap) + " training pairs, " +
                   (noise_known ? std::to_string(mismatched) + " of them truly mismatched." : "noise unknown.");
  } else {
    const viz::EpochSplit& last = splits.back();
    REMATCH_CHECK(static_cast<int64_t>(last.values.size()) == n_cap, "the split of epoch ", last.epoch, " in '",
                  run_dir, "' has ", last.values.size(), " pairs; the training split has ", n_cap);
    const std::vector<uint8_t> flagged = viz::flagged_pairs(last);
    std::vector<int64_t> caught, false_alarm, missed, kept_clean, all_flagged, all_kept;
    for (int64_t j = 0; j < n_cap; ++j) {
      const bool f = flagged[static_cast<size_t>(j)] != 0, c = clean[static_cast<size_t>(j)] != 0;
      (f ? all_flagged : all_kept).push_back(j);
      if (noise_known) (f ? (c ? false_alarm : caught) : (c ? kept_clean : missed)).push_back(j);
    }
    page.summary = method + "'s decision " + (last.epoch >= 0 ? "at epoch " + std::to_string(last.epoch + 1) : "last recorded") +
                   " (from " + whence + "): " + std::to_string(all_flagged.size()) + " of " + std::to_string(n_cap) +
                   " training pairs flagged as mismatched" +
                   (noise_known ? "; " + std::to_string(mismatched) + " are truly mismatched (" + noise + ")" : "") + ".";

    const std::vector<std::string> names = split_image_names(data_path, data_name, "train", rows, o.images);
    std::string images_dir = o.images.images_dir;
    if (images_dir.empty() && fs::is_directory(data_path + "/" + data_name + "/images"))
      images_dir = data_path + "/" + data_name + "/images";
    const fs::path thumbs = fs::path(o.out_dir) / "thumbs";
    fs::create_directories(thumbs);
    auto card = [&](int64_t j) {
      viz::PairCard c;
      c.caption = j;
      c.row = to_row[static_cast<size_t>(j)];
      c.caption_text = captions[static_cast<size_t>(j)];
      c.image_id = names[static_cast<size_t>(c.row)];
      c.image_says = captions[static_cast<size_t>(c.row * im_div)];
      c.truth = noise_known ? (clean[static_cast<size_t>(j)] ? "matched" : "mismatched") : "";
      c.decision = last.kind == viz::SplitKind::weight ? "weight " + viz::fixed_str(last.values[static_cast<size_t>(j)], 2)
                                                       : (flagged[static_cast<size_t>(j)] ? "flagged" : "kept");
      const std::string written = thumbnail_of(images_dir, c.image_id, (thumbs / ("train_" + std::to_string(c.row))).string(),
                                               o.thumbnail_side, &log);
      if (!written.empty()) c.thumbnail = "thumbs/" + written;
      return c;
    };
    auto section = [&](const std::string& title, const std::string& note, const std::vector<int64_t>& members,
                       uint64_t salt) {
      viz::PairSection s{title, note, static_cast<int64_t>(members.size()), {}};
      for (int64_t j : seeded_sample(members, o.per_section, o.seed + salt)) s.cards.push_back(card(j));
      page.sections.push_back(std::move(s));
    };
    if (noise_known) {
      section("Caught: flagged as mismatched, and truly mismatched", "The caption was paired with another image by "
              "the injected noise, and the method noticed.", caught, 1);
      section("False alarms: flagged, but truly matched", "A correct pair the method took for mismatched (often a "
              "hard or vague caption).", false_alarm, 2);
      section("Missed: kept, but truly mismatched", "A wrong pair the method trained on as if it were correct.",
              missed, 3);
      section("Kept, and truly matched", "", kept_clean, 4);
    } else {
      section("Flagged as mismatched", "", all_flagged, 1);
      section("Kept as matched", "", all_kept, 2);
    }
  }
  page.per_epoch = per_epoch;
  if (!per_epoch.empty()) {
    run::Series precision{"precision", {}, {}, std::nullopt}, recall{"recall", {}, {}, std::nullopt};
    for (const viz::Detection& d : per_epoch) {
      precision.xs.push_back(static_cast<double>(d.epoch + 1));
      precision.ys.push_back(d.precision);
      recall.xs.push_back(static_cast<double>(d.epoch + 1));
      recall.ys.push_back(d.recall);
    }
    run::line_plot((fs::path(o.out_dir) / "detection.png").string(),
                   "mismatched pairs flagged by " + method + ": precision and recall", "epoch", "share",
                   {precision, recall});
    page.plot = "detection.png";
  }
  const std::string path = (fs::path(o.out_dir) / o.page_name).string();
  io::write_file_atomically(path, viz::caught_html(page), "rematch retrieve --run");
  log << "rematch: wrote " << path << "\n";
  return path;
}

}  // namespace rematch::cli
