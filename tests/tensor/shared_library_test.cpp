// tensor/shared_library.h on libraries every Linux machine has: the first place that loads is taken, a library
// that no place holds is an error naming each place and the remedy, and a missing symbol names the library,
// its path and what rematch needs. (cuBLAS and NCCL are opened this way, on machines this suite may not have.)
#include "tensor/shared_library.h"

#include <gtest/gtest.h>

#include <cmath>

#include "test_util.h"

namespace rematch {
namespace {

TEST(SharedLibrary, TheFirstPlaceThatLoadsIsTakenAndItsFunctionsResolve) {
  const SharedLibrary m = open_shared_library("libm", {"/no/such/folder/libm.so.6", "libm.so.6"}, "a test needs it",
                                              "install libc");
  EXPECT_EQ(m.path, "libm.so.6");
  double (*cosine)(double) = nullptr;
  resolve_symbol(m, "cos", "the C library's libm", cosine);
  ASSERT_NE(cosine, nullptr);
  EXPECT_EQ(cosine(0.5), std::cos(0.5));
}

TEST(SharedLibrary, FailuresNameTheLibraryEachPlaceAndTheRemedy) {
  EXPECT_THROWS_WITH(open_shared_library("libfoo", {"/no/such/a/libfoo.so.1", "libfoo_missing.so.1"},
                                         "the foo backend needs it", "install libfoo 1"),
                     "libfoo could not be loaded, and the foo backend needs it", "/no/such/a/libfoo.so.1",
                     "libfoo_missing.so.1", "): install libfoo 1");
  const SharedLibrary m = open_shared_library("libm", {"libm.so.6"}, "a test needs it", "install libc");
  void (*none)() = nullptr;
  EXPECT_THROWS_WITH(resolve_symbol(m, "rematch_no_such_symbol", "libm 6", none),
                     "libm at libm.so.6 has no rematch_no_such_symbol", "rematch needs libm 6");
}

}  // namespace
}  // namespace rematch
