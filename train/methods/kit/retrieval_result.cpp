#include "train/methods/kit/retrieval_result.h"

namespace rematch::train {

EvalResult eval_result(const eval::RetrievalMetrics& m, const std::string& label) {
  EvalResult r;
  r.score = m.rsum();
  r.metrics = {{"i2t_r1", m.i2t_r1},   {"i2t_r5", m.i2t_r5},   {"i2t_r10", m.i2t_r10},
               {"t2i_r1", m.t2i_r1},   {"t2i_r5", m.t2i_r5},   {"t2i_r10", m.t2i_r10},
               {"i2t_medr", m.i2t_medr}, {"t2i_medr", m.t2i_medr}, {"rsum", m.rsum()}};
  r.table = label + "\n" + eval::format_metrics_table(m);
  return r;
}

EvalResult test_result(const Tensor& sims, int64_t captions_per_image, const CommonOptions& config) {
  const eval::RetrievalMetrics whole = eval::retrieval_metrics(sims, captions_per_image);
  const std::string split = config.test_split_name();
  if (!config.coco_folds) return eval_result(whole, split);
  EvalResult r = eval_result(eval::mean_metrics(eval::per_fold_metrics(sims, captions_per_image, 5)),
                             split + " 5-fold 1K (mean over folds)");
  const EvalResult full = eval_result(whole, split + " full");
  for (const auto& [k, v] : full.metrics) r.metrics["full_" + k] = v;
  r.table += "\n" + full.table;
  return r;
}

EvalResult two_nets_validation_result(const Tensor& sims_a, const Tensor& sims_b, int64_t captions_per_image) {
  EvalResult r = eval_result(eval::retrieval_metrics(mul(add(sims_a, sims_b), 0.5), captions_per_image),
                             "dev (A and B averaged)");
  r.metrics["rsum_A"] = eval_result(eval::retrieval_metrics(sims_a, captions_per_image), "").score;
  r.metrics["rsum_B"] = eval_result(eval::retrieval_metrics(sims_b, captions_per_image), "").score;
  return r;
}

EvalResult two_nets_test_result(const Tensor& sims_a, const Tensor& sims_b, int64_t captions_per_image,
                                const CommonOptions& config, const std::string& method) {
  EvalResult r = test_result(mul(add(sims_a, sims_b), 0.5), captions_per_image, config);
  std::string tables;
  for (const char* k : {"A", "B"}) {
    const EvalResult one = test_result(k[0] == 'A' ? sims_a : sims_b, captions_per_image, config);
    for (const auto& [key, v] : one.metrics) r.metrics[key + "_" + k] = v;
    tables += std::string("net ") + k + " alone\n" + one.table + "\n";
  }
  r.table = tables + "A and B averaged (" + method + "'s reported numbers)\n" + r.table;
  return r;
}

}  // namespace rematch::train
