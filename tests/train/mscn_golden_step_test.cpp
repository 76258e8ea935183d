// MSCN's training iteration against the official code itself (hhc1997/MSCN @01febc2):
// tests/reference/mscn_step_official.py runs the official `main_MSCN.py: train` on the official `models.py: SGRAF` and
// `Meta_Sim` in float64 (every change around the official code is listed in that script), one iteration on one
// batch of the 8 pairs a given split keeps and one meta batch of 4 clean meta pairs with the 4 non-correspondences
// `train` drew: the virtual step (`torch.autograd.grad(..., create_graph=True)`, `MetaAdam.meta_step`), the BCE of the
// stepped copy and the meta net's Adam step through it, then the net's clipped Adam step on its adaptive-margin loss.
// MscnMethod::train_iteration repeats it; compared: every parameter and buffer of the net, every parameter of the
// meta net, and both Adams' moments, to 1e-10.
// Controls (the fixture depends on what they change): the meta update without the virtual step's second-order part
// (the stepped weights detached), and with the Bi-GRU stepped too (the code's copy keeps its GRU weights:
// virtual_step.h `gru_parameters`), each move the meta net by more than 1e-9 against the fixture.
// Pinned randomness: dropout 0 (rematch's --dropout 0), one batch per loader with permutation-invariant losses (SGR),
// the drawn non-correspondences replayed.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "golden_step_util.h"
#include "train/methods/mscn/mscn_method.h"
#include "train/methods/mscn/mscn_scores.h"
#include "train/methods/mscn/virtual_step.h"

namespace rematch::train {
namespace {

const std::string kMethod = "mscn";

bool has_golden(const std::string& name) {
  return std::filesystem::exists(test::golden_dir(kMethod) + name + ".npy");
}

class MscnGoldenStepTest : public test::TempDirTest {
 protected:
  TrainConfig config() {
    TrainConfig c = test::golden_precomp_config("mscn", kMethod, path("data"));
    write_meta_split(path("data") + "/golden_precomp");
    MscnOptions& o = c.options<MscnOptions>();
    o.embed_size = 4;
    o.word_dim = 3;
    o.sim_dim = 4;
    o.sgr_step = 3;
    o.dropout = 0;
    o.margin = 0.2;
    o.meta_source = MetaSource::Split;
    o.meta_interval = 1;
    o.meta_lr = 0.01;
    o.meta_hidden = 64;
    o.dtype = DType::Float64;
    c.batch_size = 8;
    c.learning_rate = 0.05;
    c.grad_clip = 0.05;
    c.warmup_epoch = 0;
    c.num_epochs = 1;
    c.progress = run::ProgressStyle::None;
    resolve_defaults(c);
    return c;
  }
  // meta_ims.npy / meta_caps.txt from the fixture's meta pairs (words spelled "w<i>", as golden_precomp's).
  void write_meta_split(const std::string& folder) {
    save_npy(folder + "/meta_ims.npy", test::golden(kMethod, "meta_images"));
    const Tensor captions = test::golden(kMethod, "meta_captions");
    const std::vector<int64_t> ids = captions.to_vector<int64_t>();
    const std::vector<int64_t> lengths = test::golden(kMethod, "meta_lengths").to_vector<int64_t>();
    const size_t L = static_cast<size_t>(captions.size(1));
    std::ofstream f(folder + "/meta_caps.txt");
    for (size_t i = 0; i < lengths.size(); ++i) {
      for (int64_t t = 1; t + 1 < lengths[i]; ++t)
        f << (t > 1 ? " w" : "w") << ids[i * L + static_cast<size_t>(t)];
      f << "\n";
    }
  }
  // The method with net A, meta net A and their Adams as before the official step.
  std::unique_ptr<MscnMethod> method(std::ostream& log) {
    const TrainConfig c = config();
    auto m = std::make_unique<MscnMethod>(c, c.options<MscnOptions>(), load_pairs_data(c, false, log), log);
    TrainingState s;
    m->save_state(s);
    // sim_eval_w: in rematch's SGRAF model, not in MSCN's (unused: no gradient, never stepped); kept as drawn.
    for (const auto& [name, t] : m->net(0).state_dict())
      if (has_golden("net.before." + name)) s.put_tensor("model." + name, test::golden(kMethod, "net.before." + name));
    put_adam(s, "optim.", m->net(0), 0.05, "net.adam.");
    test::put_golden_module(s, "meta_A.", m->meta(0), kMethod, "meta.before.");
    put_adam(s, "meta_optim_A.", m->meta(0), 0.01, "meta.adam.");
    s.put_int("epoch", -1);
    m->load_state(s);
    m->meta_set().set_non_correspondences(test::golden(kMethod, "noise_captions").to_vector<int64_t>(),
                                          test::golden(kMethod, "noise_images").to_vector<int64_t>());
    return m;
  }
  // Adam moments of 4 earlier steps from the fixture; a parameter it lacks (sim_eval_w) gets zero moments.
  void put_adam(TrainingState& s, const std::string& prefix, const nn::Module& module, double lr,
                const std::string& file_prefix) {
    int64_t i = 0;
    std::vector<int64_t> counts;
    for (const auto& [name, p] : module.named_parameters()) {
      for (const char* m : {"exp_avg", "exp_avg_sq"}) {
        const std::string file = file_prefix + name + "." + m;
        s.put_tensor(prefix + "state." + std::to_string(i) + "." + m,
                     has_golden(file) ? test::golden(kMethod, file) : zeros(p.sizes(), DType::Float64));
      }
      counts.push_back(4);
      ++i;
    }
    s.put_entry(prefix, nlohmann::json{{"kind", "Adam"}, {"lrs", {lr}}, {"steps", counts}}.dump());
  }
  double expect_moments(const nn::Adam& adam, const nn::Module& module, const std::string& file_prefix) {
    const nn::OptimizerState st = adam.state_dict();
    double worst = 0;
    int64_t i = 0;
    for (const auto& [name, p] : module.named_parameters()) {
      for (const char* m : {"exp_avg", "exp_avg_sq"}) {
        const std::string file = file_prefix + name + "." + m;
        if (!has_golden(file)) continue;
        for (const auto& [key, t] : st.buffers)
          if (key == std::to_string(i) + "." + m) {
            worst = std::max(worst, test::expect_golden_tensor(t, test::golden(kMethod, file), file));
            ++moments_compared;
          }
      }
      ++i;
    }
    return worst;
  }
  int moments_compared = 0;
  std::vector<int64_t> clean_captions() {
    std::vector<int64_t> c;
    const std::vector<double> prob = test::golden(kMethod, "prob").to_vector<double>();
    for (size_t j = 0; j < prob.size(); ++j)
      if (prob[j] > 0.5) c.push_back(static_cast<int64_t>(j));
    return c;
  }
};

TEST_F(MscnGoldenStepTest, VirtualStepMetaStepAndMainStepMatchTheOfficialCode) {
  std::ostringstream log;
  std::unique_ptr<MscnMethod> m = method(log);
  auto eval_weight = [&] {
    for (const auto& [name, t] : m->net(0).named_parameters())
      if (name == "sim_enc.sim_eval_w.weight") return t;
    return Tensor();
  };
  ASSERT_TRUE(eval_weight().defined());
  const Tensor eval_w = clone(eval_weight());
  const std::vector<int64_t> clean = clean_captions();
  ASSERT_EQ(clean.size(), 8u);
  const data::Batch b = m->batch(clean);
  const MetaBatch mb = m->meta_set().batch({0, 1, 2, 3, 4, 5, 6, 7}, DType::Float64, Device::cpu());
  EXPECT_GT(test::golden_step_size(m->meta(0), kMethod, "meta.before.", "meta.after."), 1e-4);
  double meta_loss = 0;
  m->train_iteration(0, b, &mb, &meta_loss);
  EXPECT_TRUE(std::isfinite(meta_loss));

  double worst_meta = test::expect_golden_module(m->meta(0), kMethod, "meta.after.");
  worst_meta = std::max(worst_meta, expect_moments(m->meta_optimizer(0), m->meta(0), "meta.adam_after."));
  double worst_net = 0;
  int compared = 0;
  for (const auto& [name, t] : m->net(0).state_dict()) {
    if (!has_golden("net.after." + name)) continue;
    worst_net = std::max(worst_net, test::expect_golden_tensor(t, test::golden(kMethod, "net.after." + name), name));
    ++compared;
  }
  EXPECT_GT(compared, 30);
  worst_net = std::max(worst_net, expect_moments(m->optimizer(0), m->net(0), "net.adam_after."));
  // Both moments of the meta net's 4 parameters and of every net parameter MSCN's model has (not sim_eval_w).
  EXPECT_EQ(moments_compared, 2 * (4 + static_cast<int>(m->net(0).named_parameters().size()) - 2));
  std::cout << "mscn golden step: largest difference, meta net after the virtual + meta step (and its Adam) "
            << worst_meta << "; net after the main step (parameters, buffers, Adam) " << worst_net << "\n";
  EXPECT_TRUE(test::all_close(eval_weight(), eval_w, 0, 0)) << "sim_eval_w is not MSCN's: it must not move";
}

// The meta net after a meta update made another way, from the same state: its largest difference to the fixture.
double meta_update_variant(MscnMethod& m, bool second_order, bool freeze_gru, const data::Batch& b,
                           const MetaBatch& mb) {
  models::SgrafModel& X = m.net(0);
  MetaSim& M = m.meta(0);
  X.train();
  const Tensor pseudo = mscn_adaptive_margin_loss(mscn_scores(X, M, b.regions, b.captions, b.lengths), 0.2);
  std::vector<Tensor> stepped =
      virtual_sgd_step(pseudo, X.parameters(), 0.05, freeze_gru ? gru_parameters(X) : std::vector<bool>{});
  if (!second_order)
    for (Tensor& t : stepped) t = t.detach();
  Generator gen(1);
  models::SgrafModel shadow(X.config(), DType::Float64, &gen);
  install_parameters(shadow, stepped);
  const Tensor loss = binary_cross_entropy(mscn_pair_scores(shadow, M, mb.regions, mb.captions, mb.lengths), mb.labels);
  const std::vector<Tensor> params = M.parameters();
  const TensorList g = grad({loss}, params);
  m.meta_optimizer(0).zero_grad();
  for (size_t k = 0; k < params.size(); ++k) params[k].set_grad(g[k]);
  m.meta_optimizer(0).step();
  double worst = 0;
  for (const auto& [name, t] : M.state_dict()) {
    const std::vector<double> got = t.to_vector<double>();
    const std::vector<double> want = test::golden(kMethod, "meta.after." + name).to_vector<double>();
    for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::fabs(got[i] - want[i]));
  }
  return worst;
}

TEST_F(MscnGoldenStepTest, SecondOrderPartAndTheFrozenGruEachMoveTheMetaNet) {
  std::ostringstream log;
  const std::vector<int64_t> clean = clean_captions();
  double as_code = 0, first_order = 0, gru_stepped = 0;
  {
    std::unique_ptr<MscnMethod> m = method(log);
    const MetaBatch mb = m->meta_set().batch({0, 1, 2, 3, 4, 5, 6, 7}, DType::Float64, Device::cpu());
    as_code = meta_update_variant(*m, true, true, m->batch(clean), mb);
  }
  {
    std::unique_ptr<MscnMethod> m = method(log);
    const MetaBatch mb = m->meta_set().batch({0, 1, 2, 3, 4, 5, 6, 7}, DType::Float64, Device::cpu());
    first_order = meta_update_variant(*m, false, true, m->batch(clean), mb);
  }
  {
    std::unique_ptr<MscnMethod> m = method(log);
    const MetaBatch mb = m->meta_set().batch({0, 1, 2, 3, 4, 5, 6, 7}, DType::Float64, Device::cpu());
    gru_stepped = meta_update_variant(*m, true, false, m->batch(clean), mb);
  }
  EXPECT_LE(as_code, 1e-10);
  EXPECT_GT(first_order, 1e-9);
  EXPECT_GT(gru_stepped, 1e-9);
  std::cout << "mscn golden step controls: meta net vs fixture " << as_code << " as the code; "
            << first_order << " without the second-order part; " << gru_stepped << " with the GRU stepped\n";
}

}  // namespace
}  // namespace rematch::train
