// Helpers of the golden training-step tests (tests/train/*_golden_step_test.cpp): one step of a method, from
// the weights, optimizer moments and batch a PyTorch transcription of the official step wrote
// (tests/reference/*_step_reference.py, fixtures in tests/fixtures/golden_steps/<method>/), compared with that
// transcription's parameters after the step. The method runs through its public interface: a data folder made
// from the fixture's training set, save_state → overwrite the weights, moments and epoch state → load_state,
// then train_step. Everything is float64; the tolerance is 1e-10 absolute plus 1e-10 relative per entry.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nn/nn.h"
#include "tensor/npy.h"
#include "test_util.h"
#include "train/data/vocab.h"
#include "train/methods/l2rm/l2rm_options.h"
#include "train/methods/rcsl/rcsl_options.h"
#include "train/methods/train_config.h"
#include "train/run/training_state.h"

namespace rematch::test {

constexpr double kGoldenStepTolerance = 1e-10;

inline std::string golden_dir(const std::string& method) {
  return std::string(REMATCH_FIXTURES) + "/golden_steps/" + method + "/";
}

inline Tensor golden(const std::string& method, const std::string& name) {
  return load_npy(golden_dir(method) + name + ".npy");
}

// A precomp data folder <root>/<data_name>/ (train = dev = test) from the fixture's images [N, R, D] (float32)
// and captions [N, L] of word ids with <start>/<end> (lengths [N]); word id i is spelled "w<i>", the vocabulary
// (<root>/vocab/<data_name>_vocab.json) is the 4 specials and w4 .. w<vocab−1>.
inline void write_golden_precomp(const std::string& method, const std::string& root, const std::string& data_name,
                                 int64_t vocab) {
  namespace fs = std::filesystem;
  const Tensor images = golden(method, "images"), captions = golden(method, "captions");
  const std::vector<int64_t> lengths = golden(method, "lengths").to_vector<int64_t>();
  const std::vector<int64_t> ids = captions.to_vector<int64_t>();
  const int64_t L = captions.size(1);
  fs::create_directories(fs::path(root) / data_name);
  fs::create_directories(fs::path(root) / "vocab");
  std::string text;
  for (size_t i = 0; i < lengths.size(); ++i) {
    for (int64_t t = 1; t + 1 < lengths[i]; ++t)
      text += (t > 1 ? " w" : "w") + std::to_string(ids[i * static_cast<size_t>(L) + static_cast<size_t>(t)]);
    text += "\n";
  }
  for (const char* split : {"train", "dev", "test"}) {
    save_npy((fs::path(root) / data_name / (std::string(split) + "_ims.npy")).string(), images);
    std::ofstream((fs::path(root) / data_name / (std::string(split) + "_caps.txt")).string()) << text;
  }
  data::Vocabulary v;
  for (const char* s : {"<pad>", "<start>", "<end>", "<unk>"}) v.add_word(s);
  for (int64_t i = 4; i < vocab; ++i) v.add_word("w" + std::to_string(i));
  v.save(data::vocabulary_path((fs::path(root) / "vocab").string(), data_name));
}

// Where every precomp golden test starts: the fixture's data written under `root` as golden_precomp (12 words:
// the 4 specials and w4 .. w11), `method` on it, and the references' widths: embed 4, word 3, and for the SGR
// fixtures sim 4 (RCSL's VSE has no similarity module and ignores it). Not resolved: the test sets the rest.
inline train::TrainConfig golden_precomp_config(const std::string& method, const std::string& fixture,
                                                const std::string& root) {
  write_golden_precomp(fixture, root, "golden_precomp", 12);
  train::TrainConfig c;
  c.method = method;
  c.data_path = root;
  c.data_name = "golden_precomp";
  // Every precomp method's section: the pairs methods', L2RM's and RCSL's.
  for (train::PairsOptions* p : {&c.options<train::PairsOptions>(),
                                 static_cast<train::PairsOptions*>(&c.options<train::L2rmOptions>())}) {
    p->embed_size = 4;
    p->word_dim = 3;
    p->sim_dim = 4;
  }
  c.options<train::RcslOptions>().embed_size = 4;
  c.options<train::RcslOptions>().word_dim = 3;
  return c;
}

// A labelled data folder <dir> in the .npy layout of data::load_labeled_npy (train = valid = test) from the
// fixture's images [N, d_img], texts [N, d_txt] and labels [N] (UOT-RCL's golden step).
inline void write_golden_labeled(const std::string& method, const std::string& dir) {
  std::filesystem::create_directories(dir);
  for (const char* split : {"train", "valid", "test"}) {
    save_npy(dir + "/" + split + "_imgs.npy", golden(method, "images"));
    save_npy(dir + "/" + split + "_texts.npy", golden(method, "texts"));
    save_npy(dir + "/" + split + "_labels.npy", golden(method, "labels"));
  }
}

// Every state entry of `module` under `prefix` from the fixture's `file_prefix`<name>.
inline void put_golden_module(train::TrainingState& s, const std::string& prefix, const nn::Module& module,
                              const std::string& method, const std::string& file_prefix) {
  for (const auto& [name, t] : module.state_dict()) s.put_tensor(prefix + name, golden(method, file_prefix + name));
}

// Adam/AdamW moments of every parameter (the fixture's `file_prefix`<name>.exp_avg/.exp_avg_sq) as if `steps`
// updates had been made, at learning rate `lr`.
inline void put_golden_adam(train::TrainingState& s, const std::string& prefix, const nn::Module& module,
                            const std::string& kind, double lr, int64_t steps, const std::string& method,
                            const std::string& file_prefix) {
  int64_t i = 0;
  std::vector<int64_t> counts;
  for (const auto& [name, p] : module.named_parameters()) {
    s.put_tensor(prefix + "state." + std::to_string(i) + ".exp_avg", golden(method, file_prefix + name + ".exp_avg"));
    s.put_tensor(prefix + "state." + std::to_string(i) + ".exp_avg_sq",
                 golden(method, file_prefix + name + ".exp_avg_sq"));
    counts.push_back(steps);
    ++i;
  }
  s.put_entry(prefix, nlohmann::json{{"kind", kind}, {"lrs", {lr}}, {"steps", counts}}.dump());
}

// |got − want| ≤ tol·(1 + |want|) for every entry; returns the largest |got − want|.
inline double expect_golden_tensor(const Tensor& got, const Tensor& want, const std::string& what) {
  EXPECT_EQ(got.sizes(), want.sizes()) << what;
  if (got.sizes() != want.sizes()) return INFINITY;
  const std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  double worst = 0;
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    const double d = std::fabs(g[i] - w[i]);
    worst = std::max(worst, d);
    if (!(d <= kGoldenStepTolerance * (1 + std::fabs(w[i])))) {
      if (bad++ == 0) first = i;
    }
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << g.size() << " entries differ by more than "
                     << kGoldenStepTolerance << "; first at " << first << ": got " << g[first] << ", want "
                     << w[first] << "; largest difference " << worst;
  return worst;
}

// Every state entry of `module` against the fixture's `file_prefix`<name>; the largest difference seen.
inline double expect_golden_module(const nn::Module& module, const std::string& method,
                                   const std::string& file_prefix) {
  double worst = 0;
  for (const auto& [name, t] : module.state_dict())
    worst = std::max(worst, expect_golden_tensor(t, golden(method, file_prefix + name), file_prefix + name));
  return worst;
}

// The largest change the reference's step made to any entry of `module` (fixtures `before`<name> and
// `after`<name>): a golden step that moved nothing would pass vacuously.
inline double golden_step_size(const nn::Module& module, const std::string& method, const std::string& before,
                               const std::string& after) {
  double largest = 0;
  for (const auto& [name, t] : module.state_dict()) {
    if (!is_floating(t.dtype())) continue;
    const std::vector<double> b = golden(method, before + name).to_vector<double>();
    const std::vector<double> a = golden(method, after + name).to_vector<double>();
    for (size_t i = 0; i < a.size(); ++i) largest = std::max(largest, std::fabs(a[i] - b[i]));
  }
  return largest;
}

}  // namespace rematch::test
