// MSCN's similarities and losses (`MSCN/models.py`, docs/methods/mscn.md §1–§2): an SGR/SAF model's similarity
// vectors z scored by a meta network (meta_sim.h) instead of SGRAF's sim_eval_w, the whole batch's matrix
// (`EncoderSimilarity.forward`) or each pair alone (`forward_individual`), and the three losses of the method.
#pragma once

#include <vector>

#include "models/sgraf_model.h"
#include "parallel/communicator.h"
#include "train/data/batcher.h"
#include "train/data/precomp_dataset.h"
#include "train/eval/block_scoring.h"
#include "train/methods/mscn/meta_sim.h"

namespace rematch::train {

// S [B_img, B_cap], rows = images: meta(z_ij) for every image against every caption (`SGRAF.forward_all`). The
// model's dropout masks are drawn in SgrafModel::forward's order (captions, then images).
Tensor mscn_scores(models::SgrafModel& model, MetaSim& meta, const Tensor& regions, const Tensor& ids,
                   const Tensor& lengths);

// mscn_scores of a training batch under mpirun (docs/distributed.md §4.1, MSCN's item): in a world of W <= B ranks
// each rank scores its columns (SgrafModel::forward_columns with the meta net scoring the similarity vectors: every
// image of the batch against its share of the captions) and every rank holds the gathered S, whose backward keeps
// each rank's columns (parallel::GatherBackward::OwnRows: every rank computes the whole loss); the parameters' (the
// net's and the meta net's) gradients are then each rank's share, to be summed over ranks. `shared` says whether
// that happened; in a world of one, or for a batch smaller than the world, S is mscn_scores itself, whole.
Tensor mscn_training_scores(parallel::Communicator& comm, models::SgrafModel& model, MetaSim& meta,
                            const data::Batch& b, bool& shared);

// s [B]: meta(z_ii) of each pair (image i, caption i) computed alone (`SGRAF.get_sim_individual`,
// `EncoderSimilarity.forward_individual`): VisualSA over the whole batch of images (its BatchNorm's statistics),
// TextSA per caption, and SGR or SAF on the single pair, so SAF's BatchNorm takes its statistics over that pair's
// nodes only. The diagonal of mscn_scores differs from it under SAF in training mode, exactly as the code's does.
Tensor mscn_pair_scores(models::SgrafModel& model, MetaSim& meta, const Tensor& regions, const Tensor& ids,
                        const Tensor& lengths);

// The warm-up loss (`ContrastiveLoss(margin)(sims)`, hard_negative "none"):
//   Σ_i mean_j [α + S_ij − S_ii]_+ + Σ_j mean_i [α + S_ij − S_jj]_+, diagonals zeroed and counted in the means.
Tensor mscn_warmup_loss(const Tensor& scores, double margin);

// The main loss (`ContrastiveLoss(sims, hard_negative="max_violation", probs=diag(S), soft_margin="s_adaptive")`):
// with p_j = S_jj (no gradient) and the margin of column j m_j = α / (1 + (p_j / (1 − p_j))^−2),
//   Σ_i max_j [m_j + S_ij − S_ii]_+ + Σ_j max_i [m_j + S_ij − S_jj]_+   (diagonals zeroed).
// The margin is indexed by the column in both terms: the code adds the [B] vector to the [B, B] costs.
Tensor mscn_adaptive_margin_loss(const Tensor& scores, double margin);
// m_j of one p (p = 1: α, p = 0: 0, as torch's inf arithmetic gives).
double mscn_adaptive_margin(double alpha, double p);

// torch.nn.BCELoss() (mean): −mean(y log p + (1 − y) log(1 − p)), each log clamped at −100 as PyTorch does.
Tensor binary_cross_entropy(const Tensor& p, const Tensor& y);

// The [images, captions] matrix of a split under (model, meta) in eval mode without a graph, block by block
// (train/eval/block_scoring.h; rows = distinct images as eval::score_precomp_split). Models are left in eval mode.
Tensor mscn_split_scores(models::SgrafModel& model, MetaSim& meta, const data::PrecompDataset& split,
                         eval::BlockSize block);
// Only rows [img_begin, img_end) of that matrix (one rank's share in sharded scoring, `rematch score` under mpirun):
// img_begin must be a multiple of block.images, so the blocks and their rows are those mscn_split_scores computes.
Tensor mscn_split_rows(models::SgrafModel& model, MetaSim& meta, const data::PrecompDataset& split,
                       int64_t img_begin, int64_t img_end, eval::BlockSize block);

}  // namespace rematch::train
