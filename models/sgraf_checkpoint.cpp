#include "models/sgraf_checkpoint.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "tensor/json_depth.h"

namespace rematch::models {
namespace {

using Json = nlohmann::json;
const std::string kModelPrefix = "model.";
const std::string kSgrPrefix = "sim_enc.SGR_module.";

bool starts_with(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

bool is_rematch_checkpoint(const nn::SafetensorsMetadata& meta) {
  auto it = meta.find("format");
  return it != meta.end() && it->second == "rematch.training_checkpoint";
}

// A run's full training state (train/run/training_state.h) of an SGR/SAF method: the model's tensors under
// "model." and its shape in the entry "model_config".
bool is_training_state(const nn::SafetensorsMetadata& meta) {
  auto it = meta.find("format");
  return it != meta.end() && it->second == "rematch.training_state" && meta.count("model_config") > 0;
}

bool is_converted(const nn::NamedTensors& tensors) {
  for (const auto& [name, t] : tensors)
    if (starts_with(name, "img_enc.") || starts_with(name, "txt_enc.") || starts_with(name, "sim_enc.")) return true;
  return false;
}

const Tensor& tensor_named(const nn::NamedTensors& tensors, const std::string& name, int64_t dims,
                           const std::string& path) {
  for (const auto& [n, t] : tensors)
    if (n == name) {
      REMATCH_CHECK(t.dim() == dims, "'", path, "': tensor ", name, " should have ", dims, " dims, got ", t.describe());
      return t;
    }
  REMATCH_FAIL("'", path, "': converted SGRAF checkpoint lacks the tensor ", name);
}

// The shape of a converted official model from its tensors, checked against its argparse options.
SgrafConfig config_from_tensors(const nn::NamedTensors& tensors, const nn::SafetensorsMetadata& meta,
                                const std::string& path) {
  SgrafConfig c;
  const Tensor& fc = tensor_named(tensors, "img_enc.fc.weight", 2, path);
  const Tensor& embed = tensor_named(tensors, "txt_enc.embed.weight", 2, path);
  c.embed_size = fc.size(0);
  c.img_dim = fc.size(1);
  c.vocab_size = embed.size(0);
  c.word_dim = embed.size(1);
  c.sim_dim = tensor_named(tensors, "sim_enc.sim_tranloc_w.weight", 2, path).size(0);
  c.num_regions = tensor_named(tensors, "sim_enc.v_global_w.embedding_local.1.weight", 1, path).size(0);
  std::set<std::string> steps;
  bool saf = false;
  for (const auto& [name, t] : tensors) {
    if (starts_with(name, kSgrPrefix))
      steps.insert(name.substr(kSgrPrefix.size(), name.find('.', kSgrPrefix.size()) - kSgrPrefix.size()));
    saf |= starts_with(name, "sim_enc.SAF_module.");
  }
  REMATCH_CHECK(steps.empty() != !saf, "'", path, "': expected either SGR_module or SAF_module tensors under sim_enc.");
  c.module = saf ? SimilarityModule::SAF : SimilarityModule::SGR;
  if (!saf) c.sgr_step = static_cast<int64_t>(steps.size());

  auto it = meta.find("opt");
  if (it != meta.end()) {
    Json opt;
    io::require_shallow_json(it->second, "metadata 'opt' of checkpoint", path);
    try {
      opt = Json::parse(it->second);
    } catch (const Json::exception& e) {
      REMATCH_FAIL("'", path, "': metadata 'opt' is not valid JSON: ", e.what());
    }
    if (opt.contains("module_name") && opt["module_name"].is_string())
      REMATCH_CHECK(opt["module_name"] == module_name(c.module), "'", path, "': the options say module_name ",
                    opt["module_name"].dump(), " but the tensors hold a ", module_name(c.module), " model");
    // store_false / store_true flags of opts.py (§9 item 1): the defaults are what this port implements.
    const std::pair<const char*, bool> supported[] = {{"bi_gru", true}, {"no_imgnorm", false}, {"no_txtnorm", false}};
    for (const auto& [flag, value] : supported)
      if (opt.contains(flag) && opt[flag].is_boolean())
        REMATCH_CHECK(opt[flag].get<bool>() == value, "'", path, "': option ", flag, " = ", opt[flag].dump(),
                      " is not supported (only ", flag, " = ", value ? "true" : "false", ")");
  }
  validate(c);
  return c;
}

// The model_config of a rematch checkpoint or training state, errors naming the file.
SgrafConfig rematch_config(const std::string& path, const nn::SafetensorsMetadata& meta) {
  try {
    if (is_training_state(meta)) return sgraf_config_from_json(meta.at("model_config"));
    return sgraf_config_from_json(nn::checkpoint_info(meta, path).model_config);
  } catch (const Error& e) {
    const std::string what = e.what();
    if (what.find(path) != std::string::npos) throw;
    REMATCH_FAIL("'", path, "': ", what);
  }
}

// A metadata entry that holds a JSON list of strings.
std::vector<std::string> string_list(const std::string& path, const std::string& key, const std::string& value) {
  std::vector<std::string> out;
  io::require_shallow_json(value, "metadata '" + key + "' of checkpoint", path);
  try {
    const Json j = Json::parse(value);
    if (!j.is_array()) throw std::invalid_argument("not a list");
    for (const Json& p : j) out.push_back(p.get<std::string>());
  } catch (const std::invalid_argument&) {
    REMATCH_FAIL("'", path, "': metadata '", key, "' is not a JSON list of strings: ", value);
  } catch (const Json::exception& e) {
    REMATCH_FAIL("'", path, "': metadata '", key, "' is not a JSON list of strings: ", e.what());
  }
  return out;
}

// The models' prefixes of a rematch file: its metadata "model_prefixes" (a JSON list of strings; NCR's two nets),
// else the one "model.".
std::vector<std::string> model_prefixes(const std::string& path, const nn::SafetensorsMetadata& meta) {
  auto it = meta.find("model_prefixes");
  if (it == meta.end()) return {kModelPrefix};
  const std::vector<std::string> out = string_list(path, "model_prefixes", it->second);
  REMATCH_CHECK(!out.empty() && out.front() == kModelPrefix, "'", path,
                "': metadata 'model_prefixes' must list \"model.\" first, got ", it->second);
  return out;
}

}  // namespace

SgrafFile read_sgraf_file(const std::string& path) {
  nn::SafetensorsFile f = nn::load_safetensors(path);
  SgrafFile file;
  file.path = path;
  if (is_rematch_checkpoint(f.metadata) || is_training_state(f.metadata)) {
    file.config = rematch_config(path, f.metadata);
    file.prefixes = model_prefixes(path, f.metadata);
    // MSCN's meta nets (one per model): without them its nets' sim_eval_w heads would score, untrained.
    auto meta = f.metadata.find("meta_prefixes");
    if (meta != f.metadata.end()) {
      file.meta_prefixes = string_list(path, "meta_prefixes", meta->second);
      REMATCH_CHECK(file.meta_prefixes.size() == file.prefixes.size(), "'", path, "': metadata 'meta_prefixes' ",
                    meta->second, " does not name one meta net per model of 'model_prefixes'");
    } else {
      for (const auto& [name, t] : f.tensors)
        REMATCH_CHECK(!starts_with(name, "meta_A."), "'", path, "' holds MSCN meta nets (", name,
                      ") but no metadata 'meta_prefixes' naming them: a checkpoint of an older `--method mscn`; "
                      "retrain it (or resume it for one epoch) with this version so that it scores with its meta "
                      "nets rather than the untrained sim_eval_w heads");
    }
  } else {
    REMATCH_CHECK(is_converted(f.tensors), "'", path,
                  "' is neither a rematch checkpoint of an SGR/SAF model (metadata format "
                  "'rematch.training_checkpoint', or a run's 'rematch.training_state' with a model_config) nor an "
                  "official checkpoint converted by tools/convert_pth.py (tensors named img_enc.*, txt_enc.*, sim_enc.*)");
    file.kind = SgrafFileKind::ConvertedOfficial;
    file.config = config_from_tensors(f.tensors, f.metadata, path);
  }
  file.tensors = std::move(f.tensors);
  return file;
}

std::unique_ptr<SgrafModel> load_sgraf_model(const SgrafFile& file, DType dtype, const std::string& prefix) {
  const std::string& path = file.path;
  nn::StateDict state;
  if (file.kind == SgrafFileKind::RematchCheckpoint) {
    REMATCH_CHECK(std::find(file.prefixes.begin(), file.prefixes.end(), prefix) != file.prefixes.end(), "'", path,
                  "' holds no model under '", prefix, "'");
    for (const auto& [name, t] : file.tensors)
      if (starts_with(name, prefix)) state.emplace_back(name.substr(prefix.size()), t);
  } else {
    REMATCH_CHECK(prefix == kModelPrefix, "'", path,
                  "' is a converted official checkpoint of one model; it has no '", prefix, "'");
    state = file.tensors;
  }
  // The config is only a claim until the weights load: a file of a few kB whose config asks for embed_size
  // 30000 would have the model allocate tens of GB first. The file must hold at least as many values.
  double held = 0;
  for (const auto& [name, t] : state) held += static_cast<double>(t.numel());
  const double needed = state_dict_size(file.config);
  REMATCH_CHECK(needed <= held, "'", path, "' (", describe(file.config), "): that model has ", needed,
                " values, but the file holds only ", held, " (the config does not describe the file's tensors)");
  auto model = std::make_unique<SgrafModel>(file.config, dtype);
  try {
    model->load_state_dict(state);
  } catch (const Error& e) {
    REMATCH_FAIL("'", path, "' (", describe(file.config), "): ", e.what());
  }
  model->eval();
  return model;
}

std::unique_ptr<SgrafModel> load_sgraf_model(const std::string& path, DType dtype, const std::string& prefix) {
  return load_sgraf_model(read_sgraf_file(path), dtype, prefix);
}

nn::CheckpointInfo sgraf_checkpoint_info(const SgrafModel& model, int64_t epoch, int64_t step) {
  nn::CheckpointInfo info;
  info.model_config = to_json(model.config());
  info.epoch = epoch;
  info.step = step;
  return info;
}

}  // namespace rematch::models
