// NCCL through dlopen on first use (see nccl_api.h for why and where it is looked for).
#ifdef REMATCH_WITH_NCCL
#include "parallel/nccl_api.h"

#include <atomic>
#include <string>
#include <vector>

#include "tensor/shared_library.h"

#define REMATCH_NCCL_STRINGIFY_(x) #x
#define REMATCH_NCCL_STRINGIFY(x) REMATCH_NCCL_STRINGIFY_(x)

namespace rematch::parallel {
namespace {

constexpr const char* kSoname = "libnccl.so." REMATCH_NCCL_STRINGIFY(NCCL_MAJOR);

std::atomic<bool> loaded{false};

NcclApi load() {
  std::vector<std::string> places{kSoname};
#ifdef REMATCH_NCCL_DIR
  places.push_back(std::string(REMATCH_NCCL_DIR) + "/" + kSoname);
#endif
  places.push_back(std::string("/usr/local/cuda/lib64/") + kSoname);
  const SharedLibrary lib = open_shared_library(
      "NCCL", places, "--dist_backend nccl needs it",
      std::string("install NCCL ") + REMATCH_NCCL_STRINGIFY(NCCL_MAJOR) + " (" + kSoname +
          ", e.g. Debian/Ubuntu's libnccl2) or add the folder holding it to LD_LIBRARY_PATH; --dist_backend mpi "
          "needs no NCCL");
  const std::string expected = std::string("NCCL ") + REMATCH_NCCL_STRINGIFY(NCCL_MAJOR) + ".x, " + kSoname;
  NcclApi api{};
  resolve_symbol(lib, "ncclGetUniqueId", expected, api.get_unique_id);
  resolve_symbol(lib, "ncclCommInitRank", expected, api.comm_init_rank);
  resolve_symbol(lib, "ncclCommDestroy", expected, api.comm_destroy);
  resolve_symbol(lib, "ncclCommAbort", expected, api.comm_abort);
  resolve_symbol(lib, "ncclAllReduce", expected, api.all_reduce);
  resolve_symbol(lib, "ncclAllGather", expected, api.all_gather);
  resolve_symbol(lib, "ncclBroadcast", expected, api.broadcast);
  resolve_symbol(lib, "ncclGetErrorString", expected, api.error_string);
  // The library stays loaded for the life of the process (a communicator made from it may outlive any scope).
  loaded.store(true);
  return api;
}

}  // namespace

const NcclApi& nccl() {
  static const NcclApi api = load();  // a throw leaves it uninitialised: the next call tries again
  return api;
}

bool nccl_loaded() { return loaded.load(); }

}  // namespace rematch::parallel
#endif  // REMATCH_WITH_NCCL
