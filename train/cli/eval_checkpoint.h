// Scoring an evaluation split with SGR/SAF checkpoints, shared by `rematch score`, `rematch eval --checkpoint` and
// `rematch retrieve`: each file is read once, whole, and its model(s) are built from what was read
// (models/sgraf_checkpoint.h: rematch checkpoints and converted official ones) and moved to --device, the split is
// read in the SCAN precomp layout, and the [N_img, N_cap] matrix of sigmoid scores (rows = distinct images,
// docs/backbones.md §5.3, §7) is filled block by block (train/eval/sgraf_scoring.h) on that device, in eval mode
// and without a graph, and kept on the host. Two checkpoints are averaged: an SGR and a SAF checkpoint give SGRAF
// (§4.8), two SGR nets NCR's models A and B; any other combination is refused. The checkpoint of an NCR run holds
// both nets (its "model_prefixes", docs/methods/ncr.md §6) and is averaged alone. So is an MSCN run's, whose nets
// are scored each by its meta net ("meta_prefixes"), (S_A + S_B) / 2 as MSCN's own test (docs/methods/mscn.md §5).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace rematch::cli {

struct CheckpointScoringOptions {
  std::vector<std::string> checkpoints;
  std::string data_path, data_name, vocab_path, split = "test", val_subset = "sgraf", device = "cpu";
  int64_t block_images = 100, block_captions = 100;
  std::string dist_backend = "auto";  // sharded scoring under mpirun (docs/distributed.md §3)
};

// Adds --checkpoint (once, or twice: SGR+SAF or NCR's A+B), --data_path, --data_name, --vocab_path,
// --split, --val_subset, --block_images, --block_captions and --device (only with --checkpoint) to `cmd`;
// returns the --checkpoint option.
CLI::Option* add_checkpoint_scoring_options(CLI::App& cmd, CheckpointScoringOptions& options);

struct ScoredSplit {
  Tensor sims;                     // float32 [N_img, N_cap] on the host
  int64_t captions_per_image = 1;  // of the split (5 for COCO/F30K, 1 for CC152K)
  std::string summary;             // what was scored, e.g. "SGRAF (SGR+SAF averaged) on f30k_precomp/test"
};

// Throws UsageError for command-line mistakes (no --data_path, a --device that is no device, a checkpoint that
// does not fit the data) and rematch::Error for unreadable files and for a device this process cannot use;
// the flags, --device included, are checked before any file is read.
// `log` gets the vocabulary file used (--vocab_path, else <data_path>/vocab, else ./vocab) and any conversion
// of the region features on load (float64/float16, Fortran order), one line each.
// Under `mpirun -n N` (--dist_backend auto|mpi|nccl) each rank scores its whole image blocks
// (parallel::block_rows) and every rank gets the whole matrix, equal byte for byte to one process's; with --device
// cuda each rank uses the GPU of its local rank. Only rank 0 writes to `log`.
ScoredSplit score_split(const CheckpointScoringOptions& options, std::ostream& log);

// The program's output streams for this rank: themselves on rank 0 of the world, a sink on the others.
std::ostream& rank_zero_stream(std::ostream& s);

}  // namespace rematch::cli
