// Where a tensor's storage lives: the host (`cpu`) or one CUDA device (`cuda:N`).
#pragma once

#include <string>

namespace rematch {

struct Device {
  enum class Type { CPU, CUDA };
  Type type = Type::CPU;
  int index = 0;

  static Device cpu() { return {Type::CPU, 0}; }
  static Device cuda(int index = 0) { return {Type::CUDA, index}; }
  // Parses "cpu", "cuda" or "cuda:N"; anything else is an error naming the string.
  static Device parse(const std::string& s);

  bool is_cpu() const { return type == Type::CPU; }
  bool is_cuda() const { return type == Type::CUDA; }
  std::string str() const { return is_cpu() ? "cpu" : "cuda:" + std::to_string(index); }
  bool operator==(const Device& o) const { return type == o.type && (is_cpu() || index == o.index); }
  bool operator!=(const Device& o) const { return !(*this == o); }
};

// True when this build has the CUDA backend and at least one device is visible.
bool cuda_available();
int cuda_device_count();
// Why cuda_available() is false, in words for an error or a test's skip message: no CUDA backend in this
// build, or no visible device with the CUDA runtime's own error when it gave one (an old driver, a device it
// does not support, ...). Empty when a device is available.
std::string cuda_unavailable_reason();

// The device `spec` names ("cpu", "cuda", "cuda:N") when this process can use it; otherwise an error naming
// `flag` and the reason (a build without the CUDA backend, or fewer visible devices), so a command can refuse
// a --device it cannot honour before any work.
Device usable_device(const std::string& spec, const std::string& flag);

}  // namespace rematch
