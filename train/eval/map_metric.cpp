#include "train/eval/map_metric.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace rematch::eval {
namespace {

constexpr int64_t kQueryBlock = 256;

// Rows scaled to unit length, float64 on the host; `what` names the argument in errors.
Tensor unit_rows(const Tensor& x, const char* what) {
  REMATCH_CHECK(x.defined() && x.dim() == 2, "map_at_k: ", what, " must be 2-D [count, dim], got ",
                x.defined() ? x.describe() : std::string("undefined"));
  REMATCH_CHECK(x.dtype() == DType::Float32 || x.dtype() == DType::Float64, "map_at_k: ", what,
                " must be float32 or float64, got ", x.describe());
  Tensor h = kernels::contiguous(kernels::cast(kernels::to_device(x, Device::cpu()), DType::Float64));
  Tensor out = empty(h.sizes(), DType::Float64);
  const double* src = h.data<double>();
  double* dst = out.data<double>();
  const int64_t n = h.size(0), d = h.size(1);
  for (int64_t i = 0; i < n; ++i) {
    double sq = 0;
    for (int64_t j = 0; j < d; ++j) sq += src[i * d + j] * src[i * d + j];
    REMATCH_CHECK(sq > 0 && std::isfinite(sq), "map_at_k: ", what, " row ", i,
                  " has norm ", std::sqrt(sq), "; the cosine distance needs a finite non-zero vector");
    const double inv = 1.0 / std::sqrt(sq);
    for (int64_t j = 0; j < d; ++j) dst[i * d + j] = src[i * d + j] * inv;
  }
  return out;
}

std::vector<int64_t> label_vector(const Tensor& labels, int64_t count, const char* what) {
  REMATCH_CHECK(labels.defined() && labels.dim() == 1 && labels.size(0) == count, "map_at_k: ", what,
                " must be 1-D with ", count, " entries, got ",
                labels.defined() ? labels.describe() : std::string("undefined"));
  REMATCH_CHECK(labels.dtype() == DType::Int64 || labels.dtype() == DType::Int32, "map_at_k: ", what,
                " must be int32 or int64, got ", labels.describe());
  return kernels::to_device(labels, Device::cpu()).to_vector<int64_t>();
}

// AP of one query given its cosines to the database, MRL's loop over the top k of the distance order.
double average_precision(const double* cos, const std::vector<int64_t>& db_labels, int64_t label, int64_t k,
                         std::vector<std::pair<double, int64_t>>& order) {
  const int64_t n = static_cast<int64_t>(db_labels.size());
  order.resize(n);
  for (int64_t j = 0; j < n; ++j) order[j] = {1.0 - cos[j], j};  // cdist's cosine distance
  // (distance, index) pairs compare like a stable argsort of the distances.
  if (k < n) {
    std::partial_sort(order.begin(), order.begin() + k, order.end());
  } else {
    std::sort(order.begin(), order.end());
  }
  double p = 0, r = 0;
  for (int64_t j = 0; j < k; ++j) {
    if (db_labels[order[j].second] == label) {
      r += 1;
      p += r / static_cast<double>(j + 1);
    }
  }
  return r > 0 ? p / r : 0.0;
}

}  // namespace

double map_at_k(const Tensor& queries, const Tensor& query_labels, const Tensor& database,
                const Tensor& database_labels, int64_t k) {
  const Tensor q = unit_rows(queries, "queries");
  const Tensor db = unit_rows(database, "database");
  REMATCH_CHECK(q.size(1) == db.size(1), "map_at_k: queries ", queries.describe(), " and database ",
                database.describe(), " have different feature sizes");
  const int64_t nq = q.size(0), n = db.size(0);
  REMATCH_CHECK(nq >= 1 && n >= 1, "map_at_k: need at least one query and one database item");
  REMATCH_CHECK(k >= 0, "map_at_k: k must be >= 0 (0 = the whole database), got ", k);
  const std::vector<int64_t> ql = label_vector(query_labels, nq, "query labels");
  const std::vector<int64_t> dl = label_vector(database_labels, n, "database labels");
  const int64_t top = (k == 0 || k > n) ? n : k;
  const Tensor db_t = kernels::contiguous(kernels::transpose(db, 0, 1));

  std::vector<double> ap(nq);
  for (int64_t b0 = 0; b0 < nq; b0 += kQueryBlock) {
    const int64_t b = std::min(kQueryBlock, nq - b0);
    const Tensor cos = kernels::contiguous(kernels::matmul(kernels::narrow(q, 0, b0, b), db_t));
    const double* c = cos.data<double>();
#pragma omp parallel if (b * n >= 4096)
    {
      std::vector<std::pair<double, int64_t>> order;
#pragma omp for schedule(dynamic, 4)
      for (int64_t i = 0; i < b; ++i) ap[b0 + i] = average_precision(c + i * n, dl, ql[b0 + i], top, order);
    }
  }
  double sum = 0;
  for (double a : ap) sum += a;
  return sum / static_cast<double>(nq);
}

CrossModalMap cross_modal_map(const Tensor& image_features, const Tensor& image_labels,
                              const Tensor& text_features, const Tensor& text_labels, int64_t k) {
  CrossModalMap m;
  m.img2txt = map_at_k(image_features, image_labels, text_features, text_labels, k);
  m.txt2img = map_at_k(text_features, text_labels, image_features, image_labels, k);
  return m;
}

}  // namespace rematch::eval
