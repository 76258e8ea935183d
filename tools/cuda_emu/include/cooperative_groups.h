// cooperative_groups' grid group, as rematch's cooperative kernels use it (ot/cuda/sinkhorn_grid.cu), for the
// CUDA emulator (tools/cuda_emu/include/cuda_runtime.h): grid.sync() is a barrier over every thread of a
// cooperative launch; called from an ordinary launch it stops the program, as the real one is undefined there.
#pragma once

#include <cuda_runtime.h>

namespace cooperative_groups {
struct grid_group {
  void sync() const { ::cuda_emu::grid_sync(); }
  unsigned long long size() const {
    return 1ull * gridDim.x * gridDim.y * gridDim.z * blockDim.x * blockDim.y * blockDim.z;
  }
};
inline grid_group this_grid() { return grid_group{}; }
}  // namespace cooperative_groups
