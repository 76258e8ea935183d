// The full state of a training run as one bag of named tensors and string entries, so a method with several
// models, optimizers, schedules, generators and its own per-epoch state (a clean/noisy split, a memory bank,
// soft targets, an image queue) saves and restores all of it in one safetensors file (`--resume` continues
// exactly). Each part goes under a prefix the method chooses ("net.", "cost_net.", "optim.", ...):
//   module     tensors "<prefix><state_dict name>"
//   optimizer  tensors "<prefix>state.<param>.<buffer>", entry "<prefix>" = {"kind", "lrs", "steps"}
//   schedule   entry "<prefix>" = {"kind", "last_epoch", "base_lrs"}
//   generator  entry "<prefix>" = {"seed", "offset"}
//   tensor     tensors "<name>" as given (host copies)
//   entry      any string (JSON text by convention)
// Writing goes through a temporary file and a rename (nn/safetensors.h), so a crash never leaves a
// half-written checkpoint, and the file carries a checksum of its contents that load() verifies (a damaged
// file is an nn::DamagedFile error naming it; a file of an earlier version without one loads unchecked). Every getter names the file and the missing or malformed part.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "nn/nn.h"

namespace rematch::train {

class TrainingState {
 public:
  TrainingState() = default;

  void put_module(const std::string& prefix, const nn::Module& module);
  void put_optimizer(const std::string& prefix, const nn::Optimizer& optimizer);
  void put_schedule(const std::string& prefix, const nn::LRSchedule& schedule);
  void put_generator(const std::string& key, const Generator& gen);
  void put_tensor(const std::string& name, const Tensor& t);
  void put_entry(const std::string& key, const std::string& value);
  void put_int(const std::string& key, int64_t value) { put_entry(key, std::to_string(value)); }
  void put_double(const std::string& key, double value);
  void put_int_vector(const std::string& key, const std::vector<int64_t>& v);
  void put_double_vector(const std::string& key, const std::vector<double>& v);

  // Restores into existing objects (strict: names, shapes and kinds must match).
  void get_module(const std::string& prefix, nn::Module& module) const;
  void get_optimizer(const std::string& prefix, nn::Optimizer& optimizer) const;
  void get_schedule(const std::string& prefix, nn::LRSchedule& schedule) const;
  void get_generator(const std::string& key, Generator& gen) const;
  Tensor get_tensor(const std::string& name) const;  // host tensor
  const std::string& get_entry(const std::string& key) const;
  int64_t get_int(const std::string& key) const;
  double get_double(const std::string& key) const;
  std::vector<int64_t> get_int_vector(const std::string& key) const;
  std::vector<double> get_double_vector(const std::string& key) const;
  bool has_tensor(const std::string& name) const;
  bool has_entry(const std::string& key) const { return entries_.count(key) > 0; }

  // safetensors with entries as metadata; `source` names the file in errors after load().
  void save(const std::string& path) const;
  static TrainingState load(const std::string& path);
  // A copy whose tensors are copies too (a method's load_state may keep a tensor it is given and change it).
  TrainingState deep_copy() const;
  const std::string& source() const { return source_; }
  // False for a file loaded without a checksum to verify (written before checkpoints carried one).
  bool checksum_verified() const { return checksum_verified_; }

  const nn::NamedTensors& tensors() const { return tensors_; }
  const std::map<std::string, std::string>& entries() const { return entries_; }

 private:
  [[noreturn]] void fail(const std::string& what) const;

  nn::NamedTensors tensors_;
  std::map<std::string, std::string> entries_;
  std::string source_ = "training state";
  bool checksum_verified_ = false;
};

}  // namespace rematch::train
