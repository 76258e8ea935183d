// SgrafModel::forward_columns across real ranks in float64 (docs/distributed.md §4.1, 2–4): the data-parallel step
// of the SGR/SAF methods is one process's step but for the order of its sums. Run as `mpirun -n N
// parallel_mpi_sgraf_columns` (tests/CMakeLists.txt: N = 2 and 3, a batch of 7 split unevenly). Every rank builds the
// same model twice from one seed, in training mode with dropout 0.4: the first computes the whole batch as one
// process (forward, the hardest-negative triplet, backward), the second the rank's columns (forward_columns),
// the gathered S (own-rows backward), the same loss and backward, then the gradients summed over ranks. Both must
// agree to 1e-12: S, the loss, every parameter's gradient and every BatchNorm statistic (VisualSA's, and SAF's
// running statistics moved over the gathered per-caption statistics), so every dropout mask and BatchNorm
// statistic is one process's and the gradients are the whole batch's. Each rank exits 1 on a mismatch.
// The columns before the sigmoid (ColumnShare::logits, DECL's training scores) are checked the same way against
// SgrafModel::logits (image encoder, text encoder, VisualSA, TextSA, no sigmoid), with the triplet on tanh(S).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "parallel/communicator.h"
#include "parallel/gather_op.h"
#include "models/sgraf_model.h"
#include "nn/nn.h"
#include "tensor/kernels.h"

using namespace rematch;

namespace {

double max_abs_diff(const Tensor& a, const Tensor& b) {
  const std::vector<double> x = kernels::cast(kernels::contiguous(a), DType::Float64).to_vector<double>();
  const std::vector<double> y = kernels::cast(kernels::contiguous(b), DType::Float64).to_vector<double>();
  if (x.size() != y.size()) return INFINITY;
  double d = 0;
  for (size_t i = 0; i < x.size(); ++i) d = std::max(d, std::fabs(x[i] - y[i]));
  return d;
}

int check(parallel::Communicator& c, models::SimilarityModule module, bool logits = false) {
  const int r = c.rank();
  const std::string name =
      std::string(module == models::SimilarityModule::SGR ? "SGR" : "SAF") + (logits ? " (logits)" : "");
  models::SgrafConfig cfg;
  cfg.module = module;
  cfg.vocab_size = 20;
  cfg.img_dim = 6;
  cfg.num_regions = 4;
  cfg.word_dim = 5;
  cfg.embed_size = 8;
  cfg.sim_dim = 4;
  cfg.sgr_step = 2;
  cfg.dropout = 0.4;
  const int64_t B = 7, T = 6;
  Generator data_gen(11);
  const Tensor regions = randn({B, cfg.num_regions, cfg.img_dim}, DType::Float64, Device::cpu(), &data_gen);
  const Tensor ids = randint(1, cfg.vocab_size, {B, T}, DType::Int64, Device::cpu(), &data_gen);
  const Tensor lengths = from_vector(std::vector<int64_t>{6, 3, 5, 2, 6, 4, 3}, {B});

  Generator gen_one(5), gen_ranks(5);
  models::SgrafModel one(cfg, DType::Float64, &gen_one), ranks(cfg, DType::Float64, &gen_ranks);
  one.train();
  ranks.train();
  const Tensor s_one = logits ? one.logits(regions, ids, lengths) : one(regions, ids, lengths);
  const Tensor loss_one = nn::hardest_negative_triplet(logits ? tanh(s_one) : s_one, 0.2, true);
  backward(loss_one);

  const parallel::RowRange mine = parallel::block_rows(B, 1, r, c.world_size());
  models::SgrafModel::ColumnShare share;
  share.begin = mine.begin;
  share.end = mine.end;
  share.gather = [&c](const Tensor& x) { return parallel::all_gather_rows(c, x); };
  share.gather_values = [&c](const Tensor& x) { return c.all_gather(x); };
  share.logits = logits;
  const Tensor columns = ranks.forward_columns(regions, ids, lengths, share);
  const Tensor s_ranks =
      transpose(parallel::all_gather_rows(c, transpose(columns, 0, 1), parallel::GatherBackward::OwnRows), 0, 1);
  const Tensor loss_ranks = nn::hardest_negative_triplet(logits ? tanh(s_ranks) : s_ranks, 0.2, true);
  backward(loss_ranks);

  int failures = 0;
  auto expect_close = [&](double d, const std::string& what) {
    if (!(d <= 1e-12)) {
      std::fprintf(stderr, "rank %d: FAILED: %s %s differs by %.3g\n", r, name.c_str(), what.c_str(), d);
      ++failures;
    }
  };
  expect_close(max_abs_diff(s_one, s_ranks), "S");
  expect_close(max_abs_diff(loss_one, loss_ranks), "the loss");
  const auto p_one = one.named_parameters(), p_ranks = ranks.named_parameters();
  double worst = 0;
  for (size_t i = 0; i < p_one.size(); ++i) {
    const Tensor& g = p_ranks[i].second.grad();
    const Tensor summed = c.all_reduce_sum(g.defined() ? g : zeros(p_ranks[i].second.sizes(), DType::Float64));
    const double d = max_abs_diff(p_one[i].second.grad(), summed);
    expect_close(d, "the gradient of " + p_one[i].first);
    worst = std::max(worst, d);
  }
  const auto b_one = one.named_buffers(), b_ranks = ranks.named_buffers();
  for (size_t i = 0; i < b_one.size(); ++i)
    expect_close(max_abs_diff(b_one[i].second, b_ranks[i].second), "the buffer " + b_one[i].first);
  c.barrier();
  if (r == 0 && failures == 0)
    std::printf("%s: %d ranks: S, loss, %zu gradients (largest difference %.2g) and %zu BatchNorm buffers equal "
                "one process's to 1e-12\n",
                name.c_str(), c.world_size(), p_one.size(), worst, b_one.size());
  return failures;
}

}  // namespace

int main() {
  parallel::Communicator& c = parallel::init_world(parallel::Backend::Mpi);
  const int failures = check(c, models::SimilarityModule::SGR) + check(c, models::SimilarityModule::SAF) +
                       check(c, models::SimilarityModule::SGR, true) + check(c, models::SimilarityModule::SAF, true);
  return failures == 0 ? 0 : 1;
}
