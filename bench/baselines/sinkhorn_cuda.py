#!/usr/bin/env python3
"""Baseline for bench/sinkhorn_cuda_bench.cpp: the same fixed-sweep log-domain Sinkhorn in PyTorch eager on the
same CUDA device, under the same case names, float32, uniform costs in [0, 1) and uniform marginals:

  f = eps log a - eps logsumexp((g - C)/eps) over columns, then g likewise over rows (the alternating sweep of
  ot/sinkhorn.h), on [B, n, m] tensors, torch.no_grad().

  cuda_f32_129x129_B{1,128,1024}_1000it  eps = 0.01, 1000 sweeps (B = 1024 runs 100 sweeps and is scaled to
                                         1000: with a fixed sweep count the time is linear in sweeps;
                                         "sweeps_run" says so).
  cuda_f32_{43000x11,32000x201,32768x32768}  eps = 0.05, the time of one sweep: two runs of lo and hi sweeps,
                                         (t_hi - t_lo) / (hi - lo), as bench/run_sinkhorn_cuda.sh does for rematch.

Also one line {"case": "_device", ...}: the device name, its multiprocessor count and the device-to-device copy
bandwidth measured here (bytes read plus bytes written per second), which the runner uses for the memory bound.
Times are medians of repeats after a warm-up, with torch.cuda.synchronize() around each.

Run on the GPU machine: python3 bench/baselines/sinkhorn_cuda.py [--filter REGEX]  (cases whose name it matches)
Prints one JSON object per line.
"""
import argparse
import json
import re
import statistics
import time

import torch

BATCHES = {1: 1000, 128: 1000, 1024: 100}   # batch: sweeps actually run (nominal 1000)
LARGE = {"43000x11": (43000, 11, 20, 120), "32000x201": (32000, 201, 20, 120), "32768x32768": (32768, 32768, 2, 6)}


def sinkhorn(a, b, C, eps, sweeps):
    f, g = torch.zeros_like(a), torch.zeros_like(b)
    log_a, log_b = a.log(), b.log()
    for _ in range(sweeps):
        f = eps * log_a - eps * torch.logsumexp((g[..., None, :] - C) / eps, dim=-1)
        g = eps * log_b - eps * torch.logsumexp((f[..., :, None] - C) / eps, dim=-2)
    return torch.exp((f[..., :, None] + g[..., None, :] - C) / eps)


def timed(fn, repeats):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def problem(batch, n, m):
    gen = torch.Generator(device="cuda").manual_seed(0)
    C = torch.rand((batch, n, m), generator=gen, device="cuda", dtype=torch.float32)
    a = torch.full((batch, n), 1.0 / n, device="cuda", dtype=torch.float32)
    b = torch.full((batch, m), 1.0 / m, device="cuda", dtype=torch.float32)
    return a, b, C


def copy_bandwidth():
    x = torch.empty(1 << 28, device="cuda", dtype=torch.float32)  # 1 GiB
    y = torch.empty_like(x)
    seconds = timed(lambda: y.copy_(x), 10)
    return 2 * x.numel() * x.element_size() / seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--filter", default="", help="run only cases whose name this regular expression matches")
    args = parser.parse_args()
    props = torch.cuda.get_device_properties(0)
    print(json.dumps({"case": "_device", "name": props.name, "sms": props.multi_processor_count,
                      "copy_bytes_per_s": copy_bandwidth(), "torch": torch.__version__}), flush=True)
    with torch.no_grad():
        for batch, sweeps in BATCHES.items():
            case = "cuda_f32_129x129_B%d_1000it" % batch
            if not re.search(args.filter, case):
                continue
            a, b, C = problem(batch, 129, 129)
            seconds = timed(lambda: sinkhorn(a, b, C, 0.01, sweeps), 3)
            print(json.dumps({"case": case, "impl": "torch", "seconds": seconds * 1000 / sweeps,
                              "sweeps_run": sweeps, "sweeps": 1000}), flush=True)
        for name, (n, m, lo, hi) in LARGE.items():
            case = "cuda_f32_" + name
            if not re.search(args.filter, case):
                continue
            a, b, C = problem(1, n, m)
            t_lo = timed(lambda: sinkhorn(a, b, C, 0.05, lo), 3)
            t_hi = timed(lambda: sinkhorn(a, b, C, 0.05, hi), 3)
            print(json.dumps({"case": case, "impl": "torch", "seconds_per_sweep": (t_hi - t_lo) / (hi - lo),
                              "sweeps_lo": lo, "sweeps_hi": hi}), flush=True)
            del a, b, C
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
