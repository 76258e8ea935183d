// Kernel launches of the CUDA emulator (tools/cuda_emu/include/cuda_runtime.h): every CUDA thread is a fiber
// with its own stack. An ordinary launch runs its blocks one after another; a cooperative launch runs all of
// its blocks together, so grid.sync() can hold every thread. The scheduler resumes each ready fiber until it
// waits at a barrier (a block's __syncthreads, a warp's shuffle or ballot, the grid's sync) or returns, then
// releases each barrier that every thread it waits for has reached. What the real GPU leaves undefined and
// this scheduler can see stops the program with the kernel's name: a shuffle whose mask names an exited lane
// or a lane outside the block, lanes of one warp passing different masks, a barrier some threads can never
// reach, grid.sync() outside a cooperative launch, shared memory beyond the block's limit.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "tools/cuda_emu/emulator.h"
#include "tools/cuda_emu/fiber_stack.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#define REMATCH_EMU_ASAN 1
#endif

namespace cuda_emu {

thread_local uint3 thread_idx;
thread_local uint3 block_idx;
thread_local dim3 block_dim;
thread_local dim3 grid_dim;

namespace {

// Stacks are kept for the next launch of this host thread.
thread_local std::vector<Stack> spare_stacks;

enum class Wait : unsigned char { Ready, Block, Warp, Grid, Done };

struct Fiber {
  void* sp = nullptr;
  Stack stack;
  Wait wait = Wait::Ready;
  uint3 tid{0, 0, 0};
  uint3 bid{0, 0, 0};
  int block = 0;  // index into Run::blocks
  int warp = 0;   // index into Run::warps
  int lane = 0;
  int linear = 0;  // linear thread index within the block
};

struct BlockState {
  std::vector<std::pair<int, void*>> statics;  // __shared__ variables by translate.py's id
  size_t static_bytes = 0;
  void* dynamic = nullptr;
  std::vector<int> predicates;  // __syncthreads_count
};

struct WarpState {
  uint64_t slot[32] = {};
  unsigned lanes = 0;     // lanes that exist in the block
  unsigned mask = 0;      // the mask of the exchange in progress
  unsigned arrived = 0;   // lanes waiting at it
};

struct Run {
  const LaunchSpec* spec = nullptr;
  void (*invoke)(const void*) = nullptr;
  const void* body = nullptr;
  std::vector<Fiber> fibers;
  std::vector<BlockState> blocks;
  std::vector<WarpState> warps;
  void* scheduler_sp = nullptr;
  Fiber* current = nullptr;
  size_t smem_limit = 0;
#ifdef REMATCH_EMU_ASAN
  void* fake_stack = nullptr;
  const void* host_stack_bottom = nullptr;
  size_t host_stack_size = 0;
#endif
};

thread_local Run* running = nullptr;

[[noreturn]] void fault(const std::string& what) {
  const Run* r = running;
  std::string where;
  if (r != nullptr && r->current != nullptr) {
    const Fiber& f = *r->current;
    where = " (thread (" + std::to_string(f.tid.x) + "," + std::to_string(f.tid.y) + "," + std::to_string(f.tid.z) +
            ") of block (" + std::to_string(f.bid.x) + "," + std::to_string(f.bid.y) + "," +
            std::to_string(f.bid.z) + "))";
  }
  std::fprintf(stderr, "cuda emulator: kernel %s%s: %s\n", r != nullptr ? r->spec->name : "?", where.c_str(),
               what.c_str());
  std::fflush(stderr);
  std::abort();
}

Run& run_of_caller(const char* what) {
  if (running == nullptr || running->current == nullptr)
    fault(std::string(what) + " called outside a kernel");
  return *running;
}

void switch_to_fiber(Run& r, Fiber& f) {
  r.current = &f;
  thread_idx = f.tid;
  block_idx = f.bid;
#ifdef REMATCH_EMU_ASAN
  __sanitizer_start_switch_fiber(&r.fake_stack, f.stack.low, kStackBytes);
#endif
  cuda_emu_switch(&r.scheduler_sp, f.sp);
#ifdef REMATCH_EMU_ASAN
  __sanitizer_finish_switch_fiber(r.fake_stack, nullptr, nullptr);
#endif
  r.current = nullptr;
}

// From a fiber: waits at `wait` until the scheduler releases it.
void yield(Wait wait) {
  Run& r = *running;
  Fiber& f = *r.current;
  f.wait = wait;
#ifdef REMATCH_EMU_ASAN
  void* fake = nullptr;
  __sanitizer_start_switch_fiber(wait == Wait::Done ? nullptr : &fake, r.host_stack_bottom, r.host_stack_size);
#endif
  cuda_emu_switch(&f.sp, r.scheduler_sp);
#ifdef REMATCH_EMU_ASAN
  __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
}

void start_fiber(Fiber& f) {
  if (spare_stacks.empty()) spare_stacks.push_back(make_stack());
  f.stack = spare_stacks.back();
  spare_stacks.pop_back();
#ifdef REMATCH_EMU_ASAN
  ASAN_UNPOISON_MEMORY_REGION(f.stack.low, kStackBytes);  // the frames of the fiber that used it last
#endif
  f.sp = initial_frame(f.stack, &f);
  f.wait = Wait::Ready;
}

void poison(void* p, size_t n) { std::memset(p, 0xFF, n); }  // NaN for floats, -1 for integers

std::string describe_waits(const Run& r, size_t first, size_t count) {
  size_t counts[5] = {0, 0, 0, 0, 0};
  for (size_t i = first; i < first + count; ++i) ++counts[static_cast<int>(r.fibers[i].wait)];
  return std::to_string(counts[1]) + " at __syncthreads, " + std::to_string(counts[2]) + " at a warp exchange, " +
         std::to_string(counts[3]) + " at grid.sync, " + std::to_string(counts[4]) + " exited";
}

// The order in which ready fibers are resumed between barriers (and blocks are run): thread order, or with
// REMATCH_CUDA_EMU_SCHEDULE=reverse (or set_reverse_schedule) the reverse, so that a result that depends on the
// order of threads between two barriers, or of blocks, (a race) comes out differently (docs/cuda_emulator.md).
std::atomic<int>& schedule() {
  static std::atomic<int> reverse{[] {
    const char* v = std::getenv("REMATCH_CUDA_EMU_SCHEDULE");
    if (v == nullptr || *v == '\0' || std::strcmp(v, "forward") == 0) return 0;
    if (std::strcmp(v, "reverse") == 0) return 1;
    std::fprintf(stderr, "cuda emulator: REMATCH_CUDA_EMU_SCHEDULE=%s is neither forward nor reverse\n", v);
    std::abort();
  }()};
  return reverse;
}
bool reverse_schedule() { return schedule().load(std::memory_order_relaxed) != 0; }

// Runs fibers [first, first + count) (one block, or every block of a cooperative launch) to the end.
void run_fibers(Run& r, size_t first, size_t count) {
  for (size_t i = first; i < first + count; ++i) start_fiber(r.fibers[i]);
  const bool reverse = reverse_schedule();
  for (;;) {
    for (size_t k = 0; k < count; ++k) {
      Fiber& f = r.fibers[reverse ? first + count - 1 - k : first + k];
      if (f.wait == Wait::Ready) switch_to_fiber(r, f);
    }
    bool released = false, all_done = true;
    // Warps: an exchange completes when every lane of its mask waits at it.
    for (size_t i = first; i < first + count; ++i) {
      Fiber& f = r.fibers[i];
      if (f.wait != Wait::Done) all_done = false;
      if (f.wait != Wait::Warp) continue;
      WarpState& w = r.warps[static_cast<size_t>(f.warp)];
      if ((w.arrived & w.mask) == w.mask) {
        f.wait = Wait::Ready;
        released = true;
      }
    }
    if (all_done) break;
    if (released) {
      for (size_t i = first; i < first + count; ++i) {
        WarpState& w = r.warps[static_cast<size_t>(r.fibers[i].warp)];
        if ((w.arrived & w.mask) == w.mask) w.arrived = 0;
      }
      continue;
    }
    // Blocks: __syncthreads completes when every thread of the block that has not exited waits at it.
    std::vector<int> waiting(r.blocks.size(), 0);
    std::vector<int> alive(r.blocks.size(), 0);
    size_t at_grid = 0, done = 0;
    for (size_t i = first; i < first + count; ++i) {
      const Fiber& f = r.fibers[i];
      if (f.wait == Wait::Done) {
        ++done;
        continue;
      }
      ++alive[static_cast<size_t>(f.block)];
      if (f.wait == Wait::Block) ++waiting[static_cast<size_t>(f.block)];
      if (f.wait == Wait::Grid) ++at_grid;
    }
    for (size_t i = first; i < first + count; ++i) {
      Fiber& f = r.fibers[i];
      const auto b = static_cast<size_t>(f.block);
      if (f.wait == Wait::Block && waiting[b] == alive[b]) {
        f.wait = Wait::Ready;
        released = true;
      }
    }
    if (released) continue;
    if (at_grid > 0 && at_grid + done == count) {
      if (done > 0)
        fault("grid.sync() while " + std::to_string(done) +
              " threads of the grid have exited (on the GPU the barrier never completes)");
      for (size_t i = first; i < first + count; ++i) r.fibers[i].wait = Wait::Ready;
      continue;
    }
    fault("no thread can go on: " + describe_waits(r, first, count) +
          " (a barrier that some threads of the block or warp never reach)");
  }
  for (size_t i = first; i < first + count; ++i) spare_stacks.push_back(r.fibers[i].stack);
}

void release_block(BlockState& b) {
  for (auto& s : b.statics) std::free(s.second);
  b.statics.clear();
  std::free(b.dynamic);
  b.dynamic = nullptr;
}

cudaError_t check_spec(const LaunchSpec& spec, const FuncInfo& info) {
  const dim3 b = spec.block, g = spec.grid;
  const uint64_t threads = 1ull * b.x * b.y * b.z;
  if (b.x == 0 || b.y == 0 || b.z == 0 || b.x > 1024 || b.y > 1024 || b.z > 64 ||
      threads > static_cast<uint64_t>(kMaxThreadsPerBlock))
    return cudaErrorInvalidConfiguration;
  if (g.x == 0 || g.y == 0 || g.z == 0 || g.x > 2147483647u || g.y > 65535 || g.z > 65535)
    return cudaErrorInvalidConfiguration;
  if (spec.smem > info.max_dynamic_smem) return cudaErrorInvalidValue;
  if (spec.smem + info.static_smem > kMaxSmemPerBlockOptin) return cudaErrorInvalidConfiguration;
  const int device = stream_device(spec.stream);
  if (device < 0) return cudaErrorInvalidValue;
  if (device != current_device()) return cudaErrorInvalidResourceHandle;  // a stream of another device
  return cudaSuccess;
}

}  // namespace

}  // namespace cuda_emu

extern "C" void cuda_emu_fiber_main(void* fiber) {
  using namespace cuda_emu;
  Run& r = *running;
#ifdef REMATCH_EMU_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &r.host_stack_bottom, &r.host_stack_size);
#endif
  try {
    r.invoke(r.body);
  } catch (const std::exception& e) {
    fault(std::string("threw ") + e.what());
  } catch (...) {
    fault("threw an exception");
  }
  static_cast<Fiber*>(fiber)->wait = Wait::Done;
  yield(Wait::Done);
  std::abort();  // a finished fiber is never resumed
}

namespace cuda_emu {

cudaError_t launch(const LaunchSpec& spec, void (*invoke)(const void*), const void* body) {
  if (running != nullptr) fault("a kernel launched from inside a kernel (dynamic parallelism is not emulated)");
  const FuncInfo info = func_info(spec.func);
  cudaError_t err = check_spec(spec, info);
  if (err == cudaSuccess && spec.cooperative) {
    const int threads = static_cast<int>(spec.block.x * spec.block.y * spec.block.z);
    const uint64_t blocks = 1ull * spec.grid.x * spec.grid.y * spec.grid.z;
    if (blocks > static_cast<uint64_t>(blocks_per_sm(info, threads, spec.smem)) * static_cast<uint64_t>(sm_count()))
      err = cudaErrorCooperativeLaunchTooLarge;
  }
  if (err != cudaSuccess) return set_last_error(err);

  Run r;
  r.spec = &spec;
  r.invoke = invoke;
  r.body = body;
  r.smem_limit = std::max(info.max_dynamic_smem, spec.smem);
  const unsigned bx = spec.block.x, by = spec.block.y, bz = spec.block.z;
  const int threads = static_cast<int>(bx * by * bz);
  const int warps_per_block = (threads + 31) / 32;
  const uint64_t grid_blocks = 1ull * spec.grid.x * spec.grid.y * spec.grid.z;
  const size_t group_blocks = spec.cooperative ? static_cast<size_t>(grid_blocks) : 1;
  r.fibers.resize(group_blocks * static_cast<size_t>(threads));
  r.blocks.resize(group_blocks);
  r.warps.resize(group_blocks * static_cast<size_t>(warps_per_block));
  block_dim = spec.block;
  grid_dim = spec.grid;
  Run* const outer = running;
  running = &r;

  uint64_t next_block = 0;
  while (next_block < grid_blocks) {
    // Lay out the threads of the blocks this group runs.
    for (size_t gb = 0; gb < group_blocks; ++gb, ++next_block) {
      const uint64_t b = reverse_schedule() ? grid_blocks - 1 - next_block : next_block;
      const uint3 bid{static_cast<unsigned>(b % spec.grid.x), static_cast<unsigned>(b / spec.grid.x % spec.grid.y),
                      static_cast<unsigned>(b / (1ull * spec.grid.x * spec.grid.y))};
      BlockState& bs = r.blocks[gb];
      bs.predicates.assign(static_cast<size_t>(threads), 0);
      bs.static_bytes = 0;
      if (spec.smem > 0) {
        void* p = nullptr;
        if (posix_memalign(&p, 128, spec.smem) != 0) fault("cannot allocate dynamic shared memory");
        poison(p, spec.smem);
        bs.dynamic = p;
      }
      for (int w = 0; w < warps_per_block; ++w) {
        WarpState& ws = r.warps[gb * static_cast<size_t>(warps_per_block) + static_cast<size_t>(w)];
        ws = WarpState{};
        const int lanes = std::min(32, threads - 32 * w);
        ws.lanes = lanes == 32 ? 0xffffffffu : ((1u << lanes) - 1u);
      }
      for (int t = 0; t < threads; ++t) {
        Fiber& f = r.fibers[gb * static_cast<size_t>(threads) + static_cast<size_t>(t)];
        f = Fiber{};
        f.tid = uint3{static_cast<unsigned>(t) % bx, static_cast<unsigned>(t) / bx % by,
                      static_cast<unsigned>(t) / (bx * by)};
        f.bid = bid;
        f.block = static_cast<int>(gb);
        f.warp = static_cast<int>(gb) * warps_per_block + t / 32;
        f.lane = t % 32;
        f.linear = t;
      }
    }
    run_fibers(r, 0, r.fibers.size());
    size_t static_bytes = 0;
    for (BlockState& bs : r.blocks) {
      static_bytes = std::max(static_bytes, bs.static_bytes);
      release_block(bs);
    }
    if (static_bytes > 0) record_static_smem(spec.func, static_bytes);
  }
  running = outer;
  return cudaSuccess;
}

void syncthreads() {
  run_of_caller("__syncthreads");
  yield(Wait::Block);
}

int syncthreads_count(int predicate) {
  Run& r = run_of_caller("__syncthreads_count/and/or");
  const Fiber& f = *r.current;
  BlockState& b = r.blocks[static_cast<size_t>(f.block)];
  b.predicates[static_cast<size_t>(f.linear)] = predicate != 0;
  yield(Wait::Block);
  int n = 0;
  for (int p : b.predicates) n += p;
  yield(Wait::Block);  // every thread has counted before the next call writes
  return n;
}

void grid_sync() {
  Run& r = run_of_caller("grid.sync");
  if (!r.spec->cooperative) fault("grid.sync() in a kernel that was not launched with cudaLaunchCooperativeKernel");
  yield(Wait::Grid);
}

unsigned lane_id() { return static_cast<unsigned>(run_of_caller("a warp intrinsic").current->lane); }

namespace {
void arrive(Run& r, unsigned mask, const char* what) {
  Fiber& f = *r.current;
  WarpState& w = r.warps[static_cast<size_t>(f.warp)];
  if ((mask & ~w.lanes) != 0) {
    char hex[16];
    std::snprintf(hex, sizeof hex, "0x%08x", mask);
    fault(std::string(what) + " with mask " + hex + " naming lanes the block does not have");
  }
  if ((mask & (1u << f.lane)) == 0) fault(std::string(what) + " from a lane its mask does not name");
  if (w.arrived != 0 && w.mask != mask) fault(std::string(what) + ": lanes of one warp passed different masks");
  for (int lane = 0; lane < 32; ++lane) {
    if ((mask >> lane & 1u) == 0) continue;
    const Fiber& other = r.fibers[static_cast<size_t>(&f - r.fibers.data()) - static_cast<size_t>(f.lane) +
                                  static_cast<size_t>(lane)];
    if (other.wait == Wait::Done)
      fault(std::string(what) + ": its mask names lane " + std::to_string(lane) + ", which has exited");
  }
  w.mask = mask;
  w.arrived |= 1u << f.lane;
  yield(Wait::Warp);
}
}  // namespace

uint64_t warp_exchange(unsigned mask, uint64_t value, int src_lane) {
  Run& r = run_of_caller("a warp shuffle");
  Fiber& f = *r.current;
  WarpState& w = r.warps[static_cast<size_t>(f.warp)];
  w.slot[f.lane] = value;
  arrive(r, mask, "a warp shuffle");
  if (src_lane < 0 || src_lane > 31 || (mask >> src_lane & 1u) == 0)
    fault("a warp shuffle reads lane " + std::to_string(src_lane) + ", which its mask does not name");
  const uint64_t out = w.slot[src_lane];
  arrive(r, mask, "a warp shuffle");  // every lane has read before the slots are written again
  return out;
}

unsigned warp_ballot(unsigned mask, bool predicate) {
  Run& r = run_of_caller("a warp vote");
  Fiber& f = *r.current;
  WarpState& w = r.warps[static_cast<size_t>(f.warp)];
  w.slot[f.lane] = predicate ? 1 : 0;
  arrive(r, mask, "a warp vote");
  unsigned bits = 0;
  for (int lane = 0; lane < 32; ++lane)
    if ((mask >> lane & 1u) != 0 && w.slot[lane] != 0) bits |= 1u << lane;
  arrive(r, mask, "a warp vote");
  return bits;
}

void* dynamic_shared_memory() {
  Run& r = run_of_caller("extern __shared__");
  void* p = r.blocks[static_cast<size_t>(r.current->block)].dynamic;
  if (p == nullptr) fault("reads dynamic shared memory, but the launch gave it none");
  return p;
}

void* static_shared_memory(int id, size_t bytes, size_t align) {
  Run& r = run_of_caller("__shared__");
  BlockState& b = r.blocks[static_cast<size_t>(r.current->block)];
  for (const auto& s : b.statics)
    if (s.first == id) return s.second;
  void* p = nullptr;
  if (posix_memalign(&p, std::max<size_t>(align, 16), bytes) != 0) fault("cannot allocate shared memory");
  poison(p, bytes);
  b.statics.emplace_back(id, p);
  b.static_bytes += bytes;
  if (b.static_bytes + r.spec->smem > kMaxSmemPerBlockOptin)
    fault("uses " + std::to_string(b.static_bytes) + " bytes of static and " + std::to_string(r.spec->smem) +
          " of dynamic shared memory, more than a block may have (" + std::to_string(kMaxSmemPerBlockOptin) + ")");
  return p;
}

void kernel_fault(const char* what) { fault(what); }

void set_reverse_schedule(bool reverse) { schedule().store(reverse ? 1 : 0); }

}  // namespace cuda_emu
