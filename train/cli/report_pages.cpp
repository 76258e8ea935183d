#include "train/cli/report_pages.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <set>

#include "tensor/error.h"
#include "tensor/file_io.h"
#include "tensor/json_depth.h"
#include "tensor/npy.h"
#include "train/cli/app.h"
#include "train/cli/run_config_json.h"
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
  const std::string method = config_string(read_run_config_json(run_dir), run_dir, "method");
  for (const train::MethodSpec* m : train::registered_methods())
    if (m->name == method) return m->layout == train::DataLayout::Labelled;
  return false;
}

std::vector<std::string> read_lines(const std::string& path, const std::string& what) {
  const std::string text = io::read_text_file(path, what);
  std::vector<std::string> lines;
  size_t at = 0;
  while (at < text.size()) {
    size_t nl = text.find('\n', at);
    if (nl == std::string::npos) nl = text.size();
    std::string l = text.substr(at, nl - at);
    if (!l.empty() && l.back() == '\r') l.pop_back();
    lines.push_back(std::move(l));
    at = nl + 1;
  }
  return lines;
}

// The image file names of one split in a Karpathy split JSON ({"images": [{"split": "test", "filename": ...,
// "filepath": ...}, ...]}); a field of the wrong type is an Error naming the file, the image and the key.
std::vector<std::string> karpathy_names(const std::string& path, const std::string& split);

// The Karpathy split's name of one of ours: dev is its "val"; COCO's train is its "train" and "restval".
bool karpathy_split_matches(const std::string& ours, const std::string& theirs) {
  if (ours == "dev") return theirs == "val";
  if (ours == "test" || ours == "testall") return theirs == "test";
  if (ours == "train") return theirs == "train" || theirs == "restval";
  return false;
}

std::vector<std::string> karpathy_names(const std::string& path, const std::string& split) {
  nlohmann::json j;
  const std::string file_text = io::read_text_file(path, "--karpathy_json");
  io::require_shallow_json(file_text, "--karpathy_json", path);
  try {
    j = nlohmann::json::parse(file_text);
  } catch (const nlohmann::json::exception& e) {
    REMATCH_FAIL("--karpathy_json '", path, "' is not valid JSON: ", e.what());
  }
  const std::string where = "--karpathy_json '" + path + "'";
  REMATCH_CHECK(j.is_object() && j.contains("images") && j["images"].is_array(), where,
                " is not a Karpathy split file: expected an object with an \"images\" list "
                "(dataset_flickr30k.json, dataset_coco.json)");
  // A field that is absent counts as empty; one of another type is named.
  auto text = [&](const nlohmann::json& im, size_t i, const char* key) {
    const auto it = im.find(key);
    if (it == im.end() || it->is_null()) return std::string();
    REMATCH_CHECK(it->is_string(), where, ": images[", i, "].", key, " is ", it->dump().substr(0, 60),
                  ", not a string");
    return it->get<std::string>();
  };
  std::vector<std::string> lines;
  const nlohmann::json& images = j["images"];
  for (size_t i = 0; i < images.size(); ++i) {
    const nlohmann::json& im = images[i];
    REMATCH_CHECK(im.is_object(), where, ": images[", i, "] is ", im.dump().substr(0, 60), ", not an object");
    if (!karpathy_split_matches(split, text(im, i, "split"))) continue;
    const std::string file = text(im, i, "filename"), folder = text(im, i, "filepath");
    lines.push_back(im.contains("filepath") ? folder + "/" + file : file);
  }
  return lines;
}

int64_t feature_rows(const std::string& data_path, const std::string& data_name, const std::string& split) {
  const std::string path = data_path + "/" + data_name + "/" + split + "_ims.npy";
  if (!fs::is_regular_file(path)) return -1;
  const NpyHeaderInfo h = read_npy_header(path);
  return h.shape.empty() ? -1 : h.shape[0];
}

}  // namespace

std::string thumbnail_of(const std::string& images_dir, const std::string& name, const std::string& target_stem,
                         int side, std::ostream* notes) {
  if (images_dir.empty()) return "";
  std::string refused;
  const std::string file = viz::find_image_file(images_dir, name, &refused);
  if (file.empty()) {
    if (!refused.empty() && notes) *notes << "rematch: note: " << refused << "; the report shows its name\n";
    return "";
  }
  try {
    return fs::path(viz::write_thumbnail(file, target_stem, side)).filename().string();
  } catch (const io::WriteError&) {
    throw;  // the report's own folder cannot be written: that is no picture's fault
  } catch (const Error& e) {
    if (notes) *notes << "rematch: note: " << e.what() << "; the report shows its name\n";
    return "";
  }
}

std::vector<std::string> split_image_names(const std::string& data_path, const std::string& data_name,
                                           const std::string& split, int64_t num_images, const ImageSource& src) {
  const std::string name = data::without_trailing_slashes(data_name);
  const int64_t rows = feature_rows(data_path, name, split);
  // A file with one line per features row names image i on line i·(rows / images) (F30K dev/test replicate).
  auto per_image = [&](const std::vector<std::string>& lines, const std::string& what) {
    std::vector<std::string> names(static_cast<size_t>(num_images));
    if (num_images <= 0) return names;
    const int64_t step = rows > num_images && rows % num_images == 0 && static_cast<int64_t>(lines.size()) == rows
                             ? rows / num_images
                             : 1;
    REMATCH_CHECK(static_cast<int64_t>(lines.size()) >= num_images * step, what, " names ", lines.size(),
                  " images; the ", split, " split has ", num_images);
    for (int64_t i = 0; i < num_images; ++i) names[static_cast<size_t>(i)] = lines[static_cast<size_t>(i * step)];
    return names;
  };
  if (!src.image_list.empty())
    return per_image(read_lines(src.image_list, "--image_list"), "--image_list '" + src.image_list + "'");
  if (!src.karpathy_json.empty())
    return per_image(karpathy_names(src.karpathy_json, split), "--karpathy_json '" + src.karpathy_json + "'");
  const std::string ids = data_path + "/" + name + "/" + split + "_ids.txt";
  if (fs::exists(ids)) return per_image(read_lines(ids, "image ids"), "'" + ids + "'");
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
    const std::string written = thumbnail_of(images_dir, names[static_cast<size_t>(i)],
                                             (thumbs / (data.split + "_" + std::to_string(i))).string(),
                                             o.thumbnail_side, o.notes);
    if (!written.empty()) page.images[static_cast<size_t>(i)].thumbnail = "thumbs/" + written;
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
    const nlohmann::json config = read_run_config_json(run_dir);
    CheckpointScoringOptions so;
    so.checkpoints = {best};
    // A field that is absent or null (a null test_split: the default) takes the default.
    so.data_path = config_string(config, run_dir, "data_path");
    so.data_name = config_string(config, run_dir, "data_name");
    so.vocab_path = config_string(config, run_dir, "vocab_path");
    so.split = config_string(config, run_dir, "test_split", "test");
    RetrievalReportOptions ro;
    ro.out_dir = out_dir;
    ro.images = images;
    ro.links = {{"index.html", "back to what the run caught"}};
    ro.notes = &log;
    write_retrieval_report(score_split(so, log), so, ro);
    co.links = {{"retrieval.html", "What the best checkpoint retrieves on the " + so.split +
                                       " split: top captions of test images, top images of test captions"}};
  } else {
    // Said, not silently left out: the page then has no retrieval half.
    std::error_code ec;
    log << "note: " << best << (fs::exists(best, ec) ? " is not a regular file" : " does not exist")
        << ": the page shows what the run caught, not what its best checkpoint retrieves\n";
  }
  return write_caught_report(run_dir, co, log);
}

}  // namespace rematch::cli
