// parallel/communicator.h in one process: how rows are shared out, the world of one, and the backend choice
// with its errors (an mpirun world is imitated through the environment variable mpirun sets).
#include "parallel/communicator.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "parallel/nccl_api.h"
#include "test_util.h"

namespace rematch::parallel {
namespace {

#ifdef REMATCH_WITH_NCCL
// A build with NCCL does not load it at start-up (parallel/nccl_api.h): only a started nccl backend does.
TEST(NcclLoad, NotLoadedUntilTheNcclBackendStarts) {
  EXPECT_FALSE(nccl_loaded());
  std::ifstream maps("/proc/self/maps");
  const std::string mapped((std::istreambuf_iterator<char>(maps)), std::istreambuf_iterator<char>());
  EXPECT_EQ(mapped.find("libnccl"), std::string::npos) << "libnccl is mapped into a process that started no nccl backend";
}
#endif

TEST(BlockRows, WholeBlocksInRankOrderCoveringEveryRowOnce) {
  for (int64_t n : {0, 1, 7, 23, 100, 1000, 1001})
    for (int64_t block : {1, 4, 100})
      for (int world : {1, 2, 3, 4, 7}) {
        int64_t next = 0;
        for (int r = 0; r < world; ++r) {
          const RowRange rows = block_rows(n, block, r, world);
          EXPECT_EQ(rows.begin, next) << n << " rows, block " << block << ", rank " << r << " of " << world;
          EXPECT_LE(rows.begin, rows.end);
          EXPECT_TRUE(rows.begin % block == 0 || rows.begin == n) << "a rank starts inside a block";
          next = rows.end;
        }
        EXPECT_EQ(next, n) << n << " rows, block " << block << ", world " << world;
      }
  // As even as whole blocks allow: 6 blocks of 4 (23 rows) over 3 ranks are 2 blocks each.
  EXPECT_EQ(block_rows(23, 4, 0, 3).end, 8);
  EXPECT_EQ(block_rows(23, 4, 1, 3).end, 16);
  EXPECT_EQ(block_rows(23, 4, 2, 3).end, 23);
  EXPECT_THROWS_WITH(block_rows(10, 0, 0, 1), "block_rows");
  EXPECT_THROWS_WITH(block_rows(10, 2, 2, 2), "rank 2 of 2");
}

TEST(WorldOfOne, CollectivesReturnTheirInput) {
  const std::unique_ptr<Communicator> one = make_none_communicator();
  EXPECT_EQ(one->world_size(), 1);
  EXPECT_EQ(one->rank(), 0);
  const Tensor t = from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {3, 2});
  for (const Tensor& r : {one->all_reduce_sum(t), one->all_gather(t), one->broadcast(t, 0),
                          one->reduce_scatter_sum(t, {3})})
    EXPECT_EQ(r.to_vector<float>(), t.to_vector<float>());
  EXPECT_THROWS_WITH(one->reduce_scatter_sum(t, {2, 1}), "reduce_scatter_sum");
  EXPECT_THROWS_WITH(one->broadcast(t, 1), "root 1");
}

class BackendChoice : public ::testing::Test {
 protected:
  void TearDown() override { ::unsetenv("OMPI_COMM_WORLD_SIZE"); }
};

TEST_F(BackendChoice, AutoIsNoneInOneProcessAndEveryNameIsChecked) {
  ::unsetenv("OMPI_COMM_WORLD_SIZE");
  EXPECT_EQ(choose_backend("auto", false), Backend::None);
  EXPECT_EQ(choose_backend("none", true), Backend::None);
  EXPECT_THROWS_WITH(choose_backend("gloo", false), "--dist_backend gloo", "auto, none, mpi or nccl");
  if (!backend_available(Backend::Nccl))
    EXPECT_THROWS_WITH(choose_backend("nccl", true), "--dist_backend nccl", "no nccl backend", "-DREMATCH_NCCL=ON");
  if (backend_available(Backend::Nccl))
    EXPECT_THROWS_WITH(choose_backend("nccl", false), "needs --device cuda");
  if (!backend_available(Backend::Mpi))
    EXPECT_THROWS_WITH(choose_backend("mpi", false), "no mpi backend", "libopenmpi-dev");
}

TEST_F(BackendChoice, UnderMpirunAutoPicksMpiAndNoneIsRefused) {
  ::setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
  EXPECT_EQ(launched_world_size(), 4);
  EXPECT_THROWS_WITH(choose_backend("none", false), "mpirun started 4 processes", "--dist_backend auto or mpi");
  if (backend_available(Backend::Mpi)) {
    EXPECT_EQ(choose_backend("auto", false), Backend::Mpi);
    EXPECT_EQ(choose_backend("auto", true), backend_available(Backend::Nccl) ? Backend::Nccl : Backend::Mpi);
  }
}

// A communicator that only says where it is (rank_device reads nothing else).
class Placed final : public Communicator {
 public:
  Placed(Backend b, int rank, int world, int local) : b_(b), rank_(rank), world_(world), local_(local) {}
  Backend backend() const override { return b_; }
  int rank() const override { return rank_; }
  int world_size() const override { return world_; }
  int local_rank() const override { return local_; }
  Tensor all_reduce_sum(const Tensor& t) override { return t; }
  Tensor all_gather(const Tensor& t) override { return t; }
  Tensor reduce_scatter_sum(const Tensor& t, const std::vector<int64_t>&) override { return t; }
  Tensor broadcast(const Tensor& t, int) override { return t; }
  void barrier() override {}
  [[noreturn]] void abort(const std::string&, int code) override { std::exit(code); }

 private:
  Backend b_;
  int rank_, world_, local_;
};

TEST(RankDevice, EachRankTakesTheGpuOfItsLocalRank) {
  // A world of one computes where it was asked; the host stays the host.
  EXPECT_EQ(rank_device(Device::cuda(1), Placed(Backend::None, 0, 1, 0), 2), Device::cuda(1));
  EXPECT_EQ(rank_device(Device::cpu(), Placed(Backend::Mpi, 5, 8, 1), 0), Device::cpu());
  // Two nodes of 4 GPUs: rank 6 is the third process of the second node.
  EXPECT_EQ(rank_device(Device::cuda(), Placed(Backend::Nccl, 6, 8, 2), 4), Device::cuda(2));
  EXPECT_EQ(rank_device(Device::cuda(3), Placed(Backend::Nccl, 4, 8, 0), 4), Device::cuda(0));
  // More processes than the GPUs a rank sees: local rank modulo the count. Two ranks on a machine's one GPU (the
  // mpi backend shares it), or a launcher that shows each rank its own GPU only (each sees one: cuda:0).
  EXPECT_EQ(rank_device(Device::cuda(), Placed(Backend::Mpi, 1, 2, 1), 1), Device::cuda(0));
  EXPECT_EQ(rank_device(Device::cuda(), Placed(Backend::Mpi, 5, 6, 5), 2), Device::cuda(1));
  EXPECT_EQ(rank_device(Device::cuda(), Placed(Backend::Nccl, 3, 4, 3), 1), Device::cuda(0));
  EXPECT_THROWS_WITH(rank_device(Device::cuda(), Placed(Backend::Mpi, 1, 2, 1), 0), "--device cuda:0", "no CUDA device");
}

TEST(RankDevice, RanksOnOneGpuOfOneMachineAreFound) {
  // What the nccl backend refuses at its start: the same machine and PCI bus id.
  EXPECT_EQ(ranks_sharing_a_gpu({"node1 0000:1B:00.0", "node1 0000:3D:00.0", "node2 0000:1B:00.0"}),
            std::make_pair(-1, -1));
  EXPECT_EQ(ranks_sharing_a_gpu({"node1 0000:1B:00.0", "node2 0000:1B:00.0", "node1 0000:3D:00.0",
                                 "node2 0000:1B:00.0"}),
            std::make_pair(1, 3));
  EXPECT_EQ(ranks_sharing_a_gpu({"node1 0000:1B:00.0"}), std::make_pair(-1, -1));
}

}  // namespace
}  // namespace rematch::parallel
