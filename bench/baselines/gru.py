#!/usr/bin/python3
"""PyTorch baseline for bench/gru_bench.cpp: the same Bi-GRU work, float32 on the CPU, under the same case names.

torch.nn.GRU(300, 1024, batch_first=True, bidirectional=True), batch 128, 14 steps; "full": every sequence 14
steps, run on the padded tensor; "mixed": lengths[b] = 4 + (5*b) % 11, run as SGRAF/NCR do, through
pack_padded_sequence(enforce_sorted=False) and pad_packed_sequence (both inside the timed region). "forward"
cases run under torch.no_grad(); "fwd_bwd" cases take gradients of the input and every parameter of
output.sum(), with .grad reset to None before each repeat.

Run with Debian's PyTorch: /usr/bin/python3 bench/baselines/gru.py [--threads 2] [--min-time 2]
Prints one JSON object per line: {"case": ..., "seconds": median seconds per call, "repeats": ...}.
"""
import argparse
import json
import statistics
import time

import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

BATCH, STEPS, INPUT, HIDDEN = 128, 14, 300, 1024


def lengths_for(mixed):
    return torch.tensor([4 + (5 * b) % 11 if mixed else STEPS for b in range(BATCH)], dtype=torch.int64)


def run(gru, x, lengths, mixed):
    if not mixed:
        return gru(x)
    packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
    out, h_n = gru(packed)
    out, _ = pad_packed_sequence(out, batch_first=True, total_length=STEPS)
    return out, h_n


def cases():
    torch.manual_seed(0)
    gru = torch.nn.GRU(INPUT, HIDDEN, batch_first=True, bidirectional=True)
    x = torch.rand(BATCH, STEPS, INPUT) - 0.5

    def forward(mixed):
        lengths = lengths_for(mixed)

        def fn():
            with torch.no_grad():
                run(gru, x, lengths, mixed)
        return fn

    def forward_backward(mixed):
        lengths = lengths_for(mixed)
        xg = x.clone().requires_grad_(True)

        def fn():
            gru.zero_grad(set_to_none=True)
            xg.grad = None
            out, _ = run(gru, xg, lengths, mixed)
            out.sum().backward()
        return fn

    return [
        ("bigru_forward_full", forward(False)),
        ("bigru_forward_mixed", forward(True)),
        ("bigru_fwd_bwd_full", forward_backward(False)),
        ("bigru_fwd_bwd_mixed", forward_backward(True)),
    ]


def measure(fn, min_time, warmup=2, min_repeats=5):
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
    parser.add_argument("--min-time", type=float, default=2.0, help="seconds of repeats per case (after warm-up)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    for name, fn in cases():
        seconds, repeats = measure(fn, args.min_time)
        print(json.dumps({"case": name, "seconds": seconds, "repeats": repeats,
                          "torch": torch.__version__, "threads": torch.get_num_threads()}), flush=True)


if __name__ == "__main__":
    main()
