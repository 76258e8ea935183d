// Loads the PyTorch golden fixtures of tests/reference/nn_layers_reference.py (float64 unless stated).
#pragma once

#include <string>

#include "test_util.h"

namespace rematch::test {

inline Tensor nn_fixture(const std::string& case_name, const std::string& name) {
  return load_npy(std::string(REMATCH_FIXTURES) + "/nn_layers/" + case_name + "/" + name + ".npy");
}

// The fixture converted to `dtype` (float64 fixtures feed the float32 path this way).
inline Tensor nn_fixture(const std::string& case_name, const std::string& name, DType dtype) {
  return kernels::cast(nn_fixture(case_name, name), dtype);
}

}  // namespace rematch::test
