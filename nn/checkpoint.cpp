// Training checkpoints on top of safetensors: tensors under "model." and "optim.state.", everything else
// in the string metadata as JSON text (nlohmann::json writes doubles with round-trip precision).
#include "nn/checkpoint.h"

#include <nlohmann/json.hpp>

#include "nn/safetensors.h"
#include "tensor/json_depth.h"

namespace rematch::nn {
namespace {

using Json = nlohmann::json;
constexpr const char* kFormat = "rematch.training_checkpoint";
const std::string kModelPrefix = "model.";
const std::string kOptimPrefix = "optim.state.";
const std::string kExtraPrefix = "extra.";

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  REMATCH_FAIL("load_training_checkpoint '", path, "': ", what);
}

const std::string& entry(const SafetensorsMetadata& meta, const std::string& key, const std::string& path) {
  auto it = meta.find(key);
  if (it == meta.end()) fail(path, "the metadata lacks '" + key + "'");
  return it->second;
}

Json parse_json(const std::string& text, const std::string& key, const std::string& path) {
  io::require_shallow_json(text, "metadata '" + key + "' of checkpoint", path);
  try {
    return Json::parse(text);
  } catch (const Json::exception& e) {
    fail(path, "metadata '" + key + "' is not valid JSON: " + e.what());
  }
}

int64_t parse_int(const std::string& text, const std::string& key, const std::string& path) {
  const Json v = parse_json(text, key, path);
  if (!v.is_number_integer()) fail(path, "metadata '" + key + "' is not an integer: " + text);
  return v.get<int64_t>();
}

// A field of a JSON object, checked with `ok`; `what` says what was expected.
template <typename Check>
const Json& field(const Json& obj, const std::string& name, const std::string& key, const std::string& path,
                  Check ok, const char* what) {
  if (!obj.is_object() || !obj.contains(name) || !ok(obj[name]))
    fail(path, "metadata '" + key + "' needs the field '" + name + "' (" + what + "): " + obj.dump());
  return obj[name];
}

bool is_number_list(const Json& v) {
  if (!v.is_array()) return false;
  for (const Json& x : v)
    if (!x.is_number()) return false;
  return true;
}

bool is_int_list(const Json& v) {
  if (!v.is_array()) return false;
  for (const Json& x : v)
    if (!x.is_number_integer()) return false;
  return true;
}

void check_format(const SafetensorsMetadata& meta, const std::string& path) {
  auto it = meta.find("format");
  if (it == meta.end() || it->second != kFormat)
    fail(path, std::string("not a rematch training checkpoint (metadata 'format' is ") +
                   (it == meta.end() ? "missing" : "'" + it->second + "'") + ", expected '" + kFormat + "')");
  const int64_t version = parse_int(entry(meta, "format_version", path), "format_version", path);
  if (version != kCheckpointFormatVersion)
    fail(path, "format version " + std::to_string(version) + " is not supported (this build reads version " +
                   std::to_string(kCheckpointFormatVersion) + ")");
}

CheckpointInfo parse_info(const SafetensorsMetadata& meta, const std::string& path) {
  check_format(meta, path);
  CheckpointInfo info;
  info.model_config = entry(meta, "model_config", path);
  parse_json(info.model_config, "model_config", path);
  info.epoch = parse_int(entry(meta, "epoch", path), "epoch", path);
  info.step = parse_int(entry(meta, "step", path), "step", path);
  for (const auto& [key, value] : meta)
    if (key.compare(0, kExtraPrefix.size(), kExtraPrefix) == 0) info.extra[key.substr(kExtraPrefix.size())] = value;
  return info;
}

// Runs `f`, prefixing any error with the checkpoint's path.
template <typename F> void restoring(const std::string& path, F&& f) {
  try {
    f();
  } catch (const Error& e) {
    fail(path, e.what());
  }
}

StateDict model_entries(const SafetensorsFile& file) {
  StateDict out;
  for (const auto& [name, t] : file.tensors)
    if (name.compare(0, kModelPrefix.size(), kModelPrefix) == 0) out.emplace_back(name.substr(kModelPrefix.size()), t);
  return out;
}

}  // namespace

void save_training_checkpoint(const std::string& path, const Module& model, const Optimizer& optimizer,
                              const LRSchedule* schedule, const CheckpointInfo& info) {
  try {
    const Json config = Json::parse(info.model_config);
    (void)config;
  } catch (const Json::exception& e) {
    REMATCH_FAIL("save_training_checkpoint '", path, "': the model config is not valid JSON: ", e.what());
  }
  NamedTensors tensors;
  for (const auto& [name, t] : model.state_dict()) tensors.emplace_back(kModelPrefix + name, t);
  const OptimizerState optim = optimizer.state_dict();
  for (const auto& [name, t] : optim.buffers) tensors.emplace_back(kOptimPrefix + name, t);

  SafetensorsMetadata meta;
  meta["format"] = kFormat;
  meta["format_version"] = std::to_string(kCheckpointFormatVersion);
  meta["model_config"] = info.model_config;
  meta["epoch"] = std::to_string(info.epoch);
  meta["step"] = std::to_string(info.step);
  meta["optimizer"] = Json{{"kind", optim.kind}, {"lrs", optim.lrs}, {"steps", optim.steps}}.dump();
  if (schedule) {
    const ScheduleState s = schedule->state();
    meta["schedule"] = Json{{"kind", s.kind}, {"last_epoch", s.last_epoch}, {"base_lrs", s.base_lrs}}.dump();
  }
  const GeneratorState rng = default_generator().state();
  meta["rng"] = Json{{"seed", rng.seed}, {"offset", rng.offset}}.dump();
  for (const auto& [key, value] : info.extra) meta[kExtraPrefix + key] = value;
  save_safetensors(path, tensors, meta, /*checksum=*/true);
}

CheckpointInfo load_training_checkpoint(const std::string& path, Module& model, Optimizer& optimizer,
                                        LRSchedule* schedule) {
  const SafetensorsFile file = load_safetensors(path);
  const SafetensorsMetadata& meta = file.metadata;
  const CheckpointInfo info = parse_info(meta, path);

  const Json optim_json = parse_json(entry(meta, "optimizer", path), "optimizer", path);
  OptimizerState optim;
  optim.kind = field(optim_json, "kind", "optimizer", path, [](const Json& v) { return v.is_string(); }, "a string")
                   .get<std::string>();
  optim.lrs = field(optim_json, "lrs", "optimizer", path, is_number_list, "a list of numbers").get<std::vector<double>>();
  optim.steps = field(optim_json, "steps", "optimizer", path, is_int_list, "a list of integers").get<std::vector<int64_t>>();

  const bool has_schedule = meta.count("schedule") > 0;
  if (has_schedule && !schedule)
    fail(path, "the checkpoint holds a learning-rate schedule; pass the run's schedule to restore it");
  if (!has_schedule && schedule)
    fail(path, std::string("the checkpoint holds no learning-rate schedule, but a ") + schedule->kind() + " was passed");
  ScheduleState sched;
  if (has_schedule) {
    const Json s = parse_json(meta.at("schedule"), "schedule", path);
    sched.kind = field(s, "kind", "schedule", path, [](const Json& v) { return v.is_string(); }, "a string")
                     .get<std::string>();
    sched.last_epoch = field(s, "last_epoch", "schedule", path, [](const Json& v) { return v.is_number_integer(); },
                             "an integer").get<int64_t>();
    sched.base_lrs = field(s, "base_lrs", "schedule", path, is_number_list, "a list of numbers").get<std::vector<double>>();
  }

  const Json rng_json = parse_json(entry(meta, "rng", path), "rng", path);
  auto is_u64 = [](const Json& v) { return v.is_number_unsigned(); };
  const GeneratorState rng{field(rng_json, "seed", "rng", path, is_u64, "a non-negative integer").get<uint64_t>(),
                           field(rng_json, "offset", "rng", path, is_u64, "a non-negative integer").get<uint64_t>()};

  for (const auto& [name, t] : file.tensors) {
    const bool model_entry = name.compare(0, kModelPrefix.size(), kModelPrefix) == 0;
    if (model_entry) continue;
    if (name.compare(0, kOptimPrefix.size(), kOptimPrefix) != 0)
      fail(path, "unexpected tensor '" + name + "' (expected names starting with 'model.' or 'optim.state.')");
    optim.buffers.emplace_back(name.substr(kOptimPrefix.size()), t);
  }

  restoring(path, [&] { model.load_state_dict(model_entries(file)); });
  if (schedule) restoring(path, [&] { schedule->load_state(sched); });
  // After the schedule: the saved lrs are the ones in effect, even where set_lr overrode the schedule.
  restoring(path, [&] { optimizer.load_state_dict(optim); });
  default_generator().set_state(rng);
  return info;
}

CheckpointInfo read_checkpoint_info(const std::string& path) {
  return parse_info(read_safetensors_metadata(path), path);
}

CheckpointInfo checkpoint_info(const SafetensorsMetadata& metadata, const std::string& path) {
  return parse_info(metadata, path);
}

void load_model_weights(const std::string& path, Module& model) {
  const SafetensorsFile file = load_safetensors(path);
  check_format(file.metadata, path);
  restoring(path, [&] { model.load_state_dict(model_entries(file)); });
}

}  // namespace rematch::nn
