// cuBLAS through dlopen on first use (see cublas_api.h for why and where it is looked for).
#include <dlfcn.h>

#include <atomic>
#include <string>
#include <vector>

#include "tensor/cuda/cublas_api.h"
#include "tensor/error.h"

#define REMATCH_STRINGIFY_(x) #x
#define REMATCH_STRINGIFY(x) REMATCH_STRINGIFY_(x)

namespace rematch::cuda {
namespace {

constexpr const char* kSoname = "libcublas.so." REMATCH_STRINGIFY(CUBLAS_VER_MAJOR);

std::atomic<bool> loaded{false};

template <typename Fn> void resolve(void* lib, const char* path, const char* symbol, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(lib, symbol));
  REMATCH_CHECK(fn != nullptr, "cuBLAS at ", path, " has no ", symbol, " (", dlerror(),
                "): rematch needs cuBLAS ", CUBLAS_VER_MAJOR, ".x, the CUDA toolkit's ", kSoname);
}

CublasApi load() {
  std::vector<std::string> places{kSoname};
#ifdef REMATCH_CUBLAS_DIR
  places.push_back(std::string(REMATCH_CUBLAS_DIR) + "/" + kSoname);
#endif
  places.push_back(std::string("/usr/local/cuda/lib64/") + kSoname);
  void* lib = nullptr;
  std::string tried, path;
  for (const std::string& place : places) {
    // RTLD_LOCAL: its symbols stay out of the global scope, so they cannot meet another copy of cuBLAS in the
    // process (PyTorch's, next to the Python module).
    lib = dlopen(place.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib != nullptr) {
      path = place;
      break;
    }
    const char* why = dlerror();
    tried += std::string(tried.empty() ? "" : "; ") + (why != nullptr ? why : place + ": not loadable");
  }
  REMATCH_CHECK(lib != nullptr, "cuBLAS could not be loaded, and CUDA matrix products need it (", tried,
                "): install cuBLAS ", CUBLAS_VER_MAJOR, " (the CUDA toolkit's ", kSoname,
                ") or add the folder holding it to LD_LIBRARY_PATH");
  CublasApi api{};
  resolve(lib, path.c_str(), "cublasCreate_v2", api.create);
  resolve(lib, path.c_str(), "cublasSetStream_v2", api.set_stream);
  resolve(lib, path.c_str(), "cublasSetMathMode", api.set_math_mode);
  resolve(lib, path.c_str(), "cublasSgemm_v2", api.sgemm);
  resolve(lib, path.c_str(), "cublasDgemm_v2", api.dgemm);
  resolve(lib, path.c_str(), "cublasSgemmStridedBatched", api.sgemm_strided_batched);
  resolve(lib, path.c_str(), "cublasDgemmStridedBatched", api.dgemm_strided_batched);
  resolve(lib, path.c_str(), "cublasGetStatusName", api.status_name);
  resolve(lib, path.c_str(), "cublasGetStatusString", api.status_string);
  // The library stays loaded for the life of the process (handles made from it are never destroyed).
  loaded.store(true);
  return api;
}

}  // namespace

const CublasApi& cublas() {
  static const CublasApi api = load();  // a throw leaves it uninitialised: the next call tries again
  return api;
}

bool cublas_loaded() { return loaded.load(); }

}  // namespace rematch::cuda
