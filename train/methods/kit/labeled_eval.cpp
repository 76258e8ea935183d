#include "train/methods/kit/labeled_eval.h"

#include <iomanip>
#include <sstream>

#include "autograd/autograd.h"
#include "train/eval/map_metric.h"

namespace rematch::train {

EvalResult evaluate_labeled_split(const data::LabeledSplit& split, int64_t block,
                                  const std::function<Tensor(const Tensor&)>& encode_images,
                                  const std::function<Tensor(const Tensor&)>& encode_texts,
                                  const std::string& method, const std::string& split_name) {
  REMATCH_CHECK(block > 0, method, ": --eval_batch must be positive, got ", block);
  NoGradGuard no_grad;
  const int64_t n = split.size();
  TensorList zv, zt;
  for (int64_t r0 = 0; r0 < n; r0 += block) {
    const int64_t b = std::min(block, n - r0);
    zv.push_back(kernels::to_device(encode_images(kernels::narrow(split.images, 0, r0, b)), Device::cpu()));
    zt.push_back(kernels::to_device(encode_texts(kernels::narrow(split.texts, 0, r0, b)), Device::cpu()));
  }
  // The mAP runs in float64 on the host (MRL: scipy cdist), next to the host labels.
  const eval::CrossModalMap m = eval::cross_modal_map(kernels::cat(zv, 0), from_vector(split.image_labels),
                                                      kernels::cat(zt, 0), from_vector(split.text_labels));
  EvalResult r;
  r.score = m.average();
  r.metrics = {{"map_i2t", m.img2txt}, {"map_t2i", m.txt2img}, {"map_avg", m.average()}};
  std::ostringstream table;
  table << std::fixed << std::setprecision(4) << "| " << split_name << " | Img→Txt mAP | Txt→Img mAP | average |\n"
        << "|---|---|---|---|\n"
        << "| " << method << " | " << m.img2txt << " | " << m.txt2img << " | " << m.average() << " |\n";
  r.table = table.str();
  return r;
}

}  // namespace rematch::train
