// cuBLAS through dlopen on first use (see cublas_api.h for why and where it is looked for).
#include <atomic>
#include <string>
#include <vector>

#include "tensor/cuda/cublas_api.h"
#include "tensor/shared_library.h"

#define REMATCH_STRINGIFY_(x) #x
#define REMATCH_STRINGIFY(x) REMATCH_STRINGIFY_(x)

namespace rematch::cuda {
namespace {

constexpr const char* kSoname = "libcublas.so." REMATCH_STRINGIFY(CUBLAS_VER_MAJOR);

std::atomic<bool> loaded{false};

CublasApi load() {
  std::vector<std::string> places{kSoname};
#ifdef REMATCH_CUBLAS_DIR
  places.push_back(std::string(REMATCH_CUBLAS_DIR) + "/" + kSoname);
#endif
  places.push_back(std::string("/usr/local/cuda/lib64/") + kSoname);
  const SharedLibrary lib =
      open_shared_library("cuBLAS", places, "CUDA matrix products need it",
                          std::string("install cuBLAS ") + REMATCH_STRINGIFY(CUBLAS_VER_MAJOR) +
                              " (the CUDA toolkit's " + kSoname + ") or add the folder holding it to LD_LIBRARY_PATH");
  const std::string expected =
      std::string("cuBLAS ") + REMATCH_STRINGIFY(CUBLAS_VER_MAJOR) + ".x, the CUDA toolkit's " + kSoname;
  CublasApi api{};
  resolve_symbol(lib, "cublasCreate_v2", expected, api.create);
  resolve_symbol(lib, "cublasSetStream_v2", expected, api.set_stream);
  resolve_symbol(lib, "cublasSetMathMode", expected, api.set_math_mode);
  resolve_symbol(lib, "cublasSgemm_v2", expected, api.sgemm);
  resolve_symbol(lib, "cublasDgemm_v2", expected, api.dgemm);
  resolve_symbol(lib, "cublasSgemmStridedBatched", expected, api.sgemm_strided_batched);
  resolve_symbol(lib, "cublasDgemmStridedBatched", expected, api.dgemm_strided_batched);
  resolve_symbol(lib, "cublasGetStatusName", expected, api.status_name);
  resolve_symbol(lib, "cublasGetStatusString", expected, api.status_string);
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
