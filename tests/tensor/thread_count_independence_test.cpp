// Results whose bits do not depend on the number of OpenMP threads: a large matrix product, split into blocks
// fixed by its shape (a BLAS kernel rounds an element by where it falls in its call, so blocks shaped by the
// thread count gave other bits at another count), and a long sum, whose block totals are added in order.
#include <omp.h>

#include <cstring>

#include "tensor/tensor.h"
#include "test_util.h"

namespace rematch {
namespace {

// `f` at 1, 2, 3 and 4 threads, as bytes.
std::vector<std::string> at_thread_counts(const std::function<Tensor()>& f) {
  const int before = omp_get_max_threads();
  std::vector<std::string> out;
  for (int t : {1, 2, 3, 4}) {
    omp_set_num_threads(t);
    const Tensor r = kernels::contiguous(f());
    out.emplace_back(static_cast<const char*>(r.raw_data()), static_cast<size_t>(r.numel()) * dtype_size(r.dtype()));
  }
  omp_set_num_threads(before);
  return out;
}

void expect_all_equal(const std::vector<std::string>& bytes) {
  for (size_t i = 1; i < bytes.size(); ++i) EXPECT_TRUE(bytes[i] == bytes[0]) << i + 1 << " threads differ from 1";
}

TEST(ThreadCountIndependence, ALargeProductHasTheSameBitsAtAnyThreadCount) {
  const Tensor a = test::random_tensor({3600, 256}, DType::Float32, 1), b = test::random_tensor({256, 256}, DType::Float32, 2);
  expect_all_equal(at_thread_counts([&] { return kernels::matmul(a, b); }));  // split by rows
  const Tensor wide = test::random_tensor({256, 1000}, DType::Float32, 3);
  const Tensor few = test::random_tensor({40, 256}, DType::Float32, 4);
  expect_all_equal(at_thread_counts([&] { return kernels::matmul(few, wide); }));  // split by columns
  const Tensor batch = test::random_tensor({3, 700, 256}, DType::Float64, 5);
  const Tensor b64 = test::random_tensor({256, 256}, DType::Float64, 8);
  expect_all_equal(at_thread_counts([&] { return kernels::matmul(batch, kernels::transpose(b64, 0, 1)); }));
}

TEST(ThreadCountIndependence, ALongSumHasTheSameBitsAtAnyThreadCount) {
  const Tensor x = test::random_tensor({3000000}, DType::Float64, 6, -1e6, 1e6);
  expect_all_equal(at_thread_counts([&] { return kernels::reduce(kernels::ReduceOp::Sum, x, {0}, false); }));
  expect_all_equal(at_thread_counts([&] { return kernels::reduce(kernels::ReduceOp::Mean, x, {0}, false); }));
  const Tensor f = test::random_tensor({3000000}, DType::Float32, 7);
  expect_all_equal(at_thread_counts([&] { return kernels::reduce(kernels::ReduceOp::Sum, f, {0}, false); }));
}

}  // namespace
}  // namespace rematch
