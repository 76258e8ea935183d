#include "train/methods/dscmr/dscmr_losses.h"

#include "autograd/autograd.h"
#include "tensor/error.h"

namespace rematch::train::dscmr {
namespace {

// ((a - b)**2).sum(1).sqrt().mean()
Tensor mean_row_distance(const Tensor& a, const Tensor& b) { return mean(sqrt(sum(square(sub(a, b)), {1}))); }

// cos = lambda x, y: x.mm(y.t()) / ((x ** 2).sum(1, keepdim=True).sqrt().mm((y ** 2).sum(1, keepdim=True)
//                    .sqrt().t())).clamp(min=1e-6) / 2.
Tensor half_cosine(const Tensor& x, const Tensor& y) {
  const Tensor nx = sqrt(sum(square(x), {1}, true)), ny = sqrt(sum(square(y), {1}, true));
  return div(div(matmul(x, transpose(y, 0, 1)), clamp_min(matmul(nx, transpose(ny, 0, 1)), 1e-6)), 2.0);
}

// ((1 + torch.exp(theta)).log() - Sim * theta).mean()
Tensor pair_term(const Tensor& theta, const Tensor& sim) {
  return mean(sub(log(add(exp(theta), 1.0)), mul(sim, theta)));
}

void check_pair(const char* who, const Tensor& a, const Tensor& b) {
  REMATCH_CHECK(a.dim() == 2 && a.sizes() == b.sizes() && a.size(0) > 0, "dscmr ", who, ": ", a.describe(), " and ",
                b.describe(), " must both be [N, d] with N > 0");
}

}  // namespace

Tensor label_space_loss(const Tensor& pred_v, const Tensor& pred_t, const Tensor& y_v, const Tensor& y_t) {
  check_pair("label_space_loss", pred_v, y_v);
  check_pair("label_space_loss", pred_t, y_t);
  return add(mean_row_distance(pred_v, y_v.detach()), mean_row_distance(pred_t, y_t.detach()));
}

Tensor common_space_loss(const Tensor& u, const Tensor& v, const Tensor& y_v, const Tensor& y_t) {
  check_pair("common_space_loss", u, v);
  check_pair("common_space_loss", y_v, y_t);
  REMATCH_CHECK(y_v.size(0) == u.size(0), "dscmr common_space_loss: ", y_v.size(0), " label rows for ", u.size(0),
                " feature rows");
  // calc_label_sim(labels_1, labels_2) = labels_1.float().mm(labels_2.float().t())
  const Tensor yv = y_v.detach(), yt = y_t.detach();
  const Tensor s11 = matmul(yv, transpose(yv, 0, 1)), s12 = matmul(yv, transpose(yt, 0, 1)),
               s22 = matmul(yt, transpose(yt, 0, 1));
  return add(add(pair_term(half_cosine(u, u), s11), pair_term(half_cosine(u, v), s12)),
             pair_term(half_cosine(v, v), s22));
}

Tensor invariance_loss(const Tensor& u, const Tensor& v) {
  check_pair("invariance_loss", u, v);
  return mean_row_distance(u, v);
}

}  // namespace rematch::train::dscmr
