#include "nn/gru_composite.h"

namespace rematch::nn {

Tensor gru_packed_rows(const gru_cpu::Packing& p, int64_t direction, Device device) {
  std::vector<int64_t> rows(static_cast<size_t>(p.total));
  for (int64_t s = 0; s < p.steps; ++s)
    for (int64_t i = 0; i < p.active[s]; ++i) {
      const int64_t b = p.order[i], t = direction == 0 ? s : p.length[b] - 1 - s;  // gru_cpu's time_of
      rows[p.offset[s] + i] = b * p.steps + t;
    }
  return from_vector(rows, {p.total}, device);
}

GRUOutput gru_composite(const Tensor& x, const gru_cpu::Packing& p, const TensorList& weights) {
  const int64_t B = p.batch, T = p.steps, I = x.size(2), H = weights[1].size(1);
  const int64_t directions = static_cast<int64_t>(weights.size() / 4);
  // Packed row of each sequence's last step (its state is h_n), in the original row order.
  std::vector<int64_t> last(static_cast<size_t>(B));
  for (int64_t i = 0; i < B; ++i) last[p.order[i]] = p.offset[p.length[p.order[i]] - 1] + i;
  const Tensor last_rows = from_vector(last, {B}, x.device());
  const Tensor x_flat = reshape(x, {B * T, I});
  TensorList outputs, finals;
  for (int64_t d = 0; d < directions; ++d) {
    const Tensor &w_ih = weights[4 * d], &w_hh = weights[4 * d + 1], &b_ih = weights[4 * d + 2],
                 &b_hh = weights[4 * d + 3];
    const Tensor rows = gru_packed_rows(p, d, x.device());
    const Tensor gi_all = add(matmul(index_select(x_flat, 0, rows), transpose(w_ih, 0, 1)), b_ih);  // [total, 3H]
    TensorList states;
    Tensor h = zeros({p.active[0], H}, x.dtype(), x.device());  // initial state 0
    for (int64_t s = 0; s < T; ++s) {
      const int64_t n = p.active[s];
      const Tensor hp = narrow(h, 0, 0, n);  // the rows still running are a prefix of the sorted batch
      const Tensor gi = narrow(gi_all, 0, p.offset[s], n);
      const Tensor gh = add(matmul(hp, transpose(w_hh, 0, 1)), b_hh);
      auto gate = [&](const Tensor& g, int64_t k) { return narrow(g, 1, k * H, H); };
      const Tensor r = sigmoid(add(gate(gi, 0), gate(gh, 0)));
      const Tensor z = sigmoid(add(gate(gi, 1), gate(gh, 1)));
      const Tensor cand = tanh(add(gate(gi, 2), mul(r, gate(gh, 2))));
      h = add(mul(rsub(1.0, z), cand), mul(z, hp));  // h' = (1 − z) ⊙ n + z ⊙ h
      states.push_back(h);
    }
    const Tensor packed = cat(states, 0);  // [total, H], step by step
    outputs.push_back(reshape(index_add(zeros({B * T, H}, x.dtype(), x.device()), 0, rows, packed), {B, T, H}));
    finals.push_back(index_select(packed, 0, last_rows));
  }
  return {cat(outputs, 2), stack(finals, 0)};
}

}  // namespace rematch::nn
