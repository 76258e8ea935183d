#include "fuzz/fuzz_util.h"

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <typeinfo>

#include "tensor/error.h"

// libFuzzer calls this once before the first input. One OpenMP thread: the inputs are small, and a fuzzer
// spends its time in many short runs, where spinning worker threads only take a core from the other targets.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  ::setenv("OMP_NUM_THREADS", "1", 0);
  return 0;
}

namespace rematch::fuzz {
namespace {

struct TempDir {
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "rematch_fuzz_XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      std::perror("rematch fuzz: mkdtemp");
      std::abort();
    }
    path = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string path;
};

}  // namespace

const std::string& temp_dir() {
  static const TempDir dir;
  return dir.path;
}

std::string write_file(const std::string& name, std::string_view bytes) {
  const std::string path = temp_dir() + "/" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) fail("cannot write the input to " + path);
  return path;
}

std::string make_folder(const std::string& name) {
  const std::string path = temp_dir() + "/" + name;
  std::filesystem::create_directories(path);
  return path;
}

void remove_file(const std::string& name) {
  std::error_code ec;
  std::filesystem::remove(temp_dir() + "/" + name, ec);
}

std::string_view bytes(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

std::vector<std::string_view> split_files(std::string_view input) {
  std::vector<std::string_view> parts;
  while (true) {
    const size_t at = input.find(kFileSeparator);
    parts.push_back(input.substr(0, at));
    if (at == std::string_view::npos) return parts;
    input.remove_prefix(at + kFileSeparator.size());
  }
}

void write_parts(const std::vector<std::string_view>& parts, const std::vector<std::string>& names) {
  for (size_t i = 0; i < names.size(); ++i) {
    if (i < parts.size())
      write_file(names[i], parts[i]);
    else
      remove_file(names[i]);
  }
}

bool reads_or_names(const std::string& must_name, const std::function<void()>& read) {
  try {
    read();
    return true;
  } catch (const Error& e) {
    const std::string what = e.what();
    if (what.find(must_name) == std::string::npos)
      fail("the error does not name '" + must_name + "': " + what);
    return false;
  } catch (const std::exception& e) {
    fail(std::string("an exception other than rematch::Error (") + typeid(e).name() + "): " + e.what());
  } catch (...) {
    fail("an exception that is not a std::exception");
  }
}

void fail(const std::string& what) {
  std::fprintf(stderr, "\n==== rematch fuzz: %s\n", what.c_str());
  std::abort();
}

}  // namespace rematch::fuzz
