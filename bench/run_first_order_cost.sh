#!/usr/bin/env bash
# What a change to the engine costs first-order training: the SGR and SAF training steps (bench/sgraf_step_bench,
# reduced dims: time and step memory) and the Bi-GRU forward + backward (bench/gru_bench, full and mixed lengths)
# of two builds, BASE (before the change) and BUILD (after), measured in one run on this CPU. Each case runs in
# its own process; the two builds alternate within every round (ABBA), so that a slow spell of a shared machine
# falls on both. Per case and build the table gives the fastest round and the median round, and after / before of
# each: on a machine shared with other work the fastest round is the one least disturbed by it, so the verdict
# uses that ratio; the median and every round's time are shown beside it.
#
#   cmake -S . -B build -DREMATCH_CUDA=OFF && cmake --build build -j2 --target sgraf_step_bench gru_bench heap_peak
#   (the same in BASE, a build folder of the commit before the change, without heap_peak)
#   BASE=<dir> bench/run_first_order_cost.sh   # BUILD=<dir> (default build), ROUNDS=<n> (default 4),
#                                              # THREADS=<n> (default 2), LIMIT=<fraction> (default 0.03)
#
# The time of one case in one process is Google Benchmark's mean over its iterations (>= 2 s of them). Memory, after
# the timed rounds, one more process per case and build with bench/heap_peak.c preloaded: the peak heap bytes in use
# (the same work gives the same number, unlike the peak resident set, which moves by megabytes from run to run with
# what the allocator keeps); sgraf_step_bench's step_MiB (peak resident set of the step minus the resident set at
# program start, median over the rounds) beside it. A case is within the limit when after / before <= 1 + LIMIT.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=runner_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/runner_common.sh"
if [[ -z "${BASE:-}" ]]; then
  echo "error: BASE=<build folder of the commit before the change> is required" >&2
  exit 1
fi
runner_cpu_setup sgraf_step_bench
after="$build"
heap_peak="$after/bench/libheap_peak.so"
if [[ ! -f "$heap_peak" ]]; then
  echo "error: $heap_peak not found; build it with: cmake --build $after --target heap_peak" >&2
  exit 1
fi
base="$BASE"
[[ "$base" = /* ]] || base="$root/$base"
for dir in "$base" "$after"; do
  for name in sgraf_step_bench gru_bench; do
    if [[ ! -x "$dir/bench/$name" ]]; then
      echo "error: $dir/bench/$name not found; build it with: cmake --build $dir --target $name" >&2
      exit 1
    fi
  done
done
rounds="${ROUNDS:-4}"
limit="${LIMIT:-0.03}"

# run SIDE ROUND CASE [ARG...]: one case of one build in its own process, JSON into
# $tmp/<side>.<case>.<round>.json; extra ARGs go to the benchmark.
run() {
  local side="$1" round="$2" case="$3" dir
  shift 3
  dir="$([[ "$side" == before ]] && echo "$base" || echo "$after")"
  local out="$tmp/$side.$case.$round.json"
  case "$case" in
    sgr_step | saf_step)
      "$dir/bench/sgraf_step_bench" --dims=reduced --benchmark_filter="^${case}/" --benchmark_format=json "$@" >"$out" ;;
    *) "$dir/bench/gru_bench" --benchmark_filter="^${case}/" --benchmark_format=json "$@" >"$out" ;;
  esac
}

cases=(sgr_step saf_step bigru_fwd_bwd_full bigru_fwd_bwd_mixed)
load_before="$(runner_loadavg)"
started=$SECONDS
for ((r = 1; r <= rounds; ++r)); do
  if ((r % 2)); then order=(before after); else order=(after before); fi
  for case in "${cases[@]}"; do
    for side in "${order[@]}"; do
      echo "round $r/$rounds: $case ($side) ..." >&2
      run "$side" "$r" "$case"
    done
  done
done
load_after="$(runner_loadavg)"
for case in "${cases[@]}"; do
  for side in before after; do
    echo "peak heap: $case ($side) ..." >&2
    HEAP_PEAK_FILE="$tmp/$side.$case.heap" LD_PRELOAD="$heap_peak" run "$side" heap "$case" --benchmark_min_time=0.1
  done
done
runner_machine_info

"$python" - "$tmp" "$rounds" "$limit" "${cpu:-unknown CPU}" "$(nproc)" "$threads" "$commit" "$load_before" \
  "$load_after" "$((SECONDS - started))" "${cases[@]}" <<'PYEOF'
import datetime
import glob
import json
import os
import statistics
import sys

tmp, rounds, limit, cpu, cores, threads, commit, load_before, load_after, elapsed = sys.argv[1:11]
cases = sys.argv[11:]
limit = float(limit)


def measurements(side, case):
    """(seconds, step MiB or None) of every round of one build."""
    out = []
    for path in sorted(glob.glob(os.path.join(tmp, f"{side}.{case}.[0-9]*.json"))):
        rows = [r for r in json.load(open(path))["benchmarks"] if r.get("run_type", "iteration") == "iteration"]
        if not rows or rows[0].get("error_occurred"):
            sys.exit(f"{side} {case}: {rows[0].get('error_message') if rows else 'no result'}")
        row = rows[0]
        scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[row.get("time_unit", "ns")]
        out.append((row["real_time"] * scale, row.get("step_MiB")))
    return out


print(f"CPU: {cpu} ({cores} cores), {threads} threads; after: commit {commit}; {datetime.date.today().isoformat()}; "
      f"{rounds} rounds (ABBA), {elapsed} s; load average {load_before} before, {load_after} after")
print()
print(f"| case | before | after | after / before | within +{limit:.0%} | median before | median after "
      "| median after / before | times before (each round, ms) | times after (each round, ms) |")
print("|---|---:|---:|---:|---|---:|---:|---:|---|---|")
memory_rows = []
for case in cases:
    before, after = measurements("before", case), measurements("after", case)
    tb, ta = min(t for t, _ in before), min(t for t, _ in after)
    mb, ma = statistics.median(t for t, _ in before), statistics.median(t for t, _ in after)
    each = lambda ms: ", ".join(f"{t * 1e3:.0f}" for t, _ in ms)
    print(f"| {case} time | {tb * 1e3:.1f} ms | {ta * 1e3:.1f} ms | {ta / tb:.3f} | "
          f"{'yes' if ta / tb <= 1 + limit else 'NO'} | {mb * 1e3:.1f} ms | {ma * 1e3:.1f} ms | {ma / mb:.3f} | "
          f"{each(before)} | {each(after)} |")
    if before[0][1] is not None:
        memory_rows.append((case, statistics.median(m for _, m in before), statistics.median(m for _, m in after)))
for case in cases:
    hb, ha = (int(open(os.path.join(tmp, f"{side}.{case}.heap")).read()) for side in ("before", "after"))
    print(f"| {case} peak heap | {hb / 2**20:.2f} MiB | {ha / 2**20:.2f} MiB | {ha / hb:.4f} | "
          f"{'yes' if ha / hb <= 1 + limit else 'NO'} | | | | | |")
for case, mb, ma in memory_rows:
    print(f"| {case} step memory (resident) | {mb:.1f} MiB | {ma:.1f} MiB | {ma / mb:.3f} | "
          f"{'yes' if ma / mb <= 1 + limit else 'NO'} | | | | | |")
print()
print("Time: Google Benchmark's mean step time of one process (>= 2 s of steps), the fastest round of each build "
      "(the median round beside it). Peak heap: the most heap bytes in use at once in a process running the case "
      "(bench/heap_peak.c; model, inputs and the step). Step memory (resident): sgraf_step_bench's step_MiB (peak "
      "resident set during the case minus the resident set at program start), median over the rounds.")
PYEOF
