#!/usr/bin/env bash
# Fuzzes every target of a REMATCH_FUZZ build for a bounded time, two at a time, and fails when one finds
# something. Each starts from its committed seeds (fuzz/corpus/<target>, read only: new inputs go to a scratch
# copy under the build folder) and its regressions (fuzz/regressions/<target>), which libFuzzer runs first.
#   fuzz/run.sh BUILD_DIR SECONDS [TARGET...]        e.g. fuzz/run.sh build-asan 20
# FUZZ_SEED=N fixes libFuzzer's random seed (CI does, so that a commit fuzzes the same inputs every time, as far
# as the time allows); unset, each run draws a new one and explores elsewhere. Without TARGETs every target runs
# except those in FUZZ_SKIP (space-separated names).
# A finding leaves the input as BUILD_DIR/fuzz-findings/<target>-crash-<sha1> (or leak-, timeout-, oom-) and the
# log as BUILD_DIR/fuzz-findings/<target>.log; the log's tail is printed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build=${1:?usage: fuzz/run.sh BUILD_DIR SECONDS [TARGET...]}
seconds=${2:?usage: fuzz/run.sh BUILD_DIR SECONDS [TARGET...]}
shift 2
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for dir in "$root"/fuzz/corpus/*/; do
    target="$(basename "$dir")_fuzz"
    [[ " ${FUZZ_SKIP:-} " == *" $target "* ]] || targets+=("$target")
  done
fi
findings="$build/fuzz-findings"
mkdir -p "$findings"
# No recovery from undefined behaviour (the build says so too); leaks count as findings, except libhdf5's own.
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export ASAN_OPTIONS=detect_leaks=1
export LSAN_OPTIONS=suppressions="$root/fuzz/lsan.supp"
export OMP_NUM_THREADS=1

fuzz_one() {
  local target=$1 name=${1%_fuzz}
  local scratch="$build/fuzz-corpus/$name"
  mkdir -p "$scratch"
  local dirs=("$scratch" "$root/fuzz/corpus/$name")
  [ -d "$root/fuzz/regressions/$name" ] && dirs+=("$root/fuzz/regressions/$name")
  # -timeout: one input running 10 s is a hang; -rss_limit_mb: a 2 GB process is an allocation the file asked for.
  local log="$findings/$target.log"
  if "$build/fuzz/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -seed="${FUZZ_SEED:-0}" -dict="$root/fuzz/json.dict" -artifact_prefix="$findings/$target-" "${dirs[@]}" \
      >"$log" 2>&1; then
    echo "$target: $(grep -aoE '^#[0-9]+' "$log" | tail -n 1) runs, no finding"
  else
    echo "$target: FINDING (log: $log)"
    tail -n 60 "$log"
    return 1
  fi
}
export -f fuzz_one
export build seconds root findings

printf '%s\n' "${targets[@]}" | xargs -P 2 -I{} bash -c 'fuzz_one {}'
