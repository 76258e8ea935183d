#!/usr/bin/env bash
# Data-parallel training on the CPU (docs/distributed.md §4): the training throughput of one
# process against `mpirun -n 2`, one thread per process (OMP_NUM_THREADS=1, OPENBLAS_NUM_THREADS=1), and the
# share of the 2-rank steps spent in collectives and the bytes rank 0 puts into them (the run's own
# "data-parallel:" line: wall time inside the mpi backend's calls, waiting for the other rank included). Reduced dims as bench/run_sgraf_step.sh: B 32, R 36, img 256, word 64, embed 256,
# sim 64 (synthetic data: `rematch synth`, 400 training images; vocabulary of the synthetic set), triplet, the
# first STEPS steps of one epoch (validation and test on a few images, outside the timed steps).
#
#   cmake --build build --target rematch_cli && bench/run_data_parallel.sh   # BUILD=<dir>, STEPS=<n> (default 12)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD:-build}"
[[ "$build" = /* ]] || build="$root/$build"
rematch="$build/rematch"
steps="${STEPS:-12}"
[[ -x "$rematch" ]] || { echo "error: $rematch not found; build it with: cmake --build $build --target rematch_cli" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
"$rematch" synth --kind pairs --out "$tmp/d" --images 400 --dev_images 4 --test_images 4 --regions 36 --feature_dim 256 \
  --seed 1 >/dev/null
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| model | 1 process (pairs/s) | 2 ranks (pairs/s) | speed-up | 2 ranks: steps, of it in collectives | MB a step into collectives (rank 0) |"
echo "|---|---:|---:|---:|---:|---:|"
for module in SGR SAF; do
  args=(train --method triplet --module_name "$module" --preset f30k --data_path "$tmp/d" --data_name synth_precomp
        --batch_size 32 --embed_size 256 --word_dim 64 --sim_dim 64 --num_epochs 1 --max_steps "$steps"
        --log_step "$steps" --progress plain --no_plots --eval_batch 4)
  "$rematch" "${args[@]}" --run_dir "$tmp/one_$module" >/dev/null 2>"$tmp/one.err"
  mpirun --allow-run-as-root --oversubscribe -n 2 "$rematch" "${args[@]}" --run_dir "$tmp/two_$module" >/dev/null \
    2>"$tmp/two.err"
  one=$(grep -o 'done .* \([0-9.]*\) pairs/s' "$tmp/one.err" | grep -o '[0-9.]* pairs/s' | cut -d' ' -f1)
  two=$(grep -o 'done .* \([0-9.]*\) pairs/s' "$tmp/two.err" | grep -o '[0-9.]* pairs/s' | cut -d' ' -f1)
  share=$(grep -o 'the steps took .*in collectives' "$tmp/two.err" | sed 's/the steps took //; s/ in collectives//')
  megabytes=$(grep -o '[0-9.]* MB a step' "$tmp/two.err" | cut -d' ' -f1)
  speedup=$(awk -v a="$one" -v b="$two" 'BEGIN { printf "%.2f", b / a }')
  echo "| $module | $one | $two | ${speedup}× | $share | $megabytes |"
done
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
