// The CUDA emulator's NCCL (tools/cuda_emu/nccl.cpp, libnccl.so.emu) against what NCCL specifies, with ranks as
// forked processes: sums, maxima and averages the same on every rank and in rank order, buffers larger than one
// staging slot (so moved in several chunks), all-gather in place, broadcast from a root other than 0; and what the
// real library leaves to a hang: ranks that make different calls get ncclInvalidUsage on every rank, a rank that
// exits or aborts ends the others' wait with ncclRemoteError, a barrier nobody else reaches times out.
#include <gtest/gtest.h>
#include <nccl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>
#include <vector>

namespace {

// Runs body(rank, comm) in `ranks` forked processes on one communicator; returns each rank's exit status (the
// body's return value; 100 + the init's error when the communicator could not be made). A body that aborts the
// communicator (which frees it) sets it to null.
std::vector<int> on_ranks(int ranks, const std::function<int(int, ncclComm_t&)>& body) {
  setenv("REMATCH_NCCL_EMU_TIMEOUT", "30", 0);  // a check that fails ends in 30 s, not the default 300
  ncclUniqueId id;
  EXPECT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  std::vector<pid_t> pids;
  for (int r = 0; r < ranks; ++r) {
    const pid_t pid = fork();
    if (pid == 0) {
      ncclComm_t comm = nullptr;
      const ncclResult_t made = ncclCommInitRank(&comm, ranks, id, r);
      if (made != ncclSuccess) _exit(100 + made);
      const int status = body(r, comm);
      if (comm) ncclCommDestroy(comm);
      _exit(status);
    }
    pids.push_back(pid);
  }
  std::vector<int> codes;
  for (const pid_t pid : pids) {
    int status = 0;
    waitpid(pid, &status, 0);
    codes.push_back(WIFEXITED(status) ? WEXITSTATUS(status) : 200);
  }
  return codes;
}

TEST(NcclEmulator, AllReduceSumsInRankOrderAcrossChunks) {
  // 300,000 floats (1.2 MB): more than one 1 MiB slot, so the sum moves in two chunks.
  const size_t n = 300000;
  const auto codes = on_ranks(3, [n](int r, ncclComm_t comm) {
    std::vector<float> x(n), sum(n);
    for (size_t i = 0; i < n; ++i) x[i] = static_cast<float>(i % 97) * 0.1f + static_cast<float>(r);
    if (ncclAllReduce(x.data(), sum.data(), n, ncclFloat32, ncclSum, comm, nullptr) != ncclSuccess) return 1;
    for (size_t i = 0; i < n; ++i) {
      const float v = static_cast<float>(i % 97) * 0.1f;
      if (sum[i] != ((v + 0.0f) + (v + 1.0f)) + (v + 2.0f)) return 2;  // rank 0's, then 1's, then 2's
    }
    std::vector<int64_t> k{r, 10 * r};
    if (ncclAllReduce(k.data(), k.data(), 2, ncclInt64, ncclMax, comm, nullptr) != ncclSuccess) return 3;
    if (k[0] != 2 || k[1] != 20) return 4;
    double avg = r;
    if (ncclAllReduce(&avg, &avg, 1, ncclFloat64, ncclAvg, comm, nullptr) != ncclSuccess) return 5;
    return avg == 1.0 ? 0 : 6;
  });
  EXPECT_EQ(codes, (std::vector<int>{0, 0, 0}));
}

TEST(NcclEmulator, AllGatherInPlaceAndBroadcastFromRankOne) {
  const size_t n = 400000;  // doubles: 3.2 MB per rank, four chunks
  const auto codes = on_ranks(2, [n](int r, ncclComm_t comm) {
    std::vector<double> all(2 * n);
    for (size_t i = 0; i < n; ++i) all[r * n + i] = 1000.0 * r + static_cast<double>(i);
    if (ncclAllGather(all.data() + r * n, all.data(), n, ncclFloat64, comm, nullptr) != ncclSuccess) return 1;
    for (size_t k = 0; k < 2; ++k)
      for (size_t i = 0; i < n; ++i)
        if (all[k * n + i] != 1000.0 * static_cast<double>(k) + static_cast<double>(i)) return 2;
    std::vector<int32_t> b(5, r == 1 ? 7 : -1), got(5, 0);
    if (ncclBroadcast(b.data(), got.data(), 5, ncclInt32, 1, comm, nullptr) != ncclSuccess) return 3;
    return got == std::vector<int32_t>(5, 7) ? 0 : 4;
  });
  EXPECT_EQ(codes, (std::vector<int>{0, 0}));
}

TEST(NcclEmulator, DifferentCallsAreRefusedOnEveryRank) {
  const auto codes = on_ranks(2, [](int r, ncclComm_t comm) {
    std::vector<float> x(8, 1.0f);
    // Rank 1 reduces 8 elements, rank 0 only 4: NCCL would hang or move garbage.
    const ncclResult_t got = ncclAllReduce(x.data(), x.data(), r == 0 ? 4 : 8, ncclFloat32, ncclSum, comm, nullptr);
    return got == ncclInvalidUsage ? 0 : 1;
  });
  EXPECT_EQ(codes, (std::vector<int>{0, 0}));
}

TEST(NcclEmulator, ARankThatExitsOrAbortsEndsTheOthersWait) {
  const auto exits = on_ranks(2, [](int r, ncclComm_t comm) {
    if (r == 1) _exit(0);  // leaves without its collective
    float x = 1.0f;
    return ncclAllReduce(&x, &x, 1, ncclFloat32, ncclSum, comm, nullptr) == ncclRemoteError ? 0 : 1;
  });
  EXPECT_EQ(exits[0], 0);
  const auto aborts = on_ranks(2, [](int r, ncclComm_t& comm) {
    if (r == 1) {
      ncclCommAbort(comm);
      comm = nullptr;
      sleep(4);  // alive: the abort, not the exit, must end rank 0's wait
      return 0;
    }
    const auto start = std::chrono::steady_clock::now();
    float x = 1.0f;
    if (ncclAllReduce(&x, &x, 1, ncclFloat32, ncclSum, comm, nullptr) != ncclRemoteError) return 1;
    return std::chrono::steady_clock::now() - start < std::chrono::seconds(2) ? 0 : 2;
  });
  EXPECT_EQ(aborts, (std::vector<int>{0, 0}));  // rank 1's too: under AddressSanitizer a misuse there exits 1
}

TEST(NcclEmulator, ARankThatAbortsRightAfterACollectiveLeavesThatCollectiveWhole) {
  // The last rank through a collective's final barrier may abort before the others have woken to see the barrier
  // pass. Their collective is whole and must succeed; the next one is what fails. (CI's sanitizer stage lost this
  // race in the init's barrier.) Rank 1 arrives last: its broadcast copies 4 MB into pages it never touched, while
  // the root's copy is in place into pages it wrote, so the root is asleep in the barrier when rank 1 passes it.
  const size_t n = 1 << 20;  // floats: four 1 MiB chunks
  for (int round = 0; round < 20; ++round) {
    const auto codes = on_ranks(2, [n](int r, ncclComm_t& comm) {
      if (r == 1) {
        std::unique_ptr<float[]> fresh(new float[n]);  // not touched: every page faults in the copy
        if (ncclBroadcast(nullptr, fresh.get(), n, ncclFloat32, 0, comm, nullptr) != ncclSuccess) return 1;
        ncclCommAbort(comm);
        comm = nullptr;
        return fresh[n - 1] == 2.0f ? 0 : 2;
      }
      std::vector<float> x(n, 2.0f);
      if (ncclBroadcast(x.data(), x.data(), n, ncclFloat32, 0, comm, nullptr) != ncclSuccess) return 3;
      return ncclAllReduce(x.data(), x.data(), 1, ncclFloat32, ncclSum, comm, nullptr) == ncclRemoteError ? 0 : 4;
    });
    ASSERT_EQ(codes, (std::vector<int>{0, 0})) << "round " << round;
  }
}

TEST(NcclEmulator, ABarrierNobodyElseReachesTimesOut) {
  setenv("REMATCH_NCCL_EMU_TIMEOUT", "1", 1);
  const auto codes = on_ranks(2, [](int r, ncclComm_t comm) {
    if (r == 1) {
      sleep(3);  // alive, but never calls
      return 0;
    }
    float x = 1.0f;
    return ncclAllReduce(&x, &x, 1, ncclFloat32, ncclSum, comm, nullptr) == ncclSystemError ? 0 : 1;
  });
  setenv("REMATCH_NCCL_EMU_TIMEOUT", "30", 1);
  EXPECT_EQ(codes, (std::vector<int>{0, 0}));
}

TEST(NcclEmulator, BadArgumentsAreRefused) {
  ncclUniqueId foreign{};
  ncclComm_t comm = nullptr;
  EXPECT_EQ(ncclCommInitRank(&comm, 2, foreign, 0), ncclInvalidArgument);  // not made by ncclGetUniqueId
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  EXPECT_EQ(ncclCommInitRank(&comm, 2, id, 2), ncclInvalidArgument);  // rank outside the communicator
  const auto codes = on_ranks(1, [](int, ncclComm_t c) {
    float x = 1.0f;
    if (ncclAllReduce(&x, &x, 1, ncclFloat16, ncclSum, c, nullptr) != ncclInvalidArgument) return 1;
    if (ncclBroadcast(&x, &x, 1, ncclFloat32, 1, c, nullptr) != ncclInvalidArgument) return 2;
    if (ncclAllReduce(nullptr, &x, 1, ncclFloat32, ncclSum, c, nullptr) != ncclInvalidArgument) return 3;
    return 0;
  });
  EXPECT_EQ(codes, std::vector<int>{0});
}

}  // namespace
