// Several processes computing one run (docs/distributed.md): the collectives rematch needs, behind one
// interface with three backends.
//   none   one process, world 1: every collective returns its input (the default; no library needed)
//   mpi    Open MPI (REMATCH_MPI): host tensors directly, CUDA tensors staged through host memory
//   nccl   NCCL (REMATCH_NCCL, with the CUDA backend): CUDA tensors on the GPU of the rank's local_rank; the
//          unique id is broadcast through MPI, which also starts the processes
// Processes are started by `mpirun -n N rematch ...`; world() is the process-wide communicator that
// init_world() chose. Every collective is called by every rank in the same order with tensors of the same
// dtype and (but for all_gather's first dim) shape; a mismatch is an error on the rank that sees it, and an
// error on one rank ends every rank (abort_world), so nothing waits forever for a rank that is gone.
// Reductions sum in rank order on every backend but NCCL (whose ring order is its own), so with the mpi
// backend a result does not depend on which rank computed it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tensor/device.h"
#include "tensor/tensor.h"

namespace rematch::parallel {

enum class Backend { None, Mpi, Nccl };

// "none" | "mpi" | "nccl"
const char* backend_name(Backend b);

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual Backend backend() const = 0;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  virtual int local_rank() const = 0;  // rank among the processes of this machine (its GPU)

  // Sum over ranks, every rank gets the result (a new tensor, same shape, dtype and device).
  virtual Tensor all_reduce_sum(const Tensor& t) = 0;
  // The ranks' tensors stacked along dim 0 in rank order; their first dims may differ, the rest must agree.
  virtual Tensor all_gather(const Tensor& t) = 0;
  // Sum over ranks, then rank r keeps rows [offsets[r], offsets[r + 1]) of dim 0 (the backward of all_gather).
  virtual Tensor reduce_scatter_sum(const Tensor& t, const std::vector<int64_t>& rows_per_rank) = 0;
  // Root's tensor on every rank (the others pass a tensor of the same shape, dtype and device).
  virtual Tensor broadcast(const Tensor& t, int root) = 0;
  virtual void barrier() = 0;
  // Ends every rank at once with `code` after `message` is printed by this one (no collective: safe after a
  // failure on one rank only).
  [[noreturn]] virtual void abort(const std::string& message, int code) = 0;
};

// How the program was started: the size mpirun announces in the environment (OMPI_COMM_WORLD_SIZE,
// PMI_SIZE), 1 otherwise.
int launched_world_size();

// Whether this build has the backend.
bool backend_available(Backend b);

// "auto" picks mpi when launched by mpirun with more than one process (nccl when `gpu` and built with it),
// none otherwise; "none", "mpi", "nccl" ask for one. An unavailable backend, or none under an mpirun of
// several processes, is an error that says what to build or pass (`flag` names the flag in messages).
Backend choose_backend(const std::string& name, bool gpu, const std::string& flag = "--dist_backend");

// The device a rank computes on when the command asked for `requested` (docs/distributed.md §1): the host as
// asked; a GPU (`cuda` or `cuda:N`) in a world of several ranks: the GPU of the rank's local rank among the `gpus`
// it sees (local rank modulo `gpus`), so `mpirun -n 8` on a node of 8 GPUs uses each once, and a launcher that
// shows each rank its own GPU only (CUDA_VISIBLE_DEVICES per rank) gives each rank that one. Ranks that end up
// on one GPU share it on the mpi backend (two ranks can train on one GPU); the nccl backend refuses that when it
// starts (NCCL puts one process on each GPU; ranks_sharing_a_gpu). In a world of one, `requested` itself.
Device rank_device(const Device& requested, const Communicator& comm, int gpus);
// The same with this machine's GPU count (cuda_device_count()).
Device rank_device(const Device& requested, const Communicator& comm);

// Given where each rank computes ("<machine> <GPU's PCI bus id>", one per rank in rank order), the first two ranks
// on the same GPU of the same machine, or {-1, -1} when every rank has a GPU of its own.
std::pair<int, int> ranks_sharing_a_gpu(const std::vector<std::string>& where);

// Starts the process-wide communicator (once; MPI_Init for mpi and nccl) and returns it.
Communicator& init_world(Backend b);
// The process-wide communicator: init_world's, or a world of one when none was started.
Communicator& world();
// Ends the process-wide communicator (MPI_Finalize); registered with atexit when mpi or nccl starts.
void finalize_world();

// What this process's collectives on the mpi backend cost so far (a collective made inside another counts once): wall seconds inside them, the bytes this rank contributed, and how many were made. For the log of a
// data-parallel run and bench/RESULTS.md's communication share.
struct CollectiveTally {
  double seconds = 0;
  int64_t bytes = 0;
  int64_t calls = 0;
};
CollectiveTally& collective_tally();

// Runs f; in a world of several ranks an exception ends every rank at once (abort) with its message, since
// the others would wait forever in their next collective. In a world of one it propagates as usual.
void run_on_every_rank(const std::function<void()>& f);

// Rows [begin, end) of `n` that rank `r` of `world` takes when `n` is split in blocks of `block` rows: whole
// blocks only, as evenly as whole blocks allow, in rank order (so the ranks' blocks are the blocks one
// process would compute, in the same order).
struct RowRange {
  int64_t begin = 0, end = 0;
};
RowRange block_rows(int64_t n, int64_t block, int r, int world);

// Rank r's rows of a reduce_scatter_sum over `t` with `rows_per_rank` (one count per rank, summing to t's first
// dim; an error names what does not fit).
RowRange scattered_rows(const Tensor& t, const std::vector<int64_t>& rows_per_rank, int r, int world);

std::unique_ptr<Communicator> make_none_communicator();
#ifdef REMATCH_WITH_MPI
std::unique_ptr<Communicator> make_mpi_communicator();
#endif
#ifdef REMATCH_WITH_NCCL
std::unique_ptr<Communicator> make_nccl_communicator();
#endif

}  // namespace rematch::parallel
