#include "train/cli/report_pages.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <set>

#include "tensor/error.h"
#include "tensor/file_io.h"
#include "tensor/npy.h"
#include "train/cli/app.h"
#include "train/data/precomp_dataset.h"
#include "train/data/vocab.h"
#include "train/eval/retrieval_metrics.h"
#include "train/methods/method_spec.h"
#include "viz/html.h"
#include "viz/retrieval_page.h"
#include "viz/thumbnails.h"

namespace rematch::cli {

namespace fs = std::filesystem;

namespace {

// Whether the run's method reads class-labelled data (its spec's layout; an unknown method is not).
bool labelled_run(const std::string& run_dir) {
  std::ifstream in(run_dir + "/config.json");
  const nlohmann::json config = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!config.is_object() || !config.contains("method") || !config["method"].is_string()) return false;
  const std::string method = config["method"].get<std::string>();
  for (const train::MethodSpec* m : train::registered_methods())
    if (m->name == method) return m->layout == train::DataLayout::Labelled;
  return false;
}

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  REMATCH_CHECK(in.good(), "cannot open '", path, "'");
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) {
    if (!l.empty() && l.back() == '\r') l.pop_back();
    lines.push_back(l);
  }
  return lines;
}

// The Karpathy split's name of one of ours: dev is its "val"; COCO's train is its "train" and "restval".
bool karpathy_split_matches(const std::string& ours, const std::string& theirs) {
  if (ours == "dev") return theirs == "val";
  if (ours == "test" || ours == "testall") return theirs == "test";
  if (ours == "train") return theirs == "train" || theirs == "restval";
  return false;
}

int64_t feature_rows(const std::string& data_path, const std::string& data_name, const std::string& split) {
  const std::string path = data_path + "/" + data_name + "/" + split + "_ims.npy";
  if (!fs::is_regular_file(path)) return -1;
  const NpyHeaderInfo h = read_npy_header(path);
  return h.shape.empty() ? -1 : h.shape[0];
}

}  // namespace

std::vector<std::string> split_image_names(const std::string& data_path, const std::string& data_name,
                                           const std::string& split, int64_t num_images, const ImageSource& src) {
  const std::string name = data::without_trailing_slashes(data_name);
  const int64_t rows = feature_rows(data_path, name, split);
  // A file with one line per features row names image i on line i·(rows / images) (F30K dev/test replicate).
  auto per_image = [&](const std::vector<std::string>& lines, const std::string& what) {
    std::vector<std::string> names(static_cast<size_t>(num_images));
    const int64_t step = rows > num_images && rows % num_images == 0 && static_cast<int64_t>(lines.size()) == rows
                             ? rows / num_images
                             : 1;
    REMATCH_CHECK(static_cast<int64_t>(lines.size()) >= num_images * step, what, " names ", lines.size(),
                  " images; the ", split, " split has ", num_images);
    for (int64_t i = 0; i < num_images; ++i) names[static_cast<size_t>(i)] = lines[static_cast<size_t>(i * step)];
    return names;
  };
  if (!src.image_list.empty()) return per_image(read_lines(src.image_list), "--image_list '" + src.image_list + "'");
  if (!src.karpathy_json.empty()) {
    std::ifstream in(src.karpathy_json);
    REMATCH_CHECK(in.good(), "cannot open --karpathy_json '", src.karpathy_json, "'");
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
      REMATCH_FAIL("--karpathy_json '", src.karpathy_json, "' is not valid JSON: ", e.what());
    }
    std::vector<std::string> lines;
    for (const auto& im : j.value("images", nlohmann::json::array()))
      if (karpathy_split_matches(split, im.value("split", ""))) {
        const std::string file = im.value("filename", "");
        lines.push_back(im.contains("filepath") ? im.value("filepath", "") + "/" + file : file);
      }
    return per_image(lines, "--karpathy_json '" + src.karpathy_json + "'");
  }
  const std::string ids = data_path + "/" + name + "/" + split + "_ids.txt";
  if (fs::is_regular_file(ids)) return per_image(read_lines(ids), "'" + ids + "'");
  return std::vector<std::string>(static_cast<size_t>(num_images));
}

namespace {

std::string default_images_dir(const ImageSource& src, const std::string& data_path, const std::string& data_name) {
  if (!src.images_dir.empty()) return src.images_dir;
  const std::string synth = data_path + "/" + data::without_trailing_slashes(data_name) + "/images";
  return fs::is_directory(synth) ? synth : "";
}

// k distinct indices of [0, n), chosen ones first, then random ones drawn from `seed`.
std::vector<int64_t> choose(const std::vector<int64_t>& chosen, int64_t random, int64_t n, uint64_t seed,
                            const char* flag) {
  for (int64_t i : chosen)
    if (i < 0 || i >= n) throw UsageError(std::string(flag) + " " + std::to_string(i) + " is outside [0, " + std::to_string(n) + ")");
  if (!chosen.empty()) return chosen;
  std::vector<int64_t> all(static_cast<size_t>(n));
  std::iota(all.begin(), all.end(), 0);
  std::mt19937_64 rng(seed);
  std::shuffle(all.begin(), all.end(), rng);
  all.resize(static_cast<size_t>(std::min(random, n)));
  return all;
}

}  // namespace

std::string write_retrieval_report(const ScoredSplit& scored, const CheckpointScoringOptions& data,
                                   const RetrievalReportOptions& o) {
  const Tensor& sims = scored.sims;
  const int64_t n_img = sims.size(0), n_cap = sims.size(1), cpi = scored.captions_per_image;
  viz::RetrievalPage page;
  page.title = "rematch retrieve: " + data::without_trailing_slashes(data.data_name) + "/" + data.split;
  page.summary = scored.summary + ": " + std::to_string(n_img) + " images x " + std::to_string(n_cap) + " captions (" +
                 std::to_string(cpi) + " per image)";
  page.metrics_table = eval::format_metrics_table(eval::retrieval_metrics(sims, cpi));
  page.captions_per_image = cpi;
  page.links = o.links;
  std::vector<std::string> captions =
      data::read_captions(data::captions_file(data.data_path, data::without_trailing_slashes(data.data_name), data.split));
  REMATCH_CHECK(static_cast<int64_t>(captions.size()) >= n_cap, "the ", data.split, " captions hold ", captions.size(),
                " lines but the score matrix has ", n_cap, " columns");
  captions.resize(static_cast<size_t>(n_cap));
  page.captions = captions;

  const std::vector<int64_t> i2t = eval::i2t_ranks(sims, cpi), t2i = eval::t2i_ranks(sims, cpi);
  for (int64_t i : choose(o.query_images, o.random_queries, n_img, o.seed, "--query_image"))
    page.image_queries.push_back({i, i2t[static_cast<size_t>(i)], viz::top_captions(sims, i, cpi, o.top_k)});
  for (int64_t j : choose(o.query_captions, o.random_queries, n_cap, o.seed + 1, "--query_caption"))
    page.caption_queries.push_back({j, t2i[static_cast<size_t>(j)], viz::top_images(sims, j, cpi, o.top_k)});

  // Thumbnails of the images the page shows, when their pictures can be found.
  const std::vector<std::string> names = split_image_names(data.data_path, data.data_name, data.split, n_img, o.images);
  const std::string images_dir = default_images_dir(o.images, data.data_path, data.data_name);
  page.images.resize(static_cast<size_t>(n_img));
  std::set<int64_t> shown;
  for (const auto& q : page.image_queries) shown.insert(q.image);
  for (const auto& q : page.caption_queries)
    for (const auto& r : q.images) shown.insert(r.index);
  const fs::path thumbs = fs::path(o.out_dir) / "thumbs";
  fs::create_directories(thumbs);
  for (int64_t i = 0; i < n_img; ++i) page.images[static_cast<size_t>(i)].id = names[static_cast<size_t>(i)];
  for (int64_t i : shown) {
    const std::string file = images_dir.empty() ? "" : viz::find_image_file(images_dir, names[static_cast<size_t>(i)]);
    if (file.empty()) continue;
    const std::string written =
        viz::write_thumbnail(file, (thumbs / (data.split + "_" + std::to_string(i))).string(), o.thumbnail_side);
    page.images[static_cast<size_t>(i)].thumbnail = "thumbs/" + fs::path(written).filename().string();
  }
  const std::string path = (fs::path(o.out_dir) / "retrieval.html").string();
  io::write_file_atomically(path, viz::retrieval_html(page), "rematch retrieve");
  return path;
}

std::string write_run_report(const std::string& run_dir, const std::string& out_dir, const ImageSource& images,
                             std::ostream& log) {
  fs::create_directories(out_dir);
  CaughtReportOptions co;
  co.out_dir = out_dir;
  co.images = images;
  co.page_name = "index.html";
  if (labelled_run(run_dir)) return write_label_report(run_dir, co, log);
  const std::string best = run_dir + "/checkpoint_best.safetensors";
  if (fs::is_regular_file(best)) {
    std::ifstream in(run_dir + "/config.json");
    REMATCH_CHECK(in.good(), "run folder '", run_dir, "' has no config.json");
    const nlohmann::json config = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    REMATCH_CHECK(config.is_object(), "'", run_dir, "/config.json' is not a JSON object");
    CheckpointScoringOptions so;
    so.checkpoints = {best};
    // A field that is absent or not a string (a null test_split: the default) takes the default.
    auto text = [&](const char* key, const std::string& fallback) {
      const auto it = config.find(key);
      return it != config.end() && it->is_string() ? it->get<std::string>() : fallback;
    };
    so.data_path = text("data_path", "");
    so.data_name = text("data_name", "");
    so.vocab_path = text("vocab_path", "");
    so.split = text("test_split", "test");
    RetrievalReportOptions ro;
    ro.out_dir = out_dir;
    ro.images = images;
    ro.links = {{"index.html", "back to what the run caught"}};
    write_retrieval_report(score_split(so, log), so, ro);
    co.links = {{"retrieval.html", "What the best checkpoint retrieves on the " + so.split +
                                       " split: top captions of test images, top images of test captions"}};
  }
  return write_caught_report(run_dir, co, log);
}

}  // namespace rematch::cli
