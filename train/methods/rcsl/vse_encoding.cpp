#include "train/methods/rcsl/vse_encoding.h"

#include <algorithm>

#include "autograd/autograd.h"
#include "train/eval/sgraf_scoring.h"

namespace rematch::train::rcsl {
namespace {

Device model_device(const models::VseModel& model) { return model.parameters().front().device(); }

// Eval mode for the scope; the previous mode afterwards.
class EvalModeGuard {
 public:
  explicit EvalModeGuard(models::VseModel& model) : model_(model), was_training_(model.is_training()) { model_.eval(); }
  ~EvalModeGuard() { model_.train(was_training_); }
  EvalModeGuard(const EvalModeGuard&) = delete;
  EvalModeGuard& operator=(const EvalModeGuard&) = delete;

 private:
  models::VseModel& model_;
  bool was_training_;
};

void check_block(const char* who, int64_t block) {
  REMATCH_CHECK(block >= 1, who, ": block size must be >= 1, got ", block);
}

}  // namespace

Tensor encode_image_rows(models::VseModel& model, const data::PrecompDataset& ds, const std::vector<int64_t>& rows,
                         int64_t block) {
  check_block("encode_image_rows", block);
  REMATCH_CHECK(!rows.empty(), "encode_image_rows: no image rows of '", ds.images_path(), "'");
  EvalModeGuard eval_mode(model);
  NoGradGuard no_grad;
  const Device device = model_device(model);
  const int64_t n = static_cast<int64_t>(rows.size());
  TensorList parts;
  for (int64_t begin = 0; begin < n; begin += block) {
    const int64_t end = std::min(n, begin + block);
    const std::vector<int64_t> chunk(rows.begin() + begin, rows.begin() + end);
    const Tensor regions = to(ds.images(chunk), device);
    const Tensor lengths = full({end - begin}, static_cast<double>(ds.num_regions()), DType::Int64);
    parts.push_back(model.encode_images(regions, lengths));
  }
  return parts.size() == 1 ? parts.front() : cat(parts, 0);
}

Tensor encode_all_captions(models::VseModel& model, const data::PrecompDataset& ds, int64_t block) {
  check_block("encode_all_captions", block);
  EvalModeGuard eval_mode(model);
  NoGradGuard no_grad;
  const Device device = model_device(model);
  const int64_t n = ds.num_captions();
  TensorList parts;
  for (int64_t begin = 0; begin < n; begin += block) {
    const auto [ids, lengths] = eval::caption_block(ds, begin, std::min(n, begin + block));
    parts.push_back(model.encode_captions(to(ids, device), lengths));
  }
  return parts.size() == 1 ? parts.front() : cat(parts, 0);
}

Tensor split_similarities(models::VseModel& model, const data::PrecompDataset& ds, int64_t block) {
  const int64_t per_image = ds.captions_per_image();
  const int64_t n_img = ds.num_captions() / per_image;
  std::vector<int64_t> rows;
  for (int64_t i = 0; i < n_img; ++i) rows.push_back(ds.image_index(i * per_image));
  const Tensor images = encode_image_rows(model, ds, rows, block);
  const Tensor captions = encode_all_captions(model, ds, block);
  NoGradGuard no_grad;
  return to(to(models::VseModel::similarity(images, captions), DType::Float32), Device::cpu());
}

}  // namespace rematch::train::rcsl
