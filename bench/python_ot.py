#!/usr/bin/python3
"""rematch.ot from Python against the framework baselines on the same problems:

  rematch        rematch.ot.partial_sinkhorn / rematch.ot.sinkhorn through the Python module (arrays shared
                 without a copy; the CPU solver, or the fused CUDA kernels for CUDA tensors)
  POT NumPy      POT's ot.sinkhorn(method="sinkhorn_log") on NumPy arrays, one problem at a time (POT 0.8.2 has
                 no batched solver); this is the CPU NumPy path the official L2RM code takes every step
  POT torch      the same POT call on PyTorch tensors (POT's torch backend)
  PyTorch eager  a log-domain Sinkhorn written in PyTorch, f = eps log a - eps logsumexp((g - C)/eps) and
                 likewise g, on the whole batch [B, n, m] at once

Problems (float32, eps = 0.01, a fixed number of sweeps: tol = 0 / stopThr = 0, so every implementation does
the same work; POT also tests its marginal error every 10 sweeps, as it always does):

  l2rm B=1,128,1024  L2RM's masked partial OT: a 128x128 cost in [0, 1) with the diagonal masked, mass 0.1,
                     dummy row and column (129x129). The baselines get the dummy costs of rematch's
                     dummy="l2rm" (L2RM's xi subtracted from the dummy row and column: the same plan, and
                     float32-safe), the mask as an infinite cost. 100 sweeps (L2RM's own stop takes 57-121 at
                     this eps on tests/fixtures/ot/l2rm_p*).
  square 2000x2000   balanced OT between two point clouds (squared distances scaled to max 1), 100 sweeps.
  tall 43000x11      balanced OT of 43,000 samples against 10 classes and a dummy (UOT-RCL's label correction
                     shape), random costs in [0, 1), 100 sweeps.

A baseline that would take minutes runs part of the work — fewer problems of a batch (POT solves them one by
one) or fewer sweeps — and is scaled linearly to the whole (time is linear in both); the table says so.
Each time is the median of --repeats runs after one warm-up. Where a baseline ran the full work, its plan is
checked against rematch's (largest difference relative to the largest entry).

Run (CPU): PYTHONPATH=build/python /usr/bin/python3 bench/python_ot.py --threads 2
     (GPU): PYTHONPATH=build/python python3 bench/python_ot.py --device cuda
Prints the machine, then one markdown table: time per case and baseline time / rematch time.
"""
import argparse
import datetime
import os
import platform
import statistics
import subprocess
import time
import warnings

# OpenMP threads that wait passively, as `rematch` runs itself (README "Reproducibility"): set before NumPy and
# PyTorch load libgomp, which rematch and PyTorch share. Spinning threads on a busy machine slowed the PyTorch
# eager loop here by up to 100x (2.5 s instead of 23 ms for one 129x129 problem at load 7 on 2 cores).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402 (after the environment is set)
import torch  # noqa: E402

try:
    import ot  # noqa: E402
except ImportError:  # e.g. the GPU machine's image: the POT columns say so
    ot = None

import rematch  # noqa: E402

EPS = 0.01
SWEEPS = 100
MASS = 0.1


def l2rm_problem(rng, B):
    """Costs [B, 128, 128], the diagonal mask, and the augmented 129x129 problem the baselines solve."""
    C = rng.random((B, 128, 128), dtype=np.float32)
    mask = ~np.eye(128, dtype=bool)
    aug = np.zeros((B, 129, 129), np.float32)
    aug[:, :128, :128] = np.where(mask, C, np.inf)
    aug[:, 128, 128] = C.max(axis=(1, 2))  # the corner A = max C; dummy row and column 0 (xi subtracted)
    w = np.append(np.full(128, 1 / 128), 1 - MASS).astype(np.float32)
    return C, mask, aug, w, w


def square_problem(rng):
    x, y = rng.random((2000, 2)), rng.random((2000, 2)) + 0.25
    C = ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1)
    C = (C / C.max()).astype(np.float32)
    return C, np.full(2000, 1 / 2000, np.float32), np.full(2000, 1 / 2000, np.float32)


def tall_problem(rng):
    C = rng.random((43000, 11), dtype=np.float32)
    return C, np.full(43000, 1 / 43000, np.float32), np.full(11, 1 / 11, np.float32)


def torch_eager(C, a, b, sweeps):
    """Log-domain Sinkhorn on [B, n, m] tensors; a [B, n] or [n], b likewise."""
    f = torch.zeros(C.shape[:-1], dtype=C.dtype, device=C.device)
    g = torch.zeros(C.shape[:-2] + C.shape[-1:], dtype=C.dtype, device=C.device)
    log_a, log_b = torch.log(a), torch.log(b)
    for _ in range(sweeps):
        f = EPS * log_a - EPS * torch.logsumexp((g[..., None, :] - C) / EPS, dim=-1)
        g = EPS * log_b - EPS * torch.logsumexp((f[..., :, None] - C) / EPS, dim=-2)
    return torch.exp((f[..., :, None] + g[..., None, :] - C) / EPS)


def pot_loop(C, a, b, sweeps):
    """POT's log-domain Sinkhorn, one problem after another (NumPy arrays or torch tensors)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "did not converge": stopThr = 0 never does, by design
        return [ot.sinkhorn(a, b, C[k], EPS, method="sinkhorn_log", numItermax=sweeps, stopThr=0)
                for k in range(C.shape[0])]


def timed(fn, repeats, device):
    """Median seconds of `repeats` runs after a warm-up, and the last result."""
    def once():
        if device == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        out = fn()
        if device == "cuda":
            torch.cuda.synchronize()
        return time.perf_counter() - start, out

    once()
    runs = [once() for _ in range(repeats)]
    return statistics.median(t for t, _ in runs), runs[-1][1]


def seconds(t):
    return f"{t * 1e3:.3g} ms" if t < 1 else f"{t:.3g} s"


def as_numpy(x):
    return x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)


def case_rows(args):
    """(case, rematch seconds, {baseline: (seconds scaled to the whole, note, plan or None)})."""
    rng = np.random.default_rng(0)
    dev = args.device
    cases = []
    for B in (1, 128, 1024):
        C, mask, aug, a, b = l2rm_problem(rng, B)
        Ct, maskt = torch.from_numpy(C).to(dev), torch.from_numpy(mask).to(dev)
        augt, at, bt = (torch.from_numpy(x).to(dev) for x in (aug, a, b))
        cases.append(dict(
            name=f"L2RM masked partial 129x129, B = {B}",
            rematch=lambda Ct=Ct, maskt=maskt: rematch.ot.partial_sinkhorn(Ct, MASS, eps=EPS, mask=maskt, tol=0,
                                                                         max_iter=SWEEPS)[0],
            crop=lambda P: P[..., :128, :128],
            pot_numpy=(lambda n, aug=aug, a=a, b=b: np.stack(pot_loop(aug[:n], a, b, SWEEPS)), min(B, args.pot_problems)),
            pot_torch=(lambda n, augt=augt, at=at, bt=bt: torch.stack(pot_loop(augt[:n], at, bt, SWEEPS)),
                       min(B, args.pot_problems)),
            eager=(lambda s, augt=augt, at=at, bt=bt: torch_eager(augt, at, bt, s),
                   SWEEPS if B * SWEEPS <= args.eager_work else max(1, args.eager_work // B)),
            problems=B))
    for name, (C, a, b) in (("square 2000x2000", square_problem(rng)), ("tall 43000x11", tall_problem(rng))):
        Ct, at, bt = (torch.from_numpy(x).to(dev) for x in (C, a, b))
        cases.append(dict(
            name=name,
            rematch=lambda Ct=Ct: rematch.ot.sinkhorn(Ct, eps=EPS, tol=0, max_iter=SWEEPS)[0],
            crop=lambda P: P,
            pot_numpy=(lambda n, C=C, a=a, b=b: pot_loop(C[None], a, b, SWEEPS)[0], 1),
            pot_torch=(lambda n, Ct=Ct, at=at, bt=bt: pot_loop(Ct[None], at, bt, SWEEPS)[0], 1),
            eager=(lambda s, Ct=Ct, at=at, bt=bt: torch_eager(Ct, at, bt, s), SWEEPS),
            problems=1))
    return cases


def machine(args):
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                           text=True).stdout.strip()
    lines = [f"date {datetime.date.today()}, commit {commit}{' (+ uncommitted changes in the tree)' if dirty else ''}",
             f"{platform.node()}: {cpu}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start",
             f"threads {args.threads} (OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, "
             f"OMP_WAIT_POLICY={os.environ['OMP_WAIT_POLICY']}); "
             f"Python {platform.python_version()}, NumPy {np.__version__}, PyTorch {torch.__version__}, "
             f"POT {ot.__version__ if ot else 'not installed'}"]
    if args.device == "cuda":
        lines.append(f"device {torch.cuda.get_device_name(0)}")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--pot-problems", type=int, default=8, help="most problems of a batch POT solves (scaled)")
    parser.add_argument("--eager-work", type=int, default=128 * SWEEPS,
                        help="most problems x sweeps of the PyTorch eager loop (fewer sweeps, scaled)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    for line in machine(args):
        print(line)
    print()
    print("| case | rematch | POT NumPy | POT torch | PyTorch eager |")
    print("|---|---:|---:|---:|---:|")
    for case in case_rows(args):
        t_rematch, plan = timed(case["rematch"], args.repeats, args.device)
        plan = as_numpy(plan)
        cells = []
        for key in ("pot_numpy", "pot_torch", "eager"):
            if ot is None and key.startswith("pot"):
                cells.append("POT not installed")
                continue
            fn, part = case[key]
            t, out = timed(lambda: fn(part), args.repeats, args.device)
            if key == "eager":
                scale, whole = SWEEPS / part, part == SWEEPS
                note = "" if whole else f", {part} sweeps scaled"
            else:
                scale, whole = case["problems"] / part, part == case["problems"]
                note = "" if whole else f", {part} problems scaled"
            check = ""
            if whole:
                diff = np.abs(as_numpy(case["crop"](out)).reshape(plan.shape) - plan).max() / plan.max()
                check = f", plan within {diff:.0e}"
            t *= scale
            cells.append(f"{seconds(t)} ({t / t_rematch:.3g}x{note}{check})")
        print(f"| {case['name']}, {SWEEPS} sweeps | {seconds(t_rematch)} | " + " | ".join(cells) + " |", flush=True)
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
