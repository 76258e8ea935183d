// The ranks' comparison of an epoch's plan on real ranks (train/methods/data_parallel.h, docs/distributed.md §4.2):
// `mpirun -n N parallel_mpi_plan_agreement` (N >= 2). check_ranks_plan_one_epoch gathers each rank's step count and
// one digest per vector of decisions (Method::plan_splits); every rank must pass when the plans agree, and every
// rank must stop with the same message when the last rank's plan differs: in one of B's clean flags (NCR, BiCro),
// in one hard-versus-noisy pair (CREAM), in its step count, or in how many vectors it reports (no rank may wait
// in a gather the others skipped). Exit status 0 on every rank when every case behaved; the failures are printed.
#include <cstdio>
#include <string>
#include <vector>

#include "parallel/communicator.h"
#include "train/methods/data_parallel.h"
#include "train/methods/kit/pairs_kit.h"

using namespace rematch;
using namespace rematch::train;

namespace {

int failures = 0;

void expect(bool ok, int rank, const std::string& what) {
  if (ok) return;
  ++failures;
  std::fprintf(stderr, "rank %d: %s\n", rank, what.c_str());
}

// Runs the check; `want` empty: it must pass, else it must throw an Error whose message holds every string.
void run_case(parallel::Communicator& comm, const char* name, int64_t steps, const std::vector<PlanSplit>& splits,
              const std::vector<std::string>& want) {
  std::string message;
  try {
    check_ranks_plan_one_epoch(comm, 6, steps, splits);
  } catch (const Error& e) {
    message = e.what();
  }
  if (want.empty()) {
    expect(message.empty(), comm.rank(), std::string(name) + ": agreeing plans stopped: " + message);
    return;
  }
  expect(!message.empty(), comm.rank(), std::string(name) + ": the differing plan passed");
  for (const std::string& w : want)
    expect(message.find(w) != std::string::npos, comm.rank(),
           std::string(name) + ": the message lacks '" + w + "': " + message);
}

}  // namespace

int main() {
  parallel::Communicator& comm = parallel::init_world(parallel::Backend::Mpi);
  const int last = comm.world_size() - 1;
  const bool odd = comm.rank() == last;  // the rank whose plan differs
  const std::string rank_name = "rank " + std::to_string(last);
  const std::vector<uint8_t> a{1, 0, 1, 1, 0, 1, 0, 1}, b{1, 1, 0, 1, 0, 1, 1, 0};
  std::vector<uint8_t> b_odd = b;
  b_odd[4] = 1;

  run_case(comm, "agreement", 40, two_nets_plan_splits("ncr", 6, a, b), {});
  run_case(comm, "net B's flags", 40, two_nets_plan_splits("bicro", 6, a, odd ? b_odd : b),
           {"epoch 7", rank_name + " planned another split of the pairs", "net B's clean flags differ",
            "machines of one kind"});
  std::vector<double> parts{0, 2, 1, 0, 2, 0, 1, 2};
  if (odd) parts[1] = 1;  // hard on this rank, noisy on the others: the clean flags agree
  run_case(comm, "hard versus noisy", 20,
           {PlanSplit{"the clean, hard and noisy sets", viz::EpochSplit{6, "cream", viz::SplitKind::label, parts}}},
           {rank_name + " planned another split of the pairs", "the clean, hard and noisy sets differ"});
  run_case(comm, "steps", odd ? 41 : 40, two_nets_plan_splits("ncr", 6, a, b), {rank_name + " planned 41 steps"});
  std::vector<PlanSplit> fewer = two_nets_plan_splits("ncr", 6, a, b);
  if (odd) fewer.pop_back();
  run_case(comm, "count", 40, fewer, {rank_name + " reported 1 vectors"});

  const int64_t total =
      comm.all_reduce_sum(from_vector(std::vector<int64_t>{failures}, {1})).to_vector<int64_t>()[0];
  if (comm.rank() == 0)
    std::printf("plan agreement on %d ranks: %s\n", comm.world_size(),
                total == 0 ? "5 cases, every rank as expected" : "FAILED");
  comm.barrier();
  return total == 0 ? 0 : 1;
}
