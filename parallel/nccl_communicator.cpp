// The nccl backend (parallel/communicator.h): CUDA tensors on the GPU of the rank's local_rank, moved by NCCL on
// that device's rematch stream (tensor/cuda/check.h). MPI starts the processes and carries NCCL's unique id
// from rank 0 to the others; barrier and abort go through MPI too. NCCL sums in its own ring order (not rank
// order): results agree across ranks but may differ in the last bits from the mpi backend's. Host tensors
// (the flags and statistics a training step moves besides its GPU tensors) go through the mpi backend, which
// this backend needs anyway. Before each NCCL call the ranks compare the call, dtype and shape through MPI (agree),
// so a mismatch is an error, not a hang. NCCL itself is loaded here, on first use (parallel/nccl_api.h).
#ifdef REMATCH_WITH_NCCL
#include <mpi.h>
#include <nccl.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "parallel/communicator.h"
#include "parallel/mpi_world.h"
#include "parallel/nccl_api.h"
#include "tensor/cuda/check.h"
#include "tensor/kernels.h"

namespace rematch::parallel {
namespace {

#define REMATCH_NCCL_CHECK(call)                                                                       \
  do {                                                                                                \
    ncclResult_t r_ = (call);                                                                         \
    if (r_ != ncclSuccess) REMATCH_FAIL("NCCL ", #call, " failed: ", nccl().error_string(r_));        \
  } while (0)

ncclDataType_t nccl_type(DType t, const char* op) {
  switch (t) {
    case DType::Float32: return ncclFloat32;
    case DType::Float64: return ncclFloat64;
    case DType::Int32: return ncclInt32;
    case DType::Int64: return ncclInt64;
    case DType::UInt8: return ncclUint8;
    case DType::Bool: return ncclUint8;
  }
  REMATCH_FAIL(op, ": dtype ", dtype_name(t), " has no NCCL type");
}

class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator()
      : mpi_(mpi_start()), host_(make_mpi_communicator()), rank_(mpi_.rank), size_(mpi_.size),
        local_rank_(mpi_.local_rank) {
    int devices = 0;
    REMATCH_CUDA_CHECK(cudaGetDeviceCount(&devices));
    REMATCH_CHECK(devices > 0, "nccl backend: rank ", rank_, " sees no CUDA device");
    device_ = rank_device(Device::cuda(), *this, devices).index;  // the GPU the command's tensors are on
    REMATCH_CUDA_CHECK(cudaSetDevice(device_));
    refuse_shared_gpus(devices);
    ncclUniqueId id;
    if (rank_ == 0) REMATCH_NCCL_CHECK(nccl().get_unique_id(&id));
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    REMATCH_NCCL_CHECK(nccl().comm_init_rank(&comm_, size_, id, rank_));
  }
  ~NcclCommunicator() override {
    if (comm_) nccl().comm_destroy(comm_);
    host_.reset();
    mpi_stop(mpi_);
  }

  Backend backend() const override { return Backend::Nccl; }
  int rank() const override { return rank_; }
  int world_size() const override { return size_; }
  int local_rank() const override { return local_rank_; }

  Tensor all_reduce_sum(const Tensor& t) override {
    if (t.device().is_cpu()) return host_->all_reduce_sum(t);
    const Tensor x = on_gpu(t, "all_reduce_sum");
    agree(Call::AllReduce, "all_reduce_sum", x, false);
    Tensor out = empty(x.sizes(), x.dtype(), x.device());
    REMATCH_NCCL_CHECK(nccl().all_reduce(x.raw_data(), out.raw_data(), static_cast<size_t>(x.numel()),
                                     nccl_type(x.dtype(), "all_reduce_sum"), ncclSum, comm_, stream()));
    return out;
  }

  Tensor all_gather(const Tensor& t) override {
    if (t.device().is_cpu()) return host_->all_gather(t);
    const Tensor x = on_gpu(t, "all_gather");
    REMATCH_CHECK(x.dim() >= 1, "all_gather: needs at least one dimension, got ", x.describe());
    agree(Call::AllGather, "all_gather", x, true);
    // The ranks' row counts first; then every slice padded to the largest and gathered in one call.
    Tensor rows = from_vector(std::vector<int64_t>{x.size(0)}, {1});
    rows = kernels::to_device(rows, x.device());
    Tensor all_rows = empty({size_}, DType::Int64, x.device());
    REMATCH_NCCL_CHECK(nccl().all_gather(rows.raw_data(), all_rows.raw_data(), 1, ncclInt64, comm_, stream()));
    const std::vector<int64_t> counts = kernels::to_device(all_rows, Device::cpu()).to_vector<int64_t>();
    int64_t most = 0;
    for (int64_t c : counts) most = std::max(most, c);
    Shape padded_shape = x.sizes();
    padded_shape[0] = most;
    Tensor padded = zeros(padded_shape, x.dtype(), x.device());
    if (x.size(0) > 0) kernels::copy_(kernels::narrow(padded, 0, 0, x.size(0)), x);
    Shape gathered_shape = padded_shape;
    gathered_shape[0] = most * size_;
    Tensor gathered = empty(gathered_shape, x.dtype(), x.device());
    REMATCH_NCCL_CHECK(nccl().all_gather(padded.raw_data(), gathered.raw_data(), static_cast<size_t>(padded.numel()),
                                     nccl_type(x.dtype(), "all_gather"), comm_, stream()));
    std::vector<Tensor> parts;
    for (int r = 0; r < size_; ++r)
      if (counts[static_cast<size_t>(r)] > 0) parts.push_back(kernels::narrow(gathered, 0, r * most, counts[static_cast<size_t>(r)]));
    if (parts.empty()) return kernels::narrow(gathered, 0, 0, 0);
    return kernels::cat(parts, 0);
  }

  Tensor reduce_scatter_sum(const Tensor& t, const std::vector<int64_t>& rows_per_rank) override {
    if (t.device().is_cpu()) return host_->reduce_scatter_sum(t, rows_per_rank);
    const RowRange mine = scattered_rows(t, rows_per_rank, rank_, size_);
    return kernels::contiguous(kernels::narrow(all_reduce_sum(t), 0, mine.begin, mine.end - mine.begin));
  }

  Tensor broadcast(const Tensor& t, int root) override {
    if (t.device().is_cpu()) return host_->broadcast(t, root);
    const Tensor x = on_gpu(t, "broadcast");
    REMATCH_CHECK(root >= 0 && root < size_, "broadcast: root ", root, " outside a world of ", size_);
    agree(Call::Broadcast, "broadcast", x, false, root);
    Tensor out = kernels::clone(x);
    REMATCH_NCCL_CHECK(nccl().broadcast(x.raw_data(), out.raw_data(), static_cast<size_t>(x.numel()),
                                     nccl_type(x.dtype(), "broadcast"), root, comm_, stream()));
    return out;
  }

  void barrier() override { MPI_Barrier(MPI_COMM_WORLD); }

  [[noreturn]] void abort(const std::string& message, int code) override {
    std::fprintf(stderr, "rank %d of %d: %s\n", rank_, size_, message.c_str());
    std::fflush(stderr);
    if (comm_) nccl().comm_abort(comm_);
    comm_ = nullptr;
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);
  }

 private:
  cudaStream_t stream() const { return cuda::stream(device_); }
  Tensor on_gpu(const Tensor& t, const char* op) const {
    REMATCH_CHECK(t.device().is_cuda() && t.device().index == device_, op, ": the nccl backend moves tensors on ",
                  "cuda:", device_, " (this rank's GPU), got ", t.describe());
    return kernels::contiguous(t);
  }
  // Every rank must make the same call (collective, root) with a tensor of the same dtype and shape (all_gather:
  // but dim 0), or NCCL would hang or move garbage: compared through MPI (a few dozen bytes) before each call, so a
  // mismatch is an error on every rank that names the collective and both tensors. A rank that passes a host
  // tensor instead goes through the mpi backend, whose own check then sees this digest and fails alike (so the
  // digest travels through that backend's all_gather, not a bare MPI call of another length).
  enum class Call : int64_t { AllReduce = 1, AllGather, Broadcast };
  void agree(Call call, const char* op, const Tensor& x, bool but_rows, int root = -1) {
    constexpr int64_t kDims = 6;
    std::vector<int64_t> d{static_cast<int64_t>(call), root,
                           static_cast<int64_t>(x.dtype()), x.dim(), but_rows ? -1 : x.numel()};
    for (int64_t k = 0; k < kDims; ++k) d.push_back(k < x.dim() && !(but_rows && k == 0) ? x.size(k) : -1);
    const int64_t n = static_cast<int64_t>(d.size());
    const std::vector<int64_t> all = host_->all_gather(from_vector(d, {1, n})).to_vector<int64_t>();
    for (int r = 0; r < size_; ++r)
      REMATCH_CHECK(std::equal(d.begin(), d.end(), all.begin() + r * n), op, ": rank ", rank_, " passes ",
                    x.describe(), (root >= 0 ? " (root " + std::to_string(root) + ")" : std::string()), " but rank ",
                    r, " made another call or passed another dtype or shape", (but_rows ? " beyond dim 0" : ""),
                    ": every rank makes the same collectives in the same order");
  }
  // NCCL puts one process on each GPU: two ranks on one GPU of one machine (more processes than the GPUs each
  // sees) are refused here, every rank with the same message, before NCCL's own less telling error.
  void refuse_shared_gpus(int devices) {
    constexpr int kWhere = MPI_MAX_PROCESSOR_NAME + 32;
    char mine[kWhere] = {};
    int len = 0;
    MPI_Get_processor_name(mine, &len);
    char bus[32] = {};
    REMATCH_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, device_));
    std::snprintf(mine + len, static_cast<size_t>(kWhere - len), " %s", bus);
    std::vector<char> all(static_cast<size_t>(kWhere) * static_cast<size_t>(size_));
    MPI_Allgather(mine, kWhere, MPI_CHAR, all.data(), kWhere, MPI_CHAR, MPI_COMM_WORLD);
    std::vector<std::string> where;
    for (int r = 0; r < size_; ++r) where.emplace_back(all.data() + static_cast<size_t>(r) * kWhere);
    const auto [a, b] = ranks_sharing_a_gpu(where);
    REMATCH_CHECK(a < 0, "nccl backend: ranks ", a, " and ", b, " are both on GPU ", where[static_cast<size_t>(a)],
                  " (each rank sees ", devices, " GPU(s)); NCCL puts one process on each GPU: start at most one ",
                  "process per GPU, or pass --dist_backend mpi to share GPUs");
  }

  MpiWorld mpi_;
  std::unique_ptr<Communicator> host_;  // the mpi backend, for host tensors
  ncclComm_t comm_ = nullptr;
  int rank_ = 0, size_ = 1, local_rank_ = 0;
  int device_ = 0;  // this rank's GPU
};

}  // namespace

std::unique_ptr<Communicator> make_nccl_communicator() { return std::make_unique<NcclCommunicator>(); }

}  // namespace rematch::parallel
#endif  // REMATCH_WITH_NCCL
