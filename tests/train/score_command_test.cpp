// `rematch score`: the saved matrix equals the model run directly on the whole split (so blocking and the
// caption/image caches change nothing), SGRAF is the mean of the SGR and SAF matrices, --device cuda gives the
// CPU's matrix (skipped without a device), every checkpoint file is read once (score, eval --checkpoint,
// retrieve --checkpoint), and the errors: missing flags, a --device that is no device or cannot be used (refused
// before any data is read), a checkpoint that does not fit the data, an unreadable checkpoint.
#include "train/cli/score_command.h"

#include <map>

#include "models/models.h"
#include "tensor/device.h"
#include "tensor/file_io.h"
#include "train/run/training_state.h"
#include "sgraf_cli_fixture.h"
#include "tensor/tensor.h"
#include "test_util.h"
#include "train/data/precomp_dataset.h"

namespace rematch::cli {
namespace {

using test::CliResult;
using test::run_cli;
using test::SgrafCliTest;
using test::operator+;

TEST_F(SgrafCliTest, ScoreEqualsTheModelOnTheWholeSplit) {
  const std::string sgr = init("SGR", "sgr.safetensors");
  const CliResult r = run_cli(std::vector<std::string>{"score", "--checkpoint", sgr, "--split", "test", "--out",
                                                       path("S.npy"), "--block_images", "3", "--block_captions", "7"} +
                              data_flags());
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("SGR on synth_precomp/test: 4 images x 20 captions (5 per image)"), std::string::npos) << r.out;
  const Tensor s = load_npy(path("S.npy"));
  ASSERT_EQ(s.sizes(), (Shape{4, 20}));
  EXPECT_EQ(s.dtype(), DType::Float32);

  // The same model on all 4 images and 20 captions in one call.
  const data::Vocabulary vocab = data::Vocabulary::load(path("synth/vocab/synth_precomp_vocab.json"));
  const data::PrecompDataset ds(path("synth"), "synth_precomp", "test", vocab);
  std::vector<int64_t> lengths, ids;
  int64_t longest = 0;
  for (int64_t j = 0; j < 20; ++j) longest = std::max(longest, ds.caption_length(j));
  for (int64_t j = 0; j < 20; ++j) {
    std::vector<int64_t> c = ds.caption_vector(j);
    lengths.push_back(static_cast<int64_t>(c.size()));
    c.resize(longest, 0);
    ids.insert(ids.end(), c.begin(), c.end());
  }
  const auto model = models::load_sgraf_model(sgr);
  NoGradGuard no_grad;
  const Tensor want = (*model)(ds.images({0, 1, 2, 3}), from_vector(ids, {20, longest}), from_vector(lengths));
  EXPECT_TRUE(rematch::test::all_close(s, want, 1e-6, 1e-5));
}

// Each file is opened once: its header, its tensors and its checksum read in one pass, its models built from that
// (models/sgraf_checkpoint.h). Files: an init-checkpoint file (format rematch.training_checkpoint), an NCR run's
// checkpoint holding nets A and B, an official checkpoint as tools/convert_pth.py writes it, and an SGR+SAF pair.
TEST_F(SgrafCliTest, EveryCheckpointFileIsReadOnce) {
  const std::string sgr = init("SGR", "sgr.safetensors"), saf = init("SAF", "saf.safetensors", "3");
  const auto a = models::load_sgraf_model(sgr);
  const auto b = models::load_sgraf_model(init("SGR", "b.safetensors", "5"));
  train::TrainingState ncr;
  ncr.put_module("model.", *a);
  ncr.put_module("model_B.", *b);
  ncr.put_entry("model_config", models::to_json(a->config()));
  ncr.put_entry("model_prefixes", R"(["model.", "model_B."])");
  ncr.save(path("ncr.safetensors"));
  nn::save_safetensors(path("converted.safetensors"), a->state_dict(), {{"opt", R"({"module_name": "SGR"})"}});

  std::map<std::string, int> opens;
  io::set_open_observer([&opens](const std::string& p) { ++opens[p]; });
  struct Unset {
    ~Unset() { io::set_open_observer({}); }
  } unset;
  const std::vector<std::vector<std::string>> files = {
      {sgr}, {path("ncr.safetensors")}, {path("converted.safetensors")}, {sgr, saf}};
  for (const std::vector<std::string>& ckpts : files) {
    std::vector<std::string> flags;
    for (const std::string& f : ckpts) flags = flags + std::vector<std::string>{"--checkpoint", f};
    for (const std::vector<std::string>& command :
         {std::vector<std::string>{"score", "--out", path("S.npy")}, std::vector<std::string>{"eval"},
          std::vector<std::string>{"retrieve", "--out", path("page")}}) {
      opens.clear();
      const CliResult r = run_cli(command + flags + data_flags());
      ASSERT_EQ(r.code, kExitOk) << command[0] << " " << ckpts[0] << ": " << r.err;
      for (const std::string& f : ckpts) EXPECT_EQ(opens[f], 1) << command[0] << " opened " << f;
    }
  }
}

TEST_F(SgrafCliTest, ScoreWithSgrAndSafIsTheirMean) {
  const std::string sgr = init("SGR", "sgr.safetensors"), saf = init("SAF", "saf.safetensors", "3");
  for (const auto& [ckpts, out] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--checkpoint", sgr}, "sgr.npy"},
           {{"--checkpoint", saf}, "saf.npy"},
           {{"--checkpoint", sgr, "--checkpoint", saf}, "sgraf.npy"}}) {
    const CliResult r = run_cli(std::vector<std::string>{"score", "--out", path(out)} + ckpts + data_flags());
    ASSERT_EQ(r.code, kExitOk) << r.err;
    if (out == "sgraf.npy") EXPECT_NE(r.out.find("SGRAF (SGR+SAF averaged)"), std::string::npos) << r.out;
  }
  const Tensor mean = div(add(load_npy(path("sgr.npy")), load_npy(path("saf.npy"))), 2.0);
  EXPECT_TRUE(rematch::test::all_close(load_npy(path("sgraf.npy")), mean, 1e-7, 0));
}

TEST_F(SgrafCliTest, ScoreOnCudaEqualsTheCpuScore) {
  SKIP_WITHOUT_CUDA();
  const std::string sgr = init("SGR", "sgr.safetensors"), saf = init("SAF", "saf.safetensors", "3");
  for (const std::string& device : {"cpu", "cuda", "cuda:0"}) {
    const CliResult r = run_cli(std::vector<std::string>{"score", "--checkpoint", sgr, "--checkpoint", saf, "--out",
                                                         path(device + ".npy"), "--block_images", "3", "--device",
                                                         device} +
                                data_flags());
    ASSERT_EQ(r.code, kExitOk) << r.err;
    EXPECT_NE(r.out.find("s on " + device + ")"), std::string::npos) << r.out;
  }
  // float32 on both sides, but different summation orders (cuBLAS, the GPU's reductions; TF32 stays off).
  const Tensor cpu = load_npy(path("cpu.npy"));
  EXPECT_TRUE(rematch::test::all_close(load_npy(path("cuda.npy")), cpu, 1e-5, 1e-4));
  EXPECT_TRUE(rematch::test::all_close(load_npy(path("cuda:0.npy")), cpu, 1e-5, 1e-4));
}

// A typo in --device is a usage error, a CUDA device this build or machine cannot give a failure that says
// why; both name the flag and come before any file is read (the data folder here does not even exist).
TEST_F(SgrafCliTest, ScoreRefusesAnUnusableDeviceBeforeReadingData) {
  const std::string sgr = init("SGR", "sgr.safetensors");
  std::vector<std::string> devices = {"gpu", "CUDA", "cuda:", "cuda:x", "cuda:99"};
  if (!cuda_available()) devices.push_back("cuda");
  for (const std::string& device : devices) {
    const bool typo = device != "cuda" && device != "cuda:99";
    const CliResult r = run_cli({"score", "--checkpoint", sgr, "--out", path("S.npy"), "--data_path", path("nowhere"),
                                 "--data_name", "synth_precomp", "--device", device});
    EXPECT_EQ(r.code, typo ? kExitUsage : kExitFailure) << device << ": " << r.err;
    EXPECT_NE(r.err.find("--device"), std::string::npos) << r.err;
    if (typo) EXPECT_NE(r.err.find("cpu, cuda or cuda:N (got '" + device + "')"), std::string::npos) << r.err;
    if (!typo && !cuda_available()) EXPECT_NE(r.err.find(cuda_unavailable_reason()), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("nowhere"), std::string::npos) << "data was read: " << r.err;
    EXPECT_FALSE(std::filesystem::exists(path("S.npy")));
  }
}

// --out is checked before scoring: an existing file that is not an .npy (a checkpoint, a config.json) is refused
// and left as it was (`score --out run/checkpoint_best.safetensors` replaced a run's best state); an earlier
// matrix is replaced. `rematch ot --out` follows the same rule.
TEST_F(SgrafCliTest, ScoreAndOtReplaceOnlyAnEarlierNpy) {
  const std::string sgr = init("SGR", "sgr.safetensors");
  const std::uintmax_t size = std::filesystem::file_size(sgr);
  CliResult r = run_cli(std::vector<std::string>{"score", "--checkpoint", sgr, "--out", sgr} + data_flags());
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("--out " + sgr + " exists and is not an .npy file: writing would replace it; give another "
                       "--out, or move that file away"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(std::filesystem::file_size(sgr), size);
  const std::vector<std::string> score = std::vector<std::string>{"score", "--checkpoint", sgr, "--out", path("S.npy")} +
                                         data_flags();
  ASSERT_EQ(run_cli(score).code, kExitOk);
  r = run_cli(score);  // an earlier matrix is replaced
  EXPECT_EQ(r.code, kExitOk) << r.err;
  r = run_cli({"ot", "--cost", path("S.npy"), "--eps", "0.1", "--out", sgr});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("exists and is not an .npy file"), std::string::npos) << r.err;
  EXPECT_EQ(std::filesystem::file_size(sgr), size);
}

TEST_F(SgrafCliTest, ScoreErrors) {
  const std::string sgr = init("SGR", "sgr.safetensors");
  const std::string wrong = init("SGR", "wrong.safetensors", "1", "5");  // 5 region slots, the data has 3
  const std::vector<std::pair<std::vector<std::string>, std::string>> usage = {
      {{"score", "--checkpoint", sgr, "--out", path("S.npy"), "--data_name", "synth_precomp"}, "--data_path"},
      {std::vector<std::string>{"score", "--out", path("S.npy")} + data_flags(), "--checkpoint"},
      {std::vector<std::string>{"score", "--checkpoint", path("missing.safetensors"), "--out", path("S.npy")} +
           data_flags(),
       "missing.safetensors"},
      {std::vector<std::string>{"score", "--checkpoint", wrong, "--out", path("S.npy")} + data_flags(),
       "regions [5, 8]"},
      {std::vector<std::string>{"score", "--checkpoint", sgr, "--split", "val", "--out", path("S.npy")} + data_flags(),
       "--split"},
  };
  for (const auto& [args, needle] : usage) {
    const CliResult r = run_cli(args);
    EXPECT_EQ(r.code, kExitUsage) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  }
  // Not a model file: a runtime failure naming it.
  const CliResult r =
      run_cli(std::vector<std::string>{"score", "--checkpoint", path("synth/synth_precomp/test_ims.npy"), "--out",
                                       path("S.npy")} +
              data_flags());
  EXPECT_EQ(r.code, kExitFailure);
  EXPECT_NE(r.err.find("test_ims.npy"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(path("S.npy")));
}

}  // namespace
}  // namespace rematch::cli
