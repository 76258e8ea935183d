#!/usr/bin/env bash
# Training throughput of every method of `rematch train` on a GPU, at full model size on synthetic data, and
# `rematch demo --device cuda`. Prints a markdown table (method, model, batch, steps,
# pairs/s, seconds) with the device, commit and date, ready for bench/RESULTS.md.
#
#   cmake -S . -B build-gpu -DREMATCH_CUDA=ON && cmake --build build-gpu --target rematch_cli
#   BUILD=build-gpu JSON=$OUT/methods.json bench/run_methods_cuda.sh
#
# What runs, all in a temporary folder:
#   data    `rematch synth` once: a pairs world at F30K precomp size (36 regions x 2048 features; 1024 training
#           images x 5 captions, 100 dev, 100 test; its vocabulary padded to F30K's 8,481 words) and a labelled
#           world at Wikipedia size (4096-d images, 300-d texts, 10 classes, 2173/231/462 samples).
#   methods `rematch train --method M --device DEVICE` for triplet, infonce, rcl, l2rm (SGR; --preset f30k: embed
#           1024, word 300, sim 256, batch 128), rcsl, rcsl-nc (VSE; --preset f30k: embed 1024, batch 256) and
#           uotrcl (MLP; --preset wiki: hidden 4096, output 512, batch 100), then ncr, decl and crcl (SGR, as the
#           first four), noise 0.2 (rcsl: half the images paired), 2 epochs of at most STEPS steps each, so that
#           the second epoch is the method's main phase (l2rm, rcsl-nc, uotrcl, ncr, decl, crcl: 1 warm-up epoch;
#           rcsl, rcsl-nc: mining from epoch 2). pairs/s is the
#           trainer's own summary of that epoch (bench/run_methods_cuda.py says exactly what it covers).
#   demo    `rematch demo --device DEVICE` at its own size, stopped at DEMO_SECONDS: at its GPU size it trains
#           3 methods x 20 epochs x 235 steps (6000 images x 5 captions, batch 128), far longer than the rest;
#           when it is stopped the report gives its speed and a projection. DEMO=only runs it alone.
# Without a usable CUDA device it prints why and "CUDA benchmarks skipped", and exits 0 (1 when nvidia-smi
# lists a GPU all the same). Exit status 1 when a run failed.
#
# Environment:
#   BUILD           build folder holding the rematch binary (default build)
#   DEVICE          cuda | cuda:N | cpu (default cuda)
#   DIMS            full | reduced (default full). reduced: a CPU-sized smoke test of the same runs (pairs world
#                   256 images of 12x64, SGR/VSE embed 64, batch 32/64; MLP 128/64 -> 256 -> 64, batch 20)
#   METHODS         the methods to run, space-separated (default all ten, the baselines ncr, decl, crcl last);
#                   empty with DEMO=on: the demo only
#   STEPS           steps per epoch at most (default 20 full, 5 reduced)
#   SEED            --seed of every run (default 0). l2rm's main epoch trains on the pairs its Beta mixture
#                   calls clean and rematches the others; after one short warm-up that split is close to
#                   arbitrary: when fewer pairs than a batch are called noisy the rematch (the OT) is skipped for
#                   the epoch, and few clean pairs give few steps. Such an l2rm run is repeated with the next seed
#                   (SEED+1, SEED+2 at most; the report gives the seed used and the split)
#   METHOD_SECONDS  time cap of each training run (default 60; less when BUDGET is nearly spent)
#   DEMO            on | off | only (default on)
#   DEMO_EPOCHS     --epochs of the demo (default: the demo's own, 20 on a GPU; at least 6)
#   DEMO_SECONDS    time cap of the demo (default: what is left of BUDGET after the methods, at least 30 s;
#                   DEMO=only: 570)
#   BUDGET          seconds for the methods and the demo (default 180; DEMO=only: DEMO_SECONDS alone): each
#                   run's cap is cut to what is left, 30 s kept for the demo with DEMO=on, and a method with
#                   under 10 s left is not run. The whole script takes at most about BUDGET + 20 s
#   JSON            also write the rows, the demo and the report as JSON to this file
#   LOGS            also write every run's log, one after the other, to this file
#   PYTHON          python3 for the report (standard library only; default python3)
#   WORK            keep data, run folders and logs in this folder instead of a temporary one
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=runner_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/runner_common.sh"
python="${PYTHON:-python3}"
build="${BUILD:-build}"
[[ "$build" = /* ]] || build="$root/$build"
rematch="$build/rematch"
device="${DEVICE:-cuda}"
dims="${DIMS:-full}"
demo="${DEMO:-on}"
demo_epochs="${DEMO_EPOCHS:-}"
budget="${BUDGET:-180}"
method_seconds="${METHOD_SECONDS:-60}"
json_out="${JSON:-}"
logs_out="${LOGS:-}"
seed="${SEED:-0}"
all_methods="triplet infonce rcl l2rm rcsl rcsl-nc uotrcl ncr decl crcl"
read -r -a methods <<<"${METHODS-$all_methods}"
[[ "$demo" == only ]] && methods=()

fail() {
  echo "error: $*" >&2
  exit 2
}
[[ -x "$rematch" ]] ||
  fail "$rematch not found; build it with: cmake --build $build --target rematch_cli (BUILD= picks the build folder)"
[[ "$device" =~ ^(cpu|cuda|cuda:[0-9]+)$ ]] || fail "DEVICE must be cpu, cuda or cuda:N (got '$device')"
[[ "$dims" =~ ^(full|reduced)$ ]] || fail "DIMS must be full or reduced (got '$dims')"
[[ "$demo" =~ ^(on|off|only)$ ]] || fail "DEMO must be on, off or only (got '$demo')"
for m in "${methods[@]}"; do
  [[ " $all_methods " == *" $m "* ]] || fail "METHODS: unknown method '$m' (choose from: $all_methods)"
done
for v in budget method_seconds; do
  [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || fail "${v^^} must be a positive number of seconds (got '${!v}')"
done
[[ "$seed" =~ ^[0-9]+$ ]] || fail "SEED must be a non-negative integer (got '$seed')"
[[ -z "$demo_epochs" || "$demo_epochs" =~ ^[1-9][0-9]*$ ]] ||
  fail "DEMO_EPOCHS must be a positive integer (got '$demo_epochs')"
((${#methods[@]} > 0)) || [[ "$demo" != off ]] || fail "nothing to run: METHODS is empty and DEMO=off"

start=$SECONDS
say() { echo "[$((SECONDS - start)) s] $*" >&2; }

if [[ -n "${WORK:-}" ]]; then
  work="$WORK"
  mkdir -p "$work"
else
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work/logs" "$work/runs" "$work/data"
: >"$work/manifest.tsv"

# The device first, before any data is made: `rematch train` checks --device before it reads the data, so a
# run on a path that does not exist fails on the device when that is unusable and on the data otherwise.
if [[ "$device" != cpu ]]; then
  if "$rematch" train --method triplet --device "$device" --data_path "$work/no-data" --data_name probe \
    --run_dir "$work/runs/probe" >"$work/logs/probe.log" 2>&1; then
    fail "the device probe (a run without data) succeeded: $(cat "$work/logs/probe.log")"
  fi
  if grep -q "error: --device" "$work/logs/probe.log"; then
    cat "$work/logs/probe.log"
    if nvidia-smi -L 2>/dev/null | grep -q '^GPU [0-9]'; then
      echo "FAILED: rematch cannot use $device although nvidia-smi lists a GPU"
      exit 1
    fi
    echo "CUDA benchmarks skipped"
    exit 0
  fi
  index="${device#cuda}"
  index="${index#:}"
  gpu="$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader -i "${index:-0}" 2>/dev/null ||
    echo "CUDA device $device (nvidia-smi unavailable)")"
else
  runner_machine_info
  gpu="CPU ${cpu:-unknown}, OMP_NUM_THREADS=${OMP_NUM_THREADS:-unset}"
fi
runner_commit

# Sizes. full: the presets' model sizes and data shaped like the public sets; reduced: small enough for 2 CPU
# cores in a few minutes.
if [[ "$dims" == full ]]; then
  steps="${STEPS:-20}"
  images=1024 eval_images=100 regions=36 feature_dim=2048
  samples=2173 valid_samples=231 test_samples=462 img_dim=4096 txt_dim=300
  pairs_size=(--preset f30k)
  rcsl_size=(--preset f30k)
  uotrcl_size=(--preset wiki)
else
  steps="${STEPS:-5}"
  images=256 eval_images=50 regions=12 feature_dim=64
  samples=400 valid_samples=50 test_samples=50 img_dim=128 txt_dim=64
  pairs_size=(--preset f30k --batch_size 32 --embed_size 64 --word_dim 32 --sim_dim 32)
  rcsl_size=(--preset f30k --batch_size 64 --embed_size 64 --word_dim 32)
  uotrcl_size=(--preset wiki --batch_size 20 --hidden_dim 256 --output_dim 64)
fi
[[ "$steps" =~ ^[1-9][0-9]*$ ]] || fail "STEPS must be a positive integer (got '$steps')"
vocab_size=8481  # F30K's vocabulary (docs/backbones.md §3.1)
data_text="pairs: $images training images x 5 captions, $eval_images dev and $eval_images test images, $regions"
data_text+=" regions x $feature_dim features, vocabulary padded to $vocab_size words; labelled: $samples/"
data_text+="$valid_samples/$test_samples samples, 10 classes, $img_dim-d images, $txt_dim-d texts"

need_pairs=0 need_labeled=0
for m in "${methods[@]}"; do
  if [[ "$m" == uotrcl ]]; then need_labeled=1; else need_pairs=1; fi
done
if ((need_pairs)); then
  say "making the synthetic pairs world ($images images, $regions x $feature_dim)"
  "$rematch" synth --kind pairs --out "$work/data/pairs" --images "$images" --dev_images "$eval_images" \
    --test_images "$eval_images" --regions "$regions" --feature_dim "$feature_dim" >"$work/logs/synth.log"
  "$python" "$root/bench/run_methods_cuda.py" pad-vocab "$work/data/pairs/vocab/synth_precomp_vocab.json" "$vocab_size"
fi
if ((need_labeled)); then
  say "making the synthetic labelled world ($samples samples, $img_dim/$txt_dim)"
  "$rematch" synth --kind labeled --out "$work/data/labeled" --classes 10 --samples "$samples" \
    --valid_samples "$valid_samples" --test_samples "$test_samples" --img_dim "$img_dim" --txt_dim "$txt_dim" \
    >>"$work/logs/synth.log"
fi

# Runs "$@" under a time cap, output in logs/NAME.log; appends "NAME<TAB>exit<TAB>seconds<TAB>cap" to the
# manifest (a name run again: the report takes the last) and sets last_rc. rematch finishes its step and saves
# a checkpoint on SIGTERM; a second signal 15 s later ends it.
run_capped() {
  local name="$1" cap="$2" t0 t1 rc=0
  shift 2
  t0="$(date +%s%N)"
  timeout --kill-after=15 "$cap" "$@" >"$work/logs/$name.log" 2>&1 || rc=$?
  t1="$(date +%s%N)"
  local ms=$(((t1 - t0) / 1000000))
  printf '%s\t%s\t%d.%03d\t%s\n' "$name" "$rc" $((ms / 1000)) $((ms % 1000)) "$cap" >>"$work/manifest.tsv"
  say "$name: exit $rc"
  last_rc=$rc
}

# The cap of the next training run: METHOD_SECONDS, cut to what is left of BUDGET (less 30 s kept for the demo
# when it runs next); 0 when under 10 s would be left.
method_cap() {
  local keep=0
  [[ "$demo" == on ]] && keep=30
  local left=$((budget - (SECONDS - start) - keep))
  local cap=$((left < method_seconds ? left : method_seconds))
  echo $((cap < 10 ? 0 : cap))
}

common=(--device "$device" --max_steps "$steps" --log_step 5 --progress plain --no_plots)
pairs_data=(--data_path "$work/data/pairs" --data_name synth_precomp)
for m in "${methods[@]}"; do
  case "$m" in
    triplet | infonce | rcl) flags=("${pairs_data[@]}" "${pairs_size[@]}" --noise_ratio 0.2 --num_epochs 2) ;;
    l2rm | ncr | decl) flags=("${pairs_data[@]}" "${pairs_size[@]}" --noise_ratio 0.2 --warmup_epoch 1 --num_epochs 1) ;;
    crcl) flags=("${pairs_data[@]}" "${pairs_size[@]}" --noise_ratio 0.2 --warmup_epoch 1 --schedules 1) ;;
    rcsl) flags=("${pairs_data[@]}" "${rcsl_size[@]}" --paired_length $((images / 2)) --num_epochs 2 --mine_epoch 1) ;;
    rcsl-nc)
      flags=("${pairs_data[@]}" "${rcsl_size[@]}" --noise_ratio 0.2 --num_epochs 2 --warmup_epoch 1 --mine_epoch 1)
      ;;
    uotrcl)
      flags=(--data_path "$work/data/labeled/synth_labeled" "${uotrcl_size[@]}" --noise_ratio 0.2 --num_epochs 2
        --warmup_epoch 1)
      ;;
  esac
  for try in 0 1 2; do
    cap="$(method_cap)"
    if ((cap == 0)); then
      say "$m: not run, the budget of $budget s is spent"
      ((try > 0)) || printf '%s\t-1\t0\t0\n' "$m" >>"$work/manifest.tsv"
      break
    fi
    say "rematch train --method $m --seed $((seed + try)) (at most $cap s)"
    run_capped "$m" "$cap" "$rematch" train --method "$m" "${common[@]}" --seed $((seed + try)) \
      "${flags[@]}" --run_dir "$work/runs/$m" --overwrite
    # l2rm: a split without a rematch, or with fewer clean steps than half of STEPS, is tried again.
    [[ "$m" == l2rm && "$last_rc" == 0 ]] || break
    if "$python" "$root/bench/run_methods_cuda.py" l2rm-split-usable "$work/runs/$m" "$work/logs/$m.log" \
      $(((steps + 1) / 2)); then
      break
    fi
    say "l2rm: its split left no rematch or fewer than $(((steps + 1) / 2)) clean steps"
  done
done

if [[ "$demo" != off ]]; then
  if [[ "$demo" == only ]]; then
    demo_seconds="${DEMO_SECONDS:-570}"
  else
    left=$((budget - (SECONDS - start)))
    demo_seconds="${DEMO_SECONDS:-$((left < 30 ? 30 : left))}"
  fi
  [[ "$demo_seconds" =~ ^[1-9][0-9]*$ ]] ||
    fail "DEMO_SECONDS must be a positive number of seconds (got '$demo_seconds')"
  say "rematch demo --device $device${demo_epochs:+ --epochs $demo_epochs} (at most $demo_seconds s)"
  run_capped demo "$demo_seconds" "$rematch" demo --device "$device" --out "$work/demo" --progress plain \
    ${demo_epochs:+--epochs "$demo_epochs"}
fi

if [[ -n "$logs_out" ]]; then
  for f in "$work"/logs/*.log; do
    printf '==== %s\n' "$(basename "$f")"
    cat "$f"
  done >"$logs_out"
fi
say "report"
"$python" "$root/bench/run_methods_cuda.py" report "$work" --device "$device" --dims "$dims" --gpu "$gpu" \
  --commit "$commit" --build "$build" --data "$data_text" --steps "$steps" --regions "$regions" \
  --feature_dim "$feature_dim" --img_dim "$img_dim" --txt_dim "$txt_dim" --demo_epochs "$demo_epochs" \
  --json "$json_out"
