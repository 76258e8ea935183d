#include "train/data/noise.h"

#include <filesystem>
#include <sstream>

#include "tensor/tensor.h"

namespace rematch::data {

namespace {

void check_sizes(const char* what, int64_t num_images, int64_t im_div) {
  REMATCH_CHECK(num_images >= 0 && (im_div == 1 || im_div == 5), what,
                ": need num_images >= 0 and im_div 1 or 5, got ", num_images, " and ", im_div);
}

void check_ratio(const char* what, double ratio) {
  REMATCH_CHECK(ratio >= 0 && ratio <= 1, what, ": noise ratio must be in [0, 1], got ", ratio);
}

std::vector<int64_t> permutation(int64_t n, Generator& gen) {
  return randperm(n, Device::cpu(), &gen).to_vector<int64_t>();
}

// int(ratio * n) in Python: the double product truncated.
int64_t noisy_count(double ratio, int64_t n) { return static_cast<int64_t>(ratio * static_cast<double>(n)); }

void fill_clean_flags(Correspondence& c) {
  c.clean.resize(c.caption_to_row.size());
  for (size_t j = 0; j < c.caption_to_row.size(); ++j)
    c.clean[j] = c.caption_to_row[j] == static_cast<int64_t>(j) / c.im_div;
}

std::string describe(const char* protocol, double ratio, uint64_t seed) {
  std::ostringstream os;
  os << protocol << " ratio=" << ratio << " seed=" << seed;
  return os.str();
}

}  // namespace

int64_t Correspondence::num_noisy() const {
  int64_t n = 0;
  for (uint8_t c : clean) n += c ? 0 : 1;
  return n;
}

Correspondence clean_correspondence(int64_t num_images, int64_t im_div) {
  check_sizes("clean_correspondence", num_images, im_div);
  Correspondence c;
  c.num_images = num_images;
  c.im_div = im_div;
  c.source = "clean";
  c.caption_to_row.resize(static_cast<size_t>(num_images * im_div));
  for (size_t j = 0; j < c.caption_to_row.size(); ++j) c.caption_to_row[j] = static_cast<int64_t>(j) / im_div;
  fill_clean_flags(c);
  return c;
}

Correspondence image_level_noise(int64_t num_images, int64_t im_div, double ratio, uint64_t seed) {
  check_sizes("image_level_noise", num_images, im_div);
  check_ratio("image_level_noise", ratio);
  Generator gen(seed);
  const std::vector<int64_t> order = permutation(num_images, gen);
  const int64_t n = noisy_count(ratio, num_images);
  const std::vector<int64_t> shuffle = permutation(n, gen);
  std::vector<int64_t> perm(static_cast<size_t>(num_images));
  for (int64_t i = 0; i < num_images; ++i) perm[i] = i;
  for (int64_t k = 0; k < n; ++k) perm[order[k]] = order[shuffle[k]];
  Correspondence c;
  c.num_images = num_images;
  c.im_div = im_div;
  c.source = describe("image-level", ratio, seed);
  c.caption_to_row.resize(static_cast<size_t>(num_images * im_div));
  for (size_t j = 0; j < c.caption_to_row.size(); ++j) c.caption_to_row[j] = perm[j / static_cast<size_t>(im_div)];
  fill_clean_flags(c);
  return c;
}

Correspondence caption_level_noise(int64_t num_images, int64_t im_div, double ratio, uint64_t seed) {
  check_sizes("caption_level_noise", num_images, im_div);
  check_ratio("caption_level_noise", ratio);
  Correspondence c = clean_correspondence(num_images, im_div);
  Generator gen(seed);
  const int64_t n_cap = c.num_captions();
  const std::vector<int64_t> order = permutation(n_cap, gen);
  const int64_t n = noisy_count(ratio, n_cap);
  const std::vector<int64_t> shuffle = permutation(n, gen);
  std::vector<int64_t> rows(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) rows[k] = c.caption_to_row[order[k]];
  for (int64_t k = 0; k < n; ++k) c.caption_to_row[order[k]] = rows[shuffle[k]];
  c.source = describe("caption-level", ratio, seed);
  fill_clean_flags(c);
  return c;
}

Correspondence load_noise_file(const std::string& path, int64_t num_images, int64_t im_div) {
  check_sizes("load_noise_file", num_images, im_div);
  REMATCH_CHECK(std::filesystem::exists(path), "noise file '", path, "' does not exist");
  const Tensor t = load_npy(path, -1);
  REMATCH_CHECK(t.dtype() == DType::Int64 || t.dtype() == DType::Int32, "noise file '", path, "' holds ",
                t.describe(), "; expected int64 indices");
  const int64_t n_cap = num_images * im_div;
  REMATCH_CHECK(t.dim() == 1 && (t.size(0) == num_images || t.size(0) == n_cap), "noise file '", path,
                "' has shape ", t.shape_str(), "; expected ", num_images, " entries (one image row per image) or ",
                n_cap, " entries (one image row per caption)");
  const std::vector<int64_t> values = t.to_vector<int64_t>();
  for (size_t i = 0; i < values.size(); ++i)
    REMATCH_CHECK(values[i] >= 0 && values[i] < num_images, "noise file '", path, "': entry ", i, " is ",
                  values[i], ", outside the image rows [0, ", num_images, ")");
  Correspondence c;
  c.num_images = num_images;
  c.im_div = im_div;
  c.source = "file " + path;
  // With im_div = 1 both readings coincide, so checking the image length first is safe.
  const bool per_image = t.size(0) == num_images;
  c.caption_to_row.resize(static_cast<size_t>(n_cap));
  for (size_t j = 0; j < c.caption_to_row.size(); ++j)
    c.caption_to_row[j] = values[per_image ? j / static_cast<size_t>(im_div) : j];
  fill_clean_flags(c);
  return c;
}

Correspondence make_correspondence(const NoiseOptions& options, int64_t num_images, int64_t im_div) {
  if (!options.noise_file.empty()) return load_noise_file(options.noise_file, num_images, im_div);
  if (options.protocol == "none" || options.ratio == 0) {
    check_ratio("make_correspondence", options.ratio);
    return clean_correspondence(num_images, im_div);
  }
  if (options.protocol == "image") return image_level_noise(num_images, im_div, options.ratio, options.seed);
  if (options.protocol == "caption") return caption_level_noise(num_images, im_div, options.ratio, options.seed);
  REMATCH_FAIL("noise protocol must be none, image or caption, got '", options.protocol, "'");
}

std::string save_noise(const Correspondence& c, const std::string& run_dir) {
  REMATCH_CHECK(std::filesystem::is_directory(run_dir), "save_noise: run folder '", run_dir, "' does not exist");
  const std::string path = run_dir + "/noise_index.npy";
  save_npy(path, from_vector(c.caption_to_row));
  return path;
}

SplitQuality split_quality(const std::vector<uint8_t>& predicted_clean, const std::vector<uint8_t>& truly_clean) {
  REMATCH_CHECK(predicted_clean.size() == truly_clean.size(), "split_quality: ", predicted_clean.size(),
                " predictions for ", truly_clean.size(), " pairs");
  SplitQuality q;
  for (size_t i = 0; i < truly_clean.size(); ++i) {
    if (predicted_clean[i])
      ++(truly_clean[i] ? q.clean_kept : q.noisy_kept);
    else
      ++(truly_clean[i] ? q.clean_dropped : q.noisy_dropped);
  }
  auto ratio = [](int64_t a, int64_t b) { return b == 0 ? 0.0 : static_cast<double>(a) / static_cast<double>(b); };
  q.clean_precision = ratio(q.clean_kept, q.clean_kept + q.noisy_kept);
  q.clean_recall = ratio(q.clean_kept, q.clean_kept + q.clean_dropped);
  q.noisy_precision = ratio(q.noisy_dropped, q.noisy_dropped + q.clean_dropped);
  q.noisy_recall = ratio(q.noisy_dropped, q.noisy_dropped + q.noisy_kept);
  q.accuracy = ratio(q.clean_kept + q.noisy_dropped, static_cast<int64_t>(truly_clean.size()));
  return q;
}

}  // namespace rematch::data
