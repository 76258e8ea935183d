// A kernel that writes one float past its allocation, and one that writes past a __shared__ array, run through
// the CUDA emulator in the sanitizer build (tests/CMakeLists.txt): AddressSanitizer must report each, naming the
// kernel, as compute-sanitizer's memcheck does on the GPU (docs/cuda_emulator.md). Argument: "global" or "shared".
#include <cstdio>
#include <cstring>

namespace {

__global__ void write_past_allocation(float* p) { p[threadIdx.x] = 1.0f; }

__global__ void write_past_shared(float* out) {
  __shared__ float s[32];
  s[threadIdx.x] = 2.0f;
  __syncthreads();
  out[0] = s[0];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  float* d = nullptr;
  if (cudaMalloc(reinterpret_cast<void**>(&d), 32 * sizeof(float)) != cudaSuccess) return 2;
  if (std::strcmp(argv[1], "global") == 0) write_past_allocation<<<1, 33>>>(d);  // 33 threads, 32 floats
  else write_past_shared<<<1, 33>>>(d);
  std::printf("no report: %s\n", cudaGetErrorName(cudaGetLastError()));
  return 0;
}
