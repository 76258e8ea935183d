// libnccl.so.emu: the NCCL calls rematch makes (tools/cuda_emu/include/nccl.h) for the CUDA emulator, where
// device memory is the process's own memory (tools/cuda_emu/runtime_api.cpp). Each rank is a process of this
// machine (mpirun starts them, as on a GPU machine); a communicator is one POSIX shared-memory segment named after
// the unique id: a header (a barrier, each rank's pid and its call) and one staging slot per rank. A collective
// moves its buffers through the slots in chunks of kSlotBytes, between barriers.
//
// What it checks that the real library leaves to a hang or to garbage: every rank makes the same call (collective,
// count, type, operation, root; compared before any data moves, as parallel/nccl_communicator.cpp's agree() does
// through MPI), a rank that exited or aborted (the others' call returns ncclRemoteError instead of waiting), a
// barrier that waits longer than REMATCH_NCCL_EMU_TIMEOUT seconds (default 300). Each refusal prints one line naming
// the rank, the call and why ("NCCL emulator: ..."), as NCCL_DEBUG=WARN would.
//
// Sums run in rank order (0, 1, ..., n-1) on every rank, so all ranks hold the same bytes; real NCCL sums in its
// ring's order, which may differ in the last bits (parallel/nccl_communicator.cpp says so too).
#include <fcntl.h>
#include <nccl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

namespace {

constexpr size_t kSlotBytes = size_t{1} << 20;  // each rank's staging slot; larger buffers move in chunks
constexpr int kMaxRanks = 64;
constexpr size_t kHeaderBytes = 16384;  // the Header, rounded up to pages
constexpr const char* kMagic = "rematch-nccl-emu";

// What a rank asked for, compared across ranks before data moves.
struct Call {
  int64_t kind, count, type, op, root;
  bool operator==(const Call& o) const {
    return kind == o.kind && count == o.count && type == o.type && op == o.op && root == o.root;
  }
};
enum Kind : int64_t { kInit = 0, kAllReduce, kAllGather, kBroadcast };
const char* kind_name(int64_t k) {
  switch (k) {
    case kAllReduce: return "ncclAllReduce";
    case kAllGather: return "ncclAllGather";
    case kBroadcast: return "ncclBroadcast";
    default: return "ncclCommInitRank";
  }
}

struct Header {
  std::atomic<int32_t> nranks;      // set by the first rank to join, checked by the others
  std::atomic<uint32_t> arrived;    // ranks at the barrier now
  std::atomic<uint32_t> generation; // barriers passed
  std::atomic<int32_t> aborted;     // 1 + the rank that called ncclCommAbort, 0 when none did
  std::atomic<int32_t> pids[kMaxRanks];
  Call calls[kMaxRanks];
};
static_assert(sizeof(Header) <= kHeaderBytes, "the header outgrew its pages");
static_assert(std::atomic<int32_t>::is_always_lock_free && std::atomic<uint32_t>::is_always_lock_free,
              "the barrier needs lock-free atomics to work across processes");

}  // namespace

struct ncclComm {
  int rank = 0, nranks = 1;
  Header* header = nullptr;
  unsigned char* slots = nullptr;
  size_t mapped = 0;
  unsigned char* slot(int r) const { return slots + static_cast<size_t>(r) * kSlotBytes; }
};

namespace {

__attribute__((format(printf, 3, 4))) void warn(int rank, const char* call, const char* fmt, ...) {
  char text[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(text, sizeof text, fmt, args);
  va_end(args);
  std::fprintf(stderr, "NCCL emulator: rank %d: %s: %s\n", rank, call, text);
  std::fflush(stderr);
}

double timeout_seconds() {
  const char* s = std::getenv("REMATCH_NCCL_EMU_TIMEOUT");
  const double t = s ? std::atof(s) : 0.0;
  return t > 0 ? t : 300.0;
}

// Whether the process still runs: kill(pid, 0) also succeeds for a zombie (exited, not yet reaped by its parent).
bool running(pid_t pid) {
  if (kill(pid, 0) != 0) return errno != ESRCH;
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  FILE* f = std::fopen(path, "r");
  if (!f) return true;  // no /proc: trust kill()
  char state = '?';
  const int got = std::fscanf(f, "%*d (%*[^)]) %c", &state);
  std::fclose(f);
  return got != 1 || (state != 'Z' && state != 'X');
}

// All ranks of the communicator meet here; a rank that exited or aborted, or the timeout, ends the wait with an
// error instead of a hang.
ncclResult_t barrier(ncclComm* c, const char* call) {
  Header* h = c->header;
  const uint32_t generation = h->generation.load();
  if (h->arrived.fetch_add(1) + 1 == static_cast<uint32_t>(c->nranks)) {
    h->arrived.store(0);
    h->generation.fetch_add(1);
    return ncclSuccess;
  }
  const auto start = std::chrono::steady_clock::now();
  const double limit = timeout_seconds();
  // The last rank in bumps the generation before it can go on to abort or exit, so an abort or exit seen here
  // ends the wait only while the generation is still this barrier's: a rank that passed this barrier and then
  // aborted (or exited) leaves it to the next call to notice.
  const auto passed = [&] { return h->generation.load() != generation; };
  for (long spins = 0; !passed(); ++spins) {
    if (spins < 2000) continue;
    const timespec pause{0, 20000};
    nanosleep(&pause, nullptr);
    if (const int a = h->aborted.load()) {
      if (passed()) break;
      warn(c->rank, call, "rank %d aborted the communicator", a - 1);
      return ncclRemoteError;
    }
    if (spins % 4096 != 0) continue;
    for (int r = 0; r < c->nranks; ++r) {
      const pid_t pid = h->pids[r].load();
      if (pid > 0 && !running(pid)) {
        if (passed()) return ncclSuccess;
        warn(c->rank, call, "rank %d (pid %d) exited while this rank waited for it", r, static_cast<int>(pid));
        return ncclRemoteError;
      }
    }
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (waited > limit) {
      warn(c->rank, call, "waited %.0f s for the other ranks (REMATCH_NCCL_EMU_TIMEOUT); did every rank make this call?",
           waited);
      return ncclSystemError;
    }
  }
  return ncclSuccess;
}

// Every rank posts its call, then checks that all ranks posted the same one. The barrier after the data keeps a
// rank from posting its next call before the slowest has compared this one.
ncclResult_t agree(ncclComm* c, const Call& mine) {
  const char* call = kind_name(mine.kind);
  c->header->calls[c->rank] = mine;
  if (const ncclResult_t r = barrier(c, call)) return r;
  for (int r = 0; r < c->nranks; ++r) {
    const Call& other = c->header->calls[r];
    if (!(other == mine)) {
      warn(c->rank, call,
           "this rank passes count %lld, type %lld, op %lld, root %lld but rank %d made %s with count %lld, type "
           "%lld, op %lld, root %lld: every rank makes the same collectives in the same order",
           static_cast<long long>(mine.count), static_cast<long long>(mine.type), static_cast<long long>(mine.op),
           static_cast<long long>(mine.root), r, kind_name(other.kind), static_cast<long long>(other.count),
           static_cast<long long>(other.type), static_cast<long long>(other.op), static_cast<long long>(other.root));
      return ncclInvalidUsage;
    }
  }
  return ncclSuccess;
}

size_t type_size(ncclDataType_t t) {
  switch (t) {
    case ncclInt8: case ncclUint8: return 1;
    case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
    case ncclInt64: case ncclUint64: case ncclFloat64: return 8;
    default: return 0;  // float16, bfloat16: rematch moves none (parallel/nccl_communicator.cpp's nccl_type)
  }
}

ncclResult_t check_common(ncclComm* c, const char* call, const void* send, const void* recv, size_t count,
                          ncclDataType_t type) {
  if (!c) {
    std::fprintf(stderr, "NCCL emulator: %s: the communicator is null\n", call);
    return ncclInvalidArgument;
  }
  if (type_size(type) == 0) {
    warn(c->rank, call, "data type %d is not one the emulator moves (8-, 32- and 64-bit integers and floats)",
         static_cast<int>(type));
    return ncclInvalidArgument;
  }
  if (count > 0 && (!send || !recv)) {
    warn(c->rank, call, "a null buffer for %zu elements", count);
    return ncclInvalidArgument;
  }
  return ncclSuccess;
}

template <class T>
void reduce_chunk(const ncclComm* c, ncclRedOp_t op, size_t n, T* out) {
  for (size_t i = 0; i < n; ++i) {
    T acc = reinterpret_cast<const T*>(c->slot(0))[i];
    for (int r = 1; r < c->nranks; ++r) {
      const T v = reinterpret_cast<const T*>(c->slot(r))[i];
      switch (op) {
        case ncclSum: case ncclAvg: acc = static_cast<T>(acc + v); break;
        case ncclProd: acc = static_cast<T>(acc * v); break;
        case ncclMax: acc = v > acc ? v : acc; break;
        case ncclMin: acc = v < acc ? v : acc; break;
        default: break;
      }
    }
    if (op == ncclAvg) acc = static_cast<T>(acc / static_cast<T>(c->nranks));
    out[i] = acc;
  }
}

void reduce_chunk_of(ncclDataType_t type, const ncclComm* c, ncclRedOp_t op, size_t n, void* out) {
  switch (type) {
    case ncclInt8: reduce_chunk(c, op, n, static_cast<int8_t*>(out)); break;
    case ncclUint8: reduce_chunk(c, op, n, static_cast<uint8_t*>(out)); break;
    case ncclInt32: reduce_chunk(c, op, n, static_cast<int32_t*>(out)); break;
    case ncclUint32: reduce_chunk(c, op, n, static_cast<uint32_t*>(out)); break;
    case ncclInt64: reduce_chunk(c, op, n, static_cast<int64_t*>(out)); break;
    case ncclUint64: reduce_chunk(c, op, n, static_cast<uint64_t*>(out)); break;
    case ncclFloat32: reduce_chunk(c, op, n, static_cast<float*>(out)); break;
    case ncclFloat64: reduce_chunk(c, op, n, static_cast<double*>(out)); break;
    default: break;
  }
}

// Moves `bytes` through the slots in chunks of at most `chunk` bytes: put(offset, n) fills a slot, then (every
// rank's slot filled) take(offset, n) reads the slots. At least one round even for 0 bytes: the barriers after
// agree() are what keep one call's posting apart from the next.
template <class Put, class Take>
ncclResult_t in_chunks(ncclComm* c, const char* call, size_t bytes, size_t chunk, Put put, Take take) {
  size_t done = 0;
  do {
    const size_t n = bytes - done < chunk ? bytes - done : chunk;
    if (n) put(done, n);
    if (const ncclResult_t r = barrier(c, call)) return r;
    if (n) take(done, n);
    if (const ncclResult_t r = barrier(c, call)) return r;
    done += n;
  } while (done < bytes);
  return ncclSuccess;
}

std::string segment_name(const ncclUniqueId& id) {
  std::string name = "/";
  for (size_t i = 0; i < sizeof id.internal && id.internal[i]; ++i) {
    const char ch = id.internal[i];
    name += (ch == '/' ? '_' : ch);
  }
  return name;
}

}  // namespace

extern "C" {

ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
  if (!id) return ncclInvalidArgument;
  static std::atomic<unsigned> counter{0};
  std::random_device entropy;
  std::memset(id->internal, 0, sizeof id->internal);
  std::snprintf(id->internal, sizeof id->internal, "%s-%d-%u-%08x%08x", kMagic, static_cast<int>(getpid()),
                counter.fetch_add(1), entropy(), entropy());
  return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t* out, int nranks, ncclUniqueId id, int rank) {
  const char* call = "ncclCommInitRank";
  if (!out) return ncclInvalidArgument;
  *out = nullptr;
  if (nranks < 1 || nranks > kMaxRanks || rank < 0 || rank >= nranks) {
    warn(rank, call, "rank %d of %d: the emulator takes 1 to %d ranks, each below nranks", rank, nranks, kMaxRanks);
    return ncclInvalidArgument;
  }
  if (std::strncmp(id.internal, kMagic, std::strlen(kMagic)) != 0) {
    warn(rank, call, "the unique id was not made by this library's ncclGetUniqueId (or did not reach this rank)");
    return ncclInvalidArgument;
  }
  const std::string name = segment_name(id);
  const int fd = shm_open(name.c_str(), O_CREAT | O_RDWR, 0600);
  if (fd < 0) {
    warn(rank, call, "shm_open(%s): %s", name.c_str(), std::strerror(errno));
    return ncclSystemError;
  }
  const size_t bytes = kHeaderBytes + static_cast<size_t>(nranks) * kSlotBytes;
  struct stat made {};
  if (fstat(fd, &made) == 0 && made.st_size != 0 && static_cast<size_t>(made.st_size) != bytes) {
    warn(rank, call, "this rank says %d ranks; an earlier rank made the communicator for %zu", nranks,
         (static_cast<size_t>(made.st_size) - kHeaderBytes) / kSlotBytes);
    close(fd);
    return ncclInvalidUsage;
  }
  void* map = MAP_FAILED;
  if (ftruncate(fd, static_cast<off_t>(bytes)) == 0)
    map = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int saved = errno;
  close(fd);
  if (map == MAP_FAILED) {
    warn(rank, call, "mapping %zu bytes of %s: %s", bytes, name.c_str(), std::strerror(saved));
    shm_unlink(name.c_str());
    return ncclSystemError;
  }
  auto* c = new ncclComm;
  c->rank = rank;
  c->nranks = nranks;
  c->header = static_cast<Header*>(map);  // a new segment reads as zeros: every counter starts at 0
  c->slots = static_cast<unsigned char*>(map) + kHeaderBytes;
  c->mapped = bytes;
  int32_t expected = 0;
  if (!c->header->nranks.compare_exchange_strong(expected, nranks) && expected != nranks) {
    warn(rank, call, "this rank says %d ranks, an earlier one said %d", nranks, expected);
    munmap(map, bytes);
    delete c;
    return ncclInvalidUsage;
  }
  c->header->pids[rank].store(static_cast<int32_t>(getpid()));
  ncclResult_t r = agree(c, Call{kInit, nranks, 0, 0, 0});
  if (r == ncclSuccess) r = barrier(c, call);
  if (rank == 0) shm_unlink(name.c_str());  // every rank has it mapped (or failed): the name is not needed again
  if (r != ncclSuccess) {
    munmap(map, bytes);
    delete c;
    return r;
  }
  *out = c;
  return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t c) {
  if (!c) return ncclInvalidArgument;
  munmap(c->header, c->mapped);
  delete c;
  return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t c) {
  if (!c) return ncclInvalidArgument;
  c->header->aborted.store(c->rank + 1);
  return ncclCommDestroy(c);
}

ncclResult_t ncclAllReduce(const void* send, void* recv, size_t count, ncclDataType_t type, ncclRedOp_t op,
                           ncclComm_t c, cudaStream_t) {
  const char* call = "ncclAllReduce";
  if (const ncclResult_t r = check_common(c, call, send, recv, count, type)) return r;
  if (op < ncclSum || op >= ncclNumOps) {
    warn(c->rank, call, "reduction %d is not one of sum, prod, max, min, avg", static_cast<int>(op));
    return ncclInvalidArgument;
  }
  if (const ncclResult_t r = agree(c, Call{kAllReduce, static_cast<int64_t>(count), type, op, -1})) return r;
  const size_t size = type_size(type);
  return in_chunks(
      c, call, count * size, kSlotBytes / size * size,
      [&](size_t at, size_t n) { std::memcpy(c->slot(c->rank), static_cast<const unsigned char*>(send) + at, n); },
      [&](size_t at, size_t n) { reduce_chunk_of(type, c, op, n / size, static_cast<unsigned char*>(recv) + at); });
}

ncclResult_t ncclAllGather(const void* send, void* recv, size_t sendcount, ncclDataType_t type, ncclComm_t c,
                           cudaStream_t) {
  const char* call = "ncclAllGather";
  if (const ncclResult_t r = check_common(c, call, send, recv, sendcount, type)) return r;
  if (const ncclResult_t r = agree(c, Call{kAllGather, static_cast<int64_t>(sendcount), type, -1, -1})) return r;
  const size_t bytes = sendcount * type_size(type);
  return in_chunks(
      c, call, bytes, kSlotBytes,
      [&](size_t at, size_t n) { std::memcpy(c->slot(c->rank), static_cast<const unsigned char*>(send) + at, n); },
      [&](size_t at, size_t n) {
        for (int k = 0; k < c->nranks; ++k)
          std::memcpy(static_cast<unsigned char*>(recv) + static_cast<size_t>(k) * bytes + at, c->slot(k), n);
      });
}

ncclResult_t ncclBroadcast(const void* send, void* recv, size_t count, ncclDataType_t type, int root, ncclComm_t c,
                           cudaStream_t) {
  const char* call = "ncclBroadcast";
  if (const ncclResult_t r = check_common(c, call, c && c->rank == root ? send : recv, recv, count, type)) return r;
  if (root < 0 || root >= c->nranks) {
    warn(c->rank, call, "root %d outside a communicator of %d ranks", root, c->nranks);
    return ncclInvalidArgument;
  }
  if (const ncclResult_t r = agree(c, Call{kBroadcast, static_cast<int64_t>(count), type, -1, root})) return r;
  return in_chunks(
      c, call, count * type_size(type), kSlotBytes,
      [&](size_t at, size_t n) {
        if (c->rank == root) std::memcpy(c->slot(root), static_cast<const unsigned char*>(send) + at, n);
      },
      [&](size_t at, size_t n) { std::memcpy(static_cast<unsigned char*>(recv) + at, c->slot(root), n); });
}

const char* ncclGetErrorString(ncclResult_t result) {
  switch (result) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError: return "unhandled system error (the NCCL emulator's line above says which)";
    case ncclInternalError: return "internal error";
    case ncclInvalidArgument: return "invalid argument (the NCCL emulator's line above says which)";
    case ncclInvalidUsage: return "invalid usage (the NCCL emulator's line above says which)";
    case ncclRemoteError: return "remote process exited or there was a network error";
    case ncclInProgress: return "NCCL operation in progress";
    default: return "unknown result code";
  }
}

}  // extern "C"
