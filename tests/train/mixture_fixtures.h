// The mixture-model fixtures (tests/reference/mixture_reference.py) of the Beta and Gaussian mixture tests:
// tests/fixtures/mixture/<case>/<name>.npy.
#pragma once

#include <string>
#include <vector>

#include "test_util.h"

namespace rematch::mixture::fixtures {

inline Tensor fixture(const std::string& case_name, const std::string& name) {
  return load_npy(std::string(REMATCH_FIXTURES) + "/mixture/" + case_name + "/" + name + ".npy");
}
inline std::vector<double> values(const std::string& case_name, const std::string& name) {
  return fixture(case_name, name).to_vector<double>();
}

}  // namespace rematch::mixture::fixtures
