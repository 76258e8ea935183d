#!/usr/bin/env bash
# Runs bench/gru_bench (Google Benchmark) and its PyTorch baseline bench/baselines/gru.py on the same machine
# with the same thread count, and prints one markdown table: case, rematch time, PyTorch time, ratio =
# PyTorch time / rematch time (> 1: rematch is faster) and whether the issue's target (ratio >= 0.8) is met.
# The load average is printed with the table: on a shared machine the ratio is what to compare, not the times.
#
#   cmake -S . -B build && cmake --build build -j2 --target gru_bench
#   bench/run_gru.sh                  # BUILD=<dir> for another build folder, THREADS=<n> (default 2)
# Extra arguments go to the benchmark binary (e.g. --benchmark_filter=fwd_bwd).
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=runner_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/runner_common.sh"
runner_cpu_setup gru_bench

load_before="$(runner_loadavg)"
echo "running $binary (OMP_NUM_THREADS=$threads) ..." >&2
runner_gbench "$binary" "$tmp/rematch.json" "$@"
echo "running the PyTorch baseline (torch.set_num_threads($threads)) ..." >&2
"$python" "$root/bench/baselines/gru.py" --threads "$threads" >"$tmp/torch.jsonl"
load_after="$(runner_loadavg)"

runner_machine_info

"$python" - "$root/bench" "$tmp/rematch.json" "$tmp/torch.jsonl" "$threads" "${cpu:-unknown CPU}" "$commit" \
  "$load_before" "$load_after" "$(nproc)" <<'PYEOF'
import datetime
import sys

bench_dir, rematch_path, torch_path, threads, cpu, commit, load_before, load_after, cores = sys.argv[1:10]
sys.path.insert(0, bench_dir)
import compare  # noqa: E402

TARGET = 0.8

rematch = {case: r["seconds"] for case, r in compare.load_gbench(rematch_path)[0].items()}
torch_rows = compare.load_jsonl(torch_path)
torch = {row["case"]: row["seconds"] for row in torch_rows}
torch_version = torch_rows[0]["torch"] if torch_rows else "?"

print(f"CPU: {cpu} ({cores} cores); {threads} threads; PyTorch {torch_version}; commit {commit}; "
      f"{datetime.date.today().isoformat()}; load average {load_before} before, {load_after} after")
print()
print("\n".join(compare.ratio_table(rematch, torch, "PyTorch", lambda case: TARGET, lambda s: f"{s * 1e3:.1f} ms")))
PYEOF
