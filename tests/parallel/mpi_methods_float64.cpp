// decl, crcl, ncr, bicro, cream, mscn, mrl, dscmr and sdml trained in float64 on real ranks (docs/distributed.md §4.1, items 6 and
// 8-10): run by tests/parallel/methods_float64.sh as `mpirun -n N parallel_mpi_methods_float64 CONFIG OUT` for N = 1, 2, 3. The
// method is built from CONFIG (the JSON of `rematch train --dry_run`) with its model, batches and losses in
// float64 (PairsOptions::dtype, as the golden-step tests do) and trained for its epochs; rank 0 writes each epoch's
// statistics, every step's loss and terms, each epoch's validation (the metrics the trainer logs, sharded over the
// ranks as under `rematch train`) and the last state's test to OUT with 17 digits. In float64 the reduction order
// moves nothing visible, so the files of N ranks must equal one process's to ~1e-12, recalls included: any piece
// that is not one process's (a dropout mask, a BatchNorm statistic, a split, a label, a gradient not summed, a
// block of scores) shows at once, where the float32 runs of data_parallel_training.sh must allow for the amplified
// last bits (NCR's 1e-3) and, on its tiny validation split, for rankings that the last bits flip (CRCL's).
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

#include "parallel/communicator.h"
#include "train/methods/bicro/bicro_method.h"
#include "train/methods/crcl/crcl_method.h"
#include "train/methods/cream/cream_method.h"
#include "train/methods/decl/decl_method.h"
#include "train/methods/dscmr/dscmr_method.h"
#include "train/methods/mrl/mrl_method.h"
#include "train/methods/mscn/mscn_method.h"
#include "train/methods/sdml/sdml_method.h"
#include "train/methods/ncr/ncr_method.h"
#include "train/methods/train_config.h"

using namespace rematch;
using namespace rematch::train;

namespace {

// "val E score S name value ..." (or "test"): every metric the trainer would log for the evaluation.
void print_eval(std::FILE* out, const char* kind, int64_t epoch, const EvalResult& r) {
  std::fprintf(out, "%s %ld score %.17g", kind, static_cast<long>(epoch), r.score);
  for (const auto& [k, v] : r.metrics) std::fprintf(out, " %s %.17g", k.c_str(), v);
  std::fprintf(out, "\n");
}

}  // namespace

int main(int argc, char** argv) {
  parallel::Communicator& comm = parallel::init_world(parallel::Backend::Mpi);
  if (argc != 3) {
    std::fprintf(stderr, "usage: parallel_mpi_methods_float64 CONFIG OUT\n");
    return 2;
  }
  std::ifstream in(argv[1]);
  std::stringstream text;
  text << in.rdbuf();
  const TrainConfig c = train_config_from_json(text.str());
  std::ostringstream log;
  std::unique_ptr<Method> m;
  if (c.method == "ncr") {
    NcrOptions o = c.options<NcrOptions>();
    o.dtype = DType::Float64;
    m = std::make_unique<NcrMethod>(c, o, load_pairs_data(c, false, log), log);
  } else if (c.method == "decl") {
    DeclOptions o = c.options<DeclOptions>();
    o.dtype = DType::Float64;
    m = std::make_unique<DeclMethod>(c, o, load_pairs_data(c, false, log), log);
  } else if (c.method == "crcl") {
    CrclOptions o = c.options<CrclOptions>();
    o.dtype = DType::Float64;
    m = std::make_unique<CrclMethod>(c, o, load_pairs_data(c, true, log), log);
  } else if (c.method == "bicro") {
    BicroOptions o = c.options<BicroOptions>();
    o.dtype = DType::Float64;
    m = std::make_unique<BicroMethod>(c, o, load_pairs_data(c, false, log), log);
  } else if (c.method == "cream") {
    CreamOptions o = c.options<CreamOptions>();
    o.dtype = DType::Float64;
    m = std::make_unique<CreamMethod>(c, o, load_pairs_data(c, false, log), log);
  } else if (c.method == "mrl") {
    MrlOptions o = c.options<MrlOptions>();
    o.dtype = DType::Float64;
    m = std::make_unique<MrlMethod>(c, o, data::load_labeled(c.data_path, c.valid_len), log);
  } else if (c.method == "dscmr") {
    DscmrOptions o = c.options<DscmrOptions>();
    o.dtype = DType::Float64;
    m = std::make_unique<DscmrMethod>(c, o, data::load_labeled(c.data_path, c.valid_len), log);
  } else if (c.method == "sdml") {
    SdmlOptions o = c.options<SdmlOptions>();
    o.dtype = DType::Float64;
    m = std::make_unique<SdmlMethod>(c, o, data::load_labeled(c.data_path, c.valid_len), log);
  } else if (c.method == "mscn") {
    MscnOptions o = c.options<MscnOptions>();
    o.dtype = DType::Float64;
    m = std::make_unique<MscnMethod>(c, o, load_pairs_data(c, false, log), log);
  } else {
    std::fprintf(stderr, "parallel_mpi_methods_float64: --method %s is not decl, crcl, ncr, bicro, cream, mscn, mrl, dscmr or sdml\n",
                 c.method.c_str());
    return 2;
  }
  std::FILE* out = comm.rank() == 0 ? std::fopen(argv[2], "w") : nullptr;
  for (int64_t e = 0; e < m->num_epochs(); ++e) {
    const EpochInfo info = m->begin_epoch(e);
    if (out) {
      std::fprintf(out, "epoch %ld steps %ld", static_cast<long>(e), static_cast<long>(info.steps));
      for (const auto& [k, v] : info.stats) std::fprintf(out, " %s %.17g", k.c_str(), v);
      std::fprintf(out, "\n");
    }
    for (int64_t s = 0; s < info.steps; ++s) {
      const StepResult r = m->train_step(e, s);
      if (!out) continue;
      std::fprintf(out, "step %ld %ld loss %.17g", static_cast<long>(e), static_cast<long>(s), r.loss);
      for (const auto& [k, v] : r.parts) std::fprintf(out, " %s %.17g", k.c_str(), v);
      std::fprintf(out, "\n");
    }
    m->end_epoch(e);
    const EvalResult val = m->validate();
    if (out) print_eval(out, "val", e, val);
  }
  const EvalResult test = m->test();
  if (out) print_eval(out, "test", m->num_epochs(), test);
  if (out) std::fclose(out);
  comm.barrier();
  return 0;
}
