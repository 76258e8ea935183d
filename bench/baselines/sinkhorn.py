#!/usr/bin/python3
"""Baselines for bench/sinkhorn_bench.cpp: the same fixed-iteration log-domain Sinkhorn, on the CPU, under the
same case names, in three implementations:

  pot     POT's ot.sinkhorn(method='sinkhorn_log', stopThr=0) (python3-pot; it tests its marginal error every
          10 iterations, as it always does). POT 0.8.2 has no batched solver: a batch is a loop over problems.
  numpy   a NumPy loop like L2RM's `sinkhorn_log_domain` (docs/methods/l2rm.md §1.5: potentials in cost units, full
          modified-cost matrix each half-step, max-shifted LSE with +1e-10, ||u - u_prev|| every sweep), without
          the mask and the early stop; a batch runs as one [B, n, m] array.
  torch   PyTorch eager: f = eps log a - eps logsumexp((g - C)/eps), g likewise, on [B, n, m] tensors.

Costs uniform in [0, 1), uniform marginals, eps = 0.01; float64 and float32 cases ("f64"/"f32").
"l2rm_partial_129" is one L2RM rematch call (partial_ot + sinkhorn_log_domain, docs/methods/l2rm.md §1.5:
128x128 cost, diagonal masked, dummy row/column, stop on ||u - u_prev|| < 1e-3) on the pseudo-random cost
((i*7919 + j*104729) mod 1009)/1009 that bench/sinkhorn_bench.cpp builds too; NumPy only. A case whose
full run would take minutes (the B = 128 batch in POT and NumPy, and in PyTorch) runs fewer sweeps and is
scaled linearly to the nominal count (fixed iterations, no early stop: time is linear in sweeps); the JSON
says so ("sweeps_run").

Run with Debian's packages: /usr/bin/python3 bench/baselines/sinkhorn.py [--threads 2] [--min-time 1]
Prints one JSON object per line: {"case", "impl", "seconds" (median, for the nominal sweeps), "sweeps_run", ...}.
"""
import argparse
import json
import statistics
import time
import warnings

import numpy as np
import ot
import torch

EPS = 0.01

# case name: (dtype, batch, n, nominal sweeps, sweeps actually run per implementation)
CASES = {}
for _t in ("f64", "f32"):
    CASES["log_%s_129x129_B1_1000it" % _t] = (_t, 1, 129, 1000, dict(pot=1000, numpy=1000, torch=1000))
    CASES["log_%s_129x129_B128_1000it" % _t] = (_t, 128, 129, 1000, dict(pot=10, numpy=20, torch=50))
    CASES["log_%s_2000x2000_10it" % _t] = (_t, 1, 2000, 10, dict(pot=10, numpy=10, torch=10))
CASES["l2rm_partial_129"] = ("f64", 1, 129, None, dict(numpy=None))  # sweeps: wherever L2RM's rule stops


def numpy_l2rm_loop(p, q, C, reg, sweeps):
    """L2RM's loop on [B, n, m]: u, v in cost units, the modified cost rebuilt for every half-step."""
    def modified(u, v):
        return (-C + u[..., :, None] + v[..., None, :]) / reg

    def lse(A):
        mx = A.max(axis=-1, keepdims=True)
        return (np.log(np.exp(A - mx).sum(axis=-1, keepdims=True) + 1e-10) + mx)[..., 0]

    u, v = 0.0 * p, 0.0 * q
    for _ in range(sweeps):
        u_prev = u
        u = reg * (np.log(p) - lse(modified(u, v))) + u
        v = reg * (np.log(q) - lse(np.swapaxes(modified(u, v), -1, -2))) + v
        np.linalg.norm(u - u_prev)
    return np.exp(modified(u, v))


def l2rm_partial_ot(C, rho=0.1, reg=EPS, niter=1000, thresh=1e-3):
    """L2RM's partial_ot + sinkhorn_log_domain (docs/methods/l2rm.md §1.5), transcribed; returns sweeps run."""
    B = C.shape[0]
    xi, A = 100 * C.max(), C.max()
    Ch = np.full((B + 1, B + 1), xi)
    Ch[:B, :B] = C
    Ch[B, B] = 2 * xi + A
    mask = np.ones((B + 1, B + 1))
    mask[np.arange(B), np.arange(B)] = 0
    p = np.append(np.full(B, 1.0 / B), 1.0 - rho)

    def kernel(u, v):
        K = (-Ch + u[:, None] + v[None, :]) / reg
        K[mask == 0] = -1e6
        return K

    def lse(K):
        mx = K.max(axis=1, keepdims=True)
        return (np.log(np.exp(K - mx).sum(axis=1, keepdims=True) + 1e-10) + mx)[:, 0]

    u, v = 0.0 * p, 0.0 * p
    for it in range(1, niter + 1):
        u_prev = u
        u = reg * (np.log(p) - lse(kernel(u, v))) + u
        v = reg * (np.log(p) - lse(kernel(u, v).T)) + v
        if np.linalg.norm(u - u_prev) < thresh:
            break
    np.float32(np.exp(kernel(u, v)))[:-1, :-1]
    return it


def hashed_cost(n):
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    return ((i * 7919 + j * 104729) % 1009) / 1009.0


def torch_sinkhorn(a, b, C, reg, sweeps):
    f, g = torch.zeros_like(a), torch.zeros_like(b)
    log_a, log_b = a.log(), b.log()
    for _ in range(sweeps):
        f = reg * log_a - reg * torch.logsumexp((g[..., None, :] - C) / reg, dim=-1)
        g = reg * log_b - reg * torch.logsumexp((f[..., :, None] - C) / reg, dim=-2)
    return torch.exp((f[..., :, None] + g[..., None, :] - C) / reg)


def make(case):
    t, B, n, _, _ = CASES[case]
    dtype = np.float64 if t == "f64" else np.float32
    C = np.random.default_rng(0).random((B, n, n)).astype(dtype)
    w = np.full((B, n), 1.0 / n, dtype=dtype)
    return C, w


def runner(case, impl):
    if case == "l2rm_partial_129":
        C = hashed_cost(128)
        return (lambda: l2rm_partial_ot(C)), l2rm_partial_ot(C)
    C, w = make(case)
    sweeps = CASES[case][4][impl]
    if impl == "pot":
        def fn():
            for k in range(C.shape[0]):
                ot.sinkhorn(w[k], w[k], C[k], EPS, method="sinkhorn_log", numItermax=sweeps, stopThr=0)
    elif impl == "numpy":
        def fn():
            numpy_l2rm_loop(w, w, C, EPS, sweeps)
    else:
        Ct, wt = torch.from_numpy(C), torch.from_numpy(w)

        def fn():
            with torch.no_grad():
                torch_sinkhorn(wt, wt, Ct, EPS, sweeps)
    return fn, sweeps


def measure(fn, min_time, warmup=1, min_repeats=3):
    for _ in range(warmup):
        fn()
    times = []
    start = time.perf_counter()
    while len(times) < min_repeats or time.perf_counter() - start < min_time:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), len(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--min-time", type=float, default=1.0, help="seconds of repeats per case (after warm-up)")
    parser.add_argument("--filter", default="", help="run only cases whose name contains this")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    warnings.simplefilter("ignore")
    for case, (_, _, _, nominal, impls) in CASES.items():
        if args.filter not in case:
            continue
        for impl in impls:
            fn, sweeps = runner(case, impl)
            seconds, repeats = measure(fn, args.min_time)
            full = nominal or sweeps
            print(json.dumps({"case": case, "impl": impl, "seconds": seconds * full / sweeps, "sweeps_run": sweeps,
                              "sweeps": full, "repeats": repeats, "pot": ot.__version__, "numpy": np.__version__,
                              "torch": torch.__version__, "threads": torch.get_num_threads()}), flush=True)


if __name__ == "__main__":
    main()
