#include "parallel/communicator.h"

#include <cstdio>
#include <cstdlib>
#include <exception>

#include "tensor/error.h"

namespace rematch::parallel {
namespace {

// A world of one: collectives return their input.
class NoneCommunicator final : public Communicator {
 public:
  Backend backend() const override { return Backend::None; }
  int rank() const override { return 0; }
  int world_size() const override { return 1; }
  int local_rank() const override { return 0; }
  Tensor all_reduce_sum(const Tensor& t) override { return t; }
  Tensor all_gather(const Tensor& t) override { return t; }
  Tensor reduce_scatter_sum(const Tensor& t, const std::vector<int64_t>& rows_per_rank) override {
    scattered_rows(t, rows_per_rank, 0, 1);  // checks the counts
    return t;
  }
  Tensor broadcast(const Tensor& t, int root) override {
    REMATCH_CHECK(root == 0, "broadcast: root ", root, " outside a world of 1");
    return t;
  }
  void barrier() override {}
  [[noreturn]] void abort(const std::string& message, int code) override {
    std::fprintf(stderr, "%s\n", message.c_str());
    std::exit(code);
  }
};

std::unique_ptr<Communicator> g_world;

int env_int(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : 0;
}

}  // namespace

CollectiveTally& collective_tally() {
  static CollectiveTally tally;
  return tally;
}

const char* backend_name(Backend b) {
  switch (b) {
    case Backend::None: return "none";
    case Backend::Mpi: return "mpi";
    case Backend::Nccl: return "nccl";
  }
  return "?";
}

int launched_world_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"}) {
    const int n = env_int(name);
    if (n > 0) return n;
  }
  return 1;
}

bool backend_available(Backend b) {
  switch (b) {
    case Backend::None: return true;
    case Backend::Mpi:
#ifdef REMATCH_WITH_MPI
      return true;
#else
      return false;
#endif
    case Backend::Nccl:
#ifdef REMATCH_WITH_NCCL
      return true;
#else
      return false;
#endif
  }
  return false;
}

Backend choose_backend(const std::string& name, bool gpu, const std::string& flag) {
  const int launched = launched_world_size();
  Backend b;
  if (name == "auto") {
    if (launched <= 1) return Backend::None;
    b = gpu && backend_available(Backend::Nccl) ? Backend::Nccl : Backend::Mpi;
  } else if (name == "none") {
    b = Backend::None;
  } else if (name == "mpi") {
    b = Backend::Mpi;
  } else if (name == "nccl") {
    b = Backend::Nccl;
  } else {
    REMATCH_FAIL(flag, " ", name, ": expected auto, none, mpi or nccl");
  }
  if (b == Backend::None && launched > 1)
    REMATCH_FAIL(flag, " none, but mpirun started ", launched, " processes: each would compute the whole run alone; "
                 "pass ", flag, " auto or mpi, or start one process");
  if (!backend_available(b))
    REMATCH_FAIL(flag, " ", backend_name(b), ": this build has no ", backend_name(b), " backend (",
                 b == Backend::Mpi ? "install libopenmpi-dev and configure with -DREMATCH_MPI=ON"
                                   : "configure with the CUDA backend and -DREMATCH_NCCL=ON",
                 ")");
  if (b == Backend::Nccl && !gpu)
    REMATCH_FAIL(flag, " nccl moves GPU tensors: it needs --device cuda (use mpi for the CPU)");
  return b;
}

Device rank_device(const Device& requested, const Communicator& comm, int gpus) {
  if (requested.is_cpu() || comm.world_size() == 1) return requested;
  REMATCH_CHECK(gpus > 0, "--device ", requested.str(), ": rank ", comm.rank(), " of ", comm.world_size(),
                " sees no CUDA device");
  return Device::cuda(comm.local_rank() % gpus);
}

std::pair<int, int> ranks_sharing_a_gpu(const std::vector<std::string>& where) {
  for (size_t a = 0; a < where.size(); ++a)
    for (size_t b = a + 1; b < where.size(); ++b)
      if (where[a] == where[b]) return {static_cast<int>(a), static_cast<int>(b)};
  return {-1, -1};
}

Device rank_device(const Device& requested, const Communicator& comm) {
  if (requested.is_cpu() || comm.world_size() == 1) return requested;
  return rank_device(requested, comm, cuda_device_count());
}

Communicator& init_world(Backend b) {
  if (g_world && g_world->backend() == b) return *g_world;  // started before (a second command in one process)
  REMATCH_CHECK(!g_world || g_world->backend() == Backend::None, "init_world: the ",
                backend_name(g_world ? g_world->backend() : b), " communicator was already started; cannot start ",
                backend_name(b));
  g_world.reset();
  switch (b) {
    case Backend::None: g_world = make_none_communicator(); break;
    case Backend::Mpi:
#ifdef REMATCH_WITH_MPI
      g_world = make_mpi_communicator();
#endif
      break;
    case Backend::Nccl:
#ifdef REMATCH_WITH_NCCL
      g_world = make_nccl_communicator();
#endif
      break;
  }
  REMATCH_CHECK(g_world, "init_world: the ", backend_name(b), " backend is not in this build");
  if (b != Backend::None) {
    static const bool registered = (std::atexit(finalize_world), true);  // MPI_Finalize before the process ends
    (void)registered;
  }
  return *g_world;
}

Communicator& world() {
  if (!g_world) g_world = make_none_communicator();  // (the program is single-threaded where it calls this)
  return *g_world;
}

void finalize_world() { g_world.reset(); }

void run_on_every_rank(const std::function<void()>& f) {
  Communicator& comm = world();
  if (comm.world_size() == 1) return f();
  try {
    f();
  } catch (const std::exception& e) {
    comm.abort(std::string("rematch: error: ") + e.what() + " (every rank stops)", 1);
  }
}

RowRange block_rows(int64_t n, int64_t block, int r, int world) {
  REMATCH_CHECK(block > 0 && world > 0 && r >= 0 && r < world, "block_rows: block ", block, ", rank ", r,
                " of ", world);
  const int64_t blocks = (n + block - 1) / block;
  const int64_t b0 = blocks * r / world, b1 = blocks * (r + 1) / world;
  return {std::min(n, b0 * block), std::min(n, b1 * block)};
}

RowRange scattered_rows(const Tensor& t, const std::vector<int64_t>& rows_per_rank, int r, int world) {
  REMATCH_CHECK(static_cast<int>(rows_per_rank.size()) == world, "reduce_scatter_sum: ", rows_per_rank.size(),
                " row counts for ", world, " ranks");
  int64_t begin = 0, total = 0;
  for (int k = 0; k < world; ++k) {
    if (k < r) begin += rows_per_rank[static_cast<size_t>(k)];
    total += rows_per_rank[static_cast<size_t>(k)];
  }
  REMATCH_CHECK(t.dim() >= 1 && t.size(0) == total, "reduce_scatter_sum: ", total, " rows in all, the tensor is ",
                t.describe());
  return {begin, begin + rows_per_rank[static_cast<size_t>(r)]};
}

std::unique_ptr<Communicator> make_none_communicator() { return std::make_unique<NoneCommunicator>(); }

}  // namespace rematch::parallel
