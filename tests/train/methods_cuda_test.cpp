// Every training method on the GPU against the same method on the CPU: from
// the same seed and data, the first epochs' step losses (and each named term of them) and the per-epoch
// statistics (L2RM's clean/noisy split, RCSL's bank, UOT-RCL's corrected labels) agree within float32
// tolerances; L2RM's rematch plan through the fused CUDA kernel equals the CPU solver's on the same scores; and
// UOT-RCL's label-correction OT at NUS-WIDE's size (42,941 × 10) through the CUDA kernels equals the CPU
// result.
//
// The runs are small (synthetic worlds of tests/train/*_test_util.h size): what is compared is every kernel a
// method's step reaches (SGR/SAF, Bi-GRU, VSE, MLP + prototypes, the losses, Sinkhorn, the mixture fit's
// inputs, the nearest-neighbour bank) with the method's own host-side sampling. Dropout masks come from the
// same Philox stream on both devices (tensor/philox.h), so they are the same masks.
//
// Tolerances. Both sides compute in float32 and differ in summation order (OpenBLAS vs cuBLAS, CPU vs CUDA
// reductions) and in exp/log rounding, a few ulp per op; those differences grow through the Adam steps. The
// loss tolerance (kLossRtol relative + kLossAtol) is 60× the largest CPU-vs-CPU difference measured over these
// same steps when only the OpenBLAS kernel family changes (OPENBLAS_CORETYPE=Haswell, SkylakeX, Prescott,
// Sandybridge: at most 1.8e-6 relative; RCSL's mining stage aside, see below). L2RM's plan is solved in
// float64 on the CPU and in float32 on the GPU: the CPU's own float32 solve (shifted dummies) is 4.5e-10 from
// the float64 plan, whose largest entry is 1e-4; the tolerance is 1e-8 + 1e-3 relative. The label correction:
// the CPU's float32 solve is 6.6e-7 from the float64 one (labels in [0, 1]); the tolerance 1e-4 + 1e-3 relative.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "l2rm_test_util.h"
#include "rcsl_test_util.h"
#include "test_util.h"
#include "train/methods/crcl/crcl_options.h"
#include "train/methods/decl/decl_options.h"
#include "train/methods/make_method.h"
#include "train/methods/mscn/mscn_options.h"
#include "train/methods/ncr/ncr_options.h"
#include "train/methods/bicro/bicro_options.h"
#include "train/methods/cream/cream_options.h"
#include "train/methods/l2rm/l2rm_method.h"
#include "train/methods/rcsl/memory_bank.h"
#include "train/methods/rcsl/rcsl_method.h"
#include "train/methods/dscmr/dscmr_options.h"
#include "train/methods/mrl/mrl_options.h"
#include "train/methods/sdml/sdml_options.h"
#include "train/methods/uotrcl/label_correction.h"
#include "train/methods/uotrcl/uotrcl_losses.h"
#include "train/synth/labeled_world.h"
#include "train/synth/pairs_world.h"
#include "uotrcl_test_util.h"

namespace rematch::train {
namespace {

constexpr double kLossRtol = 1e-4;
constexpr double kLossAtol = 1e-5;

struct EpochRecord {
  EpochInfo info;
  std::vector<StepResult> steps;
};

// Epochs [0, epochs) of `config` on `device`: begin_epoch, every step (at most `max_steps`), end_epoch;
// `observe` (when given) sees the method right after each begin_epoch.
std::vector<EpochRecord> run_epochs(TrainConfig config, const std::string& device, int64_t epochs,
                                    int64_t max_steps,
                                    const std::function<void(Method&, int64_t)>& observe = {}) {
  config.device = device;
  std::ostringstream log;
  std::unique_ptr<Method> m = make_method(config, log);
  std::vector<EpochRecord> out;
  for (int64_t e = 0; e < epochs; ++e) {
    EpochRecord r;
    r.info = m->begin_epoch(e);
    if (observe) observe(*m, e);
    for (int64_t s = 0; s < std::min(r.info.steps, max_steps); ++s) r.steps.push_back(m->train_step(e, s));
    m->end_epoch(e);
    out.push_back(std::move(r));
  }
  return out;
}

bool close(double got, double want, double rtol, double atol) {
  return std::isfinite(got) && std::abs(got - want) <= atol + rtol * std::abs(want);
}

// Step for step: the phase and step count of each epoch, its statistics, each step's loss, terms and pairs.
// Steps of epochs from `loose_from` on are held to `loose_rtol` instead of kLossRtol (a method whose later steps
// drift further apart between two CPU kernel families than kLossRtol allows; its test says by how much).
void expect_same_run(const std::vector<EpochRecord>& gpu, const std::vector<EpochRecord>& cpu,
                     const std::string& what, double stat_rtol = kLossRtol, size_t loose_from = SIZE_MAX,
                     double loose_rtol = kLossRtol) {
  ASSERT_EQ(gpu.size(), cpu.size()) << what;
  for (size_t e = 0; e < cpu.size(); ++e) {
    const std::string at = what + ", epoch " + std::to_string(e);
    EXPECT_EQ(gpu[e].info.phase, cpu[e].info.phase) << at;
    ASSERT_EQ(gpu[e].info.steps, cpu[e].info.steps) << at;
    for (const auto& [name, want] : cpu[e].info.stats) {
      const auto got = gpu[e].info.stats.find(name);
      ASSERT_NE(got, gpu[e].info.stats.end()) << at << ": statistic " << name << " missing on the GPU";
      EXPECT_TRUE(close(got->second, want, stat_rtol, kLossAtol))
          << at << ": statistic " << name << " " << got->second << " on the GPU, " << want << " on the CPU";
    }
    ASSERT_EQ(gpu[e].steps.size(), cpu[e].steps.size()) << at;
    const double rtol = e >= loose_from ? loose_rtol : kLossRtol;
    for (size_t s = 0; s < cpu[e].steps.size(); ++s) {
      const StepResult& g = gpu[e].steps[s];
      const StepResult& c = cpu[e].steps[s];
      const std::string step = at + ", step " + std::to_string(s);
      EXPECT_EQ(g.pairs, c.pairs) << step;
      EXPECT_TRUE(close(g.loss, c.loss, rtol, kLossAtol))
          << step << ": loss " << g.loss << " on the GPU, " << c.loss << " on the CPU";
      for (const auto& [name, want] : c.parts) {
        const auto got = g.parts.find(name);
        ASSERT_NE(got, g.parts.end()) << step << ": term " << name << " missing on the GPU";
        EXPECT_TRUE(close(got->second, want, rtol, kLossAtol))
            << step << ": term " << name << " " << got->second << " on the GPU, " << want << " on the CPU";
      }
    }
  }
}

class MethodsCuda : public test::TempDirTest {
 protected:
  // The pairs methods' world: l2rm_test::tiny_config's (24 images, 5 captions each, half mismatched).
  TrainConfig pairs_config(const std::string& method, int64_t warmup) {
    return l2rm_test::tiny_config(path("pairs"), [&](TrainConfig& c) {
      c.method = method;
      c.warmup_epoch = warmup;
    });
  }
};

TEST_F(MethodsCuda, TripletInfonceAndRclStepAsOnTheCpu) {
  SKIP_WITHOUT_CUDA();
  for (const char* method : {"triplet", "infonce", "rcl"}) {
    const TrainConfig c = pairs_config(method, 0);
    expect_same_run(run_epochs(c, "cuda", 2, 1000), run_epochs(c, "cpu", 2, 1000), method);
  }
}

TEST_F(MethodsCuda, SafStepsAsOnTheCpu) {
  SKIP_WITHOUT_CUDA();
  TrainConfig c = pairs_config("rcl", 0);
  c.options<PairsOptions>().module_name = models::SimilarityModule::SAF;
  expect_same_run(run_epochs(c, "cuda", 1, 1000), run_epochs(c, "cpu", 1, 1000), "rcl SAF");
}

// A warm-up epoch (InfoNCE + RCE), then a main epoch: the per-sample losses, the Beta-mixture split (its
// clean_size and precision are epoch statistics), the cost-net update, the rematch plan and both loss terms.
TEST_F(MethodsCuda, L2rmWarmupSplitAndMainStepsAsOnTheCpu) {
  SKIP_WITHOUT_CUDA();
  const TrainConfig c = pairs_config("l2rm", 1);
  expect_same_run(run_epochs(c, "cuda", 2, 1000), run_epochs(c, "cpu", 2, 1000), "l2rm");
}

// DECL (docs/methods/decl.md): a warm-up epoch (evidential loss with lgamma/digamma, the RDH top-k hinge), then a
// main epoch: the evidential split in eval mode (its clean_size, precision and uncertainties are epoch statistics)
// and the main steps with the noisy pairs' labels removed.
TEST_F(MethodsCuda, DeclWarmupSplitAndMainStepsAsOnTheCpu) {
  SKIP_WITHOUT_CUDA();
  const TrainConfig c = l2rm_test::tiny_config(path("pairs"), [](TrainConfig& t) {
    t.method = "decl";
    t.warmup_epoch = 1;
    DeclOptions& o = t.options<DeclOptions>();
    o.embed_size = 8;
    o.word_dim = 4;
    o.sim_dim = 4;
    o.mu = 2;
  });
  expect_same_run(run_epochs(c, "cuda", 2, 1000), run_epochs(c, "cpu", 2, 1000), "decl");
}

// CRCL (docs/methods/crcl.md): two rounds of a warm-up and a main epoch (the labels replaced by p at the first
// warm-up's end, the moving average and the floor after it, a fresh model and AdamW for round 1), augmented
// batches (drawn on the host, the same on both devices); the label means are epoch statistics.
TEST_F(MethodsCuda, CrclRoundsAsOnTheCpu) {
  SKIP_WITHOUT_CUDA();
  const TrainConfig c = l2rm_test::tiny_config(path("pairs"), [](TrainConfig& t) {
    t.method = "crcl";
    t.warmup_epoch = 1;
    t.num_epochs = 2;
    CrclOptions& o = t.options<CrclOptions>();
    o.embed_size = 8;
    o.word_dim = 4;
    o.sim_dim = 4;
    o.schedules = {1, 1};
  });
  expect_same_run(run_epochs(c, "cuda", 4, 1000), run_epochs(c, "cpu", 4, 1000), "crcl");
}

// NCR (docs/methods/ncr.md): a warm-up epoch (A's batches, then B's), then two co-training epochs: both nets'
// per-sample losses in eval mode and their Gaussian-mixture splits (clean_size_A/B and precisions are epoch
// statistics), the rectified labels (eval-mode predictions) and the soft-margin steps; the second co-training epoch
// is in the second half, so its steps alternate labelled and unlabelled updates. Those unlabelled steps drift
// apart between two CPU runs that differ only in the OpenBLAS kernel family (Haswell, Prescott, SkylakeX,
// Sandybridge): up to 6.4e-4 relative, against at most 3.6e-6 over the first two epochs (measured in the CUDA
// emulator's build, docs/cuda_emulator.md, where the emulated GPU's run stays within 5.7e-4 of each CPU run), so
// the second co-training epoch is held to 1e-2 (about 15× the CPU-vs-CPU drift), the first two to kLossRtol.
TEST_F(MethodsCuda, NcrWarmupSplitAndCoTrainingStepsAsOnTheCpu) {
  SKIP_WITHOUT_CUDA();
  const TrainConfig c = l2rm_test::tiny_config(path("pairs"), [](TrainConfig& t) {
    t.method = "ncr";
    t.warmup_epoch = 1;
    t.num_epochs = 2;
    NcrOptions& o = t.options<NcrOptions>();
    o.embed_size = 8;
    o.word_dim = 4;
    o.sim_dim = 4;
  });
  expect_same_run(run_epochs(c, "cuda", 3, 1000), run_epochs(c, "cpu", 3, 1000), "ncr", kLossRtol, 2, 1e-2);
}

// CREAM (docs/methods/cream.md): a warm-up epoch (A's batches, then B's, InfoNCE), then two co-training epochs with
// the hard and noisy stages on from the first: both nets' per-pair losses in eval mode, the Gaussian-mixture splits
// into clean, hard and noisy pairs (their sizes and precisions are epoch statistics), the refined labels (eval-mode
// predictions) and filter, and the clean, hard and noisy updates of each iteration.
TEST_F(MethodsCuda, CreamWarmupSplitAndCoTrainingStepsAsOnTheCpu) {
  SKIP_WITHOUT_CUDA();
  const TrainConfig c = l2rm_test::tiny_config(path("pairs"), [](TrainConfig& t) {
    t.method = "cream";
    t.warmup_epoch = 1;
    t.num_epochs = 2;
    CreamOptions& o = t.options<CreamOptions>();
    o.embed_size = 8;
    o.word_dim = 4;
    o.sim_dim = 4;
    o.hard_start_epoch = 0;
    o.noisy_start_epoch = 0;
  });
  expect_same_run(run_epochs(c, "cuda", 3, 1000), run_epochs(c, "cpu", 3, 1000), "cream");
}

// MSCN (docs/methods/mscn.md): a warm-up epoch (A's batches, then B's, nets and meta nets stepped), then one MSCN
// epoch's two halves: the pair scores of the meta set and of every training pair in eval mode and the Beta-mixture
// split (clean_size and the precisions are epoch statistics), and per iteration the virtual step (second
// derivatives through SGR on the device), the meta BCE ("meta_B", "meta_A") and the main step.
TEST_F(MethodsCuda, MscnWarmupSplitVirtualMetaAndMainStepsAsOnTheCpu) {
  SKIP_WITHOUT_CUDA();
  const TrainConfig c = l2rm_test::tiny_config(path("pairs"), [](TrainConfig& t) {
    t.method = "mscn";
    t.warmup_epoch = 1;
    t.num_epochs = 1;
    MscnOptions& o = t.options<MscnOptions>();
    o.embed_size = 8;
    o.word_dim = 4;
    o.sim_dim = 4;
    o.meta_source = MetaSource::Dev;
    o.meta_size = 12;
  });
  expect_same_run(run_epochs(c, "cuda", 3, 1000), run_epochs(c, "cpu", 3, 1000), "mscn");
}

// BiCro (docs/methods/bicro.md): a warm-up epoch (warmup_sele), then two co-training epochs: both nets' per-pair
// losses and their Beta-mixture splits, the peer's anchors and consistency labels (eval-mode embeddings and scores)
// and the soft-margin steps; the second co-training epoch is in the second half (unlabelled, then labelled steps).
TEST_F(MethodsCuda, BicroWarmupSplitAndCoTrainingStepsAsOnTheCpu) {
  SKIP_WITHOUT_CUDA();
  const TrainConfig c = l2rm_test::tiny_config(path("pairs"), [](TrainConfig& t) {
    t.method = "bicro";
    t.warmup_epoch = 1;
    t.num_epochs = 2;
    BicroOptions& o = t.options<BicroOptions>();
    o.embed_size = 8;
    o.word_dim = 4;
    o.sim_dim = 4;
  });
  expect_same_run(run_epochs(c, "cuda", 3, 1000), run_epochs(c, "cpu", 3, 1000), "bicro");
}

// L2RM's rematch plan of one score matrix at the official batch size (B = 128: 129 × 129 with the dummies):
// on the CPU in float64 with L2RM's dummy costs, on the GPU through the fused float32 kernel with the shifted
// dummies (L2rmMethod::rematch_plan chooses by device), the cost net as initialised on both.
TEST_F(MethodsCuda, L2rmRematchPlanOnTheGpuEqualsTheCpuSolver) {
  SKIP_WITHOUT_CUDA();
  synth::PairsWorldConfig w;  // the image queue holds a batch of training images: 128 of them
  w.train_images = 128;
  w.dev_images = 4;
  w.test_images = 4;
  w.regions = 3;
  w.feature_dim = 8;
  synth::write_pairs_world(synth::make_pairs_world(w), path("l2rm128"));
  TrainConfig c = l2rm_test::tiny_config(path("pairs"), [&](TrainConfig& t) {
    t.data_path = path("l2rm128");
    t.batch_size = 128;  // the cost net's width
  });
  std::ostringstream log;
  TrainConfig on_gpu = c;
  on_gpu.device = "cuda";
  L2rmMethod cpu = l2rm_test::make(c, log), gpu = l2rm_test::make(on_gpu, log);
  // Scores as SGR gives them: sigmoid outputs around 0.3–0.45, the given pairs higher.
  const Tensor noise = test::random_tensor({128, 128}, DType::Float32, 41, 0.3, 0.45);
  const Tensor S = kernels::binary(kernels::BinaryOp::Add, noise,
                                   kernels::scalar_op(kernels::ScalarOp::Mul, eye(128, 128, DType::Float32), 0.2));
  const Tensor want = cpu.rematch_plan(S);
  const Tensor got = to(gpu.rematch_plan(to(S, Device::cuda())), Device::cpu());
  ASSERT_TRUE(got.device().is_cpu());
  EXPECT_TRUE(test::all_close(got, want, 1e-8, 1e-3));
  const double mass = kernels::reduce(kernels::ReduceOp::Sum, want, {}, false).item<double>();
  EXPECT_GT(mass, 0.09);  // ρ = 0.1 (up to L2RM's loose stop): the plan is not empty
  EXPECT_NEAR(kernels::reduce(kernels::ReduceOp::Sum, got, {}, false).item<double>(), mass, 1e-5);
  // The given pairs (the diagonal) are masked: exactly zero on both.
  const std::vector<float> plan = got.to_vector<float>();
  for (int64_t i = 0; i < 128; ++i) EXPECT_EQ(plan[static_cast<size_t>(i * 128 + i)], 0.0f) << i;
}

// RCSL's mining stage pairs every unpaired item with its nearest neighbour among all training items (the memory
// bank), an argmax that a near tie can flip. Measured on the CPU: changing only the OpenBLAS kernel family
// (OPENBLAS_CORETYPE=Haswell or Prescott) moves the embeddings after two epochs enough (~1e-4 in a
// similarity) to flip one caption's pseudo image between two rows 7e-5 apart, which moves the first mining
// step's rcm_v term by 3e-4 relative and every later step's weights. So the learning epochs are compared step
// for step; in the mining epoch the bank must agree but where the two sides' chosen scores lie within kTie
// (a near tie), and only its first step is compared (RCM's terms at kRcmRtol, the rest as usual).
constexpr double kTie = 1e-3;
constexpr double kRcmRtol = 3e-3;

// Each pseudo partner mined on the GPU is the CPU's, or a near tie: the two choices' scores within kTie. One
// direction of the bank: `partner[i]` (a caption of image row i, or an image row of caption i) and its score.
int64_t expect_same_partners(const std::vector<int64_t>& gpu, const std::vector<double>& gpu_score,
                             const std::vector<int64_t>& cpu, const std::vector<double>& cpu_score,
                             const std::string& what) {
  EXPECT_EQ(gpu.size(), cpu.size()) << what;
  int64_t flipped = 0;
  for (size_t i = 0; i < std::min(gpu.size(), cpu.size()); ++i) {
    if (gpu[i] == cpu[i]) continue;
    ++flipped;
    EXPECT_NEAR(gpu_score[i], cpu_score[i], kTie)
        << what << " " << i << ": " << gpu[i] << " on the GPU, " << cpu[i] << " on the CPU";
  }
  return flipped;
}

void expect_same_bank(const rcsl::MemoryBank& gpu, const rcsl::MemoryBank& cpu, const std::string& what) {
  const int64_t flipped =
      expect_same_partners(gpu.image_to_caption, gpu.image_score, cpu.image_to_caption, cpu.image_score,
                           what + ": the caption mined for image row") +
      expect_same_partners(gpu.caption_to_image, gpu.caption_score, cpu.caption_to_image, cpu.caption_score,
                           what + ": the image row mined for caption");
  EXPECT_LE(flipped, (cpu.num_images() + cpu.num_captions()) / 50) << what << ": near ties flipped";
}

TEST_F(MethodsCuda, RcslLearningAndMiningStepsAsOnTheCpu) {
  SKIP_WITHOUT_CUDA();
  rcsl_test::write_world(path("rcsl"), 40, 10, 10);
  for (const char* method : {"rcsl", "rcsl-nc"}) {
    TrainConfig c = rcsl_test::small_config(path("rcsl"), method);
    c.num_epochs = 3;
    c.options<RcslOptions>().mine_epoch = 2;  // epochs 0 and 1 learn (rcsl-nc: 0 warms up, 1 splits), epoch 2 mines
    c.warmup_epoch = c.method == "rcsl-nc" ? 1 : 0;
    c.options<RcslOptions>().lr_milestones = {};
    rcsl::MemoryBank bank_gpu, bank_cpu;
    const auto keep_bank = [](rcsl::MemoryBank* bank) {
      return [bank](Method& m, int64_t epoch) {
        if (epoch == 2) *bank = dynamic_cast<RcslMethod&>(m).memory_bank();
      };
    };
    std::vector<EpochRecord> gpu = run_epochs(c, "cuda", 3, 1000, keep_bank(&bank_gpu));
    std::vector<EpochRecord> cpu = run_epochs(c, "cpu", 3, 1000, keep_bank(&bank_cpu));
    ASSERT_EQ(cpu.size(), 3u);
    ASSERT_EQ(cpu[2].info.phase, "mining") << method;
    ASSERT_FALSE(bank_cpu.empty()) << method;
    expect_same_bank(bank_gpu, bank_cpu, method);
    // The mining epoch's first step: RCM's terms read the bank, so a flipped near tie moves them a little.
    ASSERT_FALSE(gpu[2].steps.empty());
    StepResult& g0 = gpu[2].steps[0];
    const StepResult& c0 = cpu[2].steps[0];
    ASSERT_TRUE(c0.parts.count("rcm")) << method;
    g0.loss += c0.parts.at("rcm") - g0.parts.at("rcm");  // the rest of the loss is compared as usual
    for (const char* term : {"rcm", "rcm_t", "rcm_v"}) {
      EXPECT_TRUE(close(g0.parts.at(term), c0.parts.at(term), kRcmRtol, kLossAtol))
          << method << ": mining step 0 term " << term << " " << g0.parts.at(term) << " on the GPU, "
          << c0.parts.at(term) << " on the CPU";
      g0.parts[term] = c0.parts.at(term);
    }
    gpu[2].steps.resize(1);
    cpu[2].steps.resize(1);
    expect_same_run(gpu, cpu, method);
  }
}

// A warm-up epoch, then two main epochs: the confident set, the cross-modal consistent cost, the label
// correction (epoch statistics lc_mass, lc_iterations, ...) and the PLC/BHG/relation terms.
TEST_F(MethodsCuda, UotrclWarmupLabelCorrectionAndMainStepsAsOnTheCpu) {
  SKIP_WITHOUT_CUDA();
  const TrainConfig c = uotrcl_test::tiny_config(
      synth::write_labeled_world(synth::make_labeled_world(uotrcl_test::tiny_world()), path("labeled")));
  // The label-correction iterations may differ by a sweep or two in float32 (the CPU solves in float64).
  const std::vector<EpochRecord> cpu = run_epochs(c, "cpu", 3, 1000);
  std::vector<EpochRecord> gpu = run_epochs(c, "cuda", 3, 1000);
  for (size_t e = 0; e < cpu.size(); ++e) {
    auto it = cpu[e].info.stats.find("lc_iterations");
    if (it == cpu[e].info.stats.end()) continue;
    EXPECT_NEAR(gpu[e].info.stats.at("lc_iterations"), it->second, std::max(2.0, 0.02 * it->second)) << e;
    gpu[e].info.stats["lc_iterations"] = it->second;
  }
  expect_same_run(gpu, cpu, "uotrcl", 1e-3);
}

// The class-labelled baselines on the same tiny world: MRL (MCE + the multimodal contrastive loss, its cosine
// schedule, the prototypes renormalised), DSCMR (its three terms) and SDML (two views, each with its decoder and
// Adam), three epochs each, step for step.
TEST_F(MethodsCuda, MrlDscmrAndSdmlStepsAsOnTheCpu) {
  SKIP_WITHOUT_CUDA();
  const std::string data =
      synth::write_labeled_world(synth::make_labeled_world(uotrcl_test::tiny_world()), path("labeled"));
  for (const std::string method : {"mrl", "dscmr", "sdml"}) {
    TrainConfig c;
    c.method = method;
    c.data_path = data;
    c.valid_len = 0;
    c.noise_ratio = 0.2;
    c.noise_seed = 7;
    c.seed = 1;
    c.batch_size = 50;
    c.num_epochs = 3;
    c.learning_rate = 1e-3;
    c.options<MrlOptions>().hidden_dim = c.options<DscmrOptions>().hidden_dim = 32;
    c.options<MrlOptions>().output_dim = c.options<DscmrOptions>().common_dim = 16;
    c.options<SdmlOptions>().hidden_dim = 32;
    c.options<SdmlOptions>().output_dim = 16;
    resolve_defaults(c);
    expect_same_run(run_epochs(c, "cuda", 3, 1000), run_epochs(c, "cpu", 3, 1000), method);
  }
}

// UOT-RCL's label correction at NUS-WIDE's training size (42,941 pairs, 10 classes; docs/methods/uotrcl.md §4.3) with
// the preset's ε = 0.5 and transported mass s = 0.2: the corrected labels Ŷ = N·T through the CUDA partial
// Sinkhorn (float32) against the CPU's float64 solve. In a "Large" suite: no memcheck (tools/gpu_check.sh).
TEST(MethodsCudaLarge, UotrclLabelCorrectionAtNusWideSizeEqualsTheCpu) {
  SKIP_WITHOUT_CUDA();
  const int64_t n = 42941, K = 10;
  // C_S as the consistent cost makes it: −log of a class probability, one class likelier per row.
  const Tensor logits = test::random_tensor({n, K}, DType::Float32, 17, -2, 2);
  const std::vector<int64_t> labels = test::random_index({n}, K, 18).to_vector<int64_t>();
  const Tensor boost = kernels::scalar_op(kernels::ScalarOp::Mul, uotrcl::one_hot_labels(labels, K), 3.0);
  const Tensor probs = kernels::softmax(kernels::binary(kernels::BinaryOp::Add, logits, boost), 1);
  const Tensor cost = kernels::unary(kernels::UnaryOp::Neg, kernels::unary(kernels::UnaryOp::Log, probs));
  uotrcl::LabelCorrectionOptions o;  // ε 0.5, 1000 sweeps, L1 marginal tolerance 1e-6, float64 on the CPU
  const uotrcl::LabelCorrection want = uotrcl::correct_labels(cost, 0.2, o);
  const uotrcl::LabelCorrection got = uotrcl::correct_labels(to(cost, Device::cuda()), 0.2, o);
  ASSERT_TRUE(got.corrected.device().is_cuda());
  EXPECT_TRUE(test::all_close(to(got.corrected, Device::cpu()), want.corrected, 1e-4, 1e-3));
  EXPECT_NEAR(got.mass, want.mass, 1e-5);
  EXPECT_GT(want.mass, 0.19);
  EXPECT_EQ(got.converged, want.converged);
  // The labels the correction picks (argmax of each row that carries mass) are the same rows' labels.
  const Tensor got_arg = argmax(to(got.corrected, Device::cpu()), 1);
  const Tensor want_arg = argmax(want.corrected, 1);
  const std::vector<int64_t> g = got_arg.to_vector<int64_t>(), w = want_arg.to_vector<int64_t>();
  const std::vector<float> rows = kernels::reduce(kernels::ReduceOp::Sum, want.corrected, {1}, false).to_vector<float>();
  int64_t differ = 0, carrying = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (rows[static_cast<size_t>(i)] < 0.05f) continue;
    ++carrying;
    differ += g[static_cast<size_t>(i)] != w[static_cast<size_t>(i)];
  }
  EXPECT_GT(carrying, n / 10);
  EXPECT_LE(differ, carrying / 1000) << differ << " of " << carrying << " rows pick another label on the GPU";
}

}  // namespace
}  // namespace rematch::train
