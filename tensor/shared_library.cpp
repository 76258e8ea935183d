#include "tensor/shared_library.h"

#include <dlfcn.h>

#include "tensor/error.h"

namespace rematch {

SharedLibrary open_shared_library(const std::string& name, const std::vector<std::string>& places,
                                  const std::string& needed_for, const std::string& remedy) {
  SharedLibrary lib;
  lib.name = name;
  std::string tried;
  for (const std::string& place : places) {
    lib.handle = dlopen(place.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib.handle != nullptr) {
      lib.path = place;
      return lib;
    }
    const char* why = dlerror();
    tried += std::string(tried.empty() ? "" : "; ") + (why != nullptr ? why : place + ": not loadable");
  }
  REMATCH_FAIL(name, " could not be loaded, and ", needed_for, " (", tried, "): ", remedy);
}

void* shared_library_symbol(const SharedLibrary& lib, const char* symbol, const std::string& expected) {
  void* address = dlsym(lib.handle, symbol);
  if (address == nullptr) {
    const char* why = dlerror();
    REMATCH_FAIL(lib.name, " at ", lib.path, " has no ", symbol, " (", why != nullptr ? why : "not found",
                 "): rematch needs ", expected);
  }
  return address;
}

}  // namespace rematch
