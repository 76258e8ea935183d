#!/usr/bin/env bash
# One command for the lent GPU machine (an H100 or H200, 16 cores, PyTorch in its image): build rematch with
# the CUDA backend for sm_90, run the whole test suite with the GPU tests in it, run compute-sanitizer's
# memcheck over the CUDA tests, run the CUDA benchmarks against PyTorch on the same GPU, and end with a short
# summary table. Run it from the repository root of the copy on that machine:
#
#   tools/gpu_check.sh [STAGE...]     STAGE: build | tests | memcheck | bench | all (default: all)
#
# The device tool kills a command after 10 minutes. `all` is meant to fit in about 9: every stage gets only
# the time left before BUDGET seconds (default 540) minus what the later stages are set aside (tests 100 s,
# memcheck 60 s, bench 120 s), so the summary always prints; a stage cut short says so. When a run does not
# fit (a cold build of everything), split it over calls made while the machine is still warm (it keeps
# build-gpu for 30 s after a call, and the build resumes where it stopped):
#   tools/gpu_check.sh build tests         then         tools/gpu_check.sh memcheck bench
#
# GPU tests: a test needing a device has "Cuda" or "CUDA" in its suite or test name (GRUCuda.OneStepOnly)
# and skips itself with GTEST_SKIP() << "needs a CUDA device" elsewhere; memcheck runs exactly those, with
# --gtest_filter='*Cuda*:*CUDA*', in every test binary that has any.
#
# Build dependencies: when the machine lacks the Debian packages the build uses (OpenBLAS, GoogleTest, Google
# Benchmark, CLI11, nlohmann-json, HDF5, stb), they come from build-gpu-deps/, fetched beforehand on a Debian
# 12 machine with `tools/gpu_deps.sh fetch` and carried with the command (carry ["build-gpu-deps"]).
#
# Output: the stage logs (build.log with the configure step, tests.log, memcheck.log, bench.log), the
# benchmark measurements (bench.json) and the summary (summary.md, summary.json) go to $OUT when set (the
# device tool's output folder, which returns at most 8 files), else to build-gpu/check.
# Env: JOBS (default 16), BUDGET (seconds, default 540), BUILD_DIR (default build-gpu), PYTHON (default python3).
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
build_dir="${BUILD_DIR:-build-gpu}"
jobs="${JOBS:-16}"
budget="${BUDGET:-540}"
out="${OUT:-$build_dir/check}"
python="${PYTHON:-python3}"
mkdir -p "$out"
start=$SECONDS
declare -A reserve=([build]=0 [tests]=100 [memcheck]=60 [bench]=120)
declare -A result seconds_taken
stages=()

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

stage_tests() {
  local limit
  limit="$(stage_limit tests)"
  say "ctest, all tests, $jobs in parallel (at most $limit s)"
  timeout --kill-after=15 "$limit" ctest --test-dir "$build_dir" -j "$jobs" --timeout 240 --output-on-failure \
    >"$out/tests.log" 2>&1
  local rc=$?
  local line
  line="$(grep -E "tests passed, [0-9]+ tests? failed out of [0-9]+" "$out/tests.log" | tail -n 1)"
  if [[ -z "$line" ]]; then
    result[tests]="no result$( ((rc == 124 || rc == 137)) && echo " (stopped after $limit s)") (tests.log)"
    tail -n 30 "$out/tests.log"
    return 1
  fi
  result[tests]="$line"
  if ((rc != 0)); then
    sed -n '/The following tests FAILED/,$p' "$out/tests.log" | head -n 40
  fi
  ((rc == 0))
}

stage_memcheck() {
  local sanitizer
  sanitizer="$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer \
    /usr/local/cuda/compute-sanitizer/compute-sanitizer 2>/dev/null | head -n 1)"
  if [[ -z "$sanitizer" ]]; then
    result[memcheck]="compute-sanitizer not found"
    return 1
  fi
  local limit filter='*Cuda*:*CUDA*' binaries=0 tests=0 errors=0 failed=0 stopped=0 bin n log
  limit="$(stage_limit memcheck)"
  local until=$((SECONDS + limit))
  log="$out/memcheck.log"
  : >"$log"
  say "compute-sanitizer memcheck over the CUDA tests ($filter; at most $limit s)"
  for bin in "$build_dir"/tests/*_tests; do
    [[ -x "$bin" ]] || continue
    n="$("$bin" --gtest_list_tests --gtest_filter="$filter" 2>/dev/null | grep -c '^  ')"
    ((n > 0)) || continue
    local left=$((until - SECONDS))
    if ((left < 10)); then
      stopped=1
      echo "memcheck: no time left for $bin" | tee -a "$log"
      continue
    fi
    binaries=$((binaries + 1))
    tests=$((tests + n))
    echo "---- $bin ($n tests)" >>"$log"
    timeout --kill-after=10 "$left" "$sanitizer" --tool memcheck --error-exitcode 99 --print-limit 50 \
      "$bin" --gtest_filter="$filter" >"$log.part" 2>&1
    local rc=$?
    cat "$log.part" >>"$log"
    local found
    found="$(grep -oE "ERROR SUMMARY: [0-9]+ error" "$log.part" | tail -n 1 | grep -oE "[0-9]+")"
    rm -f "$log.part"
    if ((rc == 124 || rc == 137)); then stopped=1; fi
    if ((rc == 99)); then errors=$((errors + ${found:-0})); fi
    if ((rc != 0 && rc != 99)); then failed=$((failed + 1)); fi
    say "memcheck $(basename "$bin"): exit $rc, ERROR SUMMARY ${found:-missing}"
  done
  result[memcheck]="$errors errors in $binaries binaries ($tests CUDA tests)"
  ((failed)) && result[memcheck]+=", $failed binaries failed or were stopped"
  ((stopped)) && result[memcheck]+=" (out of time: run \`tools/gpu_check.sh memcheck\`)"
  ((errors == 0 && failed == 0 && stopped == 0))
}

stage_bench() {
  local limit
  limit="$(stage_limit bench)"
  say "CUDA benchmarks vs PyTorch (at most $limit s)"
  # The op benchmarks, then the fused Sinkhorn (bench/run_sinkhorn_cuda.sh writes its rows to
  # $OUT/sinkhorn_cuda.json); both logs go to bench.log.
  BUILD="$build_dir" PYTHON="$python" JSON="$(cd "$out" && pwd)/bench.json" \
    timeout --kill-after=15 "$limit" bench/run_cuda.sh >"$out/bench.log" 2>&1
  local rc=$?
  if ((rc == 0)); then
    PYTHON="$python" OUT="$out" timeout --kill-after=15 "$limit" bench/run_sinkhorn_cuda.sh "$build_dir" \
      >>"$out/bench.log" 2>&1
    rc=$?
  fi
  cat "$out/bench.log"
  local line
  line="$(grep -E "targets met|skipped" "$out/bench.log" | tail -n 1)"
  if ((rc != 0)); then
    result[bench]="failed, exit $rc$( ((rc == 124 || rc == 137)) && echo " (stopped after $limit s)") (bench.log)"
    return 1
  fi
  result[bench]="${line:-no result (bench.log)}"
}

# --- main ----------------------------------------------------------------------------------------------------
main() {
  local arg
  for arg in "${@:-all}"; do
    case "$arg" in
      all) stages+=(build tests memcheck bench) ;;
      build | tests | memcheck | bench) stages+=("$arg") ;;
      *)
        echo "usage: tools/gpu_check.sh [build|tests|memcheck|bench|all]..." >&2
        exit 2
        ;;
    esac
  done
  say "rematch GPU check: ${stages[*]} (budget $budget s, output in $out)"
  nvidia-smi --format=csv \
    --query-gpu=name,driver_version,memory.total,memory.used,clocks.sm,clocks.mem,temperature.gpu,power.draw 2>&1 ||
    echo "nvidia-smi failed: no GPU visible?"
  nvcc --version 2>/dev/null | tail -n 1 || true

  local s t0
  for s in "${stages[@]}"; do
    if [[ "$s" != build && ! -f "$build_dir/CMakeCache.txt" ]]; then
      result[$s]="not run: no build in $build_dir (run the build stage first)"
      continue
    fi
    if [[ "${result[build]:-ok}" != ok ]]; then
      result[$s]="not run: the build did not finish"
      continue
    fi
    t0=$SECONDS
    "stage_$s"
    seconds_taken[$s]=$((SECONDS - t0))
  done

  local summary=("| stage | result | seconds |" "|---|---|---:|")
  for s in "${stages[@]}"; do summary+=("| $s | ${result[$s]:-not run} | ${seconds_taken[$s]:--} |"); done
  printf '%s\n' "${summary[@]}" >"$out/summary.md"
  local pairs=()
  for s in "${stages[@]}"; do pairs+=("$s" "${result[$s]:-not run}" "${seconds_taken[$s]:-}"); done
  "$python" - "$out" "${pairs[@]}" <<'PYEOF'
import json, os, sys

out, rest = sys.argv[1], sys.argv[2:]
stages = {rest[i]: {"result": rest[i + 1], "seconds": int(rest[i + 2]) if rest[i + 2] else None}
          for i in range(0, len(rest), 3)}
summary = {"stages": stages}
bench = os.path.join(out, "bench.json")
if os.path.exists(bench):
    checks = json.load(open(bench))["checks"]
    summary["bench_checks"] = checks
    with open(os.path.join(out, "summary.md"), "a") as f:
        f.write("\nBenchmark targets (share of copy bandwidth or time ratio, then the target):\n\n")
        for c in checks:
            value = "-" if c["value"] is None else f"{c['value']:.2f}"
            f.write(f"- {c['family']} {c['case']}: {value} (>= {c['target']}) {c['verdict']}\n")
json.dump(summary, open(os.path.join(out, "summary.json"), "w"), indent=1)
PYEOF
  echo
  say "summary (also in $out/summary.md)"
  cat "$out/summary.md"
}

main "$@"
