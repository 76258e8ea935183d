// The labelled data of UOT-RCL in MRL's HDF5 layout (train/data/labeled_dataset.cpp): load_labeled_h5 on any
// bytes (HDF5 opens files by name, so the input is a file like every other), with and without a valid split
// taken from the test rows.
#include "fuzz/fuzz_util.h"
#include "train/data/labeled_dataset.h"

using namespace rematch;

// libhdf5 itself mallocs what a damaged header field says (2 GB or 2^56 bytes in its metadata cache) and, given
// NULL as a machine without that much memory gives, reports an error. So here malloc returns NULL above 2 GB
// instead of stopping the run (ASan, or libFuzzer's malloc limit); operator new, ours, still stops it.
extern "C" const char* __asan_default_options() {
  return "allocator_may_return_null=1:max_allocation_size_mb=2048";
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fuzz::write_file("input.h5", fuzz::bytes(data, size));
  for (int64_t valid_len : {0, 1}) {
    data::LabeledDataset d;
    if (!fuzz::reads_or_names(path, [&] { d = data::load_labeled_h5(path, valid_len); })) continue;
    if (d.num_classes < 1 || d.train.size() < 1) fuzz::fail("a data set without classes or training pairs loaded");
  }
  return 0;
}
