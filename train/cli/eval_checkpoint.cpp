#include "train/cli/eval_checkpoint.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <memory>

#include "parallel/communicator.h"
#include "models/models.h"
#include "tensor/kernels.h"
#include "train/cli/app.h"
#include "train/cli/number_checks.h"
#include "train/data/precomp_dataset.h"
#include "train/data/vocab.h"
#include "train/eval/sgraf_scoring.h"
#include "train/methods/mscn/meta_sim.h"
#include "train/methods/mscn/mscn_scores.h"

namespace rematch::cli {
namespace {

using models::SgrafModel;

// The model files must fit the data: region slots and feature size, and a vocabulary the ids stay inside
// (RCL checkpoints carry one extra word, <mask>, docs/backbones.md §3.1).
void check_fits(const std::string& path, const models::SgrafConfig& c, const data::PrecompDataset& ds,
                int64_t vocab_size) {
  if (c.num_regions != ds.num_regions() || c.img_dim != ds.feature_dim())
    throw UsageError("--checkpoint " + path + " expects regions [" + std::to_string(c.num_regions) + ", " +
                     std::to_string(c.img_dim) + "] but " + ds.images_path() + " holds [" +
                     std::to_string(ds.num_regions()) + ", " + std::to_string(ds.feature_dim()) + "]");
  if (c.vocab_size != vocab_size && c.vocab_size != vocab_size + 1)
    throw UsageError("--checkpoint " + path + " has a vocabulary of " + std::to_string(c.vocab_size) +
                     " words but the vocabulary file has " + std::to_string(vocab_size));
}

// The averaging rule of --checkpoint (docs/backbones.md §4.8): one SGR or SAF model; an SGR and a SAF model
// (SGRAF); or two SGR models, NCR's co-trained A and B; or alone, an NCR or MSCN run's checkpoint of both nets.
const char* const kAveragingRule =
    "--checkpoint takes one SGR or SAF model, an SGR and a SAF model (SGRAF, scores averaged), or NCR's two SGR "
    "models A and B (scores averaged)";

// The meta net `prefix` of an MSCN checkpoint (train/methods/mscn/meta_sim.h), its hidden size read from its
// first layer's weight [hidden, sim_dim]; loaded strictly, in eval mode.
std::unique_ptr<train::MetaSim> load_meta_net(const models::SgrafFile& file, const std::string& prefix) {
  nn::StateDict state;
  for (const auto& [name, t] : file.tensors)
    if (name.compare(0, prefix.size(), prefix) == 0) state.emplace_back(name.substr(prefix.size()), t);
  const std::string first = "first_hidden_layer.fc.weight";
  auto it = std::find_if(state.begin(), state.end(), [&](const auto& e) { return e.first == first; });
  if (it == state.end() || it->second.dim() != 2 || it->second.size(1) != file.config.sim_dim)
    throw Error("'" + file.path + "': the MSCN meta net '" + prefix + "' has no " + first + " [hidden, " +
                std::to_string(file.config.sim_dim) + "] (the file is damaged or not an MSCN run's checkpoint)");
  auto meta = std::make_unique<train::MetaSim>(file.config.sim_dim, it->second.size(0), DType::Float32, nullptr);
  try {
    meta->load_state_dict(state);
  } catch (const Error& e) {
    throw Error("'" + file.path + "' (MSCN meta net '" + prefix + "'): " + e.what());
  }
  meta->eval();
  return meta;
}

// The count of files, and the same file twice, before any file is read.
void check_checkpoint_paths(const std::vector<std::string>& paths) {
  if (paths.size() > 2)
    throw UsageError(std::string(kAveragingRule) + "; got " + std::to_string(paths.size()) + " files");
  std::error_code same_error;
  if (paths.size() == 2 && std::filesystem::equivalent(paths[0], paths[1], same_error))
    throw UsageError(std::string(kAveragingRule) + "; got the file " + paths[0] + " twice");
}

// What the files read average to, by the rule above, before any data.
std::string averaging_label(const std::vector<models::SgrafFile>& files) {
  std::vector<std::string> names;
  for (const models::SgrafFile& f : files) {
    if (!f.meta_prefixes.empty()) {
      // An MSCN run's checkpoint: each net scored by its meta net, A and B averaged (docs/methods/mscn.md §5).
      if (files.size() > 1)
        throw UsageError(std::string(kAveragingRule) + "; " + f.path +
                         " is an MSCN checkpoint (nets A and B with their meta nets): give it alone");
      return "MSCN (nets A and B of " + f.path + " with their meta nets, averaged)";
    }
    if (f.prefixes.size() > 1) {
      // A two-net run's checkpoint (NCR, BiCro, CREAM): its nets A and B, averaged as those methods report them
      // (docs/methods/ncr.md §5). The file does not say which of them trained it, so the label names none.
      if (files.size() > 1)
        throw UsageError(std::string(kAveragingRule) + "; " + f.path +
                         " holds two nets A and B already: give it alone");
      return "nets A and B of " + f.path + " averaged (a two-net run: NCR, BiCro, CREAM)";
    }
    names.push_back(models::module_name(f.config.module));
  }
  if (names.size() == 1) return names[0];
  if (names[0] != names[1]) return "SGRAF (SGR+SAF averaged)";
  if (names[0] == "SGR") return "NCR (SGR models A and B averaged)";
  throw UsageError(std::string(kAveragingRule) + "; got two SAF models (" + files[0].path + ", " + files[1].path +
                   ")");
}

}  // namespace

CLI::Option* add_checkpoint_scoring_options(CLI::App& cmd, CheckpointScoringOptions& o) {
  CLI::Option* ckpt = cmd.add_option("--checkpoint", o.checkpoints,
                                     "SGR/SAF model file (rematch checkpoint or tools/convert_pth.py output). "
                                     "Once: that model. Twice: an SGR and a SAF model give SGRAF, or NCR's two "
                                     "SGR models A and B; their score matrices are averaged. An NCR or MSCN run's "
                                     "checkpoint alone: its nets A and B averaged (MSCN's each scored by its meta "
                                     "net). Nothing else.")
                          ->check(CLI::ExistingFile);
  cmd.add_option("--data_path", o.data_path, "Folder holding <data_name>/ (SCAN precomp layout)");
  cmd.add_option("--data_name", o.data_name, "Data set folder, e.g. f30k_precomp");
  cmd.add_option("--vocab_path", o.vocab_path,
                 "Folder of <data_name>_vocab.json (default: <data_path>/vocab, else ./vocab)");
  cmd.add_option("--split", o.split, "Split to score")
      ->capture_default_str()
      ->check(CLI::IsMember({"train", "dev", "test", "testall"}));
  cmd.add_option("--val_subset", o.val_subset, "Part of dev used (sgraf: 5,000 captions; ncr: 1,000 x im_div)")
      ->capture_default_str()
      ->check(CLI::IsMember({"sgraf", "ncr"}));
  cmd.add_option("--block_images", o.block_images, "Images per scoring block")
      ->capture_default_str()
      ->check(kPositiveCount);
  cmd.add_option("--block_captions", o.block_captions, "Captions per scoring block")
      ->capture_default_str()
      ->check(kPositiveCount);
  cmd.add_option("--device", o.device, "cpu | cuda | cuda:N: the device the models score on")
      ->capture_default_str()
      ->needs(ckpt);
  cmd.add_option("--dist_backend", o.dist_backend,
                 "Under mpirun -n N: auto (mpi, or nccl with --device cuda) | none | mpi | nccl; each rank scores "
                 "its share of the image rows, the matrix is the one one process computes")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "none", "mpi", "nccl"}))
      ->needs(ckpt);
  return ckpt;
}

std::ostream& rank_zero_stream(std::ostream& s) {
  static std::ostream sink(nullptr);  // a stream without a buffer drops what it is given
  return parallel::world().rank() == 0 ? s : sink;
}

ScoredSplit score_split(const CheckpointScoringOptions& o, std::ostream& all_log) {
  if (o.checkpoints.empty()) throw UsageError("--checkpoint is required");
  if (o.data_path.empty() || o.data_name.empty())
    throw UsageError("--checkpoint needs --data_path and --data_name (the split to score)");
  Device device = device_flag(o.device);  // before any file is read
  parallel::Communicator& comm = parallel::init_world(parallel::choose_backend(o.dist_backend, device.is_cuda()));
  device = parallel::rank_device(device, comm);  // under mpirun, the GPU of the rank on its machine
  std::ostream& log = rank_zero_stream(all_log);
  check_checkpoint_paths(o.checkpoints);
  // Each file is read once, whole (its checksum verified then), and its models built from what was read.
  std::vector<models::SgrafFile> files;
  for (const std::string& path : o.checkpoints) files.push_back(models::read_sgraf_file(path));
  const std::string label = averaging_label(files);
  const std::string data_name = data::without_trailing_slashes(o.data_name);
  const std::string vocab_file = data::find_vocabulary_file(o.vocab_path, o.data_path, data_name);
  log << "rematch: vocabulary " << vocab_file << "\n";
  const data::Vocabulary vocab = data::Vocabulary::load(vocab_file);
  data::PrecompOptions popt;
  popt.val_subset = data::parse_val_subset(o.val_subset);
  popt.notes = &log;
  const data::PrecompDataset ds(o.data_path, data_name, o.split, vocab, popt);

  std::vector<std::unique_ptr<SgrafModel>> nets;
  std::vector<std::unique_ptr<train::MetaSim>> metas;  // an MSCN checkpoint's, one per net
  for (const models::SgrafFile& file : files) {
    std::vector<std::string> prefixes = file.prefixes;
    if (prefixes.empty()) prefixes = {"model."};  // a converted official file: its one model
    for (size_t k = 0; k < prefixes.size(); ++k) {
      nets.push_back(models::load_sgraf_model(file, DType::Float32, prefixes[k]));
      check_fits(file.path, nets.back()->config(), ds, vocab.size());
      nets.back()->to(device);
      if (!file.meta_prefixes.empty()) {
        metas.push_back(load_meta_net(file, file.meta_prefixes[k]));
        metas.back()->to(device);
      }
    }
  }
  REMATCH_CHECK(metas.empty() || (metas.size() == 2 && nets.size() == 2), "--checkpoint: an MSCN checkpoint holds "
                "two nets and two meta nets, got ", nets.size(), " and ", metas.size());
  files.clear();  // the host copies of the weights: the models hold theirs
  const int64_t per_image = ds.captions_per_image();
  std::vector<SgrafModel*> models;
  for (auto& net : nets) models.push_back(net.get());
  ScoredSplit out;
  const eval::BlockSize block{o.block_images, o.block_captions};
  const int64_t n_img = ds.num_captions() / per_image;
  // Rows [begin, end): SGRAF's sim_eval_w heads (averaged), or MSCN's (S_A + S_B) / 2, each net with its meta
  // net, as MSCN's own validation and test compute it (train/methods/mscn/mscn_method.cpp `test`).
  auto score_rows = [&](int64_t begin, int64_t end) {
    if (metas.empty()) return eval::score_precomp_rows(models, ds, begin, end, block);
    const Tensor sa = train::mscn_split_rows(*nets[0], *metas[0], ds, begin, end, block);
    const Tensor sb = train::mscn_split_rows(*nets[1], *metas[1], ds, begin, end, block);
    return mul(add(sa, sb), 0.5);
  };
  if (comm.world_size() == 1) {
    out.sims = score_rows(0, n_img);
  } else {
    const parallel::RowRange rows = parallel::block_rows(n_img, block.images, comm.rank(), comm.world_size());
    const Tensor mine = score_rows(rows.begin, rows.end);
    // Rows travel as they are (no arithmetic): the gathered matrix is one process's, byte for byte.
    const Device via = comm.backend() == parallel::Backend::Nccl ? device : Device::cpu();
    out.sims = kernels::to_device(comm.all_gather(kernels::to_device(mine, via)), Device::cpu());
    log << "scored on " << comm.world_size() << " processes (" << parallel::backend_name(comm.backend())
        << "), rows split in blocks of " << block.images << " images\n";
  }
  out.captions_per_image = per_image;
  out.summary = label + " on " + data_name + "/" + o.split;
  return out;
}

}  // namespace rematch::cli
