#include "tensor/random.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>

#include "tensor/creation.h"
#include "tensor/philox.h"
#include "test_util.h"

namespace rematch {
namespace {

using philox::Block;

void expect_block(const Block& got, uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  EXPECT_EQ(got.w[0], a);
  EXPECT_EQ(got.w[1], b);
  EXPECT_EQ(got.w[2], c);
  EXPECT_EQ(got.w[3], d);
}

// Known-answer vectors of philox4x32_10 from Random123's kat_vectors.
TEST(PhiloxTest, KnownAnswerVectors) {
  expect_block(philox::philox4x32_10(Block{{0, 0, 0, 0}}, 0, 0), 0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu,
               0x9b00dbd8u);
  expect_block(philox::philox4x32_10(Block{{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}}, 0xffffffffu,
                                     0xffffffffu),
               0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu);
  expect_block(philox::philox4x32_10(Block{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}}, 0xa4093822u,
                                     0x299f31d0u),
               0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u);
}

TEST(PhiloxTest, ElementCounterIsOffsetPlusIndexWithCarry) {
  const uint64_t seed = 0x0123456789abcdefull;
  const Block direct = philox::philox4x32_10(Block{{0u, 1u, 0u, 0u}}, 0x89abcdefu, 0x01234567u);
  const Block via_element = philox::element_block(seed, 0xffffffffull, 1);  // counter 2^32: carries into ctr[1]
  for (int k = 0; k < 4; ++k) EXPECT_EQ(via_element.w[k], direct.w[k]);
}

TEST(PhiloxTest, ValueFunctionsStayInRange) {
  EXPECT_EQ(philox::uniform_float(0u), 0.0f);
  EXPECT_LT(philox::uniform_float(0xffffffffu), 1.0f);
  EXPECT_EQ(philox::uniform_double(0u, 0u), 0.0);
  EXPECT_LT(philox::uniform_double(0xffffffffu, 0xffffffffu), 1.0);
  // u1 = 1 gives exactly 0; the smallest u1 gives the largest finite magnitude.
  EXPECT_EQ(philox::normal_float(Block{{0xffffffffu, 0u, 0u, 0u}}), 0.0f);
  EXPECT_TRUE(std::isfinite(philox::normal_float(Block{{0u, 0u, 0u, 0u}})));
  EXPECT_TRUE(std::isfinite(philox::normal_double(Block{{0u, 0u, 0u, 0u}})));
  EXPECT_EQ(philox::randint(Block{{10u, 0u, 0u, 0u}}, -3, 7), 0);
  EXPECT_TRUE(philox::bernoulli(Block{{0xffffffffu, 0xffffffffu, 0u, 0u}}, 1.0));
  EXPECT_FALSE(philox::bernoulli(Block{{0u, 0u, 0u, 0u}}, 0.0));
}

TEST(RandomTest, ValuesAreThePhiloxElementFunctions) {
  Generator g(1234);
  g.set_state({1234, 77});
  const std::vector<float> u = rand({5}, DType::Float32, Device::cpu(), &g).to_vector<float>();
  const std::vector<double> z = randn({5}, DType::Float64, Device::cpu(), &g).to_vector<double>();
  for (uint64_t i = 0; i < 5; ++i) {
    EXPECT_EQ(u[i], philox::uniform_float(philox::element_block(1234, 77, i).w[0]));
    EXPECT_EQ(z[i], philox::normal_double(philox::element_block(1234, 82, i)));
  }
}

TEST(RandomTest, SameSeedGivesSameNumbers) {
  Generator a(42), b(42);
  EXPECT_TRUE(test::all_close(rand({100}, DType::Float32, Device::cpu(), &a),
                              rand({100}, DType::Float32, Device::cpu(), &b), 0, 0));
  EXPECT_TRUE(test::all_close(randn({3, 7}, DType::Float64, Device::cpu(), &a),
                              randn({3, 7}, DType::Float64, Device::cpu(), &b), 0, 0));
  EXPECT_EQ(randint(0, 1000, {50}, DType::Int64, Device::cpu(), &a).to_vector<int64_t>(),
            randint(0, 1000, {50}, DType::Int64, Device::cpu(), &b).to_vector<int64_t>());
}

TEST(RandomTest, DifferentSeedsOrOffsetsGiveDifferentNumbers) {
  Generator a(1), b(2);
  const std::vector<float> first = rand({64}, DType::Float32, Device::cpu(), &a).to_vector<float>();
  EXPECT_NE(first, rand({64}, DType::Float32, Device::cpu(), &b).to_vector<float>());
  EXPECT_NE(first, rand({64}, DType::Float32, Device::cpu(), &a).to_vector<float>());  // next offset
}

TEST(RandomTest, OffsetAdvancesByNumel) {
  Generator g(7);
  EXPECT_EQ(g.offset(), 0u);
  rand({3, 4}, DType::Float32, Device::cpu(), &g);
  EXPECT_EQ(g.offset(), 12u);
  randint(0, 5, {5}, DType::Int32, Device::cpu(), &g);
  randperm(7, Device::cpu(), &g);
  bernoulli({2}, 0.5, Device::cpu(), &g);
  EXPECT_EQ(g.offset(), 26u);
  rand({0, 4}, DType::Float32, Device::cpu(), &g);
  EXPECT_EQ(g.offset(), 26u);
  g.manual_seed(9);
  EXPECT_EQ(g.seed(), 9u);
  EXPECT_EQ(g.offset(), 0u);
}

TEST(RandomTest, SplitCallsContinueOneStream) {
  Generator whole(3), split(3);
  const std::vector<double> all = rand({15}, DType::Float64, Device::cpu(), &whole).to_vector<double>();
  std::vector<double> parts = rand({10}, DType::Float64, Device::cpu(), &split).to_vector<double>();
  const std::vector<double> rest = rand({5}, DType::Float64, Device::cpu(), &split).to_vector<double>();
  parts.insert(parts.end(), rest.begin(), rest.end());
  EXPECT_EQ(all, parts);
}

TEST(RandomTest, StateRoundTripResumesTheStream) {
  Generator g(11);
  rand({10}, DType::Float32, Device::cpu(), &g);
  const GeneratorState saved = g.state();
  const std::vector<float> next = randn({20}, DType::Float32, Device::cpu(), &g).to_vector<float>();
  Generator resumed;
  resumed.set_state(saved);
  EXPECT_EQ(randn({20}, DType::Float32, Device::cpu(), &resumed).to_vector<float>(), next);
}

TEST(RandomTest, DefaultGeneratorFollowsManualSeed) {
  manual_seed(5);
  const std::vector<float> a = rand({8}).to_vector<float>();
  manual_seed(5);
  EXPECT_EQ(rand({8}).to_vector<float>(), a);
  EXPECT_EQ(default_generator().offset(), 8u);
}

void expect_moments(const std::vector<double>& v, double mean, double var, double mean_tol, double var_tol) {
  const double n = static_cast<double>(v.size());
  const double m = std::accumulate(v.begin(), v.end(), 0.0) / n;
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  EXPECT_NEAR(m, mean, mean_tol);
  EXPECT_NEAR(s / (n - 1), var, var_tol);
}

// Tolerances are about six standard errors for 1e5 samples.
TEST(RandomTest, UniformMomentsAndRange) {
  Generator g(2024);
  for (DType dt : {DType::Float32, DType::Float64}) {
    const std::vector<double> v = rand({100000}, dt, Device::cpu(), &g).to_vector<double>();
    EXPECT_GE(*std::min_element(v.begin(), v.end()), 0.0);
    EXPECT_LT(*std::max_element(v.begin(), v.end()), 1.0);
    expect_moments(v, 0.5, 1.0 / 12, 0.0055, 0.0015);
  }
}

TEST(RandomTest, NormalMomentsAndShape) {
  Generator g(99);
  for (DType dt : {DType::Float32, DType::Float64}) {
    const std::vector<double> v = randn({100000}, dt, Device::cpu(), &g).to_vector<double>();
    expect_moments(v, 0.0, 1.0, 0.02, 0.027);
    const double within_one = std::count_if(v.begin(), v.end(), [](double x) { return std::fabs(x) < 1; }) / 1e5;
    EXPECT_NEAR(within_one, 0.682689, 0.009);
    for (double x : v) ASSERT_TRUE(std::isfinite(x));
  }
}

TEST(RandomTest, RandintRangeAndCoverage) {
  Generator g(5);
  for (DType dt : {DType::Int32, DType::Int64}) {
    const Tensor t = randint(-3, 4, {70000}, dt, Device::cpu(), &g);
    EXPECT_EQ(t.dtype(), dt);
    std::vector<int64_t> counts(7, 0);
    for (int64_t x : t.to_vector<int64_t>()) {
      ASSERT_GE(x, -3);
      ASSERT_LT(x, 4);
      ++counts[static_cast<size_t>(x + 3)];
    }
    for (int64_t c : counts) EXPECT_NEAR(c, 10000, 600);  // sd ~ 94
  }
  const Tensor wide = randint(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), {1000},
                              DType::Int64, Device::cpu(), &g);
  const std::vector<int64_t> w = wide.to_vector<int64_t>();
  EXPECT_GT(std::count_if(w.begin(), w.end(), [](int64_t x) { return x < 0; }), 400);
  EXPECT_EQ(randint(7, 8, {10}, DType::Int64, Device::cpu(), &g).to_vector<int64_t>(), std::vector<int64_t>(10, 7));
}

TEST(RandomTest, BernoulliFrequency) {
  Generator g(8);
  const std::vector<bool> v = bernoulli({100000}, 0.3, Device::cpu(), &g).to_vector<bool>();
  EXPECT_NEAR(std::count(v.begin(), v.end(), true) / 1e5, 0.3, 0.009);
  const std::vector<bool> none = bernoulli({1000}, 0.0, Device::cpu(), &g).to_vector<bool>();
  const std::vector<bool> all = bernoulli({1000}, 1.0, Device::cpu(), &g).to_vector<bool>();
  EXPECT_EQ(std::count(none.begin(), none.end(), true), 0);
  EXPECT_EQ(std::count(all.begin(), all.end(), true), 1000);
}

TEST(RandomTest, BernoulliWithProbabilityTensor) {
  Generator g(8);
  std::vector<float> p(20000);
  for (size_t i = 0; i < p.size(); ++i) p[i] = i % 2 ? 0.9f : 0.1f;
  // A transposed (non-contiguous) view: output follows the view's shape in row-major order.
  const Tensor probs = kernels::transpose(from_vector(p, {100, 200}), 0, 1);
  const Tensor draws = bernoulli(probs, &g);
  EXPECT_EQ(draws.dtype(), DType::Bool);
  EXPECT_EQ(draws.sizes(), (Shape{200, 100}));
  EXPECT_EQ(g.offset(), 20000u);
  const std::vector<double> pv = probs.to_vector<double>();
  const std::vector<bool> d = draws.to_vector<bool>();
  double high = 0, low = 0;
  for (size_t i = 0; i < d.size(); ++i) (pv[i] > 0.5 ? high : low) += d[i];
  EXPECT_NEAR(high / 10000, 0.9, 0.02);
  EXPECT_NEAR(low / 10000, 0.1, 0.02);
  Generator h(8);
  EXPECT_EQ(bernoulli(kernels::cast(probs, DType::Float64), &h).to_vector<bool>(), d);
}

TEST(RandomTest, RandpermIsADeterministicPermutation) {
  Generator a(17), b(17), c(18);
  const std::vector<int64_t> p = randperm(1000, Device::cpu(), &a).to_vector<int64_t>();
  std::vector<int64_t> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> iota(1000);
  std::iota(iota.begin(), iota.end(), 0);
  EXPECT_EQ(sorted, iota);
  EXPECT_NE(p, iota);
  EXPECT_EQ(randperm(1000, Device::cpu(), &b).to_vector<int64_t>(), p);
  EXPECT_NE(randperm(1000, Device::cpu(), &c).to_vector<int64_t>(), p);
  // The definition: position k holds the index of the k-th smallest key.
  for (size_t k = 1; k < p.size(); ++k)
    EXPECT_LE(philox::perm_key(philox::element_block(17, 0, static_cast<uint64_t>(p[k - 1]))),
              philox::perm_key(philox::element_block(17, 0, static_cast<uint64_t>(p[k]))));
  EXPECT_EQ(randperm(0, Device::cpu(), &a).numel(), 0);
  EXPECT_EQ(randperm(1, Device::cpu(), &a).to_vector<int64_t>(), std::vector<int64_t>{0});
}

TEST(RandomTest, BadArgumentsAreErrors) {
  Generator g(1);
  EXPECT_THROWS_WITH(randint(5, 5, {3}, DType::Int64, Device::cpu(), &g), "randint", "low (5)", "high (5)");
  EXPECT_THROWS_WITH(randint(5, 2, {3}, DType::Int64, Device::cpu(), &g), "randint", "less than");
  EXPECT_THROWS_WITH(randint(0, int64_t{1} << 40, {3}, DType::Int32, Device::cpu(), &g), "does not fit int32");
  EXPECT_THROWS_WITH(randint(0, 3, {3}, DType::Float32, Device::cpu(), &g), "randint", "int32 or int64");
  EXPECT_THROWS_WITH(bernoulli({3}, -0.1, Device::cpu(), &g), "bernoulli", "-0.1", "[0, 1]");
  EXPECT_THROWS_WITH(bernoulli({3}, 1.5, Device::cpu(), &g), "bernoulli", "1.5");
  EXPECT_THROWS_WITH(bernoulli({3}, std::nan(""), Device::cpu(), &g), "bernoulli", "[0, 1]");
  EXPECT_THROWS_WITH(bernoulli(from_vector<float>({0.5f, 1.25f}), &g), "bernoulli", "1.25", "flat index 1");
  EXPECT_THROWS_WITH(bernoulli(from_vector<int64_t>({0, 1}), &g), "bernoulli");
  EXPECT_THROWS_WITH(randperm(-1, Device::cpu(), &g), "randperm", "-1");
  EXPECT_THROWS_WITH(rand({2}, DType::Int32, Device::cpu(), &g), "rand", "float32 or float64");
  EXPECT_THROWS_WITH(randn({-2}, DType::Float32, Device::cpu(), &g), "negative size");
  EXPECT_EQ(g.offset(), 0u);  // rejected calls claim no counters
}

// The same seed and offsets on cuda:0 must give the CPU's numbers: bit for bit for everything but the
// normals, whose log/cos may differ in the last bit of a double before rounding to float.
TEST(RandomCudaTest, MatchesCpu) {
  SKIP_WITHOUT_CUDA();
  const Device gpu = Device::cuda(0);
  Generator c(31337), d(31337);
  auto both = [&](auto make) { return std::make_pair(make(Device::cpu(), &c), make(gpu, &d)); };
  for (DType dt : {DType::Float32, DType::Float64}) {
    auto [u_cpu, u_gpu] = both([&](Device dev, Generator* g) { return rand({1000, 37}, dt, dev, g); });
    EXPECT_EQ(u_gpu.device(), gpu);
    EXPECT_TRUE(test::all_close(u_gpu, u_cpu, 0, 0));
    auto [z_cpu, z_gpu] = both([&](Device dev, Generator* g) { return randn({4097}, dt, dev, g); });
    EXPECT_TRUE(test::all_close(z_gpu, z_cpu, 1e-12, 1e-6));
  }
  for (DType dt : {DType::Int32, DType::Int64}) {
    auto [i_cpu, i_gpu] = both([&](Device dev, Generator* g) { return randint(-50, 1000, {5000}, dt, dev, g); });
    EXPECT_EQ(i_gpu.to_vector<int64_t>(), i_cpu.to_vector<int64_t>());
  }
  auto [b_cpu, b_gpu] = both([&](Device dev, Generator* g) { return bernoulli({3000}, 0.25, dev, g); });
  EXPECT_EQ(b_gpu.to_vector<bool>(), b_cpu.to_vector<bool>());
  const Tensor p = rand({2000}, DType::Float32);
  const Tensor pb_cpu = bernoulli(p, &c), pb_gpu = bernoulli(kernels::to_device(p, gpu), &d);
  EXPECT_EQ(pb_gpu.to_vector<bool>(), pb_cpu.to_vector<bool>());
  auto [r_cpu, r_gpu] = both([&](Device dev, Generator* g) { return randperm(100000, dev, g); });
  EXPECT_EQ(r_gpu.to_vector<int64_t>(), r_cpu.to_vector<int64_t>());
  EXPECT_EQ(c.offset(), d.offset());
  EXPECT_THROWS_WITH(bernoulli(kernels::to_device(from_vector<float>({0.5f, 2.0f}), gpu), &d), "bernoulli",
                     "outside [0, 1]");
}

}  // namespace
}  // namespace rematch
