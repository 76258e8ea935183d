// What a checkpoint of mscn holds beyond net A's (save_pairs_state): net B, both meta nets and their Adam, and
// the split of the current epoch (docs/methods/mscn.md).
#include "train/methods/mscn/mscn_method.h"

namespace rematch::train {

void MscnMethod::save_state(TrainingState& s) const {
  save_pairs_state(s, nets_[0], gens_, epoch_);
  nets_[1].save(s, "model_B.", "optim_B.");
  for (int k = 0; k < 2; ++k) {
    s.put_module(std::string("meta_") + net_name(k) + ".", *meta_[static_cast<size_t>(k)]);
    s.put_optimizer(std::string("meta_optim_") + net_name(k) + ".", *meta_optim_[static_cast<size_t>(k)]);
  }
  // `rematch eval/score --checkpoint` score the two nets each with its meta net, averaged (models/sgraf_checkpoint.h).
  s.put_entry("model_prefixes", R"(["model.", "model_B."])");
  s.put_entry("meta_prefixes", R"(["meta_A.", "meta_B."])");
  s.put_tensor("mscn.prob", from_vector(prob_, {static_cast<int64_t>(prob_.size())}));
  s.put_int_vector("mscn.clean", std::vector<int64_t>(clean_.begin(), clean_.end()));
}

void MscnMethod::load_state(const TrainingState& s) {
  epoch_ = load_pairs_state(s, nets_[0], gens_);
  nets_[1].load(s, "model_B.", "optim_B.");
  for (int k = 0; k < 2; ++k) {
    s.get_module(std::string("meta_") + net_name(k) + ".", *meta_[static_cast<size_t>(k)]);
    s.get_optimizer(std::string("meta_optim_") + net_name(k) + ".", *meta_optim_[static_cast<size_t>(k)]);
  }
  prob_ = to(s.get_tensor("mscn.prob"), DType::Float64).to_vector<double>();
  const std::vector<int64_t> c = s.get_int_vector("mscn.clean");
  clean_.assign(c.begin(), c.end());
  const size_t n = static_cast<size_t>(kit_.train_split().num_captions());
  REMATCH_CHECK((prob_.empty() && clean_.empty()) || (prob_.size() == n && clean_.size() == n), s.source(),
                ": 'mscn.prob' and 'mscn.clean' have ", prob_.size(), " and ", clean_.size(), " entries for ", n,
                " training captions");
  if (epoch_ < 0) return;
  REMATCH_CHECK(phase(epoch_).warmup || !clean_.empty(), s.source(), ": epoch ", epoch_, " without a saved split");
  if (!clean_.empty()) {
    std::vector<uint8_t> truth, predicted;
    for (int64_t j : train_captions_) {
      predicted.push_back(clean_[static_cast<size_t>(j)]);
      truth.push_back(kit_.correspondence().clean[static_cast<size_t>(j)]);
    }
    quality_ = data::split_quality(predicted, truth);
  }
  build_plans(epoch_);
  epoch_info_ = epoch_info(epoch_);
}

}  // namespace rematch::train
