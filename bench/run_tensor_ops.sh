#!/usr/bin/env bash
# Runs bench/tensor_ops_bench (Google Benchmark) and its PyTorch baseline bench/baselines/tensor_ops.py on the
# same machine with the same thread count, and prints one markdown table: case, rematch time, PyTorch time,
# ratio = PyTorch time / rematch time (> 1: rematch is faster) and whether the issue's target is met
# (matmul within 10% of PyTorch: ratio >= 0.9; elementwise, softmax and reductions at least as fast: >= 1.0).
#
#   cmake -S . -B build && cmake --build build -j2 --target tensor_ops_bench
#   bench/run_tensor_ops.sh                 # BUILD=<dir> for another build folder, THREADS=<n> (default 2)
# Extra arguments go to the benchmark binary (e.g. --benchmark_filter=matmul).
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=runner_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/runner_common.sh"
runner_cpu_setup tensor_ops_bench

echo "running $binary (OMP_NUM_THREADS=$threads) ..." >&2
runner_gbench "$binary" "$tmp/rematch.json" "$@"
echo "running the PyTorch baseline (torch.set_num_threads($threads)) ..." >&2
"$python" "$root/bench/baselines/tensor_ops.py" --threads "$threads" >"$tmp/torch.jsonl"

runner_machine_info

"$python" - "$root/bench" "$tmp/rematch.json" "$tmp/torch.jsonl" "$threads" "${cpu:-unknown CPU}" "$commit" <<'EOF'
import datetime
import sys

bench_dir, rematch_path, torch_path, threads, cpu, commit = sys.argv[1:7]
sys.path.insert(0, bench_dir)
import compare  # noqa: E402

rematch = {case: r["seconds"] for case, r in compare.load_gbench(rematch_path)[0].items()}
torch_rows = compare.load_jsonl(torch_path)
torch = {row["case"]: row["seconds"] for row in torch_rows}
torch_version = torch_rows[0]["torch"] if torch_rows else "?"


def target(case):
    return 0.9 if case.startswith("matmul") else 1.0


print(f"CPU: {cpu}; {threads} threads; PyTorch {torch_version}; commit {commit}; "
      f"{datetime.date.today().isoformat()}")
print()
print("\n".join(compare.ratio_table(rematch, torch, "PyTorch", target, lambda s: f"{s * 1e3:.3f} ms")))
EOF
