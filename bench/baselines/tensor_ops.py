#!/usr/bin/python3
"""PyTorch baseline for bench/tensor_ops_bench.cpp: the same float32 CPU work under the same case names.

Run with Debian's PyTorch: /usr/bin/python3 bench/baselines/tensor_ops.py [--threads 2] [--min-time 0.5]
Prints one JSON object per line: {"case": ..., "seconds": median seconds per call, "repeats": ...}.
"""
import argparse
import json
import statistics
import time

import torch

N16M = 1 << 24


def cases():
    g = torch.Generator().manual_seed(0)

    def rand(*shape):
        return torch.rand(*shape, generator=g, dtype=torch.float32) * 2 - 1

    a512, b512 = rand(512, 512), rand(512, 512)
    a2048, b2048 = rand(2048, 2048), rand(2048, 2048)
    x, y = rand(N16M), rand(N16M)
    s = rand(4096, 4096)
    return [
        ("matmul_512", lambda: torch.matmul(a512, b512)),
        ("matmul_2048", lambda: torch.matmul(a2048, b2048)),
        ("add_16M", lambda: torch.add(x, y)),
        ("exp_16M", lambda: torch.exp(x)),
        ("softmax_4096x4096", lambda: torch.softmax(s, dim=-1)),
        ("sum_16M", lambda: torch.sum(x)),
    ]


def measure(fn, min_time, warmup=3, min_repeats=5):
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
    parser.add_argument("--min-time", type=float, default=0.5, help="seconds of repeats per case (after warm-up)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    with torch.no_grad():
        for name, fn in cases():
            seconds, repeats = measure(fn, args.min_time)
            print(json.dumps({"case": name, "seconds": seconds, "repeats": repeats,
                              "torch": torch.__version__, "threads": torch.get_num_threads()}), flush=True)


if __name__ == "__main__":
    main()
