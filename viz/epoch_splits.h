// What a run caught (docs/viz.md §4): the per-epoch decision of a method that splits or weights its training
// pairs (L2RM's clean/mismatched split, RCL's and RCSL-NC's per-pair weights, UOT-RCL's corrected labels, ...),
// kept compactly in the run folder so a report can show, after the fact, which pairs were flagged as mismatched
// and, where the noise is known, how well: precision and recall of the flagged set per epoch.
//
// Files, in <run_dir>/splits/:
//   epoch_<e>.npy    one value per training pair (caption order): uint8 1 = kept, 0 = flagged (kind kept);
//                    uint8 round(255·w) (kind weight); int32 the label (kind label)
//   epoch_<e>.json   {"epoch": e, "method": "l2rm", "kind": "kept", "pairs": N}
// 145,000 F30K pairs take 142 KiB an epoch. Epochs count from 0, as in metrics.jsonl.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rematch::viz {

enum class SplitKind { kept, weight, label };
const char* split_kind_name(SplitKind k);  // "kept", "weight", "label"

struct EpochSplit {
  int64_t epoch = 0;
  std::string method;
  SplitKind kind = SplitKind::kept;
  // Per training pair: kept 1 / flagged 0; a weight in [0, 1] (stored to 1/255); a class label (>= 0).
  std::vector<double> values;
};

// Writes the two files above (atomically); an Error names the file and the bad value (a weight outside [0, 1],
// a kept flag other than 0 or 1, a negative or non-integral label).
void write_epoch_split(const std::string& run_dir, const EpochSplit& split);

// Every epoch in <run_dir>/splits/, sorted by epoch; none when the folder does not exist. Each file is checked
// before its values are used: the .json's fields and their types, the .npy's integer dtype (tensor/
// npy_integers.h), one dimension, its length against "pairs", and the range of its kind; an Error names the
// file, the entry and what to do. A FIFO or other non-regular file there is refused, never waited on.
std::vector<EpochSplit> read_epoch_splits(const std::string& run_dir);

// Pairs the decision flags as mismatched: kept 0, or weight below 0.5. (Labels flag nothing: a corrected label
// is compared with the truth by the page itself.)
std::vector<uint8_t> flagged_pairs(const EpochSplit& split);

// The flagged set against the truth (1 = truly matched) of the same pairs.
struct Detection {
  int64_t epoch = 0;
  int64_t pairs = 0, flagged = 0, truly_mismatched = 0, caught = 0;  // caught: flagged and truly mismatched
  double precision = 0, recall = 0;  // caught / flagged, caught / truly mismatched (0 when the denominator is)
};
Detection detection_quality(int64_t epoch, const std::vector<uint8_t>& flagged, const std::vector<uint8_t>& truly_clean);

}  // namespace rematch::viz
