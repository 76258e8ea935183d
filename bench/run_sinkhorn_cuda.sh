#!/usr/bin/env bash
# Runs bench/sinkhorn_cuda_bench (Google Benchmark, the fused CUDA Sinkhorn of ot/cuda/) and its PyTorch eager
# baseline bench/baselines/sinkhorn_cuda.py on the same GPU, and prints one markdown table:
#   batches of 129×129 (B = 1, 128, 1024; 1000 sweeps, tol 0): rematch time, PyTorch time, the ratio, the
#       issue's targets (>= 50x at B = 1, >= 100x at B = 1024) and the exp-unit bound of docs/ot.md §7.2 for log
#       sweeps with one SM per problem: 2·n·m exponentials per sweep at 16 per clock, max(1, B / SMs) problems
#       per SM (the block kernel's cached sweeps multiply-add on K̃ instead, so they may beat it: ratio < 1);
#   large problems (43,000×11, 32,000×201, 32,768×32,768): time per sweep, the difference of two sweep counts
#       (the per-call work cancels), against the bound of docs/ot.md §7: the larger of
#         exp time    2·N·M exponentials / (16 per clock per SM × SMs × SM clock)   (docs/ot.md §7.1: the SFU rate)
#         HBM time    2·N·M·4 bytes / copy bandwidth measured in this run, when C does not fit in the SMs' shared
#                     memory (227 KB each); a resident C is read from HBM once per solve, not per sweep
#       (grid barriers, ~1-2 µs each, are not in the bound: they dominate the small N×K cases).
# Standalone from the repository root, for any build with the CUDA backend and the benchmarks:
#   cmake -S . -B build-gpu -DREMATCH_CUDA=ON && cmake --build build-gpu -j --target sinkhorn_cuda_bench
#   bench/run_sinkhorn_cuda.sh [BUILD_DIR]       # default build-gpu; PYTHON=<python with torch> (default python3)
# Extra arguments after BUILD_DIR go to the benchmark binary. CASES=batch runs only the 129×129 batches,
# CASES=large only the large problems (both sides; default all). With $OUT set, the table's rows and its checks
# (value >= target) are also written to $OUT/sinkhorn_cuda.json (sinkhorn_cuda_batch.json,
# sinkhorn_cuda_large.json with CASES). Without a CUDA device it says so and exits 0.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=runner_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/runner_common.sh"
python="${PYTHON:-python3}"
runner_setup "${1:-build-gpu}" sinkhorn_cuda_bench
shift || true
cases="${CASES:-all}"
case "$cases" in
  all) filter="" json_name=sinkhorn_cuda.json ;;
  batch) filter="129x129" json_name=sinkhorn_cuda_batch.json ;;
  large) filter="43000x11|32000x201|32768x32768" json_name=sinkhorn_cuda_large.json ;;
  *)
    echo "error: CASES must be all, batch or large (got '$cases')" >&2
    exit 2
    ;;
esac

echo "running $binary${filter:+ (cases matching $filter)} ..." >&2
runner_gbench "$binary" "$tmp/rematch.json" ${filter:+"--benchmark_filter=$filter"} "$@"
# Without a device (or without CUDA) the binary prints one line instead of JSON.
if [[ "$(head -c1 "$tmp/rematch.json")" != "{" ]]; then
  cat "$tmp/rematch.json"
  echo "sinkhorn_cuda: skipped (no CUDA device)"
  exit 0
fi
echo "running the PyTorch eager baseline ..." >&2
"$python" "$root/bench/baselines/sinkhorn_cuda.py" --filter "$filter" >"$tmp/torch.jsonl"

clock_mhz="$(nvidia-smi --query-gpu=clocks.max.sm --format=csv,noheader,nounits 2>/dev/null | head -1 |
  tr -d ' ' || true)"
runner_commit

"$python" - "$root/bench" "$tmp/rematch.json" "$tmp/torch.jsonl" "${clock_mhz:-}" "$commit" "${OUT:-}" "$json_name" \
  <<'PYEOF'
import datetime
import json
import os
import sys

bench_dir, rematch_path, torch_path, clock_mhz, commit, out_dir, json_name = sys.argv[1:8]
sys.path.insert(0, bench_dir)
import compare  # noqa: E402

EXPS_PER_CLOCK_PER_SM = 16          # docs/ot.md §7.1: SFU exp2 throughput on sm_90
SMEM_PER_SM = 227 * 1024            # bytes one block may use: a C that fits over all SMs stays resident
TARGETS = {"cuda_f32_129x129_B1_1000it": 50.0, "cuda_f32_129x129_B1024_1000it": 100.0}
BATCH_CASES = {"cuda_f32_129x129_B%d_1000it" % b: (b, 129, 129, 1000) for b in (1, 128, 1024)}
LARGE = {"43000x11": (43000, 11), "32000x201": (32000, 201), "32768x32768": (32768, 32768)}

results_by_case = compare.load_gbench(rematch_path)[0]
rematch = {case: r["seconds"] for case, r in results_by_case.items()}
sweeps = {case: r.get("sweeps") for case, r in results_by_case.items()}

rows = compare.load_jsonl(torch_path)
device = next(r for r in rows if r["case"] == "_device")
torch_rows = {r["case"]: r for r in rows if r["case"] != "_device"}
clock_hz = float(clock_mhz) * 1e6 if clock_mhz else 1.755e9
exp_rate = EXPS_PER_CLOCK_PER_SM * device["sms"] * clock_hz
bandwidth = device["copy_bytes_per_s"]


def fmt(s):
    if s < 1e-3:
        return "%.1f us" % (s * 1e6)
    return "%.2f ms" % (s * 1e3) if s < 10 else "%.1f s" % s


print("GPU: %s (%d SMs, SM clock %s MHz%s, copy %.2f TB/s measured); PyTorch %s; commit %s; %s"
      % (device["name"], device["sms"], clock_mhz or "1755", "" if clock_mhz else " assumed",
         bandwidth / 1e12, device["torch"], commit, datetime.date.today().isoformat()))
print()
results = []
print("| case | rematch | PyTorch eager | ratio | target | log-sweep exp bound | rematch / bound |")
print("|---|---:|---:|---:|---|---:|---:|")
for case, (B, n, m, it) in BATCH_CASES.items():
    if case not in rematch:
        continue
    ours = rematch[case]
    theirs = torch_rows.get(case, {}).get("seconds")
    bound = 2.0 * n * m * it * max(1.0, B / device["sms"]) / (EXPS_PER_CLOCK_PER_SM * clock_hz)
    target = TARGETS.get(case)
    ratio = theirs / ours if theirs else None
    met = None if target is None or ratio is None else ratio >= target
    verdict = "-" if target is None else ("%gx: %s" % (target, "met" if met else "missed"))
    print("| %s | %s | %s | %s | %s | %s | %.1f |" % (case, fmt(ours), fmt(theirs) if theirs else "-",
                                                       "%.0fx" % ratio if ratio else "-", verdict, fmt(bound),
                                                       ours / bound))
    results.append({"case": case, "rematch_s": ours, "torch_s": theirs, "ratio": ratio, "target": target,
                    "met": met, "bound_s": bound})
print()
print("| large problem, per sweep | rematch | PyTorch eager | ratio | exp bound | HBM bound | rematch / bound |")
print("|---|---:|---:|---:|---:|---:|---:|")
for name, (n, m) in LARGE.items():
    lo, hi = "cuda_f32_%s_lo" % name, "cuda_f32_%s_hi" % name
    if lo not in rematch or hi not in rematch:
        continue
    ours = (rematch[hi] - rematch[lo]) / (sweeps[hi] - sweeps[lo])
    theirs = torch_rows.get("cuda_f32_" + name, {}).get("seconds_per_sweep")
    exp_bound = 2.0 * n * m / exp_rate
    resident = n * m * 4 <= device["sms"] * SMEM_PER_SM
    hbm_bound = 0.0 if resident else 2.0 * n * m * 4 / bandwidth
    bound = max(exp_bound, hbm_bound)
    print("| %s | %s | %s | %s | %s | %s | %.1f |" % (name, fmt(ours), fmt(theirs) if theirs else "-",
                                                       "%.0fx" % (theirs / ours) if theirs else "-", fmt(exp_bound),
                                                       "resident" if resident else fmt(hbm_bound), ours / bound))
    results.append({"case": "cuda_f32_" + name + "_per_sweep", "rematch_s": ours, "torch_s": theirs,
                    "ratio": theirs / ours if theirs else None, "exp_bound_s": exp_bound, "hbm_bound_s": hbm_bound,
                    "bound_s": bound})
# The checks tools/gpu_check.sh gathers (value >= target): the batch speed-ups, and for each large problem
# bound / time per sweep >= 0.5, i.e. within 2x of its bound (docs/ot.md §7).
checks = []
for r in results:
    if r.get("target") is not None:
        checks.append({"family": "sinkhorn", "case": r["case"], "value": r["ratio"], "target": r["target"],
                       "verdict": compare.verdict(r["ratio"], r["target"])})
    elif "exp_bound_s" in r:
        share = r["bound_s"] / r["rematch_s"] if r["rematch_s"] > 0 else None
        checks.append({"family": "sinkhorn bound", "case": r["case"], "value": share, "target": 0.5,
                       "verdict": compare.verdict(share, 0.5)})
print()
print("%d of %d targets met (speed-ups against PyTorch; large problems within 2x of their bound)"
      % (sum(c["verdict"] == "met" for c in checks), len(checks)))
if out_dir:
    with open(os.path.join(out_dir, json_name), "w") as f:
        json.dump({"device": device, "sm_clock_hz": clock_hz, "commit": commit, "rows": results, "checks": checks},
                  f, indent=1)
PYEOF
