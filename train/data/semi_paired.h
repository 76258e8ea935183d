// RCSL's semi-paired training set (docs/methods/rcsl.md §3.1, `data.py: PrecompDataset_gru.__init__`): `paired_length`
// random images keep their captions; all other images are permuted among themselves (image-level, as the RCL
// noise), so their captions become unpaired. A caption counts as paired iff its image row is its own — fixed
// points of the shuffle included, as in the code. RCSL seeds NumPy with 123; we draw from Philox with the given
// seed (default 123), so the split is reproducible but not NumPy's.
#pragma once

#include <cstdint>
#include <vector>

#include "train/data/noise.h"

namespace rematch::data {

struct SemiPairedSplit {
  // caption_to_row and clean (= paired label) per caption, as for a noisy correspondence.
  Correspondence correspondence;
  std::vector<int64_t> paired_images;  // the images chosen to stay paired, in draw order
  std::vector<int64_t> paired_captions, unpaired_captions;  // caption indices by label, ascending
};

// paired_length images (0 <= paired_length <= num_images) stay paired. An Error names the numbers otherwise.
SemiPairedSplit semi_paired_split(int64_t num_images, int64_t im_div, int64_t paired_length, uint64_t seed = 123);

}  // namespace rematch::data
