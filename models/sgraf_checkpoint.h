// Reading SGR/SAF models from files, for scoring and evaluation. Two kinds of file are accepted:
//   * a rematch training checkpoint (nn/checkpoint.h), or the checkpoint of a `rematch train` run of an SGR/SAF
//     method (format "rematch.training_state"): tensors "model.<state-dict name>", the model shape in the
//     metadata "model_config" (sgraf_config.h's JSON);
//   * an official SGRAF/NCR-lineage checkpoint converted by tools/convert_pth.py: tensors named
//     "img_enc.*", "txt_enc.*", "sim_enc.*" exactly as our state dict (§4.9), the argparse options in the
//     metadata "opt". Its shape is read from the tensors (vocabulary, dims, regions, module, steps) and
//     checked against the options; options this port does not implement (unidirectional GRU,
//     --no_imgnorm, --no_txtnorm) are an error rather than a silently different model.
// A file is read once, whole (read_sgraf_file: its checksum, when it carries one, verified then); its models are
// built from what was read, so a file that changes on disk meanwhile cannot mix two versions.
// Loading is strict: a missing, unexpected or wrongly shaped tensor is an error naming it and the file.
#pragma once

#include <memory>
#include <string>

#include "models/sgraf_model.h"
#include "nn/nn.h"

namespace rematch::models {

enum class SgrafFileKind { RematchCheckpoint, ConvertedOfficial };

struct SgrafFile {
  std::string path;
  SgrafConfig config;
  SgrafFileKind kind = SgrafFileKind::RematchCheckpoint;
  // The state-dict prefixes of the models a rematch file holds, all of this config: {"model."}, or the two nets
  // of an NCR run, {"model.", "model_B."} (its metadata entry "model_prefixes", docs/methods/ncr.md §6). Empty
  // for a converted official file (its names carry no prefix).
  std::vector<std::string> prefixes;
  // An MSCN run's checkpoint also holds each net's meta network, the scoring head that replaces sim_eval_w
  // (docs/methods/mscn.md §5): their prefixes, one per entry of `prefixes` and in its order (metadata entry
  // "meta_prefixes", e.g. {"meta_A.", "meta_B."}). Empty for every other file.
  std::vector<std::string> meta_prefixes;
  nn::NamedTensors tensors;  // every tensor of the file, on the host
};

// Reads a model file once, whole: its tensors, its config (from the metadata, or for a converted file from the
// tensors' shapes) and kind. No model is built.
SgrafFile read_sgraf_file(const std::string& path);

// Builds the model `prefix` of a file read by read_sgraf_file (no file is opened), in `dtype`, loads its weights
// and leaves it in eval mode. The model is constructed with default_generator() (its initial draws are
// overwritten; dropout, if the caller switches to training, draws from it too). `prefix` picks one model of a file
// that holds several (SgrafFile::prefixes; an Error naming the file otherwise).
std::unique_ptr<SgrafModel> load_sgraf_model(const SgrafFile& file, DType dtype = DType::Float32,
                                             const std::string& prefix = "model.");
// read_sgraf_file(path), then its model `prefix`.
std::unique_ptr<SgrafModel> load_sgraf_model(const std::string& path, DType dtype = DType::Float32,
                                             const std::string& prefix = "model.");

// What save_training_checkpoint needs to store `model` so that load_sgraf_model can rebuild it.
nn::CheckpointInfo sgraf_checkpoint_info(const SgrafModel& model, int64_t epoch = 0, int64_t step = 0);

}  // namespace rematch::models
