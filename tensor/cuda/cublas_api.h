// cuBLAS, loaded when a CUDA matrix product first needs it. The program is not linked against libcublas: that
// library and libcublasLt, which it loads, are over 500 MB, and loading them at start cost every command (a
// CPU one, `rematch --help`) about 0.2-1 s. cublas() opens libcublas.so.<major> with dlopen on first use and
// resolves only the functions rematch calls; the call sites go through the table it returns, with the
// signatures of cublas_v2.h (decltype of the real declarations, so a signature cannot drift).
//
// Where it is looked for, in order: the dynamic loader's search (LD_LIBRARY_PATH, the program's RUNPATH,
// ld.so.cache), then the CUDA toolkit's library folder at build time (REMATCH_CUBLAS_DIR), then
// /usr/local/cuda/lib64. When none loads, cublas() throws rematch::Error naming each place tried and what to do.
#pragma once

#include <cublas_v2.h>

namespace rematch::cuda {

struct CublasApi {
  decltype(&cublasCreate_v2) create;
  decltype(&cublasSetStream_v2) set_stream;
  decltype(&cublasSetMathMode) set_math_mode;
  decltype(&cublasSgemm_v2) sgemm;
  decltype(&cublasDgemm_v2) dgemm;
  decltype(&cublasSgemmStridedBatched) sgemm_strided_batched;
  decltype(&cublasDgemmStridedBatched) dgemm_strided_batched;
  decltype(&cublasGetStatusName) status_name;
  decltype(&cublasGetStatusString) status_string;
};

// The loaded library's functions; loads it on the first call (thread-safe). Throws when it cannot be loaded
// (and tries again on the next call).
const CublasApi& cublas();

// Whether cuBLAS has been loaded in this process (for tests and start-up checks; never loads it).
bool cublas_loaded();

}  // namespace rematch::cuda
