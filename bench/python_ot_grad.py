#!/usr/bin/python3
"""The OT losses of rematch.ot (sinkhorn2, partial_sinkhorn2: docs/ot.md §9) forward + backward, against the
ways a PyTorch user gets the same gradient today:

  rematch        rematch.ot.partial_sinkhorn2 / sinkhorn2 (value "linear", POT's <P, C>), .backward(): one fused
                 solve, then the adjoint solve of docs/ot.md §9.3 on the final plan (memory flat in the sweeps)
  rematch entr.  the same with value="entropic": its gradient is the plan itself (no adjoint solve)
  POT torch      POT's ot.sinkhorn2(method="sinkhorn_log") on torch tensors, one problem at a time, differentiated
                 by autograd through every sweep (POT 0.8.2 has no implicit gradient; POT >= 0.9's
                 ot.solve(grad="implicit") gets its own column when installed)
  PyTorch eager  a batched log-domain Sinkhorn in PyTorch, autograd through every sweep

Problems (float32, eps = 0.01, a fixed number of sweeps: tol = 0 / stopThr = 0, so every implementation does the
same forward work; POT tests its marginal error every 10 sweeps, as it always does):

  l2rm B=1,128,1024  L2RM's masked partial OT: 128x128 costs in [0, 1), the diagonal masked, mass 0.1, the dummy
                     row and column of rematch's dummy="l2rm" (cost 0, corner max C); the baselines build the
                     augmented 129x129 problem from C with torch ops, so their gradient reaches C the same way.
  square 2000x2000   balanced OT between two point clouds (squared distances scaled to max 1).

Each cell runs in a fresh process: the peak memory is the growth of the resident set (VmHWM, reset through
/proc/self/clear_refs) over one forward + backward after a warm-up one, with allocations of 64 KiB and more
mmapped (mallopt), so that freed memory leaves the resident set; time is the median of the runs
after it: --repeats of them, or as many as fill 2 s for short cases (at most 50); rematch at 1000 sweeps: the
warm-up's time. A baseline whose autograd graph
(memory linear in sweeps x problems) would pass --mem-budget runs part of the work — fewer problems (POT solves them
one by one) or fewer sweeps — and its time and memory are scaled linearly to the whole; the table says so.
rematch also runs 10x the sweeps: its memory does not move.

Run (CPU): PYTHONPATH=build/python OMP_NUM_THREADS=2 OMP_WAIT_POLICY=PASSIVE /usr/bin/python3 bench/python_ot_grad.py
     (GPU): PYTHONPATH=build/python python3 bench/python_ot_grad.py --device cuda   (peak memory: CUDA allocator)
Prints the machine, then one markdown table.
"""
import argparse
import ctypes
import ctypes.util
import json
import os
import statistics
import subprocess
import sys
import time
import warnings

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # see bench/python_ot.py

EPS = 0.01
MASS = 0.1
SWEEPS = 100

# (case, problems B, n): the augmented problem is (n+1)x(n+1) for l2rm.
CASES = {"l2rm1": ("l2rm", 1), "l2rm128": ("l2rm", 128), "l2rm1024": ("l2rm", 1024), "square": ("square", 1)}
IMPLS = ("rematch", "rematch_entropic", "rematch_10x", "pot", "pot_implicit", "eager")


# ---- the child: one (case, implementation) ----------------------------------------------------------------------

def rss_kb(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def problem(case, B, dev):
    import numpy as np
    import torch
    rng = np.random.default_rng(0)
    if case == "l2rm":
        C = torch.tensor(rng.random((B, 128, 128), dtype=np.float32), device=dev)
        return C, ~torch.eye(128, dtype=torch.bool, device=dev)
    x, y = rng.random((2000, 2)), rng.random((2000, 2)) + 0.25
    C = ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1)
    return torch.tensor(C / C.max(), dtype=torch.float32, device=dev), None


def augmented(C, mask):
    """L2RM's (n+1)x(n+1) problem from C [B, n, n] with torch ops (differentiable, the corner's max included):
    masked entries +inf, dummy row and column 0, corner max C; weights [1/n ... 1/n, 1 - mass]."""
    import torch
    B, n, m = C.shape
    real = torch.where(mask, C, torch.full_like(C, float("inf")))
    top = torch.cat([real, torch.zeros(B, n, 1, dtype=C.dtype, device=C.device)], 2)
    bottom = torch.cat([torch.zeros(B, 1, m, dtype=C.dtype, device=C.device), C.amax((1, 2)).view(B, 1, 1)], 2)
    w = torch.cat([torch.full((n,), 1 / n, dtype=C.dtype, device=C.device),
                   torch.tensor([1 - MASS], dtype=C.dtype, device=C.device)])
    return torch.cat([top, bottom], 1), w


def run_child(case_name, impl, sweeps, problems, dev):
    import torch
    import rematch
    case, B = CASES[case_name]
    C0, mask = problem(case, B, dev)
    if problems < B:
        C0 = C0[:problems].contiguous()
    n = C0.shape[-2]
    uniform = torch.full((n,), 1 / n, dtype=C0.dtype, device=dev)

    def loss(C):
        if impl.startswith("rematch"):
            value = "entropic" if impl == "rematch_entropic" else "linear"
            if case == "l2rm":
                return rematch.ot.partial_sinkhorn2(C, MASS, eps=EPS, mask=mask, value=value, tol=0,
                                                    max_iter=sweeps).sum()
            return rematch.ot.sinkhorn2(C, eps=EPS, value=value, tol=0, max_iter=sweeps)
        if impl == "eager":
            Ch, w = augmented(C, mask) if case == "l2rm" else (C[None], uniform)
            f = torch.zeros(Ch.shape[:-1], dtype=C.dtype, device=dev)
            g = torch.zeros(Ch.shape[:-2] + Ch.shape[-1:], dtype=C.dtype, device=dev)
            log_w = torch.log(w)
            for _ in range(sweeps):
                f = EPS * log_w - EPS * torch.logsumexp((g[:, None, :] - Ch) / EPS, dim=-1)
                g = EPS * log_w - EPS * torch.logsumexp((f[:, :, None] - Ch) / EPS, dim=-2)
            P = torch.exp((f[:, :, None] + g[:, None, :] - Ch) / EPS)
            return (P[:, :n, :n] * (C if case == "l2rm" else C[None])).sum()
        import ot
        Ch, w = augmented(C, mask) if case == "l2rm" else (C[None], uniform)
        total = 0
        for k in range(Ch.shape[0]):
            if impl == "pot":
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    P = ot.sinkhorn(w, w, Ch[k], EPS, method="sinkhorn_log", numItermax=sweeps, stopThr=0)
            else:  # POT >= 0.9
                P = ot.solve(Ch[k], w, w, reg=EPS, reg_type="entropy", grad="implicit", max_iter=sweeps,
                             tol=0).plan
            Pk = P[:n, :n]
            total = total + (Pk * C[k]).sum()
        return total

    def once():
        C = C0.clone().requires_grad_()
        if dev == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        loss(C).backward()
        assert C.grad is not None and bool(torch.isfinite(C.grad).all())
        if dev == "cuda":
            torch.cuda.synchronize()
        return time.perf_counter() - start

    # Peak memory of one forward + backward after a warm-up (which pays the one-time allocations: thread pools,
    # BLAS buffers), with glibc's mmap threshold fixed at 64 KiB: what the warm-up freed went back to the system,
    # so the measured call's growth is its own. The timed runs then allocate as a long-running process does, from
    # the heap below 32 MiB (the largest threshold glibc's dynamic rule reaches): mapping every temporary of a
    # small problem afresh made its backward 20x slower.
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    M_MMAP_THRESHOLD = -3
    libc.mallopt(M_MMAP_THRESHOLD, 64 * 1024)
    warm = once()
    if dev == "cuda":
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        once()
        peak_mb = (torch.cuda.max_memory_allocated() - base) / 2 ** 20
    else:
        base = rss_kb("VmRSS")
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # resets VmHWM to the current resident set
        once()
        peak_mb = (rss_kb("VmHWM") - base) / 1024
    libc.mallopt(M_MMAP_THRESHOLD, 32 * 2 ** 20)
    if impl == "rematch_10x":
        return {"time": warm, "peak_mb": peak_mb}
    # On a shared machine a run can wait out a descheduled thread: short cases run at least --repeats times and
    # for at least 2 s (at most 50 runs), and the median is kept.
    times = []
    while len(times) < args.repeats or (sum(times) < 2 and len(times) < 50):
        times.append(once())
    return {"time": statistics.median(times), "peak_mb": peak_mb, "runs": len(times)}


# ---- the parent: the table ----------------------------------------------------------------------------------

def child(case_name, impl, sweeps, problems):
    cmd = [sys.executable, os.path.abspath(__file__), "--child", case_name, impl, str(sweeps), str(problems),
           "--device", args.device, "--threads", str(args.threads), "--repeats", str(args.repeats)]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def plan_work(case_name, impl):
    """(sweeps, problems) the implementation runs: the whole work, or part of it within --mem-budget (its graph
    keeps about 4 tensors the size of the augmented problem per sweep and problem, float32)."""
    case, B = CASES[case_name]
    entries = 129 * 129 if case == "l2rm" else 2000 * 2000
    if impl == "rematch_10x":
        return 10 * SWEEPS, B
    if impl.startswith("rematch"):
        return SWEEPS, B
    problems = min(B, args.pot_problems) if impl.startswith("pot") else B
    per_sweep = 4 * 4 * entries * problems  # bytes
    sweeps = max(2, min(SWEEPS, int(args.mem_budget * 2 ** 30 / per_sweep)))
    return sweeps, problems


def seconds(t):
    return f"{t * 1e3:.3g} ms" if t < 1 else f"{t:.3g} s"


def megabytes(mb):
    return f"{mb / 1024:.3g} GiB" if mb >= 1024 else f"{mb:.3g} MiB"


def main():
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import python_ot  # its description of the machine (date, commit, CPU, load, threads, versions, device)
    for line in python_ot.machine(args):
        print(line)
    try:
        import ot
        implicit = hasattr(ot, "solve")
    except ImportError:
        ot, implicit = None, False
    print()
    print("| case, float32, 100 sweeps | rematch (linear) | rematch (entropic) | rematch, 1000 sweeps | POT torch "
          "(autodiff) | POT torch (implicit) | PyTorch eager (autodiff) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for case_name in args.cases.split(","):
        case, B = CASES[case_name]
        cells, base = [], None
        for impl in IMPLS:
            if impl.startswith("pot") and ot is None:
                cells.append("POT not installed")
                continue
            if impl == "pot_implicit" and not implicit:
                cells.append(f"– (POT {ot.__version__} has no ot.solve)")
                continue
            sweeps, problems = plan_work(case_name, impl)
            r = child(case_name, impl, sweeps, problems)
            if "error" in r:
                cells.append(f"failed: {r['error'][:60]}")
                continue
            full = 10 * SWEEPS if impl == "rematch_10x" else SWEEPS
            scale = (full / sweeps) * (B / problems)
            t, mb = r["time"] * scale, r["peak_mb"] * scale
            notes = []
            if problems < B:
                notes.append(f"{problems} problems")
            if sweeps < full:
                notes.append(f"{sweeps} sweeps")
            note = f", {' and '.join(notes)} scaled" if notes else ""
            if impl == "rematch":
                base = t
                cells.append(f"{seconds(t)}, {megabytes(mb)}")
            elif impl.startswith("rematch"):
                cells.append(f"{seconds(t)}, {megabytes(mb)}")
            else:
                ratio = f"{t / base:.3g}x, " if base else ""
                cells.append(f"{seconds(t)} ({ratio}{megabytes(mb)}{note})")
        label = f"L2RM masked partial 129x129, B = {B}" if case == "l2rm" else "square 2000x2000"
        print(f"| {label} | " + " | ".join(cells) + " |", flush=True)
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cases", default="l2rm1,l2rm128,l2rm1024,square")
    parser.add_argument("--pot-problems", type=int, default=8, help="most problems of a batch POT solves (scaled)")
    parser.add_argument("--mem-budget", type=float, default=2.0,
                        help="GiB an autodiff baseline's graph may take; beyond, fewer sweeps, scaled")
    parser.add_argument("--child", nargs=4, metavar=("CASE", "IMPL", "SWEEPS", "PROBLEMS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    import torch
    torch.set_num_threads(args.threads)
    if args.child:
        c, impl, sweeps, problems = args.child
        print(json.dumps(run_child(c, impl, int(sweeps), int(problems), args.device)))
    else:
        main()
