// NCCL, loaded when the nccl backend first starts (parallel/nccl_communicator.cpp), as tensor/cuda/cublas_api.h loads
// cuBLAS: the program is not linked against libnccl (over 200 MB), so no command pays its load at start-up, and
// a CUDA build runs where NCCL is absent as long as no nccl backend is asked for. nccl() opens libnccl.so.<major>
// with dlopen on first use and resolves only the functions rematch calls, with the signatures of nccl.h (decltype
// of the real declarations, so a signature cannot drift).
//
// Where it is looked for, in order: the dynamic loader's search (LD_LIBRARY_PATH, the program's RUNPATH,
// ld.so.cache), then the folder CMake found NCCL in (REMATCH_NCCL_DIR), then /usr/local/cuda/lib64. When none
// loads, nccl() throws rematch::Error naming each place tried and what to do.
#pragma once

#ifdef REMATCH_WITH_NCCL
#include <nccl.h>

namespace rematch::parallel {

struct NcclApi {
  decltype(&ncclGetUniqueId) get_unique_id;
  decltype(&ncclCommInitRank) comm_init_rank;
  decltype(&ncclCommDestroy) comm_destroy;
  decltype(&ncclCommAbort) comm_abort;
  decltype(&ncclAllReduce) all_reduce;
  decltype(&ncclAllGather) all_gather;
  decltype(&ncclBroadcast) broadcast;
  decltype(&ncclGetErrorString) error_string;
};

// The loaded library's functions; loads it on the first call (thread-safe). Throws when it cannot be loaded (and
// tries again on the next call).
const NcclApi& nccl();

// Whether NCCL has been loaded by nccl() in this process (never loads it).
bool nccl_loaded();

}  // namespace rematch::parallel
#endif  // REMATCH_WITH_NCCL
