// MSCN's validation and test (`validate`, `evalrank` of the official code): each net scored by its meta net, the
// two matrices averaged; under mpirun each rank scores whole blocks of image rows (docs/distributed.md §3).
#include "train/methods/mscn/mscn_method.h"
#include "train/methods/mscn/mscn_scores.h"

namespace rematch::train {

Tensor MscnMethod::split_scores_of(int k, const data::PrecompDataset& split) {
  const eval::BlockSize block{kit_.common().eval_batch, kit_.common().eval_batch};
  parallel::Communicator& comm = kit_.comm();
  if (comm.world_size() == 1) return mscn_split_scores(net(k), meta(k), split, block);
  // Each rank's whole blocks of image rows, gathered as they are: one process's matrix byte for byte
  // (PairsKit::split_scores, docs/distributed.md §3).
  const int64_t n_img = split.num_captions() / split.captions_per_image();
  const parallel::RowRange rows = parallel::block_rows(n_img, block.images, comm.rank(), comm.world_size());
  net(k).eval();  // as mscn_split_rows leaves them, on a rank without rows too
  meta(k).eval();
  const Tensor mine = rows.begin < rows.end ? mscn_split_rows(net(k), meta(k), split, rows.begin, rows.end, block)
                                            : zeros({0, split.num_captions()}, kit_.dtype());
  return comm.all_gather(mine);
}

EvalResult MscnMethod::validate() {
  // `validate`: rSum of the two nets' averaged matrices on the dev subset.
  const data::PrecompDataset& dev = *kit_.data().dev;
  const Tensor sa = split_scores_of(0, dev);
  const Tensor sb = split_scores_of(1, dev);
  for (int k = 0; k < 2; ++k) {
    net(k).train();
    meta(k).train();
  }
  return two_nets_validation_result(sa, sb, dev.captions_per_image());
}

EvalResult MscnMethod::test() {
  const data::PrecompDataset& t = *kit_.data().test;
  const Tensor sa = split_scores_of(0, t);
  const Tensor sb = split_scores_of(1, t);
  for (int k = 0; k < 2; ++k) {
    net(k).train();
    meta(k).train();
  }
  return two_nets_test_result(sa, sb, t.captions_per_image(), kit_.common(), "MSCN");
}

}  // namespace rematch::train
