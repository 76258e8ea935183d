// `rematch retrieve`: the HTML page parsed back — every image it names exists in the report folder, and each
// query's results, ranks, scores and ground-truth marks are eval's top-k (train/eval/retrieval_metrics.h, ties
// included) — for a saved matrix and for a checkpoint scored as `rematch score` scores it; and `--run`, the pairs
// a run's method flagged, checked against the run's noise and splits, and for a run on class-labelled data the
// labels it corrected, checked against the data's clean labels and the run's noisy ones.
#include "train/cli/retrieve_command.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>

#include "cli_runner.h"
#include "test_util.h"
#include "train/data/labeled_dataset.h"
#include "train/data/noise.h"
#include "train/eval/retrieval_metrics.h"
#include "train/synth/labeled_world.h"
#include "train/synth/pairs_world.h"
#include "viz/epoch_splits.h"
#include "viz/html.h"
#include "viz/label_page.h"

namespace rematch::cli {
namespace {

namespace fs = std::filesystem;
using test::operator+;
using test::run_cli;

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// One query of the page: its index, eval's rank of its ground truth, and its results in page order.
struct ParsedResult {
  int64_t rank, index;
  double score;
  bool gt;
};
struct ParsedQuery {
  int64_t index, gt_rank;
  std::vector<ParsedResult> results;
};

// The queries of one direction ("image": data-query-image with data-caption results; "caption": the other way).
std::vector<ParsedQuery> parse_queries(const std::string& html, const std::string& direction) {
  const std::string result_key = direction == "image" ? "caption" : "image";
  const std::regex query("data-query-" + direction + "=\"(\\d+)\" data-gt-rank=\"(\\d+)\"");
  const std::regex result("class=\"(gt|miss)\" data-rank=\"(\\d+)\" data-" + result_key +
                          "=\"(\\d+)\" data-score=\"([-0-9.]+)\"");
  std::vector<ParsedQuery> out;
  std::vector<size_t> starts;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), query); it != std::sregex_iterator(); ++it) {
    out.push_back({std::stoll((*it)[1]), std::stoll((*it)[2]), {}});
    starts.push_back(static_cast<size_t>(it->position()));
  }
  for (size_t q = 0; q < out.size(); ++q) {
    const size_t end = html.find("data-query-", starts[q] + 1);  // the next query of either direction
    const std::string body = html.substr(starts[q], end == std::string::npos ? std::string::npos : end - starts[q]);
    for (auto it = std::sregex_iterator(body.begin(), body.end(), result); it != std::sregex_iterator(); ++it)
      out[q].results.push_back({std::stoll((*it)[2]), std::stoll((*it)[3]), std::stod((*it)[4]), (*it)[1] == "gt"});
  }
  return out;
}

std::vector<std::string> image_sources(const std::string& html) {
  const std::regex src("<img src=\"([^\"]+)\"");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), src); it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1]);
  return out;
}

// eval's position of item j in a list of scores: #{k : s_k > s_j} + #{k > j : s_k = s_j}.
int64_t eval_position(const std::vector<double>& s, size_t j) {
  int64_t p = 0;
  for (size_t k = 0; k < s.size(); ++k) p += s[k] > s[j] || (k > j && s[k] == s[j]);
  return p;
}

class RetrieveCommandTest : public rematch::test::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    synth::PairsWorldConfig c;
    c.train_images = 20, c.dev_images = 4, c.test_images = 12, c.regions = 4, c.feature_dim = 8;
    synth::write_pairs_world(synth::make_pairs_world(c), path("data"));
  }
  std::vector<std::string> data_args() const {
    return {"--data_path", path("data"), "--data_name", "synth_precomp", "--split", "test"};
  }
  // Every image the page names exists, and each query matches eval on `sims`.
  void expect_page_matches_eval(const fs::path& page, const Tensor& sims, int64_t top_k, size_t queries) {
    const std::string html = read_file(page);
    ASSERT_FALSE(html.empty()) << page;
    EXPECT_EQ(html.find("<script"), std::string::npos);
    EXPECT_EQ(html.find("http"), std::string::npos);  // nothing fetched from the network
    const std::vector<std::string> sources = image_sources(html);
    EXPECT_FALSE(sources.empty());
    for (const std::string& s : sources) EXPECT_TRUE(fs::is_regular_file(page.parent_path() / s)) << s;

    const int64_t n_img = sims.size(0), n_cap = sims.size(1), cpi = n_cap / n_img;
    const std::vector<double> v = kernels::cast(sims, DType::Float64).to_vector<double>();
    const std::vector<int64_t> i2t = eval::i2t_ranks(sims, cpi), t2i = eval::t2i_ranks(sims, cpi);
    const std::vector<ParsedQuery> images = parse_queries(html, "image"), captions = parse_queries(html, "caption");
    EXPECT_EQ(images.size(), queries);
    EXPECT_EQ(captions.size(), queries);
    for (const ParsedQuery& q : images) {
      EXPECT_EQ(q.gt_rank, i2t[static_cast<size_t>(q.index)]) << "image " << q.index;
      const std::vector<double> row(v.begin() + q.index * n_cap, v.begin() + (q.index + 1) * n_cap);
      ASSERT_EQ(static_cast<int64_t>(q.results.size()), top_k);
      for (size_t r = 0; r < q.results.size(); ++r) {
        const ParsedResult& x = q.results[r];
        EXPECT_EQ(x.rank, static_cast<int64_t>(r) + 1);
        EXPECT_EQ(eval_position(row, static_cast<size_t>(x.index)), static_cast<int64_t>(r)) << "image " << q.index;
        EXPECT_EQ(x.gt, x.index / cpi == q.index);
        EXPECT_NEAR(x.score, row[static_cast<size_t>(x.index)], 1e-6);
      }
    }
    for (const ParsedQuery& q : captions) {
      EXPECT_EQ(q.gt_rank, t2i[static_cast<size_t>(q.index)]) << "caption " << q.index;
      std::vector<double> column;
      for (int64_t i = 0; i < n_img; ++i) column.push_back(v[static_cast<size_t>(i * n_cap + q.index)]);
      ASSERT_EQ(static_cast<int64_t>(q.results.size()), top_k);
      for (size_t r = 0; r < q.results.size(); ++r) {
        const ParsedResult& x = q.results[r];
        EXPECT_EQ(eval_position(column, static_cast<size_t>(x.index)), static_cast<int64_t>(r)) << "caption " << q.index;
        EXPECT_EQ(x.gt, x.index == q.index / cpi);
      }
    }
  }
};

TEST_F(RetrieveCommandTest, SavedMatrixPageEqualsEval) {
  // Scores rounded to one decimal: many ties, which eval breaks towards the higher index.
  Tensor sims = rematch::test::random_tensor({12, 60}, DType::Float32, 7);
  std::vector<float> v = sims.to_vector<float>();
  for (float& x : v) x = std::round(x * 10) / 10;
  sims = from_vector(v, {12, 60});
  save_npy(path("sims.npy"), sims);
  const auto r = run_cli(std::vector<std::string>{"retrieve", "--sims", path("sims.npy"), "--out", path("report"),
                                                  "--queries", "5", "--top_k", "7"} +
                         data_args());
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find(path("report") + "/retrieval.html"), std::string::npos) << r.out;
  expect_page_matches_eval(dir_ / "report" / "retrieval.html", sims, 7, 5);
  // The synthetic pictures were found through test_ids.txt and shrunk into thumbs/.
  EXPECT_TRUE(fs::is_regular_file(dir_ / "report" / "thumbs" / "test_0.png") ||
              !fs::is_empty(dir_ / "report" / "thumbs"));
}

TEST_F(RetrieveCommandTest, CheckpointPageEqualsTheScoredMatrix) {
  ASSERT_EQ(run_cli({"init-checkpoint", "--module_name", "SAF", "--out", path("saf.safetensors"), "--vocab_path",
                     path("data/vocab"), "--data_name", "synth_precomp", "--img_dim", "8", "--word_dim", "8",
                     "--embed_size", "8", "--sim_dim", "8", "--num_regions", "4"})
                .code,
            kExitOk);
  const auto s = run_cli(std::vector<std::string>{"score", "--checkpoint", path("saf.safetensors"), "--out",
                                                  path("sims.npy")} + data_args());
  ASSERT_EQ(s.code, kExitOk) << s.err;
  const auto r = run_cli(std::vector<std::string>{"retrieve", "--checkpoint", path("saf.safetensors"), "--out",
                                                  path("report"), "--query_image", "3", "--query_image", "11",
                                                  "--query_caption", "0", "--query_caption", "59"} +
                         data_args());
  ASSERT_EQ(r.code, kExitOk) << r.err;
  expect_page_matches_eval(dir_ / "report" / "retrieval.html", load_npy(path("sims.npy")), 5, 2);
}

TEST_F(RetrieveCommandTest, WithoutPicturesAnImageShowsItsIdAndCaptions) {
  save_npy(path("sims.npy"), rematch::test::random_tensor({12, 60}, DType::Float32, 3));
  const auto r = run_cli(std::vector<std::string>{"retrieve", "--sims", path("sims.npy"), "--out", path("report"),
                                                  "--images_dir", path("nowhere")} +
                         data_args());
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const std::string html = read_file(dir_ / "report" / "retrieval.html");
  EXPECT_TRUE(image_sources(html).empty());
  EXPECT_NE(html.find("test_"), std::string::npos);  // the ids of test_ids.txt
  EXPECT_NE(html.find("<ul class=\"small\">"), std::string::npos);  // a query image's own captions
}

TEST_F(RetrieveCommandTest, CommandLineMistakes) {
  auto r = run_cli({"retrieve", "--out", path("x")});
  EXPECT_EQ(r.code, kExitUsage);
  r = run_cli(std::vector<std::string>{"retrieve", "--sims", path("nothing.npy"), "--out", path("x")});
  EXPECT_EQ(r.code, kExitUsage);
  save_npy(path("sims.npy"), rematch::test::random_tensor({12, 50}, DType::Float32, 3));
  r = run_cli(std::vector<std::string>{"retrieve", "--sims", path("sims.npy"), "--out", path("x")} + data_args());
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("not [N_img, N_img * 5]"), std::string::npos) << r.err;
  r = run_cli({"retrieve", "--run", path("data")});
  EXPECT_EQ(r.code, kExitUsage);
}

// --out given by the user: a folder holding their own files (an index.html or labels.png that rematch did not
// write) is refused naming them, and nothing in it changes; a file is refused as not a folder (it was std::
// filesystem's raw exception); a report's own folder is written again.
TEST_F(RetrieveCommandTest, AnOutFolderHoldingTheUsersFilesIsRefused) {
  save_npy(path("sims.npy"), rematch::test::random_tensor({12, 60}, DType::Float32, 3));
  const std::vector<std::string> args =
      std::vector<std::string>{"retrieve", "--sims", path("sims.npy")} + data_args();
  const fs::path site = dir_ / "site";
  fs::create_directories(site);
  std::ofstream(site / "index.html") << "<h1>my own page</h1>";
  std::ofstream(site / "labels.png") << "my figure";
  auto r = run_cli(args + std::vector<std::string>{"--out", site.string()});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("holds what rematch did not write (index.html, labels.png); a report replaces its own files "
                       "there: move these away, or give another --out"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(read_file(site / "index.html"), "<h1>my own page</h1>");
  EXPECT_FALSE(fs::exists(site / "retrieval.html"));
  std::ofstream(path("afile")) << "x";
  r = run_cli(args + std::vector<std::string>{"--out", path("afile")});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("exists and is not a folder"), std::string::npos) << r.err;
  // A report's folder is its own: written twice.
  const std::string report = path("report");
  ASSERT_EQ(run_cli(args + std::vector<std::string>{"--out", report}).code, kExitOk);
  r = run_cli(args + std::vector<std::string>{"--out", report});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(read_file(fs::path(report) / "retrieval.html").find(viz::kGeneratorMeta), std::string::npos);
}

// The default --out of --run, <run>/report, follows the same rule: a user's notes there are refused, not
// replaced; a file named report is refused as not a folder (it was std::filesystem's raw exception).
TEST_F(RetrieveCommandTest, TheRunsDefaultReportFolderIsGuardedToo) {
  const fs::path run = dir_ / "run";
  fs::create_directories(run / "report");
  std::ofstream(run / "config.json") << "{\"method\": \"l2rm\", \"data_path\": \"" << path("data")
                                     << "\", \"data_name\": \"synth_precomp\"}\n";
  data::save_noise(data::image_level_noise(20, 5, 0.4, 9), run.string());
  viz::write_epoch_split(run.string(), {1, "l2rm", viz::SplitKind::kept, std::vector<double>(100, 1.0)});
  std::ofstream(run / "report" / "index.html") << "MY NOTES";
  auto r = run_cli({"retrieve", "--run", run.string()});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("holds what rematch did not write (index.html)"), std::string::npos) << r.err;
  EXPECT_EQ(read_file(run / "report" / "index.html"), "MY NOTES");
  fs::remove_all(run / "report");
  std::ofstream(run / "report") << "x";
  r = run_cli({"retrieve", "--run", run.string()});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("exists and is not a folder"), std::string::npos) << r.err;
  fs::remove(run / "report");
  r = run_cli({"retrieve", "--run", run.string()});  // its own report, written twice
  ASSERT_EQ(r.code, kExitOk) << r.err;
  r = run_cli({"retrieve", "--run", run.string()});
  EXPECT_EQ(r.code, kExitOk) << r.err;
}

TEST_F(RetrieveCommandTest, RunPageShowsWhatTheSplitCaught) {
  // A run folder as a pairs method leaves it: config.json, the noise used, and two epochs' splits.
  const fs::path run = dir_ / "run";
  fs::create_directories(run);
  std::ofstream(run / "config.json") << "{\"method\": \"l2rm\", \"data_path\": \"" << path("data")
                                     << "\", \"data_name\": \"synth_precomp\"}\n";
  const data::Correspondence noise = data::image_level_noise(20, 5, 0.4, 9);
  data::save_noise(noise, run.string());
  std::vector<double> first(100, 1.0), second(100, 1.0);
  for (int64_t j = 0; j < 100; ++j) {
    if (!noise.clean[j]) second[j] = j % 3 == 0 ? 1.0 : 0.0;  // catches two thirds of the mismatched pairs
    if (noise.clean[j] && j % 10 == 0) second[j] = 0.0;      // and raises a few false alarms
    if (j % 2 == 0) first[j] = 0.0;
  }
  viz::write_epoch_split(run.string(), {2, "l2rm", viz::SplitKind::kept, first});
  viz::write_epoch_split(run.string(), {3, "l2rm", viz::SplitKind::kept, second});
  const auto r = run_cli({"retrieve", "--run", run.string()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const fs::path page = run / "report" / "index.html";
  const std::string html = read_file(page);
  for (const std::string& s : image_sources(html)) EXPECT_TRUE(fs::is_regular_file(page.parent_path() / s)) << s;
  EXPECT_TRUE(fs::is_regular_file(run / "report" / "detection.png"));
  // Every card agrees with the noise file and the last split.
  const std::regex card("data-caption=\"(\\d+)\" data-row=\"(\\d+)\" data-truth=\"(\\w+)\" data-decision=\"(\\w+)\"");
  int64_t cards = 0;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), card); it != std::sregex_iterator(); ++it, ++cards) {
    const int64_t j = std::stoll((*it)[1]);
    EXPECT_EQ(std::stoll((*it)[2]), noise.caption_to_row[j]);
    EXPECT_EQ((*it)[3], noise.clean[j] ? "matched" : "mismatched");
    EXPECT_EQ((*it)[4], second[j] == 0 ? "flagged" : "kept");
  }
  EXPECT_GT(cards, 20);
  // The per-epoch table: the second split's precision and recall.
  std::vector<uint8_t> flagged(100);
  for (int64_t j = 0; j < 100; ++j) flagged[j] = second[j] == 0;
  const viz::Detection d = viz::detection_quality(3, flagged, noise.clean);
  EXPECT_NE(html.find("<tr data-epoch=\"3\"><td>4</td><td>" + std::to_string(d.flagged) + "</td><td>" +
                      std::to_string(d.truly_mismatched) + "</td><td>" + std::to_string(d.caught) + "</td>"),
            std::string::npos);
}

TEST_F(RetrieveCommandTest, LabelledRunPageShowsTheCorrectedLabels) {
  // A UOT-RCL run folder: config.json, the noisy labels it trained on, and two epochs of corrected labels.
  synth::LabeledWorldConfig w;
  w.classes = 4;
  w.train_samples = 80;
  w.valid_samples = 8;
  w.test_samples = 8;
  const std::string data = synth::write_labeled_world(synth::make_labeled_world(w), path("labeled"));
  const data::LabeledDataset d = data::load_labeled(data, -1);
  const std::vector<int64_t>& clean = d.train.image_labels;
  const fs::path run = dir_ / "uot";
  fs::create_directories(run);
  std::ofstream(run / "config.json") << "{\"method\": \"uotrcl\", \"data_path\": \"" << data << "\"}\n";
  const data::NoisyLabels noisy = data::inject_label_noise(d.train, 4, 0.5, data::LabelNoise::symmetric, 5);
  data::save_label_noise(noisy, run.string());
  std::vector<double> first(noisy.image_labels.begin(), noisy.image_labels.end()), second(80);
  for (size_t i = 0; i < 80; ++i)  // the second epoch fixes every fourth pair and breaks every seventh
    second[i] = static_cast<double>(i % 4 == 0 ? clean[i] : i % 7 == 0 ? (clean[i] + 1) % 4 : noisy.image_labels[i]);
  viz::write_epoch_split(run.string(), {1, "uotrcl", viz::SplitKind::label, first});
  viz::write_epoch_split(run.string(), {2, "uotrcl", viz::SplitKind::label, second});
  const auto r = run_cli({"retrieve", "--run", run.string()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const std::string html = read_file(run / "report" / "index.html");
  EXPECT_TRUE(fs::is_regular_file(run / "report" / "labels.png"));
  // The per-epoch rows: the corrected labels' accuracy against the clean ones.
  for (const auto& [epoch, labels] : {std::pair<int64_t, const std::vector<double>*>{1, &first}, {2, &second}}) {
    const viz::LabelEpoch e = viz::label_epoch(epoch, clean, noisy.image_labels,
                                               std::vector<int64_t>(labels->begin(), labels->end()));
    int64_t right = 0;
    for (size_t i = 0; i < 80; ++i) right += (*labels)[i] == static_cast<double>(clean[i]);
    EXPECT_DOUBLE_EQ(e.corrected_accuracy, right / 80.0);
    EXPECT_NE(html.find("<tr data-epoch=\"" + std::to_string(epoch) + "\"><td>" + std::to_string(epoch + 1) +
                        "</td><td>80</td><td>" + viz::fixed_str(e.noisy_accuracy, 4) + "</td><td>" +
                        viz::fixed_str(e.corrected_accuracy, 4) + "</td><td>" + std::to_string(e.fixed) + "</td><td>" +
                        std::to_string(e.broken) + "</td>"),
              std::string::npos)
        << "epoch " << epoch;
  }
  // Every sample row agrees with the data, the noisy labels and the last epoch.
  const std::regex row("data-sample=\"(\\d+)\" data-clean=\"(\\d+)\" data-noisy=\"(\\d+)\" data-corrected=\"(\\d+)\"");
  int64_t rows = 0;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), row); it != std::sregex_iterator(); ++it, ++rows) {
    const size_t i = static_cast<size_t>(std::stoll((*it)[1]));
    ASSERT_LT(i, 80u);
    EXPECT_EQ(std::stoll((*it)[2]), clean[i]);
    EXPECT_EQ(std::stoll((*it)[3]), noisy.image_labels[i]);
    EXPECT_EQ(static_cast<double>(std::stoll((*it)[4])), second[i]);
  }
  EXPECT_GT(rows, 12);
}

}  // namespace
}  // namespace rematch::cli
