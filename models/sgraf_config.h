// The shape of an SGR or SAF model (docs/backbones.md §2–§4, the SGRAF `opts.py` flags) and its JSON form, the
// `model_config` a checkpoint stores so that `rematch score`/`eval` can rebuild the model before loading its
// weights. Only the defaults of the public code are supported: Bi-GRU with directions averaged (`--bi_gru`
// default), l2-normalised image and text embeddings (`--no_imgnorm`/`--no_txtnorm` off).
#pragma once

#include <cstdint>
#include <string>

#include "tensor/tensor.h"

namespace rematch::models {

// SGR: graph reasoning over the similarity nodes (§4.5); SAF: attention filtration (§4.6).
enum class SimilarityModule { SGR, SAF };
const char* module_name(SimilarityModule m);                  // "SGR" | "SAF"
SimilarityModule parse_module_name(const std::string& name);  // an Error for anything else

struct SgrafConfig {
  SimilarityModule module = SimilarityModule::SGR;
  int64_t vocab_size = 0;     // rows of the word embedding (F30K 8,481, COCO 11,353, CC152K 12,072; §3.1)
  int64_t img_dim = 2048;     // region feature size (§2)
  int64_t word_dim = 300;     // word embedding size (§3.3)
  int64_t embed_size = 1024;  // joint embedding d: image FC output, GRU hidden size per direction
  int64_t sim_dim = 256;      // m, the similarity-vector size (§4.4)
  int64_t num_regions = 36;   // R, region slots per image: the channels of VisualSA's BatchNorm (§4.1)
  int64_t sgr_step = 3;       // graph-reasoning steps (SGR only, §4.5)
  double dropout = 0.4;       // text embedding, VisualSA and TextSA dropout (§1); training mode only
};

// The most graph-reasoning steps a config may ask for (the SGR papers use 3).
inline constexpr int64_t kMaxSgrStep = 64;

// An Error naming the first field out of range (sizes must be positive, dropout in [0, 1), sgr_step at most
// kMaxSgrStep).
void validate(const SgrafConfig& config);

// How many values the state dict of the model `config` describes holds (parameters and BatchNorm buffers),
// computed from the shapes without building it — so that a file can be checked to hold that many before the
// model is allocated. A double: a damaged config can describe more than int64 counts.
double state_dict_size(const SgrafConfig& config);

// {"model": "sgraf", "module_name": "SGR", "vocab_size": ..., "img_dim": ..., "word_dim": ...,
//  "embed_size": ..., "sim_dim": ..., "num_regions": ..., "sgr_step": ..., "dropout": ...}
std::string to_json(const SgrafConfig& config);
// Reads what to_json writes; missing fields keep their defaults except vocab_size, which is required. An
// Error names what is malformed; "model" must be "sgraf" when present.
SgrafConfig sgraf_config_from_json(const std::string& text);

// "SGR (V=8481, img_dim=2048, word_dim=300, embed=1024, sim_dim=256, R=36, steps=3)", for reports.
std::string describe(const SgrafConfig& config);

}  // namespace rematch::models
