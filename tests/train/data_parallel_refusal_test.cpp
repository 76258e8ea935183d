// Under mpirun a method trains only if its spec opts in (MethodSpec::data_parallel, docs/distributed.md §4.3):
// one that has not, or a name outside the registry, is refused by name before anything is trained, and one
// process is never refused.
#include <gtest/gtest.h>

#include "test_util.h"
#include "train/methods/method_spec.h"
#include "train/methods/trainer.h"

namespace rematch::train {
namespace {

TEST(DataParallelRefusal, AMethodThatHasNotOptedInIsRefusedByNameUnderSeveralRanks) {
  MethodSpec not_yet;
  not_yet.name = "newmethod";
  ASSERT_FALSE(not_yet.data_parallel);  // the default: a new method starts refused
  EXPECT_THROWS_WITH(check_data_parallel("newmethod", &not_yet, 2), "--method newmethod does not train on several",
                     "mpirun started 2", "run it in one process");
  EXPECT_THROWS_WITH(check_data_parallel("unknown", nullptr, 3), "--method unknown", "mpirun started 3");
  check_data_parallel("newmethod", &not_yet, 1);  // one process: always allowed
  MethodSpec opted_in = not_yet;
  opted_in.data_parallel = true;
  check_data_parallel("newmethod", &opted_in, 4);
  // The registry's methods all opt in (docs/distributed.md §4): mscn and cream were the last.
  for (const std::string name : {"mscn", "cream"}) check_data_parallel(name, find_method_spec(name), 2);
}

}  // namespace
}  // namespace rematch::train
