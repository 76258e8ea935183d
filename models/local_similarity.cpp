#include "models/local_similarity.h"

#include <algorithm>

#include "tensor/elementwise_in_place.h"

namespace rematch::models {
namespace {

constexpr double kNormEps = 1e-8;  // l2n puts eps on the norm (docs/backbones.md §1)

struct Dims {
  int64_t n_img, n_cap, n_word, n_reg, d, m;
};

// One chunk of images [k0, k0 + n): the attended vectors before l2n (raw = Σ_r α v_r, [n, B_cap·L, d]) and
// the difference a − w ([n, B_cap, L, d]). Without a graph being recorded (grad mode off: the forward pass, and
// a backward without create_graph) the difference is formed in l2n's result in place, and raw is dropped when
// `keep_raw` is false, so that at most two chunk-sized tensors are live here instead of three.
struct Chunk {
  Tensor alpha3;   // [n, B_cap·L, R]
  Tensor regions;  // [n, R, d]
  Tensor raw;
  Tensor diff;
};

Chunk compute_chunk(const Tensor& alpha, const Tensor& regions, const Tensor& words, const Dims& s, int64_t k0,
                    int64_t n, bool keep_raw) {
  Chunk c;
  c.alpha3 = reshape(narrow(alpha, 0, k0, n), {n, s.n_cap * s.n_word, s.n_reg});
  c.regions = narrow(regions, 0, k0, n);
  c.raw = matmul(c.alpha3, c.regions);
  if (grad_enabled()) {  // recorded (create_graph): ops only
    c.diff = sub(reshape(l2_normalize(c.raw, -1, kNormEps), {n, s.n_cap, s.n_word, s.d}), words);
    return c;
  }
  c.diff = reshape(l2_normalize(c.raw, -1, kNormEps), {n, s.n_cap, s.n_word, s.d});  // fresh, contiguous
  if (!keep_raw) c.raw = Tensor();
  kernels::binary_(kernels::BinaryOp::Sub, c.diff, words);  // the same Sub as sub(): the same bits
  return c;
}

// Gradient of y = x / (‖x‖ + eps) along the last dim: g / (‖x‖ + eps) − x · Σ(g·x) / ((‖x‖ + eps)² ‖x‖),
// with the second term 0 where ‖x‖ = 0, written as the l2_normalize op's backward (autograd/ops_fused.cpp) so
// that it differentiates again without a 0/0 at a zero row.
Tensor l2_normalize_backward(const Tensor& g, const Tensor& x) {
  const Tensor n = norm(x, 2, {-1}, true);
  const Tensor denom = add(n, kNormEps);
  const Tensor at_zero = eq(n, 0.0);
  const Tensor d2n = where(at_zero, ones({}, n.dtype(), n.device()), mul(square(denom), n));
  const Tensor coef = where(at_zero, zeros({}, n.dtype(), n.device()), div(sum(mul(g, x), {-1}, true), d2n));
  return sub(div(g, denom), mul(x, coef));
}


// The chunk's gradient for raw, without recording a graph, holding at most three chunk-sized tensors (raw, diff
// and the gradient being built) where the op-by-op form held seven: d diff = 2·diff·(gy W), formed in place in
// gy W, then diff is freed and l2n's backward (l2_normalize_backward above, the same ops in the same order) is
// applied in place. Every elementwise op is the one of the op-by-op form (kernels::binary_ etc. run the same
// functors), so the gradients are the same to the bit. `g_words`, when defined, takes −Σ_images d diff.
Tensor raw_gradient_in_place(Chunk& c, const Tensor& gy_c, const Tensor& weight, Tensor* g_words) {
  using kernels::BinaryOp;
  Tensor g = reshape(matmul(gy_c, weight), c.diff.sizes());  // fresh, contiguous
  kernels::binary_(BinaryOp::Mul, g, c.diff);                // diff·(gy W): IEEE products commute
  c.diff = Tensor();
  kernels::scalar_op_(kernels::ScalarOp::Mul, g, 2.0);
  if (g_words) *g_words = sub(*g_words, sum(g, {0}));
  const Tensor x = c.raw;
  g = reshape(g, x.sizes());
  const Tensor n = norm(x, 2, {-1}, true);
  const Tensor denom = add(n, kNormEps);
  const Tensor at_zero = eq(n, 0.0);
  const Tensor d2n = where(at_zero, ones({}, n.dtype(), n.device()), mul(square(denom), n));
  const Tensor coef = where(at_zero, zeros({}, n.dtype(), n.device()), div(sum(mul(g, x), {-1}, true), d2n));
  const Tensor x_coef = mul(x, coef);
  c.raw = Tensor();
  kernels::binary_(BinaryOp::Div, g, denom);
  kernels::binary_(BinaryOp::Sub, g, x_coef);
  return g;
}

}  // namespace

Tensor local_similarity(const Tensor& alpha, const Tensor& regions, const Tensor& words, const Tensor& word_mask,
                        const Tensor& weight, const Tensor& bias, int64_t chunk_elements) {
  const char* who = "local_similarity";
  for (const Tensor* t : {&alpha, &regions, &words, &word_mask, &weight, &bias})
    REMATCH_CHECK(t->defined(), who, ": undefined input");
  REMATCH_CHECK(alpha.dim() == 4 && regions.dim() == 3 && words.dim() == 3 && weight.dim() == 2 && bias.dim() == 1, who,
                ": expected alpha [B_img, B_cap, L, R], regions [B_img, R, d], words [B_cap, L, d], weight "
                "[m, d], bias [m]; got ",
                alpha.describe(), ", ", regions.describe(), ", ", words.describe(), ", ", weight.describe(), ", ",
                bias.describe());
  const Dims s{alpha.size(0), alpha.size(1), alpha.size(2), alpha.size(3), regions.size(2), weight.size(0)};
  REMATCH_CHECK(regions.size(0) == s.n_img && regions.size(1) == s.n_reg && words.size(0) == s.n_cap &&
                    words.size(1) == s.n_word && words.size(2) == s.d && weight.size(1) == s.d && bias.size(0) == s.m,
                who, ": shapes do not agree: alpha ", alpha.describe(), ", regions ", regions.describe(), ", words ",
                words.describe(), ", weight ", weight.describe(), ", bias ", bias.describe());
  REMATCH_CHECK(word_mask.dtype() == DType::Bool && word_mask.sizes() == Shape({s.n_cap, s.n_word}), who,
                ": word_mask must be bool [", s.n_cap, ", ", s.n_word, "], got ", word_mask.describe());
  REMATCH_CHECK(chunk_elements > 0, who, ": chunk_elements must be positive, got ", chunk_elements);
  const int64_t per_image = std::max<int64_t>(s.n_cap * s.n_word * s.d, 1);
  const int64_t chunk = std::max<int64_t>(1, chunk_elements / per_image);
  const Tensor mask4 = reshape(word_mask, {1, s.n_cap, s.n_word, 1});
  const Tensor zero = zeros({}, weight.dtype(), weight.device());

  Tensor out;
  {
    NoGradGuard no_grad;
    out = empty({s.n_img, s.n_cap, s.n_word, s.m}, weight.dtype(), weight.device());
    const Tensor weight_t = transpose(weight, 0, 1);
    for (int64_t k0 = 0; k0 < s.n_img; k0 += chunk) {
      const int64_t n = std::min(chunk, s.n_img - k0);
      Chunk c = compute_chunk(alpha, regions, words, s, k0, n, false);
      kernels::unary_(kernels::UnaryOp::Square, c.diff);  // the same Square as square()
      const Tensor y = add(matmul(reshape(c.diff, {n * s.n_cap * s.n_word, s.d}), weight_t), bias);
      kernels::copy_(narrow(out, 0, k0, n), reshape(y, {n, s.n_cap, s.n_word, s.m}));
    }
    out = where(mask4, out, zero);
  }

  const bool need_alpha = alpha.requires_grad(), need_regions = regions.requires_grad();
  const bool need_words = words.requires_grad(), need_weight = weight.requires_grad();
  const bool need_bias = bias.requires_grad();
  // Saved: the inputs only. Every pair-level d-wide value is recomputed chunk by chunk. With create_graph (grad
  // mode on) the backward is written with differentiable ops, and the chunks' gradients for alpha and regions
  // are concatenated, which records them, instead of being written into buffers; without it, the chunk's
  // gradient is formed in place (raw_gradient_in_place), the same ops giving the same bits.
  return record(
      who, {alpha, regions, words, weight, bias}, out,
      [alpha, regions, words, weight, mask4, zero, s, chunk, need_alpha, need_regions, need_words, need_weight,
       need_bias](const TensorList& grads) {
        const bool record_graph = grad_enabled();
        const Tensor gy = where(mask4, grads[0], zero);  // padded rows pass no gradient
        Tensor g_alpha, g_regions, g_words, g_weight, g_bias;
        TensorList alpha_chunks, region_chunks;
        if (need_alpha && !record_graph) g_alpha = empty(alpha.sizes(), alpha.dtype(), alpha.device());
        if (need_regions && !record_graph) g_regions = empty(regions.sizes(), regions.dtype(), regions.device());
        if (need_words) g_words = zeros(words.sizes(), words.dtype(), words.device());
        if (need_weight) g_weight = zeros(weight.sizes(), weight.dtype(), weight.device());
        if (need_bias) g_bias = sum(gy, {0, 1, 2});
        const bool need_inner = need_alpha || need_regions || need_words;
        if (!need_inner && !need_weight) return TensorList{g_alpha, g_regions, g_words, g_weight, g_bias};
        for (int64_t k0 = 0; k0 < s.n_img; k0 += chunk) {
          const int64_t n = std::min(chunk, s.n_img - k0);
          const int64_t rows = n * s.n_cap * s.n_word;
          Chunk c = compute_chunk(alpha, regions, words, s, k0, n, need_alpha || need_regions);
          const Tensor gy_c = reshape(narrow(gy, 0, k0, n), {rows, s.m});
          // y = sq Wᵀ + b: dW = gyᵀ sq, dsq = gy W.
          if (need_weight)
            g_weight = add(g_weight, matmul(transpose(gy_c, 0, 1), reshape(square(c.diff), {rows, s.d})));
          if (!need_inner) continue;
          // sq = diff², diff = a − w: d diff = 2·diff·dsq; dw = −Σ_images d diff; da = d diff.
          // a = l2n(raw), raw = α v: dα = d raw vᵀ, dv = αᵀ d raw.
          Tensor g_raw;
          if (!record_graph && (need_alpha || need_regions)) {
            g_raw = raw_gradient_in_place(c, gy_c, weight, need_words ? &g_words : nullptr);
          } else {
            const Tensor g_diff = mul(mul(c.diff, reshape(matmul(gy_c, weight), c.diff.sizes())), 2.0);
            if (need_words) g_words = sub(g_words, sum(g_diff, {0}));
            if (!need_alpha && !need_regions) continue;
            g_raw = l2_normalize_backward(reshape(g_diff, {n, s.n_cap * s.n_word, s.d}), c.raw);
          }
          if (need_alpha) {
            const Tensor ga = reshape(matmul(g_raw, transpose(c.regions, 1, 2)), {n, s.n_cap, s.n_word, s.n_reg});
            if (record_graph) alpha_chunks.push_back(ga);
            else kernels::copy_(narrow(g_alpha, 0, k0, n), ga);
          }
          if (need_regions) {
            const Tensor gr = matmul(transpose(c.alpha3, 1, 2), g_raw);
            if (record_graph) region_chunks.push_back(gr);
            else kernels::copy_(narrow(g_regions, 0, k0, n), gr);
          }
        }
        if (!alpha_chunks.empty()) g_alpha = cat(alpha_chunks, 0);
        if (!region_chunks.empty()) g_regions = cat(region_chunks, 0);
        return TensorList{g_alpha, g_regions, g_words, g_weight, g_bias};
      });
}

}  // namespace rematch::models
