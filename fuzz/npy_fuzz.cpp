// load_npy (tensor/npy.cpp) on any bytes, both ways it reads data: read into memory and memory-mapped. Both must
// agree, and what loads must save and load back unchanged (element for element: a Fortran-order file is a
// column-major view that saves in C order).
#include <cstring>

#include "fuzz/fuzz_util.h"
#include "tensor/kernels.h"
#include "tensor/tensor.h"

using namespace rematch;

namespace {

// Equal dtype, shape and elements in logical (row-major) order: a Fortran-order file loads as a column-major view,
// and save_npy writes it back in C order, so the storage orders may differ while the tensors are the same.
bool same(const Tensor& x, const Tensor& y) {
  if (x.dtype() != y.dtype() || x.sizes() != y.sizes()) return false;
  if (x.numel() == 0) return true;
  const Tensor a = kernels::contiguous(x), b = kernels::contiguous(y);
  return std::memcmp(a.raw_data(), b.raw_data(), static_cast<size_t>(a.numel()) * dtype_size(a.dtype())) == 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fuzz::write_file("input.npy", fuzz::bytes(data, size));
  Tensor read, mapped;
  const bool ok = fuzz::reads_or_names(path, [&] { read = load_npy(path, -1); });
  const bool mapped_ok = fuzz::reads_or_names(path, [&] { mapped = load_npy(path, 0); });
  if (ok != mapped_ok) fuzz::fail("load_npy read and mapped disagree on whether the file is valid");
  if (!ok) return 0;
  if (!same(read, mapped)) fuzz::fail("load_npy read and mapped give different tensors");
  const std::string copy = fuzz::temp_dir() + "/copy.npy";
  save_npy(copy, read);
  if (!same(load_npy(copy, -1), read)) fuzz::fail("save_npy + load_npy does not give the tensor back");
  return 0;
}
