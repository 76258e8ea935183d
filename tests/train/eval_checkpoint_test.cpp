// `rematch eval --checkpoint`: metrics of the scored split equal `eval --sims` on the matrix `score` saved,
// SGRAF with --checkpoint twice, captions per image read from the data, --sims/--checkpoint exclusive, and
// --device: only with --checkpoint, refused before any data is read when unusable, and on a GPU (skipped
// without one) the CPU's metrics.
#include "train/cli/eval_checkpoint.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "sgraf_cli_fixture.h"
#include "tensor/device.h"
#include "tensor/tensor.h"
#include "tensor/npy.h"
#include "test_util.h"
#include "train/eval/retrieval_metrics.h"

namespace rematch::cli {
namespace {

using test::CliResult;
using test::run_cli;
using test::SgrafCliTest;
using test::operator+;

TEST_F(SgrafCliTest, EvalCheckpointEqualsEvalOfTheScoredMatrix) {
  const std::string sgr = init("SGR", "sgr.safetensors"), saf = init("SAF", "saf.safetensors", "3");
  for (const std::vector<std::string>& ckpts : {std::vector<std::string>{"--checkpoint", sgr},
                                                std::vector<std::string>{"--checkpoint", sgr, "--checkpoint", saf}}) {
    ASSERT_EQ(run_cli(std::vector<std::string>{"score", "--out", path("S.npy")} + ckpts + data_flags()).code, kExitOk);
    const CliResult from_sims = run_cli({"eval", "--sims", path("S.npy"), "--json"});
    const CliResult from_ckpt = run_cli(std::vector<std::string>{"eval", "--json"} + ckpts + data_flags());
    ASSERT_EQ(from_ckpt.code, kExitOk) << from_ckpt.err;
    EXPECT_EQ(from_ckpt.out, from_sims.out);
    const CliResult table = run_cli(std::vector<std::string>{"eval"} + ckpts + data_flags());
    EXPECT_NE(table.out.find(ckpts.size() == 4 ? "SGRAF (SGR+SAF averaged) on synth_precomp/test"
                                               : "SGR on synth_precomp/test"),
              std::string::npos)
        << table.out;
    EXPECT_NE(table.out.find("rSum"), std::string::npos) << table.out;
  }
}

TEST_F(SgrafCliTest, ScoreSplitReportsCaptionsPerImage) {
  CheckpointScoringOptions o;
  o.checkpoints = {init("SAF", "saf.safetensors")};
  o.data_path = path("synth");
  o.data_name = "synth_precomp";
  o.split = "dev";
  o.block_images = 2;
  o.block_captions = 4;
  std::ostringstream log;
  const ScoredSplit s = score_split(o, log);
  EXPECT_EQ(log.str(), "rematch: vocabulary " + path("synth") + "/vocab/synth_precomp_vocab.json\n");
  EXPECT_EQ(s.sims.sizes(), (Shape{3, 15}));
  EXPECT_EQ(s.captions_per_image, 5);
  for (float v : s.sims.to_vector<float>()) EXPECT_TRUE(v > 0 && v < 1);
  o.data_path.clear();
  EXPECT_THROW(score_split(o, log), UsageError);
}

TEST_F(SgrafCliTest, EvalNeedsExactlyOneSource) {
  const std::string sgr = init("SGR", "sgr.safetensors");
  ASSERT_EQ(run_cli(std::vector<std::string>{"score", "--checkpoint", sgr, "--out", path("S.npy")} + data_flags()).code,
            kExitOk);
  const CliResult none = run_cli({"eval"});
  EXPECT_EQ(none.code, kExitUsage);
  EXPECT_NE(none.err.find("--sims"), std::string::npos) << none.err;
  const CliResult both =
      run_cli(std::vector<std::string>{"eval", "--sims", path("S.npy"), "--checkpoint", sgr} + data_flags());
  EXPECT_EQ(both.code, kExitUsage);
  EXPECT_NE(both.err.find("excludes"), std::string::npos) << both.err;
  const CliResult no_data = run_cli({"eval", "--checkpoint", sgr});
  EXPECT_EQ(no_data.code, kExitUsage);
  EXPECT_NE(no_data.err.find("--data_path"), std::string::npos) << no_data.err;
}

TEST_F(SgrafCliTest, EvalDeviceGoesWithCheckpointAndIsCheckedFirst) {
  const std::string sgr = init("SGR", "sgr.safetensors");
  ASSERT_EQ(run_cli(std::vector<std::string>{"score", "--checkpoint", sgr, "--out", path("S.npy")} + data_flags()).code,
            kExitOk);
  const CliResult sims_only = run_cli({"eval", "--sims", path("S.npy"), "--device", "cpu"});
  EXPECT_EQ(sims_only.code, kExitUsage);
  EXPECT_NE(sims_only.err.find("--device requires --checkpoint"), std::string::npos) << sims_only.err;

  const std::vector<std::string> missing_data = {"--data_path", path("nowhere"), "--data_name", "synth_precomp"};
  const CliResult typo = run_cli(std::vector<std::string>{"eval", "--checkpoint", sgr, "--device", "cuda:x"} +
                                 missing_data);
  EXPECT_EQ(typo.code, kExitUsage);
  EXPECT_NE(typo.err.find("--device must be cpu, cuda or cuda:N (got 'cuda:x')"), std::string::npos) << typo.err;
  const CliResult absent = run_cli(std::vector<std::string>{"eval", "--checkpoint", sgr, "--device",
                                                            cuda_available() ? "cuda:99" : "cuda"} +
                                   missing_data);
  EXPECT_EQ(absent.code, kExitFailure);
  EXPECT_NE(absent.err.find("--device cuda"), std::string::npos) << absent.err;
  EXPECT_NE(absent.err.find(cuda_available() ? "CUDA device(s) visible" : cuda_unavailable_reason()),
            std::string::npos)
      << absent.err;
  EXPECT_EQ(absent.err.find("nowhere"), std::string::npos) << "data was read: " << absent.err;
}

// The GPU's scores are the CPU's to float32 rounding (score_command_test.cpp); here eval scores on the GPU
// exactly as score does, so its metrics are those of the matrix `score --device cuda` saved.
TEST_F(SgrafCliTest, EvalCheckpointOnCudaEqualsEvalOfTheCudaScores) {
  SKIP_WITHOUT_CUDA();
  const std::string sgr = init("SGR", "sgr.safetensors"), saf = init("SAF", "saf.safetensors", "3");
  const std::vector<std::string> on_gpu = {"--checkpoint", sgr, "--checkpoint", saf, "--device", "cuda"};
  ASSERT_EQ(run_cli(std::vector<std::string>{"score", "--out", path("S.npy")} + on_gpu + data_flags()).code, kExitOk);
  const CliResult from_sims = run_cli({"eval", "--sims", path("S.npy"), "--json"});
  const CliResult from_ckpt = run_cli(std::vector<std::string>{"eval", "--json"} + on_gpu + data_flags());
  ASSERT_EQ(from_ckpt.code, kExitOk) << from_ckpt.err;
  EXPECT_EQ(from_ckpt.out, from_sims.out);
}

// --checkpoint takes one model, SGR+SAF (SGRAF) or NCR's two SGR models, and refuses the rest
// (before reading any data) with the rule, naming the flag.
TEST_F(SgrafCliTest, CheckpointTakesWhatItsHelpSaysAndNothingElse) {
  const std::string sgr = init("SGR", "sgr.safetensors"), sgr_b = init("SGR", "sgr_b.safetensors", "5");
  const std::string saf = init("SAF", "saf.safetensors", "3"), saf_b = init("SAF", "saf_b.safetensors", "4");
  const std::string rule = "--checkpoint takes one SGR or SAF model, an SGR and a SAF model (SGRAF, scores averaged), "
                           "or NCR's two SGR models A and B (scores averaged)";
  const auto eval = [&](const std::vector<std::string>& files) {
    std::vector<std::string> args = {"eval"};
    for (const std::string& f : files) args = args + std::vector<std::string>{"--checkpoint", f};
    return run_cli(args + data_flags());
  };
  for (const auto& [files, problem] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{sgr, saf, sgr_b}, "; got 3 files"},
           {{saf, saf_b}, "; got two SAF models (" + saf + ", " + saf_b + ")"},
           {{sgr, sgr}, "; got the file " + sgr + " twice"}}) {
    const CliResult r = eval(files);
    EXPECT_EQ(r.code, kExitUsage);
    EXPECT_NE(r.err.find(rule + problem), std::string::npos) << r.err;
  }
  const CliResult ncr = eval({sgr, sgr_b});
  ASSERT_EQ(ncr.code, kExitOk) << ncr.err;
  EXPECT_NE(ncr.out.find("NCR (SGR models A and B averaged) on synth_precomp/test"), std::string::npos) << ncr.out;
  const CliResult help = run_cli({"eval", "--help"});
  EXPECT_NE(help.out.find("Twice: an SGR and a SAF model give SGRAF, or NCR's two"), std::string::npos) << help.out;
}

// an unconverted PyTorch checkpoint is named as one, with the convert command.
TEST_F(SgrafCliTest, PytorchCheckpointGetsTheConvertCommand) {
  std::ofstream(path("model_best.pth.tar"), std::ios::binary) << std::string("PK\x03\x04\x14\x00\x00\x00", 8)
                                                            << "archive/data.pkl";
  const CliResult r = run_cli(std::vector<std::string>{"score", "--checkpoint", path("model_best.pth.tar"), "--out",
                                                       path("S.npy")} + data_flags());
  EXPECT_EQ(r.code, kExitFailure);
  EXPECT_NE(r.err.find("this is a PyTorch checkpoint (a zip archive as torch.save writes it), not a safetensors "
                       "file; convert it first with: /usr/bin/python3 tools/convert_pth.py " +
                       path("model_best.pth.tar") + " OUT.safetensors"),
            std::string::npos)
      << r.err;
}

// features as they are found (float64 here) score exactly as float32 ones, said once on stderr;
// a trailing slash in --data_name changes nothing; the vocabulary used is printed, ./vocab as the last place.
TEST_F(SgrafCliTest, FeaturesAndPathsAsTheyAreFound) {
  const std::string sgr = init("SGR", "sgr.safetensors");
  ASSERT_EQ(run_cli(std::vector<std::string>{"score", "--checkpoint", sgr, "--out", path("S32.npy")} + data_flags())
                .code,
            kExitOk);
  const std::string ims = path("synth/synth_precomp/test_ims.npy");
  save_npy(ims, kernels::cast(load_npy(ims), DType::Float64));
  const std::filesystem::path previous = std::filesystem::current_path();
  std::filesystem::rename(path("synth/vocab"), path("vocab"));
  std::filesystem::current_path(dir_);  // the vocabulary is now only in ./vocab
  const CliResult r = run_cli({"score", "--checkpoint", sgr, "--out", path("S64.npy"), "--data_path", path("synth"),
                               "--data_name", "synth_precomp/"});
  std::filesystem::current_path(previous);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.err, "rematch: vocabulary ./vocab/synth_precomp_vocab.json\nrematch: note: image features '" +
                       path("synth") + "/synth_precomp/test_ims.npy': float64 converted to float32 (the models "
                       "compute in float32) on load\n");
  EXPECT_NE(r.out.find("SGR on synth_precomp/test:"), std::string::npos) << r.out;
  EXPECT_EQ(load_npy(path("S64.npy")).to_vector<float>(), load_npy(path("S32.npy")).to_vector<float>());
}

// eval --sims takes float16 and column-major (np.save(p, S.T)) matrices, saying so on stderr.
TEST_F(SgrafCliTest, EvalSimsTakesFortranOrderAndFloat16) {
  const std::string sgr = init("SGR", "sgr.safetensors");
  ASSERT_EQ(run_cli(std::vector<std::string>{"score", "--checkpoint", sgr, "--out", path("S.npy")} + data_flags()).code,
            kExitOk);
  const CliResult c_order = run_cli({"eval", "--sims", path("S.npy"), "--json"});
  // The same matrix written column-major: the transpose's storage, with fortran_order True in the header.
  const Tensor s = load_npy(path("S.npy"));
  save_npy(path("ST.npy"), kernels::contiguous(kernels::transpose(s, 0, 1)));
  std::string bytes;
  {
    std::ifstream in(path("ST.npy"), std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::string c_header = "'fortran_order': False, 'shape': (20, 4), }";
  ASSERT_NE(bytes.find(c_header), std::string::npos);
  bytes.replace(bytes.find(c_header), c_header.size(), "'fortran_order': True, 'shape': (4, 20),  }");
  std::ofstream(path("F.npy"), std::ios::binary) << bytes;
  const CliResult fortran = run_cli({"eval", "--sims", path("F.npy"), "--json"});
  ASSERT_EQ(fortran.code, kExitOk) << fortran.err;
  EXPECT_EQ(fortran.out, c_order.out);
  EXPECT_EQ(fortran.err, "rematch: note: --sims '" + path("F.npy") +
                             "': Fortran (column-major) order made row-major on load\n");
  // float16: widened exactly, so the metrics are those of the float32 matrix of the same (rounded) values.
  const std::string header = "{'descr': '<f2', 'fortran_order': False, 'shape': (4, 20), }";
  std::string f2 = std::string("\x93NUMPY\x01\x00", 8);
  const size_t len = 128 - 10;  // magic, version and length field take 10 bytes; the data starts at 128
  f2 += static_cast<char>(len & 0xFF);
  f2 += static_cast<char>(len >> 8);
  f2 += header + std::string(len - header.size() - 1, ' ') + "\n";
  const std::vector<uint16_t> halves(80, 0x3800);  // 0.5
  f2.append(reinterpret_cast<const char*>(halves.data()), halves.size() * 2);
  std::ofstream(path("H.npy"), std::ios::binary) << f2;
  const CliResult half = run_cli({"eval", "--sims", path("H.npy"), "--json"});
  ASSERT_EQ(half.code, kExitOk) << half.err;
  EXPECT_EQ(half.err, "rematch: note: --sims '" + path("H.npy") + "': float16 widened to float32 on load\n");
  save_npy(path("half32.npy"), full({4, 20}, 0.5, DType::Float32));
  EXPECT_EQ(half.out, run_cli({"eval", "--sims", path("half32.npy"), "--json"}).out);
}

}  // namespace
}  // namespace rematch::cli
