// Training checkpoints: one safetensors file holding everything a run needs to continue exactly where it
// stopped. Tensors: the model's state_dict as "model.<name>" and the optimizer's buffers as
// "optim.state.<param index>.<buffer>". Metadata (string values; the structured ones are JSON text):
//   format          "rematch.training_checkpoint"
//   format_version  "1"
//   model_config    the caller's JSON text, kept verbatim (what the model was built from)
//   epoch, step     decimal integers
//   optimizer       {"kind": "Adam", "lrs": [per group], "steps": [per parameter]}
//   schedule        {"kind": "StepLR", "last_epoch": 5, "base_lrs": [...]}   (only when a schedule is saved)
//   rng             {"seed": ..., "offset": ...} of default_generator()
//   extra.<key>     the caller's own entries (best score so far, another generator's state, ...)
// Doubles are written with 17 significant digits, so learning rates come back bit for bit.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "nn/lr_schedule.h"
#include "nn/module.h"
#include "nn/optim.h"
#include "nn/safetensors.h"

namespace rematch::nn {

constexpr int kCheckpointFormatVersion = 1;

struct CheckpointInfo {
  std::string model_config = "{}";  // JSON text
  int64_t epoch = 0;
  int64_t step = 0;
  std::map<std::string, std::string> extra;
};

// Saves model, optimizer, schedule (none when null) and the state of default_generator(); written
// atomically (temporary file + rename). The model config must be valid JSON.
void save_training_checkpoint(const std::string& path, const Module& model, const Optimizer& optimizer,
                              const LRSchedule* schedule, const CheckpointInfo& info);

// Restores model (strict state_dict), optimizer, schedule and default_generator() and returns the info.
// A schedule must be passed exactly when one was saved, and of the same kind. The metadata is checked
// before anything is restored, then model, schedule and optimizer each check their part before taking it;
// an error names the file and what does not match (parts restored before the failing one keep the new
// values, so discard the objects after an error).
CheckpointInfo load_training_checkpoint(const std::string& path, Module& model, Optimizer& optimizer,
                                        LRSchedule* schedule);

// The info alone, e.g. to rebuild the model from its config before loading the checkpoint.
CheckpointInfo read_checkpoint_info(const std::string& path);
// The info in the metadata of a checkpoint already read (load_safetensors); `path` names it in errors.
CheckpointInfo checkpoint_info(const SafetensorsMetadata& metadata, const std::string& path);

// Only the model's weights ("model.*" entries, strict), e.g. for evaluation.
void load_model_weights(const std::string& path, Module& model);

}  // namespace rematch::nn
