#include "train/eval/retrieval_metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace rematch::eval {
namespace {

// Below this many scores a thread team costs more than it saves (validation subsets are often tiny).
constexpr int64_t kParallelMinScores = int64_t{1} << 16;

void check_sims(const Tensor& sims, int64_t captions_per_image, const char* op) {
  REMATCH_CHECK(sims.defined(), op, ": similarity matrix is undefined");
  REMATCH_CHECK(sims.dim() == 2, op, ": similarity matrix must be 2-D [N_img, N_cap], got ", sims.describe());
  REMATCH_CHECK(sims.dtype() == DType::Float32 || sims.dtype() == DType::Float64, op,
                ": similarity matrix must be float32 or float64, got ", sims.describe());
  REMATCH_CHECK(captions_per_image >= 1, op, ": captions_per_image must be positive, got ", captions_per_image);
  // Divided, not multiplied: N_img * captions_per_image can wrap around to the column count.
  REMATCH_CHECK(sims.size(0) >= 1 && sims.size(1) % captions_per_image == 0 &&
                    sims.size(1) / captions_per_image == sims.size(0),
                op,
                ": similarity matrix ", sims.describe(), " does not have N_img rows and N_img * ",
                captions_per_image, " caption columns");
}

// The host, contiguous matrix with its shape checked against captions_per_image.
Tensor checked_host_sims(const Tensor& sims, int64_t captions_per_image, const char* op) {
  check_sims(sims, captions_per_image, op);
  return kernels::contiguous(kernels::to_device(sims, Device::cpu()));
}

template <typename T> void check_finite(const T* s, int64_t n, const char* op) {
  int64_t bad = 0;
#pragma omp parallel for reduction(+ : bad) if (n >= kParallelMinScores)
  for (int64_t k = 0; k < n; ++k) bad += std::isfinite(s[k]) ? 0 : 1;
  REMATCH_CHECK(bad == 0, op, ": the similarity matrix holds ", bad, " NaN or infinite scores");
}

// Position of item `j` with score `v` in a row sorted by decreasing score, ties higher index first.
template <typename T> int64_t position_in_row(const T* row, int64_t n, int64_t j, T v) {
  int64_t pos = 0;
  for (int64_t k = 0; k < n; ++k) pos += (row[k] > v) || (row[k] == v && k > j);
  return pos;
}

template <typename T> std::vector<int64_t> i2t_impl(const T* s, int64_t n_img, int64_t c) {
  const int64_t n_cap = n_img * c;
  std::vector<int64_t> ranks(n_img);
#pragma omp parallel for schedule(dynamic, 16) if (n_img * n_cap >= kParallelMinScores)
  for (int64_t i = 0; i < n_img; ++i) {
    const T* row = s + i * n_cap;
    // The best-placed own caption is the highest-scoring one, the higher index among equals (tie rule).
    int64_t best = c * i;
    for (int64_t j = c * i + 1; j < c * (i + 1); ++j)
      if (row[j] >= row[best]) best = j;
    ranks[i] = position_in_row(row, n_cap, best, row[best]);
  }
  return ranks;
}

// Column-wise ranks computed by streaming the rows, so the matrix is never transposed (COCO 5K: 0.5 GB).
template <typename T> std::vector<int64_t> t2i_impl(const T* s, int64_t n_img, int64_t c) {
  const int64_t n_cap = n_img * c;
  constexpr int64_t kChunk = 1024;
  std::vector<int64_t> ranks(n_cap, 0);
#pragma omp parallel for schedule(dynamic, 1) if (n_img * n_cap >= kParallelMinScores)
  for (int64_t j0 = 0; j0 < n_cap; j0 += kChunk) {
    const int64_t j1 = std::min(n_cap, j0 + kChunk);
    std::vector<T> target(j1 - j0);
    std::vector<int64_t> owner(j1 - j0);
    for (int64_t j = j0; j < j1; ++j) {
      owner[j - j0] = j / c;
      target[j - j0] = s[(j / c) * n_cap + j];
    }
    for (int64_t i = 0; i < n_img; ++i) {
      const T* row = s + i * n_cap;
      for (int64_t j = j0; j < j1; ++j) {
        const T v = row[j], t = target[j - j0];
        ranks[j] += (v > t) || (v == t && i > owner[j - j0]);
      }
    }
  }
  return ranks;
}

template <typename F> std::vector<int64_t> dispatch(const Tensor& h, int64_t c, const char* op, F&& f) {
  if (h.dtype() == DType::Float32) {
    check_finite(h.data<float>(), h.numel(), op);
    return f(h.data<float>(), h.size(0), c);
  }
  check_finite(h.data<double>(), h.numel(), op);
  return f(h.data<double>(), h.size(0), c);
}

}  // namespace

double RetrievalMetrics::rsum() const { return i2t_r1 + i2t_r5 + i2t_r10 + t2i_r1 + t2i_r5 + t2i_r10; }

std::vector<int64_t> i2t_ranks(const Tensor& sims, int64_t captions_per_image) {
  const Tensor h = checked_host_sims(sims, captions_per_image, "i2t_ranks");
  return dispatch(h, captions_per_image, "i2t_ranks",
                  [](const auto* s, int64_t n, int64_t c) { return i2t_impl(s, n, c); });
}

std::vector<int64_t> t2i_ranks(const Tensor& sims, int64_t captions_per_image) {
  const Tensor h = checked_host_sims(sims, captions_per_image, "t2i_ranks");
  return dispatch(h, captions_per_image, "t2i_ranks",
                  [](const auto* s, int64_t n, int64_t c) { return t2i_impl(s, n, c); });
}

RankSummary summarize_ranks(const std::vector<int64_t>& ranks) {
  REMATCH_CHECK(!ranks.empty(), "summarize_ranks: no ranks");
  const double n = static_cast<double>(ranks.size());
  RankSummary r;
  double sum = 0;
  for (int64_t x : ranks) {
    r.r1 += x < 1;
    r.r5 += x < 5;
    r.r10 += x < 10;
    sum += static_cast<double>(x);
  }
  r.r1 *= 100.0 / n;
  r.r5 *= 100.0 / n;
  r.r10 *= 100.0 / n;
  std::vector<int64_t> sorted = ranks;
  std::sort(sorted.begin(), sorted.end());
  const size_t m = sorted.size() / 2;
  const double median = sorted.size() % 2 ? static_cast<double>(sorted[m])
                                          : 0.5 * static_cast<double>(sorted[m - 1] + sorted[m]);
  r.medr = std::floor(median) + 1;
  r.meanr = sum / n + 1;
  return r;
}

RetrievalMetrics retrieval_metrics(const Tensor& sims, int64_t captions_per_image) {
  const RankSummary a = summarize_ranks(i2t_ranks(sims, captions_per_image));
  const RankSummary b = summarize_ranks(t2i_ranks(sims, captions_per_image));
  return {a.r1, a.r5, a.r10, a.medr, a.meanr, b.r1, b.r5, b.r10, b.medr, b.meanr};
}

std::vector<RetrievalMetrics> per_fold_metrics(const Tensor& sims, int64_t captions_per_image, int64_t folds) {
  check_sims(sims, captions_per_image, "per_fold_metrics");
  const int64_t n_img = sims.size(0);
  REMATCH_CHECK(folds >= 1 && n_img % folds == 0, "per_fold_metrics: ", n_img,
                " images do not split into ", folds, " equal folds");
  const int64_t n = n_img / folds;
  std::vector<RetrievalMetrics> out;
  for (int64_t f = 0; f < folds; ++f) {
    const Tensor block = kernels::narrow(kernels::narrow(sims, 0, f * n, n), 1, f * n * captions_per_image,
                                         n * captions_per_image);
    out.push_back(retrieval_metrics(block, captions_per_image));
  }
  return out;
}

RetrievalMetrics mean_metrics(const std::vector<RetrievalMetrics>& folds) {
  REMATCH_CHECK(!folds.empty(), "mean_metrics: no folds");
  RetrievalMetrics m;
  for (const auto& f : folds) {
    m.i2t_r1 += f.i2t_r1, m.i2t_r5 += f.i2t_r5, m.i2t_r10 += f.i2t_r10;
    m.i2t_medr += f.i2t_medr, m.i2t_meanr += f.i2t_meanr;
    m.t2i_r1 += f.t2i_r1, m.t2i_r5 += f.t2i_r5, m.t2i_r10 += f.t2i_r10;
    m.t2i_medr += f.t2i_medr, m.t2i_meanr += f.t2i_meanr;
  }
  const double n = static_cast<double>(folds.size());
  for (double* v : {&m.i2t_r1, &m.i2t_r5, &m.i2t_r10, &m.i2t_medr, &m.i2t_meanr, &m.t2i_r1, &m.t2i_r5, &m.t2i_r10,
                    &m.t2i_medr, &m.t2i_meanr})
    *v /= n;
  return m;
}

std::string format_metrics_table(const RetrievalMetrics& m) {
  char buf[512];
  std::snprintf(buf, sizeof(buf),
                "direction          R@1     R@5    R@10    medr    meanr\n"
                "i2t (image->text) %6.2f  %6.2f  %6.2f  %6.1f  %7.2f\n"
                "t2i (text->image) %6.2f  %6.2f  %6.2f  %6.1f  %7.2f\n"
                "rSum %.2f\n",
                m.i2t_r1, m.i2t_r5, m.i2t_r10, m.i2t_medr, m.i2t_meanr, m.t2i_r1, m.t2i_r5, m.t2i_r10, m.t2i_medr,
                m.t2i_meanr, m.rsum());
  return buf;
}

std::string metrics_json(const RetrievalMetrics& m) {
  nlohmann::ordered_json j;
  j["i2t_r1"] = m.i2t_r1;
  j["i2t_r5"] = m.i2t_r5;
  j["i2t_r10"] = m.i2t_r10;
  j["t2i_r1"] = m.t2i_r1;
  j["t2i_r5"] = m.t2i_r5;
  j["t2i_r10"] = m.t2i_r10;
  j["rsum"] = m.rsum();
  j["i2t_medr"] = m.i2t_medr;
  j["i2t_meanr"] = m.i2t_meanr;
  j["t2i_medr"] = m.t2i_medr;
  j["t2i_meanr"] = m.t2i_meanr;
  return j.dump();
}

}  // namespace rematch::eval
