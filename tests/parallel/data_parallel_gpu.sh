#!/usr/bin/env bash
# Data-parallel training on the GPU machine (tools/gpu_check.sh's dist stage runs it there,
# with mpirun from tools/mpi_bundle.sh): the GPU twin of tests/parallel/data_parallel_training.sh, which CI runs on
# the CPU. Not registered with ctest (CI has no GPU).
#
# Usage: data_parallel_gpu.sh REMATCH COLLECTIVES MPIRUN WORKDIR JSON
#   REMATCH      the rematch program (built with the MPI and NCCL backends)
#   COLLECTIVES  tests/parallel_mpi_collectives of the same build (tests/parallel/mpi_collectives.cpp)
#   MPIRUN       Open MPI's mpirun (called with --allow-run-as-root --oversubscribe)
#   WORKDIR      emptied, then the runs' folders and logs (<case>.log)
#   JSON         the result: every case with its verdict, max relative difference and tolerance
# Env: GPU (1: the GPU cases run; 0: they are reported skipped with GPU_NOTE, default "no GPU"), LIMIT
#      (seconds the whole script may take, default 90: the optional cases are skipped when the time left is
#      short), PYTHON (default python3), RUN_TIMEOUT (seconds one run may take before it counts as hung,
#      default 120), GPU_DEVICE (default cuda; cpu runs the "GPU" cases on the CPU, to try this script on a
#      machine without a GPU: the nccl cases then fail with the program's refusal), GPUS (how many GPUs a rank
#      sees; default: the lines of `nvidia-smi -L`, which under tools/cuda_emu/rehearse_gpu_check.sh lists the
#      emulator's REMATCH_CUDA_EMU_DEVICES).
#
# Cases (in this order; "ref" runs are one process with the same flags, not under mpirun):
#   collectives mpi cpu on 2 ranks                   the control: the bundle's mpirun and the MPI backend work
#   train triplet/SGR --device cpu, 2 ranks vs 1     the control on the trainer (CI's own case)
#   collectives mpi cuda on 2 ranks                  CUDA tensors staged through host memory, one GPU shared
#   collectives nccl cuda on 1 rank                  NCCL (libnccl.so.2 from LD_LIBRARY_PATH), id through MPI
#   nccl on 2 ranks                                  one GPU: refused at the start, naming both ranks; 2 or more
#                                                    GPUs: the collectives on 2 ranks, and each training case
#                                                    below on 2 nccl ranks too
#   train triplet/SGR, l2rm/SAF --device cuda:       2 ranks --dist_backend mpi vs 1 process --device cuda,
#                                                    1 rank --dist_backend nccl vs the same one-process run
#   optional (when LIMIT leaves time): ncr/SGR, decl/SAF, crcl/SAF, rcsl, triplet/SAF, l2rm/SGR, infonce/SGR the
#   same two ways (the flags and tolerances of data_parallel_training.sh)
# Every metrics.jsonl record is compared (the same records, kinds and names; every value within the
# tolerance relative to max(1, |value|)), and the largest relative difference is reported per case.
#
# Tolerances: the CPU test's (2e-5; l2rm 2e-4: its cost net and OT plan amplify the reduction order, see
# data_parallel_training.sh). On the GPU the one-process run and the ranks both compute on the device, with
# other matrix shapes per rank (each rank's rows of every batch), so the reduction order differs as on the CPU;
# whether cuBLAS and the kernels move the numbers more is not known yet: THE FIRST GPU RUN CALIBRATES THESE
# (record its max differences next to them, and the one-process-against-itself spread if they come close).
set -uo pipefail

R=$1 COLL=$2 MPIRUN=$3 W=$4 JSON=$5
GPU=${GPU:-0}
GPU_NOTE=${GPU_NOTE:-no GPU}
LIMIT=${LIMIT:-90}
PYTHON=${PYTHON:-python3}
RUN_TIMEOUT=${RUN_TIMEOUT:-120}
dev=${GPU_DEVICE:-cuda}
GPUS=${GPUS:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')}
TOL=2e-5
TOL_L2RM=2e-4
start=$SECONDS

# Absolute paths: the runs happen in WORKDIR.
abs() { if [[ "$1" == */* ]]; then echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; else command -v "$1"; fi; }
R="$(abs "$R")" COLL="$(abs "$COLL")" MPIRUN="$(abs "$MPIRUN")" JSON="$(abs "$JSON")"
mpirun=("$MPIRUN" --allow-run-as-root --oversubscribe)
rm -rf "$W" && mkdir -p "$W" || exit 1
W="$(cd "$W" && pwd)"
cd "$W" || exit 1
export OMP_NUM_THREADS=1  # as in CI: one thread per rank, the same reduction order on every side
rows="$W/cases.tsv"
: >"$rows"

# row NAME KIND BACKEND DEVICE RANKS VERDICT MAXREL WHERE TOL RECORDS SECONDS NOTE: one case into cases.tsv.
row() {
  local IFS=$'\t'
  echo "$*" | tr -d '\n' >>"$rows"
  echo >>"$rows"
}

# One run under a time limit; its output in LOG. Returns the run's exit status (124/137: hung).
run() {
  local log=$1
  shift
  timeout --kill-after=5 "$RUN_TIMEOUT" "$@" >"$log" 2>&1
}


# The first line of a log that says what went wrong: the program's own (before mpirun's boxed report), else
# its first line, else mpirun's.
why() {
  local own line
  own="$(sed '/^-----/,$d' "$1" 2>/dev/null)"
  line="$(grep -m 1 -iE "error|fail|abort|what\(\)|refus|cannot|not found|no such|usage" <<<"$own")"
  [[ -n "$line" ]] || line="$(grep -m 1 . <<<"$own")"
  [[ -n "$line" ]] || line="$(grep -m 1 -iE "error|fail|abort|signal|exit" "$1" 2>/dev/null)"
  echo "${line:0:300}" | tr '\t' ' '
}

# compare A B TOL: prints "RECORDS MAXREL WHERE" and returns 1 when the records differ in number, kind or
# names, or a value differs by more than TOL relative to max(1, |value|).
compare() {
  "$PYTHON" - "$1" "$2" "$3" <<'PYEOF'
import json, math, sys

a_path, b_path, tol = sys.argv[1], sys.argv[2], float(sys.argv[3])
a = [json.loads(l) for l in open(a_path) if l.strip()]
b = [json.loads(l) for l in open(b_path) if l.strip()]
worst, where, bad = 0.0, "-", []

def walk(x, y, path):
    global worst, where
    if isinstance(x, bool) or isinstance(y, bool) or x is None or y is None or isinstance(x, str) or isinstance(y, str):
        if x != y:
            bad.append(f"{path}: {x!r} against {y!r}")
        return
    if isinstance(x, (int, float)) and isinstance(y, (int, float)):
        if math.isnan(x) or math.isnan(y):
            if not (math.isnan(x) and math.isnan(y)):
                bad.append(f"{path}: {x!r} against {y!r}")
            return
        d = abs(x - y) / max(1.0, abs(x))
        if d > worst:
            worst, where = d, f"{path} {x!r} against {y!r}"
        return
    if isinstance(x, dict) and isinstance(y, dict):
        if list(x) != list(y):
            bad.append(f"{path}: keys {list(x)} against {list(y)}")
            return
        for k in x:
            walk(x[k], y[k], f"{path}.{k}")
        return
    if isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
        for i, (u, v) in enumerate(zip(x, y)):
            walk(u, v, f"{path}[{i}]")
        return
    bad.append(f"{path}: {x!r} against {y!r}")

if len(a) != len(b):
    bad.append(f"{len(a)} records against {len(b)}")
for i, (x, y) in enumerate(zip(a, b)):
    label = f"record {i + 1} ({x.get('kind', '?')}, epoch {x.get('epoch', '-')}, step {x.get('step', '-')})"
    walk(x, y, label)
print(len(b), f"{worst:.3g}", where if not bad else bad[0])
sys.exit(1 if bad or worst > tol else 0)
PYEOF
}

# nccl_pair: two nccl ranks. On a machine with 2 or more GPUs, the collectives on 2 ranks (NCCL between GPUs);
# on one GPU, the refusal the nccl backend gives when two ranks would share it (parallel::ranks_sharing_a_gpu),
# within the run's time limit, naming both ranks.
nccl_pair() {
  local t0=$SECONDS log="$W/collectives_nccl_2_ranks.log" rc
  if ((GPUS >= 2)); then
    collectives "collectives nccl $dev 2 ranks" nccl "$dev" 2
    return
  fi
  run "$log" "${mpirun[@]}" -n 2 "$COLL" nccl "$dev"
  rc=$?
  if ((rc != 0 && rc != 124 && rc != 137)) && grep -q "ranks 0 and 1 are both on GPU" "$log"; then
    row "nccl 2 ranks on 1 GPU refused" collectives nccl "$dev" 2 pass - - - - $((SECONDS - t0)) \
      "$(grep -m 1 -o "ranks 0 and 1 are both on GPU.*" "$log" | cut -c1-160)"
  else
    row "nccl 2 ranks on 1 GPU refused" collectives nccl "$dev" 2 FAILED - - - - $((SECONDS - t0)) \
      "exit $rc (expected the refusal): $(why "$log")"
  fi
}

synth() {
  "$R" synth --kind pairs --out d --images 16 --dev_images 4 --test_images 6 --regions 4 --feature_dim 8 --seed 3 \
    >synth.log 2>&1 &&
  "$R" synth --kind pairs --out d2 --images 32 --dev_images 4 --test_images 6 --regions 4 --feature_dim 8 --seed 3 \
    >>synth.log 2>&1
}
model=(--preset f30k --data_name synth_precomp --embed_size 16 --word_dim 8 --sim_dim 8 --log_step 1 --progress none
       --no_plots)
# The training flags of METHOD/MODULE (as in data_parallel_training.sh).
flags() {
  case "$1" in
    l2rm) echo "--method l2rm --module_name $2 --warmup_epoch 1 --num_epochs 2 --noise_ratio 0.2 --data_path d2 --batch_size 8" ;;
    ncr | decl) echo "--method $1 --module_name $2 --warmup_epoch 1 --num_epochs 1 --noise_ratio 0.2 --data_path d2 --batch_size 8" ;;
    crcl) echo "--method crcl --module_name $2 --warmup_epoch 1 --schedules 1 1 --num_epochs 2 --noise_ratio 0.2 --data_path d2 --batch_size 8" ;;
    rcsl) echo "--method rcsl --paired_length 16 --data_path d2 --batch_size 8 --num_epochs 4 --mine_epoch 2" ;;
    *) echo "--method $1 --module_name $2 --num_epochs 2 --data_path d --batch_size 6" ;;
  esac
}
# The CPU test's tolerance of each method (data_parallel_training.sh says how each was calibrated).
tol_of() {
  case "$1" in
    l2rm | decl) echo "$TOL_L2RM" ;;
    crcl) echo 1e-4 ;;
    ncr) echo 1e-3 ;;
    *) echo "$TOL" ;;
  esac
}

# collectives NAME BACKEND DEVICE RANKS
collectives() {
  local name=$1 t0=$SECONDS log="$W/${1// /_}.log" rc
  run "$log" "${mpirun[@]}" -n "$4" "$COLL" "$2" "$3"
  rc=$?
  if ((rc == 0)); then
    row "$name" collectives "$2" "$3" "$4" pass - - - - $((SECONDS - t0)) "$(grep -m 1 "checks hold" "$log")"
  else
    row "$name" collectives "$2" "$3" "$4" FAILED - - - - $((SECONDS - t0)) "exit $rc: $(why "$log")"
  fi
}

# reference METHOD MODULE DEVICE: the one-process run (run folder ref_<device>_<method>_<module>); 1 on failure
# (a row says so).
reference() {
  local dir="ref_$3_$1_$2" t0=$SECONDS
  [[ -f "$dir/metrics.jsonl" ]] && return 0
  [[ -f "$dir.failed" ]] && return 1  # said once, by the first comparison that needed it
  # shellcheck disable=SC2046  # flags are words
  if ! run "$W/$dir.log" "$R" train $(flags "$1" "$2") "${model[@]}" --device "$3" --run_dir "$dir"; then
    row "$1/$2 one process ($3)" reference none "$3" 1 FAILED - - - - $((SECONDS - t0)) "$(why "$W/$dir.log")"
    touch "$dir.failed"
    return 1
  fi
}

# training METHOD MODULE BACKEND DEVICE RANKS [TAG]: RANKS ranks against the one-process run on DEVICE (run
# folder TAG<backend><ranks>_<device>_<method>_<module>).
training() {
  local m=$1 mod=$2 backend=$3 dev=$4 n=$5 tol name dir t0=$SECONDS out rc
  tol="$(tol_of "$m")"
  name="$m/$mod $backend $dev $n rank$( ((n > 1)) && echo s)"
  dir="${6:-}${backend}${n}_${dev}_${m}_${mod}"
  reference "$m" "$mod" "$dev" || { row "$name" training "$backend" "$dev" "$n" FAILED - - "$tol" - 0 \
    "its one-process run failed"; return; }
  # shellcheck disable=SC2046
  run "$W/$dir.log" "${mpirun[@]}" -n "$n" "$R" train $(flags "$m" "$mod") "${model[@]}" --device "$dev" \
    --dist_backend "$backend" --run_dir "$dir"
  rc=$?
  if ((rc != 0)); then
    row "$name" training "$backend" "$dev" "$n" FAILED - - "$tol" - $((SECONDS - t0)) "exit $rc: $(why "$W/$dir.log")"
    return
  fi
  out="$(compare "ref_${dev}_${m}_${mod}/metrics.jsonl" "$dir/metrics.jsonl" "$tol")"
  rc=$?
  local records maxrel where
  read -r records maxrel where <<<"$out"
  row "$name" training "$backend" "$dev" "$n" "$( ((rc == 0)) && echo pass || echo FAILED)" "$maxrel" "$where" \
    "$tol" "$records" $((SECONDS - t0)) ""
}

skip_gpu() { row "$1" "$2" "$3" cuda "$4" skipped - - - - 0 "$5"; }

if ! synth; then
  row "synthetic data" setup none cpu 1 FAILED - - - - 0 "$(why synth.log)"
else
  collectives "collectives mpi cpu 2 ranks" mpi cpu 2
  training triplet SGR mpi cpu 2 control_
  gpu_cases=("triplet SGR" "l2rm SAF")
  # rcsl's second word names no module (it has its own encoders; flags ignores it).
  optional=("ncr SGR" "decl SAF" "crcl SAF" "rcsl GRU" "triplet SAF" "l2rm SGR" "infonce SGR")
  if ((GPU)); then
    collectives "collectives mpi $dev 2 ranks" mpi "$dev" 2
    collectives "collectives nccl $dev 1 rank" nccl "$dev" 1
    nccl_pair
    per_case=0
    for c in "${gpu_cases[@]}" "${optional[@]}"; do
      read -r m mod <<<"$c"
      t0=$SECONDS
      # An optional case runs when what is left holds it at the pace of the cases before it (plus a margin).
      if [[ " ${optional[*]} " == *" $c "* ]] && ((SECONDS - start + per_case + 10 > LIMIT)); then
        row "$m/$mod mpi $dev 2 ranks" training mpi "$dev" 2 skipped - - - - 0 "out of time (LIMIT $LIMIT s)"
        row "$m/$mod nccl $dev 1 rank" training nccl "$dev" 1 skipped - - - - 0 "out of time (LIMIT $LIMIT s)"
        continue
      fi
      training "$m" "$mod" mpi "$dev" 2
      training "$m" "$mod" nccl "$dev" 1
      ((GPUS >= 2)) && training "$m" "$mod" nccl "$dev" 2
      per_case=$((SECONDS - t0 > per_case ? SECONDS - t0 : per_case))
    done
  else
    skip_gpu "collectives mpi cuda 2 ranks" collectives mpi 2 "$GPU_NOTE"
    skip_gpu "collectives nccl cuda 1 rank" collectives nccl 1 "$GPU_NOTE"
    skip_gpu "nccl 2 ranks (1 GPU: refused)" collectives nccl 2 "$GPU_NOTE"
    for c in "${gpu_cases[@]}"; do
      read -r m mod <<<"$c"
      skip_gpu "$m/$mod mpi cuda 2 ranks" training mpi 2 "$GPU_NOTE"
      skip_gpu "$m/$mod nccl cuda 1 rank" training nccl 1 "$GPU_NOTE"
    done
  fi
fi

# dist.json and one line per case.
# The GPU's compute mode: under Exclusive_Process the second process on the one GPU is refused (the 2-rank mpi
# cases would fail for that reason, not rematch's).
mode="$(nvidia-smi --query-gpu=compute_mode --format=csv,noheader 2>/dev/null | head -1)"
"$PYTHON" - "$rows" "$JSON" "$GPU" "$GPU_NOTE" "$TOL" "$TOL_L2RM" $((SECONDS - start)) "${mode:-unknown}" <<'PYEOF'
import json, sys

rows_path, json_path, gpu, gpu_note, tol, tol_l2rm, seconds, compute_mode = sys.argv[1:9]
keys = ["case", "kind", "backend", "device", "ranks", "verdict", "max_rel_diff", "where", "tolerance", "records",
        "seconds", "note"]
cases = []
for line in open(rows_path):
    v = line.rstrip("\n").split("\t")
    v += [""] * (len(keys) - len(v))
    c = dict(zip(keys, v))
    for k in ("ranks", "records", "seconds"):
        c[k] = int(c[k]) if c[k] not in ("", "-") else None
    for k in ("max_rel_diff", "tolerance"):
        c[k] = float(c[k]) if c[k] not in ("", "-") else None
    c["where"] = None if c["where"] in ("", "-") else c["where"]
    cases.append(c)
ran = [c for c in cases if c["verdict"] != "skipped"]
failed = [c for c in cases if c["verdict"] == "FAILED"]
result = {
    "gpu": gpu == "1", "gpu_note": None if gpu == "1" else gpu_note, "gpu_compute_mode": compute_mode,
    "seconds": int(seconds),
    "tolerance": {"default": float(tol), "l2rm": float(tol_l2rm),
                  "note": "the CPU test's; the first GPU run calibrates them"},
    "passed": len(ran) - len(failed), "failed": len(failed), "skipped": len(cases) - len(ran), "cases": cases,
    # For tools/gpu_check.sh's summary: value is the max relative difference (<= the tolerance passes).
    "checks": [{"family": "dist", "case": c["case"], "value": c["max_rel_diff"], "target": None,
                "verdict": c["verdict"] + (f" (<= {c['tolerance']:g})" if c["tolerance"] is not None else "")}
               for c in cases if c["kind"] == "training" and c["verdict"] != "skipped"],
}
json.dump(result, open(json_path, "w"), indent=1)
for c in cases:
    diff = "" if c["max_rel_diff"] is None else f"max rel diff {c['max_rel_diff']:.3g} (tol {c['tolerance']:g}, {c['records']} records; {c['where']}) "
    print(f"dist: {c['case']}: {c['verdict']} {diff}{c['seconds'] if c['seconds'] is not None else '-'} s"
          + (f"; {c['note']}" if c["note"] else ""))
print(f"dist: {result['passed']} passed, {result['failed']} failed, {result['skipped']} skipped in {seconds} s"
      + ("" if gpu == "1" else f" (GPU cases skipped: {gpu_note})")
      + ("" if compute_mode == "unknown" else f"; GPU compute mode {compute_mode}"))
sys.exit(1 if failed else 0)
PYEOF
