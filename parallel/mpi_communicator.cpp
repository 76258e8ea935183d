// The mpi backend (parallel/communicator.h) on Open MPI. Every collective moves bytes (MPI_BYTE) so any dtype
// travels; sums are taken here, in rank order, after an all-gather, so every rank computes the same sum in the
// same order whatever algorithm MPI would have chosen (exact results are worth the bandwidth at the sizes a
// retrieval run reduces). CUDA tensors are staged through host memory. MPI's default error handler ends every
// rank on a failed call, and mpirun ends the others when one rank dies, so no rank waits forever. Every rank must
// pass a collective its tensor from the same kind of device (all on the host, or all on their GPUs): the nccl
// backend would move the two kinds different ways and hang, so this backend checks it (check_same_tail, broadcast)
// and two ranks sharing one GPU find such a mix before a machine with a GPU per rank does.
#ifdef REMATCH_WITH_MPI
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "parallel/communicator.h"
#include "parallel/mpi_world.h"
#include "tensor/kernels.h"

namespace rematch::parallel {
namespace {

void check_mpi(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  REMATCH_FAIL("MPI ", what, " failed: ", std::string(text, static_cast<size_t>(len)));
}

Tensor host_contiguous(const Tensor& t) { return kernels::contiguous(kernels::to_device(t, Device::cpu())); }

size_t byte_size(const Tensor& t) { return static_cast<size_t>(t.numel()) * dtype_size(t.dtype()); }

template <typename T> void add_into(Tensor& acc, const Tensor& x) {
  T* a = acc.data<T>();
  const T* b = x.data<T>();
  for (int64_t i = 0; i < acc.numel(); ++i) a[i] = static_cast<T>(a[i] + b[i]);
}

// Counts a collective in collective_tally() (the outermost one only: all_reduce_sum gathers inside).
class Tallied {
 public:
  explicit Tallied(size_t bytes) {
    if (depth_++ > 0) return;
    start_ = std::chrono::steady_clock::now();
    collective_tally().bytes += static_cast<int64_t>(bytes);
    ++collective_tally().calls;
  }
  ~Tallied() {
    if (--depth_ > 0) return;
    collective_tally().seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  Tallied(const Tallied&) = delete;
  Tallied& operator=(const Tallied&) = delete;

 private:
  static inline int depth_ = 0;
  std::chrono::steady_clock::time_point start_;
};

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator() : mpi_(mpi_start()), rank_(mpi_.rank), size_(mpi_.size), local_rank_(mpi_.local_rank) {}
  ~MpiCommunicator() override { mpi_stop(mpi_); }

  Backend backend() const override { return Backend::Mpi; }
  int rank() const override { return rank_; }
  int world_size() const override { return size_; }
  int local_rank() const override { return local_rank_; }

  Tensor all_gather(const Tensor& t) override {
    const Tallied tallied(byte_size(t));
    return kernels::to_device(gather_host(host_contiguous(t), "all_gather", t.device()), t.device());
  }

  Tensor all_reduce_sum(const Tensor& t) override {
    REMATCH_CHECK(t.dtype() != DType::Bool, "all_reduce_sum: bool tensors have no sum");
    const Tallied tallied(byte_size(t));
    const Tensor h = host_contiguous(t);
    const Tensor flat = kernels::reshape(h, {1, h.numel()});
    const Tensor all = gather_host(flat, "all_reduce_sum", t.device());  // [world, numel], rank order
    Tensor acc = kernels::clone(kernels::select(all, 0, 0));
    for (int r = 1; r < size_; ++r) {
      const Tensor row = kernels::contiguous(kernels::select(all, 0, r));
      dispatch_numeric("all_reduce_sum", acc.dtype(), [&](auto tag) { add_into<typename decltype(tag)::type>(acc, row); });
    }
    return kernels::to_device(kernels::reshape(acc, h.sizes()), t.device());
  }

  Tensor reduce_scatter_sum(const Tensor& t, const std::vector<int64_t>& rows_per_rank) override {
    const Tallied tallied(byte_size(t));
    const RowRange mine = scattered_rows(t, rows_per_rank, rank_, size_);
    return kernels::contiguous(kernels::narrow(all_reduce_sum(t), 0, mine.begin, mine.end - mine.begin));
  }

  Tensor broadcast(const Tensor& t, int root) override {
    REMATCH_CHECK(root >= 0 && root < size_, "broadcast: root ", root, " outside a world of ", size_);
    const Tallied tallied(byte_size(t));
    Tensor h = kernels::clone(kernels::to_device(t, Device::cpu()));
    // The root's byte count and device kind (host or GPU: check_same_tail says why the kinds must agree).
    const long long mine[2] = {static_cast<long long>(byte_size(h)), t.device().is_cuda() ? 1 : 0};
    long long theirs[2] = {mine[0], mine[1]};
    check_mpi(MPI_Bcast(theirs, 2, MPI_LONG_LONG, root, MPI_COMM_WORLD), "MPI_Bcast");
    REMATCH_CHECK(theirs[1] == mine[1], "broadcast: rank ", rank_, " passes a ", mine[1] ? "GPU" : "host",
                  " tensor but the root a ", theirs[1] ? "GPU" : "host", " one: every rank must pass its tensor from ",
                  "the same kind of device (on the nccl backend the two would travel different ways and wait for each ",
                  "other forever)");
    REMATCH_CHECK(theirs[0] == mine[0], "broadcast: rank ", rank_, " holds ", mine[0], " bytes, the root ", theirs[0]);
    REMATCH_CHECK(mine[0] <= INT32_MAX, "broadcast: ", mine[0], " bytes exceed one MPI call's 2 GiB");
    check_mpi(MPI_Bcast(h.raw_data(), static_cast<int>(mine[0]), MPI_BYTE, root, MPI_COMM_WORLD), "MPI_Bcast");
    return kernels::to_device(h, t.device());
  }

  void barrier() override {
    const Tallied tallied(0);
    check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
  }

  [[noreturn]] void abort(const std::string& message, int code) override {
    std::fprintf(stderr, "rank %d of %d: %s\n", rank_, size_, message.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);
  }

 private:
  // The all-gather both all_gather and all_reduce_sum make, on the host copy `h` of a tensor on `from`: the ranks'
  // rows stacked in rank order, on the host.
  Tensor gather_host(const Tensor& h, const char* op, const Device& from) {
    check_same_tail(h, op, from);
    // Every rank's bytes and rows (a rank may hold no rows: its bytes say nothing of a row's size).
    const long long mine[2] = {static_cast<long long>(byte_size(h)), static_cast<long long>(h.size(0))};
    std::vector<long long> sizes(2 * static_cast<size_t>(size_));
    check_mpi(MPI_Allgather(mine, 2, MPI_LONG_LONG, sizes.data(), 2, MPI_LONG_LONG, MPI_COMM_WORLD), "MPI_Allgather");
    std::vector<int> counts(static_cast<size_t>(size_)), displs(static_cast<size_t>(size_));
    long long total = 0;
    int64_t rows = 0;
    for (size_t r = 0; r < counts.size(); ++r) {
      REMATCH_CHECK(total + sizes[2 * r] <= INT32_MAX, op, ": ", total + sizes[2 * r],
                    " bytes exceed one MPI call's 2 GiB; gather in pieces");
      counts[r] = static_cast<int>(sizes[2 * r]);
      displs[r] = static_cast<int>(total);
      total += sizes[2 * r];
      rows += sizes[2 * r + 1];
    }
    Shape shape = h.sizes();
    shape[0] = rows;
    Tensor out = empty(shape, h.dtype(), Device::cpu());
    check_mpi(MPI_Allgatherv(h.raw_data(), counts[static_cast<size_t>(rank_)], MPI_BYTE, out.raw_data(), counts.data(),
                             displs.data(), MPI_BYTE, MPI_COMM_WORLD),
              "MPI_Allgatherv");
    return out;
  }

  // Every rank's shape but dim 0, and its dtype, must agree: compared through a small all-gather of a digest. So
  // must the kind of device the tensor came from (host or GPU): the nccl backend moves host tensors through MPI
  // and GPU tensors through NCCL, so a rank whose tensor is on the host while another's is on its GPU would wait
  // forever there; this backend, which two ranks sharing one GPU can run, says so instead.
  void check_same_tail(const Tensor& h, const char* op, const Device& from) {
    REMATCH_CHECK(h.dim() >= 1, op, ": needs at least one dimension, got ", h.describe());
    long long mine[10] = {static_cast<long long>(h.dtype()), h.dim()};
    for (int64_t d = 1; d < h.dim() && d < 8; ++d) mine[d + 1] = h.size(d);
    mine[9] = from.is_cuda() ? 1 : 0;
    std::vector<long long> all(10 * static_cast<size_t>(size_));
    check_mpi(MPI_Allgather(mine, 10, MPI_LONG_LONG, all.data(), 10, MPI_LONG_LONG, MPI_COMM_WORLD), "MPI_Allgather");
    for (int r = 0; r < size_; ++r) {
      const long long* theirs = all.data() + 10 * r;
      REMATCH_CHECK(theirs[9] == mine[9], op, ": rank ", rank_, " passes a ", mine[9] ? "GPU" : "host",
                    " tensor but rank ", r, " a ", theirs[9] ? "GPU" : "host", " one: every rank must pass its ",
                    "tensor from the same kind of device (on the nccl backend the two would travel different ways ",
                    "and wait for each other forever)");
      REMATCH_CHECK(std::memcmp(mine, theirs, sizeof mine) == 0, op, ": rank ", rank_, " holds ", h.describe(),
                    " but rank ", r, " a tensor of another dtype or shape beyond dim 0");
    }
  }

  MpiWorld mpi_;
  int rank_ = 0, size_ = 1, local_rank_ = 0;
};

}  // namespace

std::unique_ptr<Communicator> make_mpi_communicator() { return std::make_unique<MpiCommunicator>(); }

}  // namespace rematch::parallel
#endif  // REMATCH_WITH_MPI
