#include "train/synth/labeled_world.h"

#include <cmath>
#include <filesystem>

namespace rematch::synth {
namespace {

constexpr uint64_t kSplitCounterStride = uint64_t{1} << 40;  // as in pairs_world.cpp

// The largest class_spread and feature_noise: features stay below about 1e8, far inside float32.
constexpr double kMaxScale = 1e6;

// The fixed parts of the world: class means and the two random maps. float64 while generating, so the
// features do not depend on summation order; written as float32.
struct Maps {
  Tensor means;       // [K, h]
  Tensor img_w1, img_b1, img_w2;  // [H, h], [H], [img_dim, H]
  Tensor txt_w1, txt_b1, txt_w2;  // [H, h], [H], [txt_dim, H]
};

Tensor scaled_randn(const Shape& shape, double scale, Generator& gen) {
  return kernels::scalar_op(kernels::ScalarOp::Mul, randn(shape, DType::Float64, Device::cpu(), &gen), scale);
}

Maps make_maps(const LabeledWorldConfig& c, Generator& gen) {
  const double h = static_cast<double>(c.latent_dim), H = static_cast<double>(c.hidden_dim);
  Maps m;
  m.means = randn({c.classes, c.latent_dim}, DType::Float64, Device::cpu(), &gen);
  // Weights scaled by 1/sqrt(fan-in) keep the pre-activations O(1), so tanh and relu stay non-linear
  // without saturating.
  m.img_w1 = scaled_randn({c.hidden_dim, c.latent_dim}, 1.0 / std::sqrt(h), gen);
  m.img_b1 = scaled_randn({c.hidden_dim}, 0.5, gen);
  m.img_w2 = scaled_randn({c.img_dim, c.hidden_dim}, std::sqrt(2.0 / H), gen);
  m.txt_w1 = scaled_randn({c.hidden_dim, c.latent_dim}, 1.0 / std::sqrt(h), gen);
  m.txt_b1 = scaled_randn({c.hidden_dim}, 0.5, gen);
  m.txt_w2 = scaled_randn({c.txt_dim, c.hidden_dim}, std::sqrt(2.0 / H), gen);
  return m;
}

// act(z W1ᵀ + b1) W2ᵀ + σ·noise, for z [N, h].
Tensor mapped(const Tensor& z, const Tensor& w1, const Tensor& b1, const Tensor& w2, kernels::UnaryOp act,
              double sigma, Generator& gen) {
  using namespace kernels;
  Tensor hidden = unary(act, binary(BinaryOp::Add, matmul(z, transpose(w1, 0, 1)), b1));
  Tensor out = matmul(hidden, transpose(w2, 0, 1));
  out = binary(BinaryOp::Add, out, scaled_randn(out.sizes(), sigma, gen));
  return cast(out, DType::Float32);
}

LabeledSplit make_split(const LabeledWorldConfig& c, const Maps& m, const std::string& name, int64_t n,
                        int split_index) {
  using namespace kernels;
  Generator gen(c.seed);
  gen.set_state({c.seed, (static_cast<uint64_t>(split_index) + 1) * kSplitCounterStride});
  LabeledSplit s;
  s.name = name;
  // Balanced classes in random order: label of position i is perm[i] mod K.
  s.labels = randperm(n, Device::cpu(), &gen);
  int64_t* y = s.labels.data<int64_t>();
  for (int64_t i = 0; i < n; ++i) y[i] %= c.classes;
  Tensor z = binary(BinaryOp::Add, index_select(m.means, 0, s.labels),
                    scaled_randn({n, c.latent_dim}, c.class_spread, gen));
  s.images = mapped(z, m.img_w1, m.img_b1, m.img_w2, UnaryOp::Tanh, c.feature_noise, gen);
  s.texts = mapped(z, m.txt_w1, m.txt_b1, m.txt_w2, UnaryOp::Relu, c.feature_noise, gen);
  return s;
}

}  // namespace

void validate(const LabeledWorldConfig& c) {
  REMATCH_CHECK(!c.name.empty() && c.name.find('/') == std::string::npos,
                "synth labeled: name must be a plain folder name, got '", c.name, "'");
  REMATCH_CHECK(c.classes >= 2, "synth labeled: classes must be at least 2, got ", c.classes);
  REMATCH_CHECK(c.train_samples >= 1 && c.valid_samples >= 1 && c.test_samples >= 1,
                "synth labeled: every split needs at least one sample (train ", c.train_samples, ", valid ",
                c.valid_samples, ", test ", c.test_samples, ")");
  REMATCH_CHECK(c.img_dim >= 1 && c.txt_dim >= 1 && c.latent_dim >= 1 && c.hidden_dim >= 1,
                "synth labeled: img_dim, txt_dim, latent_dim and hidden_dim must be positive (got ", c.img_dim,
                ", ", c.txt_dim, ", ", c.latent_dim, ", ", c.hidden_dim, ")");
  // Each class is drawn into train (sample i has class i mod K), so its labels span every class: with fewer
  // samples than classes, valid and test held labels beyond train's, which every loader refuses.
  REMATCH_CHECK(c.classes <= c.train_samples, "synth labeled: --classes ", c.classes, " exceeds --samples ",
                c.train_samples, ": the training split would hold only ", c.train_samples,
                " of the classes; give at least as many training samples as classes");
  // Bounded so that the features stay far inside float32 (a spread of 1e308 overflowed to inf and NaN).
  REMATCH_CHECK(std::isfinite(c.class_spread) && c.class_spread >= 0 && c.class_spread <= kMaxScale,
                "synth labeled: --class_spread must lie in [0, ", kMaxScale, "], got ", c.class_spread,
                " (larger values overflow the float32 features)");
  REMATCH_CHECK(std::isfinite(c.feature_noise) && c.feature_noise >= 0 && c.feature_noise <= kMaxScale,
                "synth labeled: --feature_noise must lie in [0, ", kMaxScale, "], got ", c.feature_noise,
                " (larger values overflow the float32 features)");
}

const LabeledSplit& LabeledWorld::split(const std::string& name) const {
  for (const auto& s : splits)
    if (s.name == name) return s;
  REMATCH_FAIL("LabeledWorld: no split '", name, "' (have train, valid, test)");
}

LabeledWorld make_labeled_world(const LabeledWorldConfig& config) {
  validate(config);
  LabeledWorld world;
  world.config = config;
  Generator gen(config.seed);
  const Maps maps = make_maps(config, gen);
  world.splits.push_back(make_split(config, maps, "train", config.train_samples, 0));
  world.splits.push_back(make_split(config, maps, "valid", config.valid_samples, 1));
  world.splits.push_back(make_split(config, maps, "test", config.test_samples, 2));
  return world;
}

std::string labeled_file(const std::string& dir, const std::string& split, const std::string& key) {
  return (std::filesystem::path(dir) / (split + "_" + key + ".npy")).string();
}

std::string write_labeled_world(const LabeledWorld& world, const std::string& out_dir) {
  const std::string dir = (std::filesystem::path(out_dir) / world.config.name).string();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  REMATCH_CHECK(!ec, "cannot create folder ", dir, ": ", ec.message());
  for (const auto& s : world.splits) {
    save_npy(labeled_file(dir, s.name, "imgs"), s.images);
    save_npy(labeled_file(dir, s.name, "texts"), s.texts);
    save_npy(labeled_file(dir, s.name, "labels"), s.labels);
  }
  return dir;
}

}  // namespace rematch::synth
