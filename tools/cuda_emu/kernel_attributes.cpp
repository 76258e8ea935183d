// Per-kernel attributes of the CUDA emulator (tools/cuda_emu/emulator.h): cudaFuncSetAttribute's dynamic
// shared memory limit, cudaFuncGetAttributes, and the occupancy an H200 SM gives a kernel (threads, blocks and
// shared memory per SM, 1 KiB reserved per block), which also bounds a cooperative launch (launch.cpp).
#include <algorithm>
#include <map>
#include <mutex>

#include "tools/cuda_emu/emulator.h"

namespace cuda_emu {
namespace {

std::mutex func_mutex;
std::map<const void*, FuncInfo>& funcs() {
  static std::map<const void*, FuncInfo> table;
  return table;
}

}  // namespace

FuncInfo func_info(const void* func) {
  std::lock_guard<std::mutex> lock(func_mutex);
  return funcs()[func];
}

void record_static_smem(const void* func, size_t bytes) {
  std::lock_guard<std::mutex> lock(func_mutex);
  FuncInfo& fi = funcs()[func];
  fi.static_smem = std::max(fi.static_smem, bytes);
}

int blocks_per_sm(const FuncInfo& info, int block_size, size_t dynamic_smem) {
  if (block_size <= 0 || block_size > kMaxThreadsPerBlock || dynamic_smem > info.max_dynamic_smem) return 0;
  const size_t per_block = dynamic_smem + info.static_smem + kSmemReservedPerBlock;
  if (per_block - kSmemReservedPerBlock > kMaxSmemPerBlockOptin) return 0;
  int blocks = std::min(kMaxBlocksPerSm, kMaxThreadsPerSm / block_size);
  blocks = std::min<int>(blocks, static_cast<int>(kSmemPerSm / per_block));
  return blocks;
}

cudaError_t func_set_attribute(const void* func, cudaFuncAttribute attr, int value) {
  if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize) return set_last_error(cudaSuccess);
  if (value < 0 || static_cast<size_t>(value) > kMaxSmemPerBlockOptin) return set_last_error(cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lock(func_mutex);
  FuncInfo& fi = funcs()[func];
  if (static_cast<size_t>(value) + fi.static_smem > kMaxSmemPerBlockOptin) return set_last_error(cudaErrorInvalidValue);
  fi.max_dynamic_smem = static_cast<size_t>(value);
  return cudaSuccess;
}

cudaError_t func_get_attributes(cudaFuncAttributes* attr, const void* func) {
  if (attr == nullptr || func == nullptr) return set_last_error(cudaErrorInvalidValue);
  const FuncInfo fi = func_info(func);
  *attr = cudaFuncAttributes{};
  attr->sharedSizeBytes = fi.static_smem;
  attr->maxThreadsPerBlock = kMaxThreadsPerBlock;
  attr->numRegs = 32;
  attr->ptxVersion = 90;
  attr->binaryVersion = 90;
  attr->maxDynamicSharedSizeBytes = static_cast<int>(fi.max_dynamic_smem);
  return cudaSuccess;
}

cudaError_t occupancy_blocks_per_sm(int* blocks, const void* func, int block_size, size_t dynamic_smem) {
  if (blocks == nullptr || func == nullptr) return set_last_error(cudaErrorInvalidValue);
  *blocks = blocks_per_sm(func_info(func), block_size, dynamic_smem);
  return cudaSuccess;
}

}  // namespace cuda_emu
