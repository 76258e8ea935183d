// Float32 time and peak memory of one SGR and one SAF training step on the CPU or on a CUDA device
// (`--device=cuda`): the whole
// B × B similarity matrix of a batch in one pass (models::SgrafModel, train mode, dropout 0.4 as configured),
// the VSE++ hardest-negative triplet loss (nn::hardest_negative_triplet, margin 0.2, max_violation) and the
// backward pass to every parameter. No optimiser step: the same work as bench/baselines/sgraf_step.py, which
// runs it in PyTorch in the official per-caption-loop structure and as a batched (broadcast/bmm) variant;
// bench/run_sgraf_step.sh puts the three side by side.
//
// Batch: B images [B, R, img_dim] ~ U(0, 1) and B captions of mixed lengths len_b = 9 + (7·b) mod 11 (9..19
// tokens, markers included, mean ≈ 14): <start>=1, random ids in [4, V), <end>=2, then <pad>=0.
//
// Dims are benchmark arguments B, R, img, word, embed, sim, V. Registered:
//   full     B=128 R=36 img=2048 word=300 embed=1024 sim=256 V=8481 (docs/backbones.md §5.2; the GPU target)
//   reduced  B=32  R=36 img=256  word=64  embed=256  sim=64  V=8481 (what the 2-core CPU run uses)
// `--dims=reduced` (default), `--dims=full`, `--dims=all` or `--dims=B,R,img,word,embed,sim,V` picks which are
// registered; `--memory_budget=auto|none|<size>` the scoring's memory budget (models/scoring_budget.h); `--device=cpu` (default) or `--device=cuda` / `cuda:N` where the step runs; the remaining flags
// go to Google Benchmark. Times are wall clock (UseRealTime).
//
// CUDA: the model, images and token ids live on the device (the caption lengths stay on the host, as the GRU
// and the similarity encoder want them). Every step ends with loss.item(), whose copy to the host waits for
// the device's one stream (tensor/cuda/runtime.h), so each timed iteration includes all of its GPU work. On
// every device two untimed steps come before the timed ones: the first loads the kernels, creates the cuBLAS
// handles and fills the block caches; the second is measured with the library's own counters (tensor/memory.h,
// docs/memory.md §1; MiB): params_MiB, live_before_step_MiB, saved_MiB (live after the forward pass minus
// before it), peak_tensor_MiB, temporaries_MiB (the peak's rest), cache_peak_MiB, held_peak_MiB, and
// cache_hits / cache_misses (host blocks of 1 MiB and more reused / mapped afresh in that step), minor_faults
// (the pages that step touched for the first time, getrusage's ru_minflt: what the misses cost in the kernel,
// a count that does not depend on the machine's load as system time does). `cotrain_step`
// is two SGR nets in one process, a step of each per iteration. Memory counters (MiB,
// from the device's memory pool, tensor/cuda/runtime.h; the peaks are reset before the model is built):
//   gpu_peak_MiB           the most held by live tensors: weights, gradients, inputs and the step's
//                          activations (what torch.cuda.max_memory_allocated reports for PyTorch);
//   gpu_reserved_peak_MiB  the most the pool held, live or cached for reuse (torch.cuda.max_memory_reserved).
// Neither counts the CUDA context or cuBLAS's own workspace. Without a usable device (or in a build without
// CUDA) `--device=cuda` prints one line saying why and exits 0 (bench/run_sgraf_step.sh reports "skipped").
//
// CPU memory counters (MiB, from /proc/self/status): the peak resident set is reset at the start of every run
// of a case (malloc_trim, so that heap memory freed by earlier runs is not counted, then writing 5 to
// /proc/self/clear_refs; where that is refused, getrusage's ru_maxrss, the process-wide peak, is used instead
// and `peak_reset` reports 0), then
//   peak_rss_MiB  VmHWM after the run: the whole process at its peak;
//   step_MiB      peak_rss_MiB − the resident set at program start, before any case ran: model weights,
//                 gradients, inputs and the step's activations, and blocks held by the library's host block
//                 cache (tensor/storage.cpp) — resident memory all the same (bench/baselines/sgraf_step.py
//                 reports the same quantity, measured from after `import torch`).
// Run one case per process for clean numbers (the runner does).
#include <benchmark/benchmark.h>
#include <malloc.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "models/models.h"
#include "models/scoring_budget.h"
#include "nn/functional.h"
#include "tensor/cuda/runtime.h"
#include "tensor/memory.h"

#ifdef REMATCH_WITH_CUDA
#include "bench/cuda_bench_setup.h"  // the device's name in the report's context
#endif

namespace {

using namespace rematch;

struct Dims {
  int64_t batch, regions, img_dim, word_dim, embed, sim_dim, vocab;
};

constexpr Dims kFull{128, 36, 2048, 300, 1024, 256, 8481};
constexpr Dims kReduced{32, 36, 256, 64, 256, 64, 8481};

// --- memory ---------------------------------------------------------------------------------------------------

// A "Vm...:" field of /proc/self/status in KiB, or -1.
int64_t status_kib(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const size_t n = std::strlen(field);
  while (std::getline(in, line))
    if (line.compare(0, n, field) == 0) return std::stoll(line.substr(n));
  return -1;
}

// Returns freed heap memory to the system first (glibc keeps freed chunks of earlier runs of a case mapped, and
// the reset peak starts from the current resident set), then resets VmHWM to the resident set.
bool reset_peak_rss() {
  malloc_trim(0);
  std::FILE* f = std::fopen("/proc/self/clear_refs", "w");
  if (!f) return false;
  const bool ok = std::fputs("5", f) >= 0;
  return std::fclose(f) == 0 && ok;
}

int64_t peak_rss_kib(bool was_reset) {
  const int64_t hwm = status_kib("VmHWM:");
  if (was_reset && hwm >= 0) return hwm;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;  // KiB on Linux
}

int64_t g_start_rss_kib = 0;

constexpr double kMiB = 1024.0 * 1024.0;

// --- the step ---------------------------------------------------------------------------------------------------

std::vector<int64_t> caption_lengths(int64_t batch) {
  std::vector<int64_t> lengths(batch);
  for (int64_t b = 0; b < batch; ++b) lengths[b] = 9 + (7 * b) % 11;
  return lengths;
}

struct Setup {
  Generator gen{0};
  models::SgrafModel model;
  Tensor images, ids, lengths;

  static models::SgrafConfig config(models::SimilarityModule module, const Dims& d) {
    models::SgrafConfig c;
    c.module = module;
    c.vocab_size = d.vocab;
    c.img_dim = d.img_dim;
    c.word_dim = d.word_dim;
    c.embed_size = d.embed;
    c.sim_dim = d.sim_dim;
    c.num_regions = d.regions;
    return c;  // sgr_step 3, dropout 0.4: the defaults
  }

  // Built on the host (the same weights and batch on every device), then moved to `device`.
  Setup(models::SimilarityModule module, const Dims& d, Device device)
      : model(config(module, d), DType::Float32, &gen) {
    images = rand({d.batch, d.regions, d.img_dim}, DType::Float32, Device::cpu(), &gen);
    const std::vector<int64_t> lens = caption_lengths(d.batch);
    int64_t longest = 0;
    for (int64_t len : lens) longest = std::max(longest, len);
    const std::vector<int64_t> words = randint(4, d.vocab, {d.batch, longest}, DType::Int64, Device::cpu(), &gen)
                                           .to_vector<int64_t>();
    std::vector<int64_t> tokens(d.batch * longest, 0);
    for (int64_t b = 0; b < d.batch; ++b) {
      int64_t* row = tokens.data() + b * longest;
      for (int64_t t = 1; t + 1 < lens[b]; ++t) row[t] = words[b * longest + t];
      row[0] = 1;
      row[lens[b] - 1] = 2;
    }
    ids = from_vector(tokens, {d.batch, longest});
    lengths = from_vector(lens);
    if (device.is_cuda()) {
      model.to(device);
      images = to(images, device);
      ids = to(ids, device);
    }
    model.train();
  }

  double step() {
    model.zero_grad();
    const Tensor scores = model(images, ids, lengths);  // [B, B], rows = images
    const Tensor loss = nn::hardest_negative_triplet(scores, 0.2, true);
    backward(loss);
    return loss.item<double>();  // on CUDA, waits for the step's kernels (a copy to the host syncs the stream)
  }

  // The same step, measured (tensor/memory.h; bytes): the tensors live before it (parameters, their gradients
  // from the step before, the batch), live after the forward pass (+ what the graph saved for backward and the
  // outputs), and the peak during the step (+ the temporaries of the forward or backward pass at that moment,
  // with the gradients being built).
  struct Breakdown {
    double params = 0, before = 0, saved = 0, peak = 0, cached_peak = 0, held_peak = 0, misses = 0, hits = 0;
    double minor_faults = 0;  // pages the step touched for the first time (getrusage ru_minflt): fresh blocks
  };
  Breakdown measured_step(Device device) {
    Breakdown b;
    for (const Tensor& p : model.parameters()) b.params += static_cast<double>(p.numel()) * dtype_size(p.dtype());
    model.zero_grad();
    reset_peak_memory_stats(device);
    const MemoryStats start = memory_stats(device);
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    const long faults_before = usage.ru_minflt;
    b.before = static_cast<double>(start.live_bytes);
    const Tensor scores = model(images, ids, lengths);
    const Tensor loss = nn::hardest_negative_triplet(scores, 0.2, true);
    b.saved = static_cast<double>(memory_stats(device).live_bytes) - b.before;
    backward(loss);
    loss.item<double>();
    getrusage(RUSAGE_SELF, &usage);
    b.minor_faults = static_cast<double>(usage.ru_minflt - faults_before);
    const MemoryStats m = memory_stats(device);
    b.peak = static_cast<double>(m.live_peak_bytes);
    b.cached_peak = static_cast<double>(m.cached_peak_bytes);
    b.held_peak = static_cast<double>(m.held_peak_bytes);
    b.misses = static_cast<double>(m.cache_misses - start.cache_misses);
    b.hits = static_cast<double>(m.cache_hits - start.cache_hits);
    return b;
  }
};

// nets = 2: a co-training step (NCR, DECL, CRCL keep two SGRAF nets, each trained on the batch in turn): two
// models of the same shape in one process, one iteration = a step of each; the breakdown is of the first net's
// step with the second's gradients alive.
void run_case(benchmark::State& state, models::SimilarityModule module, Device device, int nets) {
  const Dims d{state.range(0), state.range(1), state.range(2), state.range(3),
               state.range(4), state.range(5), state.range(6)};
  if (device.is_cuda()) cuda::reset_peak_memory_stats(device.index);
  const bool was_reset = reset_peak_rss();
  double loss = 0;
  Setup::Breakdown b;
  {
    Setup s(module, d, device);
    std::unique_ptr<Setup> other;
    if (nets == 2) {
      other = std::make_unique<Setup>(module, d, device);
      other->step();  // untimed: its gradients alive, as mid-epoch
    }
    s.step();                     // untimed: kernel loading, cuBLAS handles; the block cache filled
    b = s.measured_step(device);  // untimed: the memory breakdown of a step like the timed ones
    for (auto _ : state) {
      loss = s.step();
      if (other) loss += other->step();
      benchmark::DoNotOptimize(loss);
      benchmark::ClobberMemory();
    }
  }
  if (device.is_cuda()) {
    const cuda::MemoryStats m = cuda::memory_stats(device.index);
    state.counters["gpu_peak_MiB"] = static_cast<double>(m.used_peak_bytes) / kMiB;
    state.counters["gpu_reserved_peak_MiB"] = static_cast<double>(m.reserved_peak_bytes) / kMiB;
  }
  // The breakdown (MiB; docs/memory.md §1): parameters; gradients (as large as the parameters, alive from the
  // step before); the batch and the rest live before the step; saved for backward (live after the forward pass
  // minus before it); the peak's remaining temporaries; the block cache at the peak; live + cached at the peak.
  state.counters["params_MiB"] = b.params / kMiB;
  state.counters["live_before_step_MiB"] = b.before / kMiB;
  state.counters["saved_MiB"] = b.saved / kMiB;
  state.counters["peak_tensor_MiB"] = b.peak / kMiB;
  state.counters["temporaries_MiB"] = (b.peak - b.before - b.saved) / kMiB;
  state.counters["cache_peak_MiB"] = b.cached_peak / kMiB;
  state.counters["held_peak_MiB"] = b.held_peak / kMiB;
  state.counters["cache_misses"] = b.misses;  // host blocks of 1 MiB and more mapped afresh in the measured step
  state.counters["cache_hits"] = b.hits;
  state.counters["minor_faults"] = b.minor_faults;  // in the measured step: the page faults the misses cost
  const int64_t peak = peak_rss_kib(was_reset);
  state.counters["peak_rss_MiB"] = static_cast<double>(peak) / 1024.0;
  state.counters["step_MiB"] = static_cast<double>(peak - g_start_rss_kib) / 1024.0;
  state.counters["peak_reset"] = was_reset ? 1 : 0;
  state.counters["loss"] = loss;
  state.counters["pairs"] = static_cast<double>(d.batch * d.batch);
}

// An error (a device out of memory at full dims, say) is recorded in the case's report entry (error_occurred,
// error_message), and the other cases still run.
void BM_step(benchmark::State& state, models::SimilarityModule module, Device device, int nets) {
  try {
    run_case(state, module, device, nets);
  } catch (const Error& e) {
    state.SkipWithError(e.what());
  }
}

// CUDA steps take milliseconds: half a second per run gives tens of steps and keeps the GPU runner short.
void register_case(const char* name, models::SimilarityModule module, const Dims& d, Device device, int nets = 1) {
  benchmark::RegisterBenchmark(name, BM_step, module, device, nets)
      ->Args({d.batch, d.regions, d.img_dim, d.word_dim, d.embed, d.sim_dim, d.vocab})
      ->ArgNames({"B", "R", "img", "word", "embed", "sim", "V"})
      ->UseRealTime()
      ->MinTime(device.is_cuda() ? 0.5 : 2.0)
      ->Unit(benchmark::kMillisecond);
}

bool parse_dims(const std::string& text, std::vector<Dims>* out) {
  if (text == "reduced") return out->push_back(kReduced), true;
  if (text == "full") return out->push_back(kFull), true;
  if (text == "all") return out->push_back(kReduced), out->push_back(kFull), true;
  std::vector<int64_t> v;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    try {
      v.push_back(std::stoll(item));
    } catch (...) {
      return false;
    }
    if (v.back() <= 0) return false;
  }
  if (v.size() != 7) return false;
  out->push_back(Dims{v[0], v[1], v[2], v[3], v[4], v[5], v[6]});
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  rematch::tune_host_malloc();  // as the rematch program does (train/main.cpp)
  g_start_rss_kib = status_kib("VmRSS:");
  std::string dims_flag = "reduced", device_flag = "cpu", budget_flag = "auto";
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    if (i > 0 && std::strncmp(argv[i], "--dims=", 7) == 0)
      dims_flag = argv[i] + 7;
    else if (i > 0 && std::strncmp(argv[i], "--device=", 9) == 0)
      device_flag = argv[i] + 9;
    else if (i > 0 && std::strncmp(argv[i], "--memory_budget=", 16) == 0)
      budget_flag = argv[i] + 16;
    else
      rest.push_back(argv[i]);
  }
  std::vector<Dims> dims;
  if (!parse_dims(dims_flag, &dims)) {
    std::fprintf(stderr, "--dims: expected reduced, full, all or B,R,img,word,embed,sim,V (got '%s')\n",
                 dims_flag.c_str());
    return 1;
  }
  Device device;
  try {
    models::set_scoring_memory_budget(models::parse_memory_budget(budget_flag, "--memory_budget"));
    device = Device::parse(device_flag);
  } catch (const Error& e) {
    std::fprintf(stderr, "--device: %s\n", e.what());
    return 1;
  }
  if (device.is_cuda()) {
    if (!cuda_available()) {  // one line instead of JSON: the runner reports the run as skipped
      std::printf("sgraf_step_bench: --device=%s: %s; skipping\n", device_flag.c_str(),
                  cuda_unavailable_reason().c_str());
      return 0;
    }
    if (device.index >= cuda_device_count()) {
      std::fprintf(stderr, "--device=%s: only %d CUDA device(s) visible\n", device_flag.c_str(),
                   cuda_device_count());
      return 1;
    }
#ifdef REMATCH_WITH_CUDA
    bench::add_device_context(device.index);
#endif
  }
  for (const Dims& d : dims) {
    register_case("sgr_step", models::SimilarityModule::SGR, d, device);
    register_case("saf_step", models::SimilarityModule::SAF, d, device);
    register_case("cotrain_step", models::SimilarityModule::SGR, d, device, 2);
  }
  int rest_argc = static_cast<int>(rest.size());
  benchmark::Initialize(&rest_argc, rest.data());
  if (benchmark::ReportUnrecognizedArguments(rest_argc, rest.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
