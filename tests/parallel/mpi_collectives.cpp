// A backend's collectives across real ranks: run as `mpirun -n N parallel_mpi_collectives [mpi|nccl] [cpu|cuda]`
// (default mpi on the CPU; tests/CMakeLists.txt registers N = 3). On a GPU machine `mpi cuda` checks the mpi
// backend with CUDA tensors (staged through host memory) and `nccl cuda` the nccl backend (one rank per GPU: with
// one GPU, -n 1). Each rank checks what it received against what every rank must hold and exits 1 on a mismatch
// (mpirun then fails). Rank r contributes rows filled from r, of r + 1 rows, so uneven first dims are covered.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "parallel/communicator.h"
#include "parallel/gather_op.h"
#include "parallel/reduce_op.h"
#include "tensor/device.h"
#include "tensor/kernels.h"

using namespace rematch;

namespace {
int failures = 0;
void expect(bool ok, const std::string& what, int rank) {
  if (!ok) {
    std::fprintf(stderr, "rank %d: FAILED: %s\n", rank, what.c_str());
    ++failures;
  }
}
Tensor rows_of(int r, int64_t n, int64_t width) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < width; ++j) v.push_back(100.0 * r + 10.0 * static_cast<double>(i) + static_cast<double>(j));
  return from_vector(v, {n, width});
}
}  // namespace

int check_collectives(const std::string& backend, const std::string& device) {
  parallel::Communicator& c = parallel::init_world(backend == "nccl" ? parallel::Backend::Nccl : parallel::Backend::Mpi);
  const int r = c.rank(), n = c.world_size();
  // The rank's GPU as rematch train takes it (parallel::rank_device: two mpi ranks share a machine's one GPU).
  const Device dev = device == "cuda" ? parallel::rank_device(Device::cuda(), c) : Device::cpu();
  auto on = [&](const Tensor& t) { return kernels::to_device(t, dev); };  // results are read back by to_vector
  // all_gather: rank order, uneven rows.
  const Tensor g = c.all_gather(on(rows_of(r, r + 1, 3)));
  std::vector<Tensor> want_parts;
  for (int k = 0; k < n; ++k) want_parts.push_back(rows_of(k, k + 1, 3));
  const Tensor want = kernels::cat(want_parts, 0);
  expect(g.sizes() == want.sizes() && g.to_vector<double>() == want.to_vector<double>(), "all_gather", r);
  // all_gather where rank 0 holds no rows (its bytes say nothing of a row's size); on one rank (the nccl check's
  // world) nothing is gathered at all, so the expected values are laid end to end without cat (which needs a
  // tensor).
  const Tensor g0 = c.all_gather(on(rows_of(r, r == 0 ? 0 : 2, 3)));
  std::vector<double> want0;
  for (int k = 1; k < n; ++k) {
    const std::vector<double> v = rows_of(k, 2, 3).to_vector<double>();
    want0.insert(want0.end(), v.begin(), v.end());
  }
  expect(g0.sizes() == Shape{2 * (n - 1), 3} && g0.to_vector<double>() == want0, "all_gather with an empty rank", r);
  // all_reduce_sum: float32 and int64, same on every rank.
  const Tensor x = on(from_vector(std::vector<float>{1.0f + r, 0.5f * r, -2.0f}, {3}));
  const std::vector<float> sum = c.all_reduce_sum(x).to_vector<float>();
  float s0 = 0, s1 = 0;
  for (int k = 0; k < n; ++k) s0 += 1.0f + k, s1 += 0.5f * k;
  expect(sum == std::vector<float>{s0, s1, -2.0f * n}, "all_reduce_sum float32", r);
  const std::vector<int64_t> isum = c.all_reduce_sum(on(from_vector(std::vector<int64_t>{r, 1}, {2}))).to_vector<int64_t>();
  expect(isum == std::vector<int64_t>{int64_t(n) * (n - 1) / 2, n}, "all_reduce_sum int64", r);
  // reduce_scatter_sum: the backward of all_gather; rank r keeps its rows of the sum.
  std::vector<int64_t> rows;
  int64_t total = 0, begin = 0;
  for (int k = 0; k < n; ++k) {
    rows.push_back(k + 1);
    if (k < r) begin += k + 1;
    total += k + 1;
  }
  // Row i holds i on every rank: the sum is n * i, and rank r keeps rows [begin, begin + r + 1).
  std::vector<double> row_index, want_mine;
  for (int64_t i = 0; i < total; ++i) row_index.insert(row_index.end(), 2, double(i));
  for (int64_t i = begin; i < begin + r + 1; ++i) want_mine.insert(want_mine.end(), 2, double(n) * double(i));
  const Tensor mine = c.reduce_scatter_sum(on(from_vector(row_index, {total, 2})), rows);
  expect(mine.size(0) == r + 1 && mine.to_vector<double>() == want_mine, "reduce_scatter_sum", r);
  // broadcast from the last rank.
  const Tensor b = c.broadcast(on(from_vector(std::vector<int64_t>{r, 7}, {2})), n - 1);
  expect(b.to_vector<int64_t>() == std::vector<int64_t>{n - 1, 7}, "broadcast", r);
  // all_gather_rows with gradient: rank k's loss is (k + 1) * sum(G * G) over the gathered G, so the run's loss
  // sum_k (k + 1) * sum(G^2) gives every rank's rows the gradient 2 * x * sum_k (k + 1).
  Tensor leaf = on(rows_of(r, r + 1, 2));
  leaf.requires_grad_(true);
  const Tensor gathered = parallel::all_gather_rows(c, leaf);
  expect(gathered.size(0) == int64_t(n) * (n + 1) / 2, "all_gather_rows rows", r);
  backward(rematch::mul(rematch::sum(rematch::mul(gathered, gathered)), double(r + 1)));
  const double weight = double(n) * (n + 1) / 2;
  const std::vector<double> xs = leaf.to_vector<double>(), gx = leaf.grad().to_vector<double>();
  bool grad_ok = gx.size() == xs.size();
  for (size_t i = 0; grad_ok && i < xs.size(); ++i) grad_ok = gx[i] == 2 * xs[i] * weight;
  expect(grad_ok, "all_gather_rows backward (reduce-scatter)", r);
  // GatherBackward::OwnRows: every rank computes the same loss sum(G * G) (a loss of the whole batch, computed once
  // per rank): each rank's rows get 2 * x, not the sum over ranks.
  Tensor same = on(rows_of(r, r + 1, 2));
  same.requires_grad_(true);
  const Tensor whole = parallel::all_gather_rows(c, same, parallel::GatherBackward::OwnRows);
  backward(rematch::sum(rematch::mul(whole, whole)));
  const std::vector<double> ys = same.to_vector<double>(), gy = same.grad().to_vector<double>();
  bool own_ok = gy.size() == ys.size() && whole.size(0) == int64_t(n) * (n + 1) / 2;
  for (size_t i = 0; own_ok && i < ys.size(); ++i) own_ok = gy[i] == 2 * ys[i];
  expect(own_ok, "all_gather_rows backward (own rows)", r);
  // Second derivatives through the gather (a meta step on several ranks): rank k's loss (k + 1) * sum(G^3) gives
  // every rank's rows g = 3 * w * x^2 (w = sum_k (k + 1)), recorded (create_graph); each rank's sum(g) then has the
  // run's gradient 6 * w * x, which reaches x back through the reduce-scatter (its backward is the gather) and
  // through the first gather again. With OwnRows, the same loss sum(G^3) on every rank: g = 3 * x^2, then 6 * x.
  // (Integer-valued doubles: every product and sum here is exact.)
  // Before the reduce-scatter and the own rows' cut were recorded, g needed no gradient and this was an error.
  for (parallel::GatherBackward how : {parallel::GatherBackward::SumOverRanks, parallel::GatherBackward::OwnRows}) {
    const bool summed = how == parallel::GatherBackward::SumOverRanks;
    Tensor x2 = on(rows_of(r, r + 1, 2));
    x2.requires_grad_(true);
    const Tensor G = parallel::all_gather_rows(c, x2, how);
    const Tensor cubes = rematch::sum(rematch::mul(rematch::mul(G, G), G));
    GradOptions keep;
    keep.create_graph = true;
    const Tensor g1 = grad({rematch::mul(cubes, summed ? double(r + 1) : 1.0)}, {x2}, {}, keep)[0];
    const Tensor g2 = grad({rematch::sum(g1)}, {x2})[0];
    const double w = summed ? weight : 1.0;
    const std::vector<double> xv = x2.to_vector<double>(), first = g1.to_vector<double>(), second = g2.to_vector<double>();
    bool ok = first.size() == xv.size() && second.size() == xv.size();
    for (size_t i = 0; ok && i < xv.size(); ++i) ok = first[i] == 3 * w * xv[i] * xv[i] && second[i] == 6 * w * xv[i];
    expect(ok, summed ? "all_gather_rows second derivative (reduce-scatter)" : "all_gather_rows second derivative (own rows)", r);
  }
  // all_reduce_sum_recorded (parallel/reduce_op.h), rank r's weight c_r = r + 1, C = sum_k c_k = weight. Values are
  // small dyadic numbers, so every sum and product is exact whatever the order.
  const double C = weight;
  auto near = [](const std::vector<double>& got, const std::vector<double>& want) {
    bool ok = got.size() == want.size();
    for (size_t i = 0; ok && i < got.size(); ++i) ok = std::abs(got[i] - want[i]) <= 1e-12 * std::max(1.0, std::abs(want[i]));
    return ok;
  };
  const auto whole_loss = parallel::ReduceBackward::WholeLossOnEveryRank;
  {
    // First derivative, the whole loss sum(y^2) on every rank, y = sum_r x_r: each rank's x gets 2y, unchanged.
    Tensor xr = on(from_vector(std::vector<double>{1.0 + r, -2.0 * (r + 1)}, {2}));
    xr.requires_grad_(true);
    const Tensor y = parallel::all_reduce_sum_recorded(c, xr, whole_loss);
    backward(rematch::sum(rematch::mul(y, y)));
    expect(near(y.to_vector<double>(), {C, -2 * C}) && near(xr.grad().to_vector<double>(), {2 * C, -4 * C}),
           "all_reduce_sum_recorded (whole loss) backward", r);
  }
  {
    // MSCN's meta step in small (train/methods/mscn/mscn_method.cpp): theta, phi the same on every rank; rank r's
    // share of the virtual step's gradient g_r = d/dtheta [c_r * sum(phi * theta^2)] = 2 c_r phi theta (create_graph),
    // summed in the graph: g = 2 C phi theta; theta' = theta - lr * g; the meta loss J = sum(phi_d * theta'^2), with
    // phi_d = phi on rank 0 and phi detached elsewhere (only rank 0 holds J's direct part). Each rank's dJ/dphi is
    // its share, and their sum is the run's: theta'^2 - 4 lr C phi theta' theta.
    Tensor theta = on(from_vector(std::vector<double>{1.0, 2.0}, {2})), phi = on(from_vector(std::vector<double>{0.5, -1.0}, {2}));
    theta.requires_grad_(true);
    phi.requires_grad_(true);
    const double lr = 0.125, cr = r + 1;
    GradOptions keep;
    keep.create_graph = true;
    const Tensor share = rematch::mul(rematch::sum(rematch::mul(phi, rematch::mul(theta, theta))), cr);
    const Tensor gr = grad({share}, {theta}, {}, keep)[0];
    const Tensor g = parallel::all_reduce_sum_recorded(c, gr, whole_loss);
    const Tensor stepped = rematch::sub(theta.detach(), rematch::mul(g, lr));
    const Tensor J = rematch::sum(rematch::mul(r == 0 ? phi : phi.detach(), rematch::mul(stepped, stepped)));
    const std::vector<double> mine = grad({J}, {phi})[0].to_vector<double>();
    const std::vector<double> total = c.all_reduce_sum(from_vector(mine, {2})).to_vector<double>();
    std::vector<double> want_mine, want_total;
    const std::vector<double> th{1.0, 2.0}, ph{0.5, -1.0};
    for (size_t i = 0; i < 2; ++i) {
      const double tp = th[i] - lr * 2 * C * ph[i] * th[i];
      want_mine.push_back((r == 0 ? tp * tp : 0.0) - 4 * lr * cr * ph[i] * tp * th[i]);
      want_total.push_back(tp * tp - 4 * lr * C * ph[i] * tp * th[i]);
    }
    expect(near(g.to_vector<double>(), {2 * C * 0.5, -2 * C * 2.0}) && near(mine, want_mine) && near(total, want_total),
           "all_reduce_sum_recorded (whole loss) through a virtual step: second derivative", r);
  }
  {
    // SumOverRanks, to the second order: x_r = c_r * w (w the same on every rank), y = sum_r x_r = C w, rank r's loss
    // the share c_r * sum(y^3) (the run's: C sum(y^3)); g1_r = 3 C y^2 c_r, whose sum over ranks is the run's
    // gradient; d/dw of each rank's sum(g1_r) is 6 C^2 c_r y (their sum: the run's 6 C^3 y). With the identity instead
    // (the same loss sum(y^3) on every rank), the first derivative 3 y^2 c_r still sums to the run's, but the second
    // comes out 6 c_r^2 y (a share's gradient for y passed through as if it were the whole): reduce_op.h.
    for (parallel::ReduceBackward how : {parallel::ReduceBackward::SumOverRanks, whole_loss}) {
      const bool summed = how == parallel::ReduceBackward::SumOverRanks;
      Tensor w = on(from_vector(std::vector<double>{1.0, -2.0}, {2}));
      w.requires_grad_(true);
      const double cr = r + 1;
      const Tensor y = parallel::all_reduce_sum_recorded(c, rematch::mul(w, cr), how);
      const Tensor cubes = rematch::sum(rematch::mul(rematch::mul(y, y), y));
      GradOptions keep;
      keep.create_graph = true;
      const Tensor g1 = grad({summed ? rematch::mul(cubes, cr) : cubes}, {w}, {}, keep)[0];
      const Tensor g2 = grad({rematch::sum(g1)}, {w})[0];
      std::vector<double> want1, want2;
      for (double wi : {1.0, -2.0}) {
        const double yi = C * wi;
        want1.push_back(3 * (summed ? C : 1.0) * yi * yi * cr);
        want2.push_back(summed ? 6 * C * C * cr * yi : 6 * cr * cr * yi);
      }
      expect(near(g1.to_vector<double>(), want1) && near(g2.to_vector<double>(), want2),
             summed ? "all_reduce_sum_recorded second derivative (sum over ranks)"
                    : "all_reduce_sum_recorded second derivative (whole loss: a share's gradient passed through)",
             r);
    }
  }
  // Host tensors beside the device's (a training step's flags and statistics): on the nccl backend they go
  // through MPI; every backend returns them on the host.
  const Tensor host_sum = c.all_reduce_sum(from_vector(std::vector<int64_t>{r + 1}, {1}));
  const Tensor host_root = c.broadcast(from_vector(std::vector<int64_t>{r}, {1}), 0);
  expect(host_sum.device().is_cpu() && host_sum.to_vector<int64_t>()[0] == int64_t(n) * (n + 1) / 2 &&
             host_root.to_vector<int64_t>()[0] == 0 && c.all_gather(from_vector(std::vector<int64_t>{r}, {1})).numel() == n,
         "host tensors", r);
  c.barrier();
  if (r == 0 && failures == 0)
    std::printf("%s collectives (%s tensors): all checks hold on %d ranks\n", backend.c_str(), device.c_str(), n);
  return failures == 0 ? 0 : 1;
}

int main(int argc, char** argv) {
  const std::string backend = argc > 1 ? argv[1] : "mpi", device = argc > 2 ? argv[2] : "cpu";
  if ((backend != "mpi" && backend != "nccl") || (device != "cpu" && device != "cuda") || argc > 3 ||
      (backend == "nccl" && device != "cuda")) {
    std::fprintf(stderr, "usage: parallel_mpi_collectives [mpi|nccl] [cpu|cuda] (nccl: cuda tensors)\n");
    return 2;
  }
  try {
    return check_collectives(backend, device);
  } catch (const std::exception& e) {  // a backend or device this build or machine lacks: said, and no rank waits
    const std::string what = "parallel_mpi_collectives " + backend + " " + device + ": " + e.what();
    if (parallel::world().world_size() > 1) parallel::world().abort(what, 1);  // the others may sit in a collective
    std::fprintf(stderr, "%s\n", what.c_str());
    return 1;
  }
}
