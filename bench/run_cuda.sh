#!/usr/bin/env bash
# Runs the CUDA benchmarks bench/cuda_ops_bench and bench/cuda_gru_bench (Google Benchmark, device time from
# CUDA events) and their PyTorch baseline bench/baselines/cuda_ops.py on the same GPU, and prints one markdown
# table per family with the CUDA issue's targets:
#   elementwise / broadcast  achieved bandwidth as a share of the device-to-device copy measured in the same
#                            run (bytes read + written over time): >= 80%
#   row softmax              PyTorch time / rematch time: >= 1.0
#   matmul                   raw cuBLAS time / kernels::matmul time on the same operands: >= 0.95 (<= 5% overhead)
#   Bi-GRU                   PyTorch (cuDNN) time / rematch time: >= 0.7
# Times are medians (rematch: 3 repetitions; PyTorch: the repeats after warm-up). Without a CUDA device the
# binaries say so and this script prints "skipped" and exits 0.
#
#   cmake -S . -B build-gpu -DREMATCH_CUDA=ON && cmake --build build-gpu --target cuda_ops_bench cuda_gru_bench
#   BUILD=build-gpu bench/run_cuda.sh    # PYTHON=<python with CUDA PyTorch> (default python3),
#                                        # JSON=<file>: also write the tables and all measurements as JSON
# Extra arguments go to both benchmark binaries (e.g. --benchmark_filter=gru).
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=runner_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/runner_common.sh"
python="${PYTHON:-python3}"
json_out="${JSON:-}"
runner_setup "${BUILD:-build}" cuda_ops_bench cuda_gru_bench

for name in cuda_ops_bench cuda_gru_bench; do
  echo "running $build/bench/$name ..." >&2
  runner_gbench "$build/bench/$name" "$tmp/$name.json" "$@"
  # Without a device (or without CUDA) the binary prints one line instead of JSON.
  if [[ "$(head -c1 "$tmp/$name.json")" != "{" ]]; then
    cat "$tmp/$name.json"
    echo "CUDA benchmarks skipped"
    exit 0
  fi
done
echo "running the PyTorch baseline ($python bench/baselines/cuda_ops.py) ..." >&2
PYTHONUNBUFFERED=1 "$python" "$root/bench/baselines/cuda_ops.py" >"$tmp/torch.jsonl"

runner_commit

"$python" - "$root/bench" "$tmp" "$commit" "$json_out" <<'PYEOF'
import datetime
import os
import sys

bench_dir, tmp, commit, json_out = sys.argv[1:5]
sys.path.insert(0, bench_dir)
import compare  # noqa: E402

ops, context = compare.load_gbench(os.path.join(tmp, "cuda_ops_bench.json"))
gru, _ = compare.load_gbench(os.path.join(tmp, "cuda_gru_bench.json"))
torch_rows = compare.load_jsonl(os.path.join(tmp, "torch.jsonl"))
torch = {r["case"]: r["seconds"] for r in torch_rows}
torch_version = torch_rows[0]["torch"] if torch_rows else "none"

ELEMENTWISE = ("add_64M", "exp_64M", "add_broadcast_8192x8192")
SOFTMAX = ("softmax_4096x4096", "softmax_262144x128")
MATMUL = (("matmul_1024", "cublas_1024"), ("matmul_4096", "cublas_4096"),
          ("bmm_64x256x256", "cublas_bmm_64x256x256"))
TARGETS = {"elementwise": 0.8, "softmax": 1.0, "matmul": 0.95, "gru": 0.7}

checks = []  # (family, case, value, target, verdict)
lines = [f"GPU: {context.get('cuda_device', '?')} ({context.get('cuda_sms', '?')} SMs, driver "
         f"{context.get('cuda_driver', '?')}); PyTorch {torch_version}; commit {commit}; "
         f"{datetime.date.today().isoformat()}"]


def gbps(seconds, nbytes):
    return nbytes / seconds / 1e9


copy = ops.get("copy_d2d_256MiB")
copy_bw = gbps(copy["seconds"], copy["bytes"]) if copy else None
torch_copy_bw = gbps(torch["copy_d2d_256MiB"], copy["bytes"]) if copy and "copy_d2d_256MiB" in torch else None
lines += ["", "Elementwise: bandwidth as a share of the device-to-device copy measured in the same run "
          f"(rematch copy {copy_bw or 0:.0f} GB/s, PyTorch copy {torch_copy_bw or 0:.0f} GB/s).", ""]
rows = []
for case in ELEMENTWISE:
    if case not in ops or copy_bw is None:
        continue
    r = ops[case]
    bw = gbps(r["seconds"], r["bytes"])
    share = bw / copy_bw
    t = torch.get(case)
    t_share = gbps(t, r["bytes"]) / torch_copy_bw if t and torch_copy_bw else None
    v = compare.verdict(share, TARGETS["elementwise"])
    checks.append(("elementwise", case, share, TARGETS["elementwise"], v))
    rows.append([case, compare.fmt_time(r["seconds"]), f"{bw:.0f} GB/s", f"{share:.0%}", compare.fmt_time(t),
                 "-" if t_share is None else f"{t_share:.0%}", f">= {TARGETS['elementwise']:.0%}", v])
lines += compare.markdown_table(["case", "rematch", "bandwidth", "share of copy", "PyTorch",
                                 "PyTorch share", "target", "met"], rows)

lines += ["", "Row softmax: PyTorch time / rematch time.", ""]
rows = []
for case in SOFTMAX:
    if case not in ops:
        continue
    ours, t = ops[case]["seconds"], torch.get(case)
    ratio = t / ours if t else None
    v = compare.verdict(ratio, TARGETS["softmax"])
    checks.append(("softmax", case, ratio, TARGETS["softmax"], v))
    rows.append([case, compare.fmt_time(ours), f"{gbps(ours, ops[case]['bytes']):.0f} GB/s", compare.fmt_time(t),
                 "-" if ratio is None else f"{ratio:.2f}", f">= {TARGETS['softmax']}", v])
lines += compare.markdown_table(["case", "rematch", "bandwidth", "PyTorch", "ratio", "target", "met"], rows)

lines += ["", "Matmul (float32, no TF32): cuBLAS called directly / kernels::matmul, same operands and stream.", ""]
rows = []
for case, raw in MATMUL:
    if case not in ops or raw not in ops:
        continue
    ours, base = ops[case]["seconds"], ops[raw]["seconds"]
    ratio = base / ours
    v = compare.verdict(ratio, TARGETS["matmul"])
    checks.append(("matmul", case, ratio, TARGETS["matmul"], v))
    rows.append([case, compare.fmt_time(ours), f"{ops[case]['flop'] / ours / 1e12:.1f} TFLOP/s",
                 compare.fmt_time(base), f"{ratio:.3f}", f">= {TARGETS['matmul']}", v])
lines += compare.markdown_table(["case", "rematch", "rate", "cuBLAS", "ratio", "target", "met"], rows)

lines += ["", "Bi-GRU (B 128, T 14, 300 -> 1024 per direction): PyTorch cuDNN time / rematch time; _tf32 cases "
          "allow TF32 on both sides.", ""]
rows = []
for case, r in gru.items():
    ours, t = r["seconds"], torch.get(case)
    ratio = t / ours if t else None
    v = compare.verdict(ratio, TARGETS["gru"])
    checks.append(("gru", case, ratio, TARGETS["gru"], v))
    rows.append([case, compare.fmt_time(ours), f"{r['flop'] / ours / 1e12:.1f} TFLOP/s", compare.fmt_time(t),
                 "-" if ratio is None else f"{ratio:.2f}", f">= {TARGETS['gru']}", v])
lines += compare.markdown_table(["case", "rematch", "rate", "PyTorch", "ratio", "target", "met"], rows)

met = sum(c[4] == "met" for c in checks)
lines += ["", f"{met} of {len(checks)} targets met"]
print("\n".join(lines))
if json_out:
    compare.write_json(json_out, {
        "context": context, "commit": commit, "torch": torch_version, "copy_gbps": copy_bw,
        "checks": [dict(zip(("family", "case", "value", "target", "verdict"), c)) for c in checks],
        "rematch": {**ops, **gru}, "pytorch": torch, "report": lines})
PYEOF
