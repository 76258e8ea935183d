#include "train/run/training_state.h"

#include <nlohmann/json.hpp>

#include "nn/safetensors.h"
#include "tensor/kernels.h"

namespace rematch::train {
namespace {

using Json = nlohmann::json;
const std::string kOptimState = "state.";

bool starts_with(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

}  // namespace

void TrainingState::fail(const std::string& what) const { REMATCH_FAIL(source_, ": ", what); }

void TrainingState::put_tensor(const std::string& name, const Tensor& t) {
  REMATCH_CHECK(t.defined(), "TrainingState: tensor '", name, "' is undefined");
  for (auto& [n, existing] : tensors_)
    if (n == name) {
      existing = kernels::to_device(t.detach(), Device::cpu());
      return;
    }
  tensors_.emplace_back(name, kernels::to_device(t.detach(), Device::cpu()));
}

void TrainingState::put_entry(const std::string& key, const std::string& value) { entries_[key] = value; }

void TrainingState::put_double(const std::string& key, double value) { put_entry(key, Json(value).dump()); }

void TrainingState::put_int_vector(const std::string& key, const std::vector<int64_t>& v) {
  put_tensor(key, from_vector(v, {static_cast<int64_t>(v.size())}));
}

void TrainingState::put_double_vector(const std::string& key, const std::vector<double>& v) {
  put_tensor(key, from_vector(v, {static_cast<int64_t>(v.size())}));
}

void TrainingState::put_module(const std::string& prefix, const nn::Module& module) {
  for (const auto& [name, t] : module.state_dict()) put_tensor(prefix + name, t);
}

void TrainingState::put_optimizer(const std::string& prefix, const nn::Optimizer& optimizer) {
  const nn::OptimizerState s = optimizer.state_dict();
  for (const auto& [name, t] : s.buffers) put_tensor(prefix + kOptimState + name, t);
  put_entry(prefix, Json{{"kind", s.kind}, {"lrs", s.lrs}, {"steps", s.steps}}.dump());
}

void TrainingState::put_schedule(const std::string& prefix, const nn::LRSchedule& schedule) {
  const nn::ScheduleState s = schedule.state();
  put_entry(prefix, Json{{"kind", s.kind}, {"last_epoch", s.last_epoch}, {"base_lrs", s.base_lrs}}.dump());
}

void TrainingState::put_generator(const std::string& key, const Generator& gen) {
  const GeneratorState s = gen.state();
  put_entry(key, Json{{"seed", s.seed}, {"offset", s.offset}}.dump());
}

bool TrainingState::has_tensor(const std::string& name) const {
  for (const auto& [n, t] : tensors_)
    if (n == name) return true;
  return false;
}

Tensor TrainingState::get_tensor(const std::string& name) const {
  for (const auto& [n, t] : tensors_)
    if (n == name) return t;
  fail("no tensor '" + name + "'");
}

const std::string& TrainingState::get_entry(const std::string& key) const {
  auto it = entries_.find(key);
  if (it == entries_.end()) fail("no entry '" + key + "'");
  return it->second;
}

int64_t TrainingState::get_int(const std::string& key) const {
  const std::string& v = get_entry(key);
  try {
    size_t used = 0;
    const int64_t x = std::stoll(v, &used);
    if (used == v.size()) return x;
  } catch (const std::exception&) {
  }
  fail("entry '" + key + "' is not an integer: '" + v + "'");
}

double TrainingState::get_double(const std::string& key) const {
  const std::string& v = get_entry(key);
  try {
    const Json j = Json::parse(v);
    if (j.is_number()) return j.get<double>();
  } catch (const Json::exception&) {
  }
  fail("entry '" + key + "' is not a number: '" + v + "'");
}

std::vector<int64_t> TrainingState::get_int_vector(const std::string& key) const {
  const Tensor t = get_tensor(key);
  if (t.dim() != 1 || t.dtype() != DType::Int64) fail("tensor '" + key + "' is not an int64 vector: " + t.describe());
  return t.to_vector<int64_t>();
}

std::vector<double> TrainingState::get_double_vector(const std::string& key) const {
  const Tensor t = get_tensor(key);
  if (t.dim() != 1 || t.dtype() != DType::Float64)
    fail("tensor '" + key + "' is not a float64 vector: " + t.describe());
  return t.to_vector<double>();
}

void TrainingState::get_module(const std::string& prefix, nn::Module& module) const {
  nn::StateDict dict;
  for (const auto& [name, t] : tensors_)
    if (starts_with(name, prefix) && !starts_with(name.substr(prefix.size()), kOptimState))
      dict.emplace_back(name.substr(prefix.size()), t);
  try {
    module.load_state_dict(dict);
  } catch (const Error& e) {
    fail(std::string("module '") + prefix + "': " + e.what());
  }
}

void TrainingState::get_optimizer(const std::string& prefix, nn::Optimizer& optimizer) const {
  nn::OptimizerState s;
  try {
    const Json j = Json::parse(get_entry(prefix));
    s.kind = j.at("kind").get<std::string>();
    s.lrs = j.at("lrs").get<std::vector<double>>();
    s.steps = j.at("steps").get<std::vector<int64_t>>();
  } catch (const Json::exception& e) {
    fail("optimizer entry '" + prefix + "' is malformed: " + e.what());
  }
  const std::string buffers = prefix + kOptimState;
  for (const auto& [name, t] : tensors_)
    if (starts_with(name, buffers)) s.buffers.emplace_back(name.substr(buffers.size()), t);
  try {
    optimizer.load_state_dict(s);
  } catch (const Error& e) {
    fail("optimizer '" + prefix + "': " + e.what());
  }
}

void TrainingState::get_schedule(const std::string& prefix, nn::LRSchedule& schedule) const {
  nn::ScheduleState s;
  try {
    const Json j = Json::parse(get_entry(prefix));
    s.kind = j.at("kind").get<std::string>();
    s.last_epoch = j.at("last_epoch").get<int64_t>();
    s.base_lrs = j.at("base_lrs").get<std::vector<double>>();
  } catch (const Json::exception& e) {
    fail("schedule entry '" + prefix + "' is malformed: " + e.what());
  }
  if (s.kind != schedule.kind()) fail("schedule '" + prefix + "' is a " + s.kind + ", expected " + schedule.kind());
  try {
    schedule.load_state(s);
  } catch (const Error& e) {
    fail("schedule '" + prefix + "': " + e.what());
  }
}

void TrainingState::get_generator(const std::string& key, Generator& gen) const {
  try {
    const Json j = Json::parse(get_entry(key));
    gen.set_state({j.at("seed").get<uint64_t>(), j.at("offset").get<uint64_t>()});
  } catch (const Json::exception& e) {
    fail("generator entry '" + key + "' is malformed: " + e.what());
  }
}

void TrainingState::save(const std::string& path) const {
  nn::SafetensorsMetadata meta(entries_.begin(), entries_.end());
  meta["format"] = "rematch.training_state";
  nn::save_safetensors(path, tensors_, meta, /*checksum=*/true);
}

TrainingState TrainingState::deep_copy() const {
  TrainingState s = *this;
  for (auto& [name, t] : s.tensors_) t = kernels::clone(t);
  return s;
}

TrainingState TrainingState::load(const std::string& path) {
  nn::SafetensorsFile file = nn::load_safetensors(path);
  TrainingState s;
  s.source_ = path;
  auto it = file.metadata.find("format");
  if (it == file.metadata.end() || it->second != "rematch.training_state")
    s.fail("not a rematch training state (metadata 'format' is " +
           (it == file.metadata.end() ? std::string("missing") : "'" + it->second + "'") +
           ", expected 'rematch.training_state')");
  file.metadata.erase("format");
  s.tensors_ = std::move(file.tensors);
  s.entries_ = std::move(file.metadata);
  s.checksum_verified_ = file.checksum_verified;
  return s;
}

}  // namespace rematch::train
