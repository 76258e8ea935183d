#!/usr/bin/env bash
# Runs bench/sgraf_step_bench (Google Benchmark) and its PyTorch baseline bench/baselines/sgraf_step.py (the
# official per-caption-loop structure and a batched variant) on this CPU at the same dims and thread count, and
# prints one markdown table: per model (SGR, SAF) the time of one training step (forward of the B x B score
# matrix + hardest-negative triplet loss + backward) of each, the ratios PyTorch time / rematch time (> 1:
# rematch is faster), whether the issue's CPU target (>= 1x the batched PyTorch step) is met, and the step
# memory of each: peak resident set - resident set before the model was built (weights, gradients, inputs,
# activations), with the process's absolute peak in parentheses. Every case runs in its own process.
# Before timing, `sgraf_step.py --check` verifies that the batched PyTorch variant equals the per-caption one.
# Times are wall-clock medians (rematch: 3 repetitions; PyTorch: the timed steps after warm-up); the load
# average is printed with the table: on a shared machine the ratios are what to compare, not the times.
#
#   cmake -S . -B build -DREMATCH_CUDA=OFF && cmake --build build -j2 --target sgraf_step_bench
#   bench/run_sgraf_step.sh     # BUILD=<dir> for another build folder, THREADS=<n> (default 2),
#                               # DIMS=reduced|full|B,R,img,word,embed,sim,V (default reduced:
#                               # B=32 R=36 img=256 word=64 embed=256 sim=64 V=8481)
# Extra arguments go to the benchmark binary (e.g. --benchmark_min_time=5).
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=runner_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/runner_common.sh"
runner_cpu_setup sgraf_step_bench
dims="${DIMS:-reduced}"
baseline="$root/bench/baselines/sgraf_step.py"

echo "checking that the batched PyTorch variant equals the per-caption one ..." >&2
"$python" "$baseline" --check >"$tmp/check.jsonl"

load_before="$(runner_loadavg)"
for model in sgr saf; do
  echo "running $binary --dims=$dims ${model}_step (OMP_NUM_THREADS=$threads) ..." >&2
  runner_gbench "$binary" "$tmp/rematch_$model.json" --dims="$dims" --benchmark_filter="^${model}_step/" "$@"
done
echo "running the PyTorch baseline (torch.set_num_threads($threads), one process per case) ..." >&2
"$python" "$baseline" --threads "$threads" --dims "$dims" >"$tmp/torch.jsonl"
load_after="$(runner_loadavg)"

runner_machine_info

"$python" - "$root/bench" "$tmp" "$threads" "${cpu:-unknown CPU}" "$commit" "$load_before" "$load_after" \
  "$(nproc)" <<'PYEOF'
import datetime
import os
import sys

bench_dir, tmp, threads, cpu, commit, load_before, load_after, cores = sys.argv[1:9]
sys.path.insert(0, bench_dir)
import compare  # noqa: E402

TARGET = 1.0  # CPU: rematch at least as fast as the batched PyTorch step

checks = compare.load_jsonl(os.path.join(tmp, "check.jsonl"))
verified = all(c["ok"] for c in checks)

# rematch: the median aggregate of the repetitions (else the single run), with its memory counters.
rematch = {}
for model in ("sgr", "saf"):
    for case, r in compare.load_gbench(os.path.join(tmp, f"rematch_{model}.json"), with_args=True)[0].items():
        dims = "/".join(p for p in r["args"] if ":" in p and not p.startswith(("min_time", "real_time")))
        rematch[case] = dict(seconds=r["seconds"], step=r.get("step_MiB"), peak=r.get("peak_rss_MiB"), dims=dims)

torch_rows = compare.load_jsonl(os.path.join(tmp, "torch.jsonl"))
torch = {(r["case"], r["variant"]): r for r in torch_rows}
torch_version = torch_rows[0]["torch"] if torch_rows else "?"
dims = next(iter(rematch.values()))["dims"] if rematch else "?"


def mem(step, peak):
    return "-" if step is None else f"{step:.0f} MiB (peak {peak:.0f})"


print(f"CPU: {cpu} ({cores} cores); {threads} threads; PyTorch {torch_version}; commit {commit}; "
      f"{datetime.date.today().isoformat()}; load average {load_before} before, {load_after} after")
print(f"dims: {dims}; caption lengths 9 + (7b mod 11) (9..19); float32; train mode; loss: hardest-negative "
      f"triplet (margin 0.2); batched PyTorch variant equals per-caption (float64 check): "
      f"{'yes' if verified else 'NO'}")
print()
print("| model | rematch | PyTorch per-caption | PyTorch batched | per-caption / rematch | batched / rematch "
      "| target (batched) | met | rematch memory | per-caption memory | batched memory |")
print("|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|")
missed = 0
for case, ours in rematch.items():
    loop, batched = torch.get((case, "per_caption")), torch.get((case, "batched"))
    cells = [case.replace("_step", "").upper(), f"{ours['seconds'] * 1e3:.0f} ms"]
    for r in (loop, batched):
        cells.append("-" if r is None else f"{r['seconds'] * 1e3:.0f} ms")
    for r in (loop, batched):
        cells.append("-" if r is None else f"{r['seconds'] / ours['seconds']:.2f}")
    if batched is None:
        cells += [f">= {TARGET:g}", "no baseline"]
        missed += 1
    else:
        met = batched["seconds"] / ours["seconds"] >= TARGET
        missed += not met
        cells += [f">= {TARGET:g}", "met" if met else "missed"]
    cells.append(mem(ours["step"], ours["peak"]))
    for r in (loop, batched):
        cells.append("-" if r is None else mem(r.get("step_MiB"), r.get("peak_rss_MiB", r.get("peak_MiB"))))
    print("| " + " | ".join(cells) + " |")
print()
print(f"{len(rematch) - missed} of {len(rematch)} targets met. Memory: peak resident set - resident set before "
      f"the model was built (rematch: at program start; PyTorch: after `import torch`), absolute peak in "
      f"parentheses.")
PYEOF
