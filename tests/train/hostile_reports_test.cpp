// `rematch retrieve` on damaged or hostile input: a run folder whose files index outside the data (noise record,
// splits), hold NaN where integers belong, carry JSON fields of the wrong type, or data whose captions do not
// pair with its rows, is refused with an error naming the file, the entry and the value (before, several read
// out of bounds); a picture that cannot be decoded, or an image id leading out of the images folder, leaves a
// placeholder with the image's name instead of aborting the page or copying a file from elsewhere; a FIFO given
// as --sims is refused at once; a failed command prints no half "report: " line.
#include <sys/stat.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>

#include "cli_runner.h"
#include "program_runner.h"
#include "tensor/npy.h"
#include "test_util.h"
#include "train/data/labeled_dataset.h"
#include "train/data/noise.h"
#include "train/synth/labeled_world.h"
#include "train/synth/pairs_world.h"
#include "viz/epoch_splits.h"

namespace rematch::cli {
namespace {

namespace fs = std::filesystem;
using test::operator+;
using test::CliResult;
using test::run_cli;

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void put(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The training split has 20 images and 100 captions (im_div 5); the run folder holds an l2rm run's files.
class HostileReportsTest : public rematch::test::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    synth::PairsWorldConfig c;
    c.train_images = 20, c.dev_images = 4, c.test_images = 12, c.regions = 4, c.feature_dim = 8;
    synth::write_pairs_world(synth::make_pairs_world(c), path("data"));
    run_ = dir_ / "run";
    fs::create_directories(run_);
    put(run_ / "config.json", "{\"method\": \"l2rm\", \"data_path\": \"" + path("data") +
                                  "\", \"data_name\": \"synth_precomp\"}\n");
    data::save_noise(data::image_level_noise(20, 5, 0.4, 9), run_.string());
    std::vector<double> kept(100, 1.0);
    for (int64_t j = 0; j < 100; j += 3) kept[j] = 0.0;
    viz::write_epoch_split(run_.string(), {1, "l2rm", viz::SplitKind::kept, kept});
  }
  CliResult retrieve_run() { return run_cli({"retrieve", "--run", run_.string()}); }
  // The command failed with a message holding every part, and printed no "report: " line.
  void expect_refused(const CliResult& r, const std::vector<std::string>& parts) {
    EXPECT_EQ(r.code, kExitFailure) << r.err;
    for (const std::string& p : parts) EXPECT_TRUE(contains(r.err, p)) << "missing '" << p << "' in: " << r.err;
    EXPECT_FALSE(contains(r.out, "report:")) << r.out;
  }
  fs::path run_;
};

TEST_F(HostileReportsTest, TheRunPageIsWrittenForAnIntactRun) {
  const CliResult r = retrieve_run();
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.out, "report: " + (run_ / "report" / "index.html").string() + "\n");
  // This run has no best checkpoint: the page's missing retrieval half is said, not silently left out.
  EXPECT_NE(r.err.find("checkpoint_best.safetensors does not exist: the page shows what the run caught, not what "
                       "its best checkpoint retrieves"),
            std::string::npos)
      << r.err;
}

TEST_F(HostileReportsTest, ANoiseRecordIndexingOutsideTheDataIsRefused) {
  const std::string noise = (run_ / "noise_index.npy").string();
  std::vector<int64_t> rows(100);
  for (int64_t j = 0; j < 100; ++j) rows[j] = j / 5;
  rows[37] = 1000000;  // past the 20 image rows
  save_npy(noise, from_vector(rows));
  expect_refused(retrieve_run(), {"noise record '" + noise + "': entry 37 is 1000000, outside [0, 20) (the image rows of "});
  rows[37] = -3;
  save_npy(noise, from_vector(rows));
  expect_refused(retrieve_run(), {"noise record '" + noise + "': entry 37 is -3, outside [0, 20)"});
  save_npy(noise, from_vector(std::vector<int64_t>(99, 0)));
  expect_refused(retrieve_run(), {"noise record '" + noise + "' has shape [99]; the run's training split has 100 captions"});
  std::vector<float> floats(100, 1.0f);
  floats[4] = NAN;
  save_npy(noise, from_vector(floats));
  expect_refused(retrieve_run(), {"noise record '" + noise + "' holds float32[100]: expected integers (int64); entry 4 is nan"});
}

TEST_F(HostileReportsTest, DamagedSplitsAreRefusedNamingTheFileAndEntry) {
  const std::string npy = (run_ / "splits" / "epoch_1.npy").string(), json = (run_ / "splits" / "epoch_1.json").string();
  std::vector<float> weights(100, 1.0f);
  weights[9] = NAN;
  save_npy(npy, from_vector(weights));
  expect_refused(retrieve_run(), {"epoch split '" + npy + "' holds float32[100]: expected integers (int64); entry 9 is nan"});
  std::vector<uint8_t> flags(100, 1);
  flags[12] = 7;
  save_npy(npy, from_vector(flags));
  expect_refused(retrieve_run(), {"epoch split '" + npy + "': entry 12 is 7, outside [0, 2) (kept flags are 0 or 1)"});
  flags[12] = 0;
  save_npy(npy, from_vector(flags));
  put(json, "{\"epoch\": \"one\", \"method\": \"l2rm\", \"kind\": \"kept\", \"pairs\": 100}");
  expect_refused(retrieve_run(), {"epoch split '" + json + "': \"epoch\" is \"one\", not an integer"});
  put(json, "{\"epoch\": 1, \"method\": \"l2rm\", \"kind\": \"kept\", \"pairs\": 90}");
  expect_refused(retrieve_run(), {"epoch split '" + json + "' says \"pairs\": 90 but '" + npy + "' holds 100 values"});
  put(json, "[]");
  expect_refused(retrieve_run(), {"epoch split '" + json + "' is not a JSON object"});
}

TEST_F(HostileReportsTest, ConfigFieldsOfTheWrongTypeAreNamed) {
  put(run_ / "config.json", "{\"method\": \"l2rm\", \"data_path\": \"" + path("data") + "\", \"data_name\": 5}\n");
  expect_refused(retrieve_run(), {"'" + (run_ / "config.json").string() + "': \"data_name\" is 5, not a string"});
  put(run_ / "config.json", "{\"method\": [1], \"data_path\": \"x\"}\n");
  expect_refused(retrieve_run(), {"\"method\" is [1], not a string"});
}

// A data folder whose training captions are neither one nor five per row: said, not read out of bounds.
TEST_F(HostileReportsTest, CaptionsThatDoNotPairWithTheRowsAreRefused) {
  const fs::path caps = dir_ / "data" / "synth_precomp" / "train_caps.txt";
  std::string text = read_file(caps);
  text = text.substr(0, text.find('\n', text.size() / 2) + 1);  // about half of the 100 captions
  put(caps, text);
  expect_refused(retrieve_run(), {"the training captions of " + path("data") + "/synth_precomp are ",
                                  " for the 20 rows of '", "expected 20 or 100", "rematch data check"});
}

TEST_F(HostileReportsTest, AnUndecodablePictureBecomesAPlaceholder) {
  const fs::path images = dir_ / "data" / "synth_precomp" / "images";
  for (const auto& e : fs::directory_iterator(images)) put(e.path(), "not a picture");
  const CliResult r = retrieve_run();
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_TRUE(contains(r.err, "rematch: note: image '" + (images / "train_").string())) << r.err;
  EXPECT_TRUE(contains(r.err, "cannot be decoded")) << r.err;
  EXPECT_TRUE(contains(r.err, "the report shows its name")) << r.err;
  const std::string html = read_file(run_ / "report" / "index.html");
  EXPECT_TRUE(contains(html, "train_"));  // the names stand where the pictures would
  EXPECT_FALSE(contains(html, "thumbs/"));
}

// A PNG whose header says 30000 x 30000 pixels: stb_image would decode it into 2.7 GB (a few hundred kilobytes of
// zeros make such a file). Its header is read, not its pixels, and the page shows its name.
TEST_F(HostileReportsTest, AHugePictureIsRefusedByItsHeaderNotDecoded) {
  const fs::path images = dir_ / "data" / "synth_precomp" / "images";
  // IHDR 30000 x 30000 8-bit grey, an IDAT of no pixels, IEND; CRCs right (python3: zlib.crc32).
  const std::string png(
      "\x89\x50\x4e\x47\x0d\x0a\x1a\x0a\x00\x00\x00\x0d\x49\x48\x44\x52\x00\x00\x75\x30\x00\x00\x75\x30\x08\x00"
      "\x00\x00\x00\x43\x4c\xa7\x66\x00\x00\x00\x08\x49\x44\x41\x54\x78\x9c\x03\x00\x00\x00\x00\x01\x48\x06"
      "\x89\xd2\x00\x00\x00\x00\x49\x45\x4e\x44\xae\x42\x60\x82",
      65);
  for (const auto& e : fs::directory_iterator(images)) put(e.path(), png);
  const CliResult r = retrieve_run();
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_TRUE(contains(r.err, "is 30000 x 30000 pixels: thumbnails are made of pictures up to 64 megapixels")) << r.err;
  EXPECT_FALSE(contains(read_file(run_ / "report" / "index.html"), "thumbs/"));
}

// Image ids that lead out of the images folder: never read, so no picture from elsewhere lands in the report.
TEST_F(HostileReportsTest, ImageIdsLeadingOutOfTheImagesFolderAreNotRead) {
  const fs::path images = dir_ / "data" / "synth_precomp" / "images";
  fs::copy_file(images / "train_0.png", dir_ / "outside.png");
  fs::create_directories(dir_ / "secret");
  fs::copy_file(images / "train_1.png", dir_ / "secret" / "absolute.png");
  fs::create_symlink(dir_ / "outside.png", images / "linked.png");
  std::string ids = "../../../outside\n" + (dir_ / "secret" / "absolute").string() + "\nlinked\n";
  for (int i = 3; i < 20; ++i) ids += "train_" + std::to_string(i) + "\n";
  put(dir_ / "data" / "synth_precomp" / "train_ids.txt", ids);
  const CliResult r = retrieve_run();
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_TRUE(contains(r.err, "image id '../../../outside' is not read: it climbs out of the images folder")) << r.err;
  EXPECT_TRUE(contains(r.err, "image id '" + (dir_ / "secret" / "absolute").string() + "' is not read: it is an "
                              "absolute path")) << r.err;
  EXPECT_TRUE(contains(r.err, "is a symbolic link to a file outside the images folder")) << r.err;
  // Rows 0, 1 and 2 got no thumbnail; other rows did.
  for (int row : {0, 1, 2})
    for (const char* ext : {".png", ".jpg"})
      EXPECT_FALSE(fs::exists(run_ / "report" / "thumbs" / ("train_" + std::to_string(row) + ext))) << row;
}

TEST_F(HostileReportsTest, SavedScoresMustBeFiniteAndNonEmpty) {
  Tensor sims = rematch::test::random_tensor({12, 60}, DType::Float32, 3);
  std::vector<float> v = sims.to_vector<float>();
  v[5 * 60 + 17] = INFINITY;
  save_npy(path("sims.npy"), from_vector(v, {12, 60}));
  const std::vector<std::string> data = {"--data_path", path("data"), "--data_name", "synth_precomp", "--split", "test"};
  CliResult r = run_cli(std::vector<std::string>{"retrieve", "--sims", path("sims.npy"), "--out", path("report")} + data);
  EXPECT_EQ(r.code, kExitFailure);
  EXPECT_TRUE(contains(r.err, "--sims '" + path("sims.npy") + "': score 5 holds inf (element [5, 17])")) << r.err;
  save_npy(path("empty.npy"), zeros({0, 0}));
  r = run_cli(std::vector<std::string>{"retrieve", "--sims", path("empty.npy"), "--out", path("report")} + data);
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_TRUE(contains(r.err, "with N_img > 0")) << r.err;
}

// A FIFO given where a file is read: the program says so at once instead of waiting for a writer forever.
TEST_F(HostileReportsTest, AFifoGivenAsAFileIsRefusedAtOnce) {
  const std::string fifo = path("sims.npy");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  rematch::test::Program p({"retrieve", "--sims", fifo, "--out", path("report"), "--data_path", path("data"),
                            "--data_name", "synth_precomp", "--split", "test"},
                           dir_.string(), path("log.txt"), 1);
  EXPECT_EQ(p.wait(30), kExitFailure) << "a FIFO as --sims blocked the program";
  EXPECT_TRUE(contains(p.log(), "'" + fifo + "': is a FIFO (named pipe), not a regular file")) << p.log();
  rematch::test::Program ot({"ot", "--cost", fifo, "--eps", "0.1", "--out", path("plan.npy")}, dir_.string(), path("ot.txt"), 1);
  EXPECT_EQ(ot.wait(30), kExitFailure) << "a FIFO as --cost blocked the program";
  EXPECT_TRUE(contains(ot.log(), "is a FIFO (named pipe), not a regular file")) << ot.log();
  const std::string split_fifo = (run_ / "splits" / "epoch_1.json").string();
  fs::remove(split_fifo);
  ASSERT_EQ(::mkfifo(split_fifo.c_str(), 0644), 0);
  rematch::test::Program page({"retrieve", "--run", run_.string()}, dir_.string(), path("page.txt"), 1);
  EXPECT_EQ(page.wait(30), kExitFailure) << "a FIFO in splits/ blocked the program";
  EXPECT_TRUE(contains(page.log(), "epoch split '" + split_fifo + "': is a FIFO")) << page.log();
}

TEST_F(HostileReportsTest, KarpathyJsonFieldsOfTheWrongTypeAreNamed) {
  Tensor sims = rematch::test::random_tensor({12, 60}, DType::Float32, 3);
  save_npy(path("sims.npy"), sims);
  put(dir_ / "karpathy.json", "{\"images\": [{\"split\": \"test\", \"filename\": 7}]}");
  const CliResult r = run_cli({"retrieve", "--sims", path("sims.npy"), "--out", path("report"), "--data_path",
                               path("data"), "--data_name", "synth_precomp", "--split", "test", "--karpathy_json",
                               path("karpathy.json")});
  EXPECT_EQ(r.code, kExitFailure);
  EXPECT_TRUE(contains(r.err, "--karpathy_json '" + path("karpathy.json") + "': images[0].filename is 7, not a string"))
      << r.err;
  put(dir_ / "karpathy.json", "{\"images\": 3}");
  const CliResult s = run_cli({"retrieve", "--sims", path("sims.npy"), "--out", path("report"), "--data_path",
                               path("data"), "--data_name", "synth_precomp", "--split", "test", "--karpathy_json",
                               path("karpathy.json")});
  EXPECT_TRUE(contains(s.err, "is not a Karpathy split file")) << s.err;
}

// The labels page of a UOT-RCL run: noisy labels that are floats (NaN has no label) or out of range, refused.
TEST_F(HostileReportsTest, NoisyLabelsMustBeIntegers) {
  synth::LabeledWorldConfig w;
  w.classes = 4, w.train_samples = 40, w.valid_samples = 8, w.test_samples = 8;
  const std::string data = synth::write_labeled_world(synth::make_labeled_world(w), path("labeled"));
  const fs::path uot = dir_ / "uot";
  fs::create_directories(uot);
  put(uot / "config.json", "{\"method\": \"uotrcl\", \"data_path\": \"" + data + "\"}\n");
  std::vector<double> labels(80, 1.0);
  labels[41] = NAN;
  save_npy((uot / "noisy_labels.npy").string(), from_vector(labels, {2, 40}));
  CliResult r = run_cli({"retrieve", "--run", uot.string()});
  expect_refused(r, {"noisy labels '" + (uot / "noisy_labels.npy").string() + "' holds float64[2, 40]: expected "
                     "integers (int64); entry [1, 1] is nan"});
  std::vector<int64_t> ints(80, 1);
  ints[3] = -2;
  save_npy((uot / "noisy_labels.npy").string(), from_vector(ints, {2, 40}));
  expect_refused(run_cli({"retrieve", "--run", uot.string()}), {"entry [0, 3] is -2, outside [0, 2147483648)"});
  put(uot / "config.json", "{\"method\": \"uotrcl\", \"data_path\": \"" + data + "\", \"valid_len\": \"all\"}\n");
  expect_refused(run_cli({"retrieve", "--run", uot.string()}), {"\"valid_len\" is \"all\", not an integer"});
}

}  // namespace
}  // namespace rematch::cli
