// The memory budget of batched SGR/SAF scoring with gradients (docs/memory.md §2): when one pass
// over all B_img x B_cap pairs would keep more activations for backward than the budget, the similarity encoder
// scores the captions one at a time and recomputes them in backward (SimilarityEncoder::per_caption_logits), so
// that a step keeps one caption's activations. Process-wide: `rematch train --memory_budget` sets it.
//   auto (default)  half of the device's memory: the host's MemTotal, or the CUDA device's total memory;
//   none            always one pass (one pass: the results of every earlier run, to the bit);
//   bytes           e.g. 512MiB, 2GiB, 1500000000.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "tensor/device.h"
#include "tensor/dtype.h"

namespace rematch::models {

// nullopt: auto; 0: none; else bytes.
void set_scoring_memory_budget(std::optional<int64_t> bytes);
std::optional<int64_t> scoring_memory_budget_setting();
// The budget in bytes for scoring on `device` (0: no limit).
int64_t scoring_memory_budget(Device device);
// "auto" -> nullopt, "none" -> 0, "<n>", "<n>KiB|MiB|GiB" (or KB/MB/GB, powers of 1000) -> bytes; anything
// else is an error naming `flag` and the accepted forms.
std::optional<int64_t> parse_memory_budget(const std::string& text, const std::string& flag);

// An estimate of the bytes one caption's pairs keep for backward in one pass (every image against it), from
// the shapes: the attention's [B_img, L, R] tensors, the similarity vectors and the SGR/SAF node tensors
// [B_img, L + 1, m] (SGR: per reasoning step), with half again for the temporaries at the peak.
int64_t pair_bytes_per_caption(int64_t n_img, int64_t n_word, int64_t n_reg, int64_t embed, int64_t sim_dim,
                               int64_t sgr_steps, DType dtype);

}  // namespace rematch::models
