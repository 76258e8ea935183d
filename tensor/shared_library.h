// A shared library opened with dlopen when first needed instead of linked (tensor/cuda/cublas_api.h for cuBLAS,
// parallel/nccl_api.h for NCCL): a command that never uses it does not pay its load at start-up. The library is
// looked for in several places in turn, and every failure names the library, where it was looked for, and what
// to install.
#pragma once

#include <string>
#include <vector>

namespace rematch {

struct SharedLibrary {
  void* handle = nullptr;
  std::string path;  // the place it was loaded from
  std::string name;  // "cuBLAS", "NCCL": for messages
};

// dlopen(RTLD_NOW | RTLD_LOCAL) of the first of `places` that loads. RTLD_LOCAL keeps its symbols out of the
// global scope, so they cannot meet another copy of the library in the process (PyTorch's, next to the Python
// module). The library stays loaded for the life of the process. None loads: an Error
// "<name> could not be loaded, and <needed_for> (<why each place failed>): <remedy>".
SharedLibrary open_shared_library(const std::string& name, const std::vector<std::string>& places,
                                  const std::string& needed_for, const std::string& remedy);

// The address of `symbol` in `lib`; missing: an Error "<name> at <path> has no <symbol> (...): rematch needs
// <expected>".
void* shared_library_symbol(const SharedLibrary& lib, const char* symbol, const std::string& expected);

// `fn` = the function `symbol` of `lib`, as shared_library_symbol finds it.
template <typename Fn>
void resolve_symbol(const SharedLibrary& lib, const char* symbol, const std::string& expected, Fn& fn) {
  fn = reinterpret_cast<Fn>(shared_library_symbol(lib, symbol, expected));
}

}  // namespace rematch
