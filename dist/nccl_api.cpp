// NCCL through dlopen on first use (see nccl_api.h for why and where it is looked for).
#ifdef REMATCH_WITH_NCCL
#include "dist/nccl_api.h"

#include <dlfcn.h>

#include <atomic>
#include <string>
#include <vector>

#include "tensor/error.h"

#define REMATCH_NCCL_STRINGIFY_(x) #x
#define REMATCH_NCCL_STRINGIFY(x) REMATCH_NCCL_STRINGIFY_(x)

namespace rematch::dist {
namespace {

constexpr const char* kSoname = "libnccl.so." REMATCH_NCCL_STRINGIFY(NCCL_MAJOR);

std::atomic<bool> loaded{false};

template <typename Fn> void resolve(void* lib, const std::string& path, const char* symbol, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(lib, symbol));
  REMATCH_CHECK(fn != nullptr, "NCCL at ", path, " has no ", symbol, " (", dlerror(), "): rematch needs NCCL ",
                NCCL_MAJOR, ".x, ", kSoname);
}

NcclApi load() {
  std::vector<std::string> places{kSoname};
#ifdef REMATCH_NCCL_DIR
  places.push_back(std::string(REMATCH_NCCL_DIR) + "/" + kSoname);
#endif
  places.push_back(std::string("/usr/local/cuda/lib64/") + kSoname);
  void* lib = nullptr;
  std::string tried, path;
  for (const std::string& place : places) {
    lib = dlopen(place.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib != nullptr) {
      path = place;
      break;
    }
    const char* why = dlerror();
    tried += std::string(tried.empty() ? "" : "; ") + (why != nullptr ? why : place + ": not loadable");
  }
  REMATCH_CHECK(lib != nullptr, "NCCL could not be loaded, and --dist_backend nccl needs it (", tried,
                "): install NCCL ", NCCL_MAJOR, " (", kSoname, ", e.g. Debian/Ubuntu's libnccl2) or add the folder ",
                "holding it to LD_LIBRARY_PATH; --dist_backend mpi needs no NCCL");
  NcclApi api{};
  resolve(lib, path, "ncclGetUniqueId", api.get_unique_id);
  resolve(lib, path, "ncclCommInitRank", api.comm_init_rank);
  resolve(lib, path, "ncclCommDestroy", api.comm_destroy);
  resolve(lib, path, "ncclCommAbort", api.comm_abort);
  resolve(lib, path, "ncclAllReduce", api.all_reduce);
  resolve(lib, path, "ncclAllGather", api.all_gather);
  resolve(lib, path, "ncclBroadcast", api.broadcast);
  resolve(lib, path, "ncclGetErrorString", api.error_string);
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

}  // namespace rematch::dist
#endif  // REMATCH_WITH_NCCL
