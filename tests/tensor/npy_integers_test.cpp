// Integer .npy files (indices, labels, flags): every integer dtype loads as int64; a float file is refused, naming
// its first entry that is no integer (a NaN would be undefined behaviour as an int64); the range check names
// the entry, as [row, column] in a two-dimensional file.
#include "tensor/npy_integers.h"

#include <cmath>

#include "tensor/npy.h"
#include "tensor/tensor.h"
#include "test_util.h"

namespace rematch {
namespace {

class NpyIntegersTest : public test::TempDirTest {};

TEST_F(NpyIntegersTest, EveryIntegerDtypeLoadsAsInt64) {
  save_npy(path("i4.npy"), from_vector<int32_t>({3, -1, 7}));
  save_npy(path("u1.npy"), from_vector<uint8_t>({0, 255}));
  save_npy(path("i8.npy"), from_vector<int64_t>({1, 2, 3, 4}, {2, 2}));
  EXPECT_EQ(load_integer_npy(path("i4.npy"), "noise record").values, (std::vector<int64_t>{3, -1, 7}));
  EXPECT_EQ(load_integer_npy(path("u1.npy"), "noise record").values, (std::vector<int64_t>{0, 255}));
  const IntegerNpy two = load_integer_npy(path("i8.npy"), "noisy labels");
  EXPECT_EQ(two.shape, (Shape{2, 2}));
  EXPECT_EQ(two.values, (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(two.path, path("i8.npy"));
}

TEST_F(NpyIntegersTest, AFloatFileIsRefusedNamingItsFirstNonInteger) {
  save_npy(path("nan.npy"), from_vector<float>({0, 1, NAN, 2}));
  EXPECT_THROWS_WITH(load_integer_npy(path("nan.npy"), "noise record"),
                     "noise record '" + path("nan.npy") + "' holds float32[4]: expected integers (int64); entry 2 "
                     "is nan; re-save it with an integer dtype (np.int64)");
  save_npy(path("whole.npy"), from_vector<double>({0, 1, 2, 3, INFINITY, 0.5}, {2, 3}));
  EXPECT_THROWS_WITH(load_integer_npy(path("whole.npy"), "noisy labels"), "holds float64[2, 3]",
                     "entry [1, 1] is inf");
  save_npy(path("integral.npy"), from_vector<double>({0, 1}));
  EXPECT_THROWS_WITH(load_integer_npy(path("integral.npy"), "epoch split"), "holds float64[2]: expected integers");
}

TEST_F(NpyIntegersTest, TheRangeCheckNamesTheEntryAndItsValue) {
  save_npy(path("rows.npy"), from_vector<int64_t>({0, 3, 4, -1}));
  const IntegerNpy rows = load_integer_npy(path("rows.npy"), "noise record");
  EXPECT_NO_THROW(check_integer_range(rows, "noise record", -1, 5, "any"));
  EXPECT_THROWS_WITH(check_integer_range(rows, "noise record", 0, 4, "the 4 image rows"),
                     "noise record '" + path("rows.npy") + "': entry 2 is 4, outside [0, 4) (the 4 image rows)");
  save_npy(path("labels.npy"), from_vector<int64_t>({0, 1, 2, -5}, {2, 2}));
  EXPECT_THROWS_WITH(check_integer_range(load_integer_npy(path("labels.npy"), "noisy labels"), "noisy labels", 0, 10,
                                         "class labels"),
                     "entry [1, 1] is -5, outside [0, 10)");
}

}  // namespace
}  // namespace rematch
