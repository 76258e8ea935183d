// CPU-only build: there is no CUDA device, and asking for one says why.
#include "tensor/cuda/runtime.h"
#include "tensor/error.h"

namespace rematch::cuda {

bool built_with_cuda() { return false; }
int device_count() { return 0; }
std::string device_query_error() { return ""; }

void* device_malloc(size_t nbytes, int device) {
  REMATCH_FAIL("cuda:", device, ": cannot allocate ", nbytes, " bytes: rematch was built without CUDA (REMATCH_CUDA=OFF)");
}
void device_free(void*, int) {}
void memcpy(void*, Device dst, const void*, Device src, size_t nbytes) {
  REMATCH_FAIL("copy of ", nbytes, " bytes from ", src.str(), " to ", dst.str(),
               ": rematch was built without CUDA (REMATCH_CUDA=OFF)");
}
MemoryStats memory_stats(int device) {
  REMATCH_FAIL("cuda:", device, ": no memory statistics: rematch was built without CUDA (REMATCH_CUDA=OFF)");
}
void reset_peak_memory_stats(int device) {
  REMATCH_FAIL("cuda:", device, ": cannot reset the peak memory statistics: rematch was built without CUDA "
               "(REMATCH_CUDA=OFF)");
}
size_t total_memory(int device) {
  REMATCH_FAIL("cuda:", device, ": no device memory: rematch was built without CUDA (REMATCH_CUDA=OFF)");
}
size_t release_cached_memory(int device) {
  REMATCH_FAIL("cuda:", device, ": no cached memory to release: rematch was built without CUDA (REMATCH_CUDA=OFF)");
}

}  // namespace rematch::cuda
