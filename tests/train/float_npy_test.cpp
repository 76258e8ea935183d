// Float .npy files as they are found: float64 and float16 come back as float32 (float64 kept when
// asked), Fortran order row-major, each conversion said on one line naming the file; float32 C-order files
// say nothing.
#include "train/data/float_npy.h"

#include <sstream>

#include "tensor/npy.h"
#include "test_util.h"

namespace rematch::data {
namespace {

std::string fixture(const std::string& name) { return std::string(REMATCH_FIXTURES) + "/npy/" + name; }

TEST(FloatNpy, ConvertsAndSaysSoOnce) {
  std::ostringstream notes;
  const Tensor f8 = load_float_npy(fixture("v1_f8.npy"), "image features", notes, false);
  EXPECT_EQ(f8.dtype(), DType::Float32);
  EXPECT_EQ(f8.to_vector<float>()[0], 1.0f / 3);
  EXPECT_EQ(f8.to_vector<float>()[1], -2.5f);
  EXPECT_EQ(notes.str(), "rematch: note: image features '" + fixture("v1_f8.npy") +
                             "': float64 converted to float32 (the models compute in float32) on load\n");
  notes.str("");
  EXPECT_EQ(load_float_npy(fixture("v1_f8.npy"), "--sims", notes, true).dtype(), DType::Float64);
  EXPECT_EQ(notes.str(), "");
  const Tensor half = load_float_npy(fixture("fortran_f2_3d.npy"), "--sims", notes, true);
  EXPECT_TRUE(half.is_contiguous());
  EXPECT_EQ(half.dtype(), DType::Float32);
  EXPECT_EQ(half.to_vector<float>()[5], (5.0f - 7) / 4);
  EXPECT_EQ(notes.str(), "rematch: note: --sims '" + fixture("fortran_f2_3d.npy") +
                             "': float16 widened to float32, Fortran (column-major) order made row-major on load\n");
  notes.str("");
  EXPECT_EQ(load_float_npy(fixture("v1_f4.npy"), "--sims", notes, false).dtype(), DType::Float32);
  EXPECT_EQ(notes.str(), "");
}

}  // namespace
}  // namespace rematch::data
