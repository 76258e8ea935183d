#!/usr/bin/env bash
# One command for the lent GPU machine (an H100 or H200, 16 cores, PyTorch in its image): build rematch with
# the CUDA backend for sm_90, run the GPU tests, the very large GPU tests, compute-sanitizer's memcheck over
# the GPU tests, the CUDA benchmarks against PyTorch on the same GPU, the full-size workloads (training steps,
# scoring, every method, the demo) and the quick CPU tests, and end with a short summary table. Run it from
# the repository root of the copy on that machine:
#
#   tools/gpu_check.sh [STAGE...]     STAGE: build | tests | large | memcheck | racecheck | bench | workloads
#                                     | cpu-tests | all (all, the default: every stage in that order but
#                                     racecheck)
#
#   build      configure build-gpu (CUDA on, sm_90, Release) and build everything; resumes where it stopped
#   tests      the GPU tests (ctest -R 'Cuda|CUDA', the suites ending in "Large" left out), 16 in parallel
#   large      the suites ending in "Large" (beyond-32-bit indexing, large N×K and N×N Sinkhorn), 2 at a time
#   memcheck   compute-sanitizer memcheck over the GPU tests but the "Large" suites, one run per test suite;
#              a suite whose run finished is recorded in build-gpu/memcheck/ and not run again until its
#              binary is rebuilt (rm -r build-gpu/memcheck to start over), so the stage resumes where a call
#              stopped. Where compute-sanitizer refuses the device ("Device not supported", as on a gVisor
#              runtime) memcheck is reported unavailable, not failed.
#   racecheck  the same with compute-sanitizer's racecheck (shared-memory hazards), stamps in build-gpu/racecheck/
#   bench      bench/run_cuda.sh (op benchmarks, at most half the stage's time), then
#              bench/run_sinkhorn_cuda.sh with the time left computed again
#   workloads  at full model size against the official PyTorch code on the same GPU: the SGR and SAF training
#              step, time and peak GPU memory (bench/run_sgraf_step.sh, DEVICE=cuda); scoring 1,000 images ×
#              5,000 captions with `rematch score --device cuda` (bench/run_score.sh); one synthetic run
#              per method and `rematch demo --device cuda` (bench/run_methods_cuda.sh); see stage_workloads
#   cpu-tests  every other test but the slow CPU behaviour tests (BehaviourTest.*, RcslBehaviourTest.*,
#              *Study*, 5-20 minutes each), which are never run here
#
# GPU tests: a test needing a device has "Cuda" or "CUDA" in its suite or test name (GRUCuda.OneStepOnly) and
# starts with SKIP_WITHOUT_CUDA() (tests/test_util.h), which skips with "needs a CUDA device: <why>". On a
# machine whose `nvidia-smi -L` lists a GPU such a skip is a failure (the stage says why CUDA saw no device),
# as is a CUDA benchmark that skips. A GPU test too slow for memcheck goes in a suite whose name ends in
# "Large" (SinkhornCudaLarge).
#
# Time. The device tool kills a command after 10 minutes, keeps the machine (and build-gpu on it) only 30 s
# after a call, and lends 30 minutes of device time per session, counted from asking for the machine until it
# goes back, idle or busy. Every stage gets only the time left before BUDGET seconds (default 540) minus what
# the later stages of the same call are set aside (tests 90 s, large 60, memcheck and racecheck 120, bench 150,
# workloads 300, cpu-tests 90), so the summary always prints; a stage cut short says so, and build, memcheck
# and racecheck resume in the next call.
#
# Plan for a first GPU session: 30 minutes of device time, 10 minutes a command, three calls. Each call needs
# the build folder the last one left, and the machine stays warm only 30 s after a call: make the next call as
# soon as the last returns (read its summary afterwards), or it gets a bare machine (1-2 minutes to start) that
# must build again. Device times are upper bounds, counted from the first call; the order is what issue 14
# part B needs most: correctness (build, GPU tests), then the measurements, then the sanitizer. The cold build
# is ~850 s of compiler time in 306 steps, the longest 29 s (tensor/cuda/elementwise.cu; measured with 2 jobs
# on a 2-core EPYC): with 16 jobs about 2 minutes.
#   0. Here, at no device cost: `status` (can_start_another true?), then `tools/gpu_deps.sh fetch` (26 MB of
#      Debian packages into build-gpu-deps/, ignored by git). Every call: carry ["build-gpu-deps"], timeout_s
#      600, command `tools/gpu_check.sh ...` as below.
#   1. `BUDGET=420 tools/gpu_check.sh build tests`: the machine's start, the cold build, the GPU tests (ops, OT,
#      models, every method; ~1-2 minutes). 9 minutes. If the build stopped, run the same again (it resumes).
#   2. `tools/gpu_check.sh workloads large` (BUDGET 540): the SGR/SAF step, scoring 1,000 × 5,000, the seven
#      methods and the GPU demo (stopped and projected when it cannot finish) ~7 minutes, then the Large
#      suites. 18.5 minutes.
#   3. `tools/gpu_check.sh bench memcheck` (BUDGET 540): the op and Sinkhorn benchmarks against PyTorch
#      (~4 minutes), then memcheck suite by suite in the time left (it resumes in a later call). 28 minutes.
#      Then give_back at once (a warm machine's idle time counts).
#   What is left for a later session: memcheck's remaining suites, `racecheck`, and the whole GPU demo
#   (`rematch demo --device cuda`, 20 epochs at its GPU size: 10-30 minutes by estimate; call 2 measures its
#   speed and projects its time): `BUILD=build-gpu DEMO=only DEMO_EPOCHS=6 DEMO_SECONDS=560
#   bench/run_methods_cuda.sh` runs it at its own size with the fewest epochs l2rm's warm-up allows.
# When a call finds no warm machine (it went back, or a start failed), the build went with it: begin again at
# call 1 with what is left, and drop call 3's memcheck first. The CPU tests, which CI runs, are never worth
# device time.
#
# Build dependencies: when the machine lacks the Debian packages the build uses (OpenBLAS, GoogleTest, Google
# Benchmark, CLI11, nlohmann-json, HDF5, stb), they come from build-gpu-deps/, fetched beforehand on a Debian
# 12 machine with `tools/gpu_deps.sh fetch` and carried with the command (carry ["build-gpu-deps"]).
#
# Output: the stage logs (build.log with the configure step; tests.log with the tests, large and cpu-tests
# stages; memcheck.log; bench.log; sgraf_step.log, score.log, methods.log), the measurements (bench.json,
# sinkhorn_cuda.json, sgraf_step.json, score.json, methods.json) and the summary (summary.md, summary.json:
# every stage's result and every runner's checks, value >= target) are written to build-gpu/check, emptied
# when a call starts. With $OUT set (the device tool's output folder, which brings back at most 8 files) the
# call ends by copying summary.md and summary.json there with check.tar.gz, an archive of the whole folder.
# The exit status is 1 when a stage failed.
# Env: JOBS (default 16), BUDGET (seconds, default 540), BUILD_DIR (default build-gpu), PYTHON (default
# python3), SANITIZER (compute-sanitizer to use; default: the one on PATH or under /usr/local/cuda).
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root" || exit 1
build_dir="${BUILD_DIR:-build-gpu}"
jobs="${JOBS:-16}"
budget="${BUDGET:-540}"
# Every stage writes into the work folder $out (emptied when a call starts); the call ends by copying the
# summary and one archive of the rest to $OUT (the device tool brings back at most 8 files).
out="$build_dir/check"
python="${PYTHON:-python3}"
rm -rf "$out"
mkdir -p "$out" && out="$(cd "$out" && pwd)"
start=$SECONDS
declare -A reserve=([build]=0 [tests]=90 [large]=60 [memcheck]=120 [racecheck]=120 [bench]=150 [workloads]=300
                    [cpu-tests]=90)
declare -A result seconds_taken
stages=()

# Test selection, by ctest name (Suite.Test) and by gtest filter.
gpu_regex='Cuda|CUDA'
large_regex='Large\.'
slow_cpu_regex='BehaviourTest\.|Study'
memcheck_filter='*Cuda*:*CUDA*-*Large.*'

say() { echo "==== [$((SECONDS - start)) s] $*"; }

# Seconds the current stage may use: what is left of the budget minus what the later stages are set aside.
stage_limit() {
  local later=0 s seen=0
  for s in "${stages[@]}"; do
    if ((seen)); then later=$((later + reserve[$s])); fi
    [[ "$s" == "$1" ]] && seen=1
  done
  local left=$((budget - (SECONDS - start) - later))
  echo $((left < 30 ? 30 : left))
}

# True when nvidia-smi lists a GPU: a test or benchmark that then skips for want of a device is a failure.
gpu_listed() {
  nvidia-smi -L 2>/dev/null | grep -q '^GPU [0-9]'
}

# How many tests in the files given skipped for want of a CUDA device, and the first skip's message; empty
# when none did.
device_skips() {
  local n first
  n="$(cat "$@" 2>/dev/null | grep -c "needs a CUDA device")"
  ((n > 0)) || return 0
  first="$(cat "$@" 2>/dev/null | grep -m 1 -o "needs a CUDA device.*")"
  echo "$n tests skipped (\"$first\")"
}

# A result line with what device_skips found: a failure when nvidia-smi lists a GPU, a note otherwise.
# Returns 1 on the failure.
judge_skips() {
  local stage="$1" skips="$2"
  [[ -n "$skips" ]] || return 0
  if gpu_listed; then
    result[$stage]+="; FAILED: $skips although nvidia-smi lists a GPU"
    return 1
  fi
  result[$stage]+="; $skips: no GPU listed by nvidia-smi"
}

# --- dependencies ------------------------------------------------------------------------------------------
have_header() {
  find /usr/include /usr/local/include -maxdepth 3 -path "*/$1" -print -quit 2>/dev/null | grep -q .
}

missing_deps() {
  local m=()
  have_header gtest/gtest.h || m+=(googletest)
  have_header benchmark/benchmark.h || m+=(benchmark)
  have_header cblas.h && ldconfig -p 2>/dev/null | grep -q libopenblas || m+=(openblas)
  have_header nlohmann/json.hpp || m+=(nlohmann-json)
  have_header CLI/CLI.hpp || m+=(CLI11)
  have_header hdf5.h && ldconfig -p 2>/dev/null | grep -q libhdf5 || m+=(hdf5)
  have_header stb/stb_image_write.h || m+=(stb)
  echo "${m[*]}"
}

cmake_dep_args=()
setup_deps() {
  local missing
  missing="$(missing_deps)"
  if [[ -z "$missing" ]]; then
    say "build dependencies: all on the machine"
    return 0
  fi
  say "build dependencies missing on the machine: $missing; using build-gpu-deps/"
  local prefix
  prefix="$(tools/gpu_deps.sh unpack "$build_dir/deps")" || return 1
  local lib="$prefix/lib/x86_64-linux-gnu"
  local libdirs="$lib:$lib/openblas-pthread:$lib/hdf5/serial"
  export CMAKE_PREFIX_PATH="$prefix${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  export CPATH="$prefix/include:$prefix/include/stb${CPATH:+:$CPATH}"
  # DT_RPATH (not RUNPATH) so that the libraries these load (libgfortran, libcurl, ...) are found too, by our
  # binaries only: nothing else on the machine sees these folders.
  export LDFLAGS="-Wl,--disable-new-dtags -Wl,-rpath,$libdirs -Wl,-rpath-link,$libdirs${LDFLAGS:+ $LDFLAGS}"
  cmake_dep_args=(-DREMATCH_CBLAS_INCLUDE="$prefix/include/x86_64-linux-gnu/openblas-pthread"
                  -DREMATCH_OPENBLAS_LIB="$lib/openblas-pthread/libopenblas.so")
}

# --- stages --------------------------------------------------------------------------------------------------
stage_build() {
  setup_deps || { result[build]="dependencies missing (see above)"; return 1; }
  # Ninja when the machine has it, unless the folder was already configured with another generator.
  local generator=()
  if command -v ninja >/dev/null && [[ ! -f "$build_dir/CMakeCache.txt" || -f "$build_dir/build.ninja" ]]; then
    generator=(-G Ninja)
  fi
  say "configure $build_dir (CUDA on, sm_90, Release)"
  if ! cmake -S . -B "$build_dir" "${generator[@]}" -DREMATCH_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
      -DCMAKE_BUILD_TYPE=Release "${cmake_dep_args[@]}" >"$out/build.log" 2>&1; then
    tail -n 40 "$out/build.log"
    result[build]="configure failed (build.log)"
    return 1
  fi
  local limit
  limit="$(stage_limit build)"
  say "build with $jobs jobs (at most $limit s)"
  # The native tool directly under `timeout`, so a stop reaches the compilers too (ninja stops its children).
  local tool=(make -C "$build_dir" -j "$jobs")
  [[ -f "$build_dir/build.ninja" ]] && tool=(ninja -C "$build_dir" -j "$jobs")
  timeout --kill-after=15 "$limit" "${tool[@]}" >>"$out/build.log" 2>&1
  local rc=$?
  if ((rc == 0)); then
    result[build]="ok"
  elif ((rc == 124 || rc == 137)); then
    result[build]="stopped after $limit s: run \`tools/gpu_check.sh build\` again to resume"
  else
    grep -E "error|Error" "$out/build.log" | head -n 30
    tail -n 20 "$out/build.log"
    result[build]="failed (build.log)"
  fi
  ((rc == 0))
}

# One ctest run into tests.log: run_ctest STAGE PER_TEST_SECONDS PARALLEL CTEST_ARG... Sets result[STAGE] to
# ctest's count line, failed when a test failed, nothing ran, or a test skipped for want of a device while
# nvidia-smi lists a GPU (read from Testing/Temporary/LastTest.log, where ctest keeps every test's output).
run_ctest() {
  local stage="$1" per_test="$2" parallel="$3"
  shift 3
  local limit log="$out/tests.log" part="$out/tests.log.part" temp="$build_dir/Testing/Temporary"
  limit="$(stage_limit "$stage")"
  say "$stage: ctest $* ($parallel in parallel, $per_test s per test, at most $limit s)"
  echo "==== $stage: ctest $*" >>"$log"
  rm -f "$temp"/LastTest*.log
  timeout --kill-after=15 "$limit" ctest --test-dir "$build_dir" -j "$parallel" --timeout "$per_test" \
    --no-tests=error --output-on-failure "$@" >"$part" 2>&1
  local rc=$?
  cat "$part" >>"$log"
  local line
  line="$(grep -E "tests passed, [0-9]+ tests? failed out of [0-9]+" "$part" | tail -n 1)"
  if [[ -z "$line" ]]; then
    result[$stage]="no result$( ((rc == 124 || rc == 137)) && echo " (stopped after $limit s)") (tests.log)"
    tail -n 30 "$part"
    rm -f "$part"
    return 1
  fi
  result[$stage]="$line"
  if ((rc != 0)); then sed -n '/The following tests FAILED/,$p' "$part" | head -n 40; fi
  rm -f "$part"
  judge_skips "$stage" "$(device_skips "$temp"/LastTest*.log)" || rc=1
  ((rc == 0))
}

stage_tests() { run_ctest tests 120 "$jobs" -R "$gpu_regex" -E "$large_regex"; }

# Two at a time: each holds gigabytes on the device and runs a large float32 solve on the CPU beside it.
stage_large() { run_ctest large 300 2 -R "$large_regex"; }

stage_cpu_tests() { run_ctest cpu-tests 240 "$jobs" -E "$gpu_regex|$large_regex|$slow_cpu_regex"; }

# "SUITE FILTER" per gtest suite of the test binary $1 with tests in memcheck_filter: FILTER lists the
# suite's selected tests by full name, so a run covers exactly them.
memcheck_units() {
  "$1" --gtest_list_tests --gtest_filter="$memcheck_filter" 2>/dev/null | awk '
    /^[^ ]/ { suite = $1; if (!(suite in tests)) order[++n] = suite; tests[suite] = tests[suite]; next }
    /^  /   { tests[suite] = tests[suite] (tests[suite] == "" ? "" : ":") suite $1 }
    END     { for (i = 1; i <= n; i++) if (tests[order[i]] != "")
                print substr(order[i], 1, length(order[i]) - 1), tests[order[i]] }'
}

# One compute-sanitizer tool ($1: memcheck or racecheck) over the GPU tests, suite by suite, resumable.
sanitizer_stage() {
  local checker="$1"
  local sanitizer="${SANITIZER:-}" candidate
  [[ -n "$sanitizer" ]] || sanitizer="$(command -v compute-sanitizer)"
  for candidate in /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer; do
    [[ -z "$sanitizer" && -x "$candidate" ]] && sanitizer="$candidate"
  done
  if [[ -z "$sanitizer" ]]; then
    result[$checker]="compute-sanitizer not found"
    return 1
  fi
  local limit stamps="$build_dir/$checker" log="$out/$checker.log" part="$out/$checker.log.part"
  limit="$(stage_limit "$checker")"
  local until=$((SECONDS + limit))
  mkdir -p "$stamps"
  say "$checker: one compute-sanitizer run per suite of GPU tests ($memcheck_filter), suites recorded in" \
    "$stamps/ skipped (at most $limit s)"
  local units=0 earlier=0 ran=0 errors=0 failed=0 stopped=0 unavailable=""
  local bin name version suite filter stamp rc found
  for bin in "$build_dir"/tests/*_tests; do
    [[ -x "$bin" ]] || continue
    name="$(basename "$bin")"
    version="$(stat -c %Y "$bin")"
    while read -r suite filter; do
      units=$((units + 1))
      stamp="$stamps/$name.${suite//\//_}"  # a parameterized suite is Prefix/Suite
      # A stamp holds the binary's modification time, then the run's error count and exit status.
      if [[ -f "$stamp" && "$(sed -n 1p "$stamp")" == "$version" ]]; then
        earlier=$((earlier + 1))
        errors=$((errors + $(sed -n 2p "$stamp")))
        [[ "$(sed -n 3p "$stamp")" == 0 || "$(sed -n 3p "$stamp")" == 99 ]] || failed=$((failed + 1))
        continue
      fi
      [[ -z "$unavailable" ]] || continue
      local left=$((until - SECONDS))
      if ((left < 20)); then
        stopped=$((stopped + 1))
        continue
      fi
      echo "---- $name $suite" >>"$log"
      timeout --kill-after=10 "$left" "$sanitizer" --tool "$checker" --error-exitcode 99 --print-limit 50 \
        "$bin" --gtest_filter="$filter" </dev/null >"$part" 2>&1
      rc=$?
      cat "$part" >>"$log"
      if grep -q "Device not supported" "$part"; then
        unavailable="$(grep -m 1 -o "Device not supported.*" "$part")"
        say "$checker $name $suite: compute-sanitizer refused the device ($unavailable)"
        continue
      fi
      # memcheck ends with "ERROR SUMMARY: N errors", racecheck with "RACECHECK SUMMARY: H hazards displayed
      # (N errors, W warnings)": N either way.
      found="$(grep -oE "ERROR SUMMARY: [0-9]+ error|\([0-9]+ errors?," "$part" | tail -n 1 | grep -oE "[0-9]+")"
      say "$checker $name $suite: exit $rc, errors ${found:-missing}"
      if ((rc == 124 || rc == 137)); then
        stopped=$((stopped + 1))
        continue
      fi
      ran=$((ran + 1))
      errors=$((errors + ${found:-0}))
      if [[ -n "$(device_skips "$part")" ]] && gpu_listed; then
        failed=$((failed + 1))
        continue  # not recorded: its tests must run again, on the device
      fi
      ((rc == 0 || rc == 99)) || failed=$((failed + 1))
      printf '%s\n%s\n%s\n' "$version" "${found:-0}" "$rc" >"$stamp"
    done < <(memcheck_units "$bin")
  done
  rm -f "$part"
  if ((units == 0)); then
    result[$checker]="no GPU tests found in $build_dir/tests"
    return 1
  fi
  if [[ -n "$unavailable" ]]; then
    result[$checker]="unavailable: compute-sanitizer refused the device (\"$unavailable\"; $checker.log)"
    ((earlier > 0)) && result[$checker]+="; $earlier suites checked by earlier calls, $errors errors"
    return 0
  fi
  result[$checker]="$errors errors in $((earlier + ran)) of $units suites of GPU tests ($ran run now)"
  ((failed)) && result[$checker]+=", $failed suites failed (a test failed or skipped, or broke: $checker.log)"
  ((stopped)) && result[$checker]+="; $stopped suites left (out of time: run \`tools/gpu_check.sh $checker\`)"
  judge_skips "$checker" "$(device_skips "$log")" || failed=$((failed + 1))
  ((errors == 0 && failed == 0 && stopped == 0))
}

stage_memcheck() { sanitizer_stage memcheck; }
# Shared-memory hazards of the kernels that use shared memory (reductions, softmax, sort, Sinkhorn, GRU); not in
# `all`: slower than memcheck, for a session with time to spare.
stage_racecheck() { sanitizer_stage racecheck; }

stage_bench() {
  local limit rc_ops rc_sinkhorn
  limit="$(stage_limit bench)"
  # The op benchmarks get at most half the stage's time; the Sinkhorn runner's limit is computed again
  # from what is left once they are done.
  local ops_limit=$((limit / 2 < 30 ? 30 : limit / 2))
  say "CUDA op benchmarks vs PyTorch (at most $ops_limit s)"
  BUILD="$build_dir" PYTHON="$python" JSON="$(cd "$out" && pwd)/bench.json" \
    timeout --kill-after=15 "$ops_limit" bench/run_cuda.sh >"$out/bench.log" 2>&1
  rc_ops=$?
  limit="$(stage_limit bench)"
  say "fused Sinkhorn benchmarks vs PyTorch (at most $limit s; rows in $out/sinkhorn_cuda.json)"
  PYTHON="$python" OUT="$out" timeout --kill-after=15 "$limit" bench/run_sinkhorn_cuda.sh "$build_dir" \
    >>"$out/bench.log" 2>&1
  rc_sinkhorn=$?
  cat "$out/bench.log"
  local runner rc given run
  result[bench]=""
  for run in "ops $rc_ops $ops_limit" "sinkhorn $rc_sinkhorn $limit"; do
    read -r runner rc given <<<"$run"
    ((rc == 0)) && continue
    result[bench]+="$runner failed, exit $rc$( ((rc == 124 || rc == 137)) && echo " (stopped after $given s)"); "
  done
  local lines
  lines="$(grep -E "targets met|skipped" "$out/bench.log" | paste -sd ';' - | sed 's/;/; /g')"
  result[bench]+="${lines:-no result} (bench.log)"
  local ok=$((rc_ops == 0 && rc_sinkhorn == 0))
  if grep -q "no CUDA device visible" "$out/bench.log" && gpu_listed; then
    result[bench]+="; FAILED: a benchmark saw no CUDA device although nvidia-smi lists a GPU"
    ok=0
  fi
  ((ok))
}

# The full-size workloads (issue 14 part B points 3 and 4), one runner after another, each given its share of
# the stage's time left (by weight among the runners still to go; what one leaves passes on): the SGR and SAF
# training step against the official per-caption PyTorch loop and its batched variant, time and peak GPU
# memory (bench/run_sgraf_step.sh, DEVICE=cuda; ~1-2 minutes); scoring 1,000 images × 5,000 captions with
# `rematch score --device cuda` against the official encode + shard_attn_scores (bench/run_score.sh,
# DEVICE=cuda; ~1-1.5 minutes); one synthetic run per method at full model size, then `rematch demo --device
# cuda` in the time left, stopped and projected when it cannot finish (bench/run_methods_cuda.sh, which keeps
# to BUDGET: it is given its limit less 25 s). Each writes <name>.log and <name>.json.
workload_runners=(sgraf_step score methods)
declare -A workload_weight=([sgraf_step]=1 [score]=1 [methods]=2)
declare -A workload_command=(
  [sgraf_step]="env DEVICE=cuda bench/run_sgraf_step.sh"
  [score]="env DEVICE=cuda bench/run_score.sh"
  [methods]="env LOGS=$out/methods_runs.log bench/run_methods_cuda.sh"
)

stage_workloads() {
  local i j name limit rc ok=1 weights line
  result[workloads]=""
  for i in "${!workload_runners[@]}"; do
    name="${workload_runners[$i]}"
    weights=0
    for ((j = i; j < ${#workload_runners[@]}; j++)); do weights=$((weights + workload_weight[${workload_runners[$j]}])); done
    limit=$(($(stage_limit workloads) * workload_weight[$name] / weights))
    ((limit < 60)) && limit=60
    say "workload $name: ${workload_command[$name]} (at most $limit s)"
    # shellcheck disable=SC2086  # the command is words
    BUILD="$build_dir" PYTHON="$python" JSON="$(cd "$out" && pwd)/$name.json" BUDGET=$((limit - 25)) \
      timeout --kill-after=15 "$limit" ${workload_command[$name]} >"$out/$name.log" 2>&1
    rc=$?
    tail -n 40 "$out/$name.log"
    line="$(grep -E "targets? met|CUDA benchmarks skipped" "$out/$name.log" | tail -n 1)"
    if ((rc != 0)); then
      ok=0
      line="FAILED, exit $rc$( ((rc == 124 || rc == 137)) && echo " (stopped after $limit s)")${line:+; $line}"
    elif grep -q "CUDA benchmarks skipped" "$out/$name.log" && gpu_listed; then
      ok=0
      line="FAILED: skipped although nvidia-smi lists a GPU ($line)"
    fi
    result[workloads]+="$name: ${line:-done, no target line} ($name.log); "
  done
  result[workloads]="${result[workloads]%; }"
  ((ok))
}

# --- main ----------------------------------------------------------------------------------------------------
main() {
  local arg
  for arg in "${@:-all}"; do
    case "$arg" in
      all) stages+=(build tests large memcheck bench workloads cpu-tests) ;;
      build | tests | large | memcheck | racecheck | bench | workloads | cpu-tests) stages+=("$arg") ;;
      *)
        echo "usage: tools/gpu_check.sh [build|tests|large|memcheck|racecheck|bench|workloads|cpu-tests|all]..." >&2
        exit 2
        ;;
    esac
  done
  say "rematch GPU check: ${stages[*]} (budget $budget s, output in $out)"
  nvidia-smi --format=csv \
    --query-gpu=name,driver_version,memory.total,memory.used,clocks.sm,clocks.mem,temperature.gpu,power.draw 2>&1 ||
    echo "nvidia-smi failed: no GPU visible?"
  nvcc --version 2>/dev/null | tail -n 1 || true

  local s t0 failed=0
  for s in "${stages[@]}"; do
    if [[ "$s" != build && ! -f "$build_dir/CMakeCache.txt" ]]; then
      result[$s]="not run: no build in $build_dir (run the build stage first)"
      failed=1
      continue
    fi
    if [[ "${result[build]:-ok}" != ok ]]; then
      result[$s]="not run: the build did not finish"
      failed=1
      continue
    fi
    t0=$SECONDS
    "stage_${s//-/_}" || failed=1
    seconds_taken[$s]=$((SECONDS - t0))
  done

  local summary=("| stage | result | seconds |" "|---|---|---:|")
  for s in "${stages[@]}"; do summary+=("| $s | ${result[$s]:-not run} | ${seconds_taken[$s]:--} |"); done
  printf '%s\n' "${summary[@]}" >"$out/summary.md"
  local pairs=()
  for s in "${stages[@]}"; do pairs+=("$s" "${result[$s]:-not run}" "${seconds_taken[$s]:-}"); done
  "$python" - "$out" "${pairs[@]}" <<'PYEOF'
import glob, json, os, sys

out, rest = sys.argv[1], sys.argv[2:]
stages = {rest[i]: {"result": rest[i + 1], "seconds": int(rest[i + 2]) if rest[i + 2] else None}
          for i in range(0, len(rest), 3)}
summary = {"stages": stages, "checks": [], "measurements": {}}
# Every runner's JSON: its "checks" ({family, case, value, target, verdict}; value >= target is the target)
# join the summary's list, and the whole file is kept under its name.
for path in sorted(glob.glob(os.path.join(out, "*.json"))):
    name = os.path.basename(path)
    if name == "summary.json":
        continue
    try:
        data = json.load(open(path))
    except ValueError as e:
        summary["measurements"][name] = {"error": f"unreadable: {e}"}
        continue
    summary["measurements"][name] = data
    for c in data.get("checks", []) if isinstance(data, dict) else []:
        summary["checks"].append({**c, "source": name})
if summary["checks"]:
    with open(os.path.join(out, "summary.md"), "a") as f:
        f.write("\nChecks (value >= target where there is one; each runner's table says what the value is):\n\n")
        for c in summary["checks"]:
            value = "-" if c["value"] is None else f"{c['value']:.3g}"
            target = "" if c.get("target") is None else f" (>= {c['target']})"
            f.write(f"- {c['source']}: {c['family']} {c['case']}: {value}{target} {c['verdict']}\n")
json.dump(summary, open(os.path.join(out, "summary.json"), "w"), indent=1)
PYEOF
  if [[ -n "${OUT:-}" ]]; then
    mkdir -p "$OUT"
    cp "$out/summary.md" "$out/summary.json" "$OUT/"
    tar -czf "$OUT/check.tar.gz" -C "$out" . 2>/dev/null || echo "could not archive $out into \$OUT/check.tar.gz"
  fi
  echo
  say "summary (also in $out/summary.md${OUT:+, and with every log and measurement in \$OUT/check.tar.gz})"
  cat "$out/summary.md"
  return "$failed"
}

main "$@"
