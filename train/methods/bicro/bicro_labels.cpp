#include "train/methods/bicro/bicro_labels.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

#include "autograd/autograd.h"
#include "tensor/error.h"
#include "train/losses/retrieval_losses.h"

namespace rematch::train {
namespace {

std::vector<double> host_doubles(const Tensor& t) { return to(to(t.detach(), Device::cpu()), DType::Float64).to_vector<double>(); }

// `SIM_PAIR`'s cosine: <a, b> / max(|a||b|, 1e-8).
double cosine(const double* a, const double* b, int64_t n) {
  double dot = 0, na = 0, nb = 0;
  for (int64_t i = 0; i < n; ++i) dot += a[i] * b[i], na += a[i] * a[i], nb += b[i] * b[i];
  return dot / std::max(std::sqrt(na) * std::sqrt(nb), 1e-8);
}

// `SIM_SELE`'s ratio: top/value when that is < 1, else value/top.
double ratio(double top, double value) { return top / value < 1 ? top / value : value / top; }

// Soft labels at most noise_tem are 0 (`index = dis_f_n > noise_tem; dis_f_n * index`), then clamp(0, 1).
double thresholded(double d, double noise_tem) { return std::clamp(d > noise_tem ? d : 0.0, 0.0, 1.0); }

}  // namespace

BicroGlobal bicro_global(const Tensor& image_embeddings, const Tensor& caption_embeddings, const Tensor& lengths) {
  REMATCH_CHECK(image_embeddings.dim() == 3 && caption_embeddings.dim() == 3 && lengths.dim() == 1 &&
                    image_embeddings.size(0) == caption_embeddings.size(0) &&
                    lengths.size(0) == caption_embeddings.size(0) &&
                    image_embeddings.size(2) == caption_embeddings.size(2),
                "bicro_global: expects image embeddings [B, R, E], caption embeddings [B, L, E] and lengths [B], got ",
                image_embeddings.describe(), ", ", caption_embeddings.describe(), ", ", lengths.describe());
  BicroGlobal g;
  g.rows = image_embeddings.size(0);
  g.dim = image_embeddings.size(2);
  g.image = host_doubles(mean(image_embeddings.detach(), {1}));
  const std::vector<double> cap = host_doubles(caption_embeddings);
  const std::vector<int64_t> len = to(lengths, Device::cpu()).to_vector<int64_t>();
  const int64_t L = caption_embeddings.size(1), E = g.dim;
  g.text.assign(static_cast<size_t>(g.rows * E), 0.0);
  for (int64_t i = 0; i < g.rows; ++i) {
    const int64_t n = len[static_cast<size_t>(i)];
    REMATCH_CHECK(n >= 1 && n <= L, "bicro_global: caption ", i, " has length ", n, " outside [1, ", L, "]");
    for (int64_t e = 0; e < E; ++e) {
      double s = 0;
      for (int64_t w = 0; w < n; ++w) s += cap[static_cast<size_t>((i * L + w) * E + e)];
      g.text[static_cast<size_t>(i * E + e)] = s / static_cast<double>(n);
    }
  }
  return g;
}

BicroAnchors bicro_anchors(const Tensor& scores, double margin) {
  REMATCH_CHECK(scores.dim() == 2 && scores.size(0) == scores.size(1),
                "bicro_anchors: scores must be a square [B, B] matrix, got ", scores.describe());
  const std::vector<double> l =
      host_doubles(losses::per_sample_split_loss(scores.detach(), margin, losses::SplitLoss::Mean));
  std::vector<double> p(l.size());
  for (size_t i = 0; i < l.size(); ++i) p[i] = std::clamp(margin - l[i] / 2, 0.0, margin);
  std::vector<int64_t> idx(p.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) { return p[static_cast<size_t>(a)] < p[static_cast<size_t>(b)]; });
  const size_t ratio = std::min(p.size(), p.size() / 10 + 1);
  BicroAnchors a;
  a.noisy.assign(idx.begin(), idx.end() - static_cast<std::ptrdiff_t>(ratio));
  a.anchors.assign(idx.end() - static_cast<std::ptrdiff_t>(ratio), idx.end());
  return a;
}

std::vector<std::array<double, 2>> bicro_consistency(const BicroGlobal& from, const std::vector<int64_t>& anchors,
                                                     const BicroGlobal& of) {
  REMATCH_CHECK(!anchors.empty() && from.dim == of.dim, "bicro_consistency: needs anchors and equal widths, got ",
                anchors.size(), " anchors, widths ", from.dim, " and ", of.dim);
  const int64_t E = of.dim;
  std::vector<std::array<double, 2>> out(static_cast<size_t>(of.rows));
  std::vector<double> cv(anchors.size()), ct(anchors.size());
  for (int64_t j = 0; j < of.rows; ++j) {
    for (size_t a = 0; a < anchors.size(); ++a) {
      cv[a] = cosine(&of.image[static_cast<size_t>(j * E)], &from.image[static_cast<size_t>(anchors[a] * E)], E);
      ct[a] = cosine(&of.text[static_cast<size_t>(j * E)], &from.text[static_cast<size_t>(anchors[a] * E)], E);
    }
    const size_t kv = static_cast<size_t>(std::max_element(cv.begin(), cv.end()) - cv.begin());
    const size_t kt = static_cast<size_t>(std::max_element(ct.begin(), ct.end()) - ct.begin());
    out[static_cast<size_t>(j)] = {ratio(cv[kv], ct[kv]), ratio(ct[kt], cv[kt])};
  }
  return out;
}

BicroLabels bicro_labels(const Tensor& labeled_scores, const BicroGlobal& labeled, const BicroGlobal* unlabeled,
                         double margin, double noise_tem) {
  BicroLabels r;
  r.anchors = bicro_anchors(labeled_scores, margin);
  REMATCH_CHECK(labeled.rows == labeled_scores.size(0), "bicro_labels: ", labeled.rows,
                " global embeddings for a batch of ", labeled_scores.size(0));
  const auto d = bicro_consistency(labeled, r.anchors.anchors, labeled);
  r.labeled.assign(static_cast<size_t>(labeled.rows), 0.0);
  for (int64_t a : r.anchors.anchors) r.labeled[static_cast<size_t>(a)] = 1;
  for (size_t k = 0; k < r.anchors.noisy.size(); ++k)
    r.labeled[static_cast<size_t>(r.anchors.noisy[k])] = thresholded(0.5 + (d[k][0] + d[k][1]) / 4, noise_tem);
  if (unlabeled != nullptr) {
    const auto du = bicro_consistency(labeled, r.anchors.anchors, *unlabeled);
    for (const auto& x : du) r.unlabeled.push_back(thresholded((x[0] + x[1]) / 2, noise_tem));
  }
  return r;
}

}  // namespace rematch::train
