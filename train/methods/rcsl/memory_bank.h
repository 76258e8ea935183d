// RCSL's global nearest-neighbour memory bank (docs/methods/rcsl.md §3.4; train.py: UpdateMemoryBank): the pseudo pairs
// of the mining stage. From the eval-mode embeddings of every training image row and every training caption:
//   unpaired image row k:  T'_k = argmax over ALL training captions c of f(I_k)ᵀ g(T_c)   (hard_i2t)
//   paired image row k:    its own caption, score 1
//   unpaired caption c:    I'_c = argmax over ALL training image rows k of g(T_c)ᵀ f(I_k)  (hard_t2i)
//   paired caption c:      its own image row, score 1
// The search covers paired items too, as the code does (⚠ the paper restricts it to the unpaired sets, §3.7
// item 9). Similarities are computed in blocks of `block` rows, so at most block × N entries are alive; the
// block size changes nothing else. Ties go to the lowest index.
//
// "Paired" generalises the code's fixed-point test shuffle_inx[k] == k to any per-caption label (RCSL-NC's
// clean/noisy split): a caption is paired iff labelled so, and its own image is the row it is trained with; an
// image row is paired iff some paired caption is trained with it, and its own caption is the first such
// caption. For the semi-paired split (data/semi_paired.h) this is exactly the code's rule: image k paired iff a
// fixed point, own caption k·im_div, own image of caption c the row c / im_div.
//
// The bank lives in memory and in the training state (docs/methods/shared.md §0.4 rule 2: no file cache that a
// later run could silently reuse); `--bank_refresh once` builds it at the first mining epoch, `epoch` at every
// mining epoch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tensor/tensor.h"
#include "train/run/training_state.h"

namespace rematch::train::rcsl {

struct MemoryBank {
  std::vector<int64_t> image_to_caption;  // [N_img] T'_k, a caption index
  std::vector<double> image_score;        // [N_img] its similarity (1 for a paired image)
  std::vector<int64_t> caption_to_image;  // [N_cap] I'_c, an image row
  std::vector<double> caption_score;      // [N_cap] its similarity (1 for a paired caption)

  bool empty() const { return image_to_caption.empty(); }
  int64_t num_images() const { return static_cast<int64_t>(image_to_caption.size()); }
  int64_t num_captions() const { return static_cast<int64_t>(caption_to_image.size()); }
};

// Who is paired with whom, from the training correspondence and the per-caption labels (see above).
struct BankPairing {
  std::vector<int64_t> image_own_caption;  // [N_img] the paired image's own caption, −1 when unpaired
  std::vector<int64_t> caption_own_image;  // [N_cap] the paired caption's own image row, −1 when unpaired
};

// caption_to_row[c]: the image row caption c is trained with (in [0, num_images)); paired[c]: its label.
BankPairing bank_pairing(const std::vector<int64_t>& caption_to_row, const std::vector<uint8_t>& paired,
                         int64_t num_images);

// image_embs [N_img, E] (row k = image row k), caption_embs [N_cap, E] (row c = caption c), on one device.
MemoryBank build_memory_bank(const Tensor& image_embs, const Tensor& caption_embs, const BankPairing& pairing,
                             int64_t block = 1000);

// How many mined pseudo pairs of unpaired items are true pairs, with the truth "caption c describes image row
// c / im_div" (train.py `com` without its score threshold): {correct images→captions, unpaired images,
// correct captions→images, unpaired captions}.
struct BankAccuracy {
  int64_t image_correct = 0, image_total = 0, caption_correct = 0, caption_total = 0;
};
BankAccuracy bank_accuracy(const MemoryBank& bank, const BankPairing& pairing, int64_t im_div);

// Tensors "<prefix>image_to_caption", "<prefix>image_score", "<prefix>caption_to_image", "<prefix>caption_score";
// an empty bank saves nothing. load_memory_bank returns an empty bank when the state holds none, and checks the
// sizes against the data set (an error names the state file and the sizes).
void save_memory_bank(TrainingState& state, const std::string& prefix, const MemoryBank& bank);
MemoryBank load_memory_bank(const TrainingState& state, const std::string& prefix, int64_t num_images,
                            int64_t num_captions);

}  // namespace rematch::train::rcsl
