#!/usr/bin/env bash
# Runs bench/sinkhorn_bench (Google Benchmark) and its baselines bench/baselines/sinkhorn.py (POT's
# sinkhorn_log, a NumPy loop like L2RM's, PyTorch eager) on this CPU, and prints one markdown table: per case
# the rematch time, each baseline's time and the ratio baseline / rematch (> 1: rematch is faster), and
# whether the issue's CPU target (>= 5x faster than POT sinkhorn_log and than the NumPy loop) is met.
# Times are wall-clock medians (3 repetitions of the benchmark binary); the load average is printed with the
# table: on a shared machine the ratios are what to compare, not the times.
#
#   cmake -S . -B build && cmake --build build -j2 --target sinkhorn_bench
#   bench/run_sinkhorn.sh              # BUILD=<dir> for another build folder, THREADS=<n> (default 2)
# Extra arguments go to the benchmark binary (e.g. --benchmark_filter=129x129).
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=runner_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/runner_common.sh"
runner_cpu_setup sinkhorn_bench

load_before="$(runner_loadavg)"
echo "running $binary (OMP_NUM_THREADS=$threads) ..." >&2
runner_gbench "$binary" "$tmp/rematch.json" "$@"
echo "running the baselines (POT, NumPy, PyTorch with torch.set_num_threads($threads)) ..." >&2
"$python" "$root/bench/baselines/sinkhorn.py" --threads "$threads" >"$tmp/baselines.jsonl"
load_after="$(runner_loadavg)"

runner_machine_info

"$python" - "$root/bench" "$tmp/rematch.json" "$tmp/baselines.jsonl" "$threads" "${cpu:-unknown CPU}" "$commit" \
  "$load_before" "$load_after" "$(getconf _NPROCESSORS_ONLN)" <<'PYEOF'
import datetime
import sys

bench_dir, rematch_path, base_path, threads, cpu, commit, load_before, load_after, cores = sys.argv[1:10]
sys.path.insert(0, bench_dir)
import compare  # noqa: E402

TARGET = 5.0
IMPLS = (("pot", "POT sinkhorn_log"), ("numpy", "NumPy L2RM loop"), ("torch", "PyTorch eager"))

rematch = {case: r["seconds"] for case, r in compare.load_gbench(rematch_path)[0].items()}
rows = compare.load_jsonl(base_path)
base = {(r["case"], r["impl"]): r for r in rows}
versions = rows[0] if rows else {}

def fmt(s):
    return f"{s * 1e3:.1f} ms" if s < 10 else f"{s:.1f} s"

print(f"CPU: {cpu} ({cores} cores); {threads} threads; POT {versions.get('pot', '?')}, NumPy "
      f"{versions.get('numpy', '?')}, PyTorch {versions.get('torch', '?')}; commit {commit}; "
      f"{datetime.date.today().isoformat()}; load average {load_before} before, {load_after} after")
print()
print("| case | rematch | " + " | ".join(f"{name} | ratio" for _, name in IMPLS) + " | target (>= 5x POT and NumPy) |")
print("|---|---:|" + "---:|---:|" * len(IMPLS) + "---|")
missed = checked = 0
scaled = set()
for case, ours in rematch.items():
    cells, met = [], None
    for impl, _ in IMPLS:
        r = base.get((case, impl))
        if r is None:
            cells += ["-", "-"]
            continue
        if r["sweeps_run"] != r["sweeps"]:
            scaled.add(f"{case} ({impl}: {r['sweeps_run']} of {r['sweeps']} sweeps)")
        ratio = r["seconds"] / ours
        cells += [fmt(r["seconds"]), f"{ratio:.1f}x"]
        if impl in ("pot", "numpy"):
            met = (met if met is not None else True) and ratio >= TARGET
    if met is None:
        verdict = "no baseline"
    else:
        checked += 1
        missed += not met
        verdict = "met" if met else "missed"
    print(f"| {case} | {fmt(ours)} | " + " | ".join(cells) + f" | {verdict} |")
print()
print(f"{checked - missed} of {checked} targets met")
if scaled:
    print("Baselines timed on fewer sweeps and scaled linearly (fixed iterations): " + "; ".join(sorted(scaled)))
PYEOF
