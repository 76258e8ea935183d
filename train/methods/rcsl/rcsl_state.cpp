// What a checkpoint of rcsl or rcsl-nc holds beyond the model (docs/methods/rcsl.md): the stage its optimizer
// belongs to, the generators, the memory bank and, inside an epoch, its labels, batch plan and epoch line.
#include <nlohmann/json.hpp>

#include "train/methods/rcsl/rcsl_method.h"

namespace rematch::train {

using Json = nlohmann::json;

const char* RcslMethod::stage_name(Stage stage) { return stage == Stage::Mining ? "mining" : "learning"; }

void RcslMethod::save_state(TrainingState& s) const {
  s.put_module("model.", *model_);
  s.put_optimizer("optim.", *optimizer_);
  s.put_schedule("schedule.", *schedule_);
  s.put_entry("rcsl.stage", stage_name(stage_));
  s.put_generator("rng.model", model_gen_);
  s.put_generator("rng.augment", augment_gen_);
  s.put_int("rcsl.epoch", epoch_);
  rcsl::save_memory_bank(s, "rcsl.bank.", bank_);
  if (epoch_ < 0) return;
  s.put_int_vector("rcsl.labels", std::vector<int64_t>(labels_.begin(), labels_.end()));
  std::vector<int64_t> flat, sizes;
  for (const auto& batch : plan_) {
    flat.insert(flat.end(), batch.begin(), batch.end());
    sizes.push_back(static_cast<int64_t>(batch.size()));
  }
  s.put_int_vector("rcsl.plan.captions", flat);
  s.put_int_vector("rcsl.plan.sizes", sizes);
  s.put_entry("rcsl.epoch_info",
              Json{{"phase", epoch_info_.phase}, {"steps", epoch_info_.steps}, {"stats", epoch_info_.stats}}.dump());
}

void RcslMethod::load_state(const TrainingState& s) {
  const std::string& stage = s.get_entry("rcsl.stage");
  REMATCH_CHECK(stage == "learning" || stage == "mining", s.source(), ": entry 'rcsl.stage' is '", stage,
                "', expected learning or mining");
  new_optimizer(stage == "mining" ? Stage::Mining : Stage::Learning);
  s.get_module("model.", *model_);
  s.get_optimizer("optim.", *optimizer_);
  s.get_schedule("schedule.", *schedule_);
  s.get_generator("rng.model", model_gen_);
  s.get_generator("rng.augment", augment_gen_);
  epoch_ = s.get_int("rcsl.epoch");
  const int64_t n_cap = data_.train->num_captions();
  bank_ = rcsl::load_memory_bank(s, "rcsl.bank.", data_.train->num_images(), n_cap);
  if (epoch_ < 0) return;
  const std::vector<int64_t> labels = s.get_int_vector("rcsl.labels");
  REMATCH_CHECK(static_cast<int64_t>(labels.size()) == n_cap, s.source(), ": 'rcsl.labels' has ", labels.size(),
                " entries for ", n_cap, " training captions");
  labels_.assign(labels.begin(), labels.end());
  const std::vector<int64_t> flat = s.get_int_vector("rcsl.plan.captions");
  const std::vector<int64_t> sizes = s.get_int_vector("rcsl.plan.sizes");
  plan_.clear();
  size_t at = 0;
  for (int64_t size : sizes) {
    REMATCH_CHECK(size >= 1 && at + static_cast<size_t>(size) <= flat.size(), s.source(),
                  ": 'rcsl.plan.sizes' does not fit 'rcsl.plan.captions' (", flat.size(), " captions)");
    plan_.emplace_back(flat.begin() + static_cast<std::ptrdiff_t>(at),
                       flat.begin() + static_cast<std::ptrdiff_t>(at + static_cast<size_t>(size)));
    at += static_cast<size_t>(size);
  }
  for (int64_t c : flat)
    REMATCH_CHECK(c >= 0 && c < n_cap, s.source(), ": 'rcsl.plan.captions' names caption ", c, ", outside [0, ", n_cap,
                  ")");
  try {
    const Json j = Json::parse(s.get_entry("rcsl.epoch_info"));
    epoch_info_ =
        EpochInfo{j.at("phase").get<std::string>(), j.at("steps").get<int64_t>(), j.at("stats").get<Scalars>()};
  } catch (const Json::exception& e) {
    REMATCH_FAIL(s.source(), ": entry 'rcsl.epoch_info' is malformed: ", e.what());
  }
}

}  // namespace rematch::train
