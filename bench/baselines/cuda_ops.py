#!/usr/bin/env python3
"""PyTorch baseline for bench/cuda_ops_bench.cpp and bench/cuda_gru_bench.cpp: the same float32 work on the same
CUDA device under the same case names, timed the same way (CUDA events around a batch of calls, after a
warm-up; the median over repeats).

Primitives: dst.copy_(src) for copy_d2d, torch.add / torch.exp / row-broadcast add / torch.softmax(dim=-1) on
torch.rand inputs of the benchmark's shapes. Bi-GRU: torch.nn.GRU(300, 1024, batch_first=True,
bidirectional=True) on cuDNN, batch 128, 14 steps; "mixed" lengths 4 + (5b) mod 11 go through
pack_padded_sequence(enforce_sorted=False) and pad_packed_sequence inside the timed region; "fwd_bwd" takes
gradients of the input and every parameter of output.sum(). TF32 is off (torch.backends.cudnn.allow_tf32 and
torch.backends.cuda.matmul.allow_tf32 False), as in rematch by default, except in the "_tf32" cases, which run
cuDNN's default TF32 math against rematch with cuda::set_allow_tf32(true).

Run on the GPU machine: python3 bench/baselines/cuda_ops.py [--min-time 0.3] [--filter REGEX]
Prints one JSON object per line: {"case", "seconds" (median per call), "repeats", "torch", "device"}; prints
nothing (and a note on stderr) when PyTorch sees no CUDA device.
"""
import argparse
import json
import re
import statistics
import sys
import time

import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

N64M = 1 << 26
BATCH, STEPS, INPUT, HIDDEN = 128, 14, 300, 1024


def primitive_cases(dev):
    g = torch.Generator(device=dev).manual_seed(0)

    def rand(*shape):
        return torch.rand(*shape, generator=g, device=dev, dtype=torch.float32)

    x, y, dst = rand(N64M), rand(N64M), torch.empty(N64M, device=dev)
    m, row = rand(8192, 8192), rand(8192)
    s_long, s_short = rand(4096, 4096), rand(262144, 128)
    return [
        ("copy_d2d_256MiB", 10, lambda: dst.copy_(x)),
        ("add_64M", 10, lambda: torch.add(x, y)),
        ("exp_64M", 10, lambda: torch.exp(x)),
        ("add_broadcast_8192x8192", 10, lambda: torch.add(m, row)),
        ("softmax_4096x4096", 10, lambda: torch.softmax(s_long, dim=-1)),
        ("softmax_262144x128", 10, lambda: torch.softmax(s_short, dim=-1)),
    ]


def gru_cases(dev):
    torch.manual_seed(0)
    gru = torch.nn.GRU(INPUT, HIDDEN, batch_first=True, bidirectional=True).to(dev)
    x = torch.rand(BATCH, STEPS, INPUT, device=dev) - 0.5

    def lengths_for(mixed):
        return torch.tensor([4 + (5 * b) % 11 if mixed else STEPS for b in range(BATCH)], dtype=torch.int64)

    def run(inp, lengths, mixed):
        if not mixed:
            return gru(inp)
        packed = pack_padded_sequence(inp, lengths, batch_first=True, enforce_sorted=False)
        out, h_n = gru(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=STEPS)
        return out, h_n

    def forward(mixed):
        lengths = lengths_for(mixed)

        def fn():
            with torch.no_grad():
                run(x, lengths, mixed)
        return fn

    def forward_backward(mixed):
        lengths = lengths_for(mixed)
        xg = x.clone().requires_grad_(True)

        def fn():
            gru.zero_grad(set_to_none=True)
            xg.grad = None
            out, _ = run(xg, lengths, mixed)
            out.sum().backward()
        return fn

    return [
        ("bigru_forward_full", 1, forward(False)),
        ("bigru_forward_mixed", 1, forward(True)),
        ("bigru_fwd_bwd_full", 1, forward_backward(False)),
        ("bigru_fwd_bwd_mixed", 1, forward_backward(True)),
        ("bigru_fwd_bwd_full_tf32", 1, forward_backward(False)),
        ("bigru_fwd_bwd_mixed_tf32", 1, forward_backward(True)),
    ]


def measure(fn, calls, min_time, min_repeats=5):
    fn()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    began = time.perf_counter()
    while len(times) < min_repeats or time.perf_counter() - began < min_time:
        start.record()
        for _ in range(calls):
            fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e-3 / calls)
    return statistics.median(times), len(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--min-time", type=float, default=0.3, help="seconds of repeats per case (after warm-up)")
    parser.add_argument("--filter", default="", help="only cases whose name matches this regular expression")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("cuda_ops.py: PyTorch sees no CUDA device; no baseline", file=sys.stderr)
        return
    dev = torch.device("cuda:0")
    name = torch.cuda.get_device_name(dev)
    for case, calls, fn in primitive_cases(dev) + gru_cases(dev):
        if not re.search(args.filter, case):
            continue
        tf32 = case.endswith("_tf32")
        torch.backends.cudnn.allow_tf32 = tf32
        torch.backends.cuda.matmul.allow_tf32 = False
        seconds, repeats = measure(fn, calls, args.min_time)
        print(json.dumps({"case": case, "seconds": seconds, "repeats": repeats, "torch": torch.__version__,
                          "device": name}), flush=True)


if __name__ == "__main__":
    main()
