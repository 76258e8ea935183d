# shellcheck shell=bash disable=SC2034  # sets globals (build, binary, tmp, threads, python, cpu, commit) for the runner
# The set-up every bench/run_*.sh does around its benchmark binaries; sourced, not run:
#   source "$(dirname "${BASH_SOURCE[0]}")/runner_common.sh"
# Sourcing sets `root` (the repository root). Then:
#   runner_setup BUILD_DIR NAME...   `build` (BUILD_DIR, relative to the root unless absolute), `binary`
#                                    ($build/bench/<first NAME>) and `tmp` (a temporary folder removed on exit);
#                                    exits 1 with a build hint when $build/bench/<NAME> is not there, for each NAME
#                                    (a benchmark binary and its CMake target have the same name)
#   runner_cpu_setup NAME            runner_setup of BUILD (default build) for the CPU runners, plus `threads`
#                                    (THREADS, default 2, exported as OMP_NUM_THREADS and OPENBLAS_NUM_THREADS)
#                                    and `python` (/usr/bin/python3: the baselines' packages are the system's)
#   runner_gbench BINARY FILE ARG... runs the Google Benchmark BINARY with ARG... (the benchmark's own flags, or
#                                    Google Benchmark's: later ones override), 3 repetitions reported as their
#                                    aggregates (mean, median, ...), JSON into FILE
#   runner_loadavg                   prints the 1, 5 and 15 minute load averages
#   runner_commit                    sets `commit`: the short HEAD commit, "+dirty" with uncommitted changes
#                                    (without git: $REMATCH_COMMIT, else "unknown")
#   runner_machine_info              sets `cpu` (the CPU's model name, empty when unknown) and `commit`

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

runner_setup() {
  build="$1"
  shift
  [[ "$build" = /* ]] || build="$root/$build"
  binary="$build/bench/$1"
  local name
  for name in "$@"; do
    if [[ ! -x "$build/bench/$name" ]]; then
      echo "error: $build/bench/$name not found; build it with: cmake --build $build --target $name" >&2
      exit 1
    fi
  done
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
}

runner_cpu_setup() {
  threads="${THREADS:-2}"
  python=/usr/bin/python3
  runner_setup "${BUILD:-build}" "$1"
  export OMP_NUM_THREADS="$threads" OPENBLAS_NUM_THREADS="$threads"
}

runner_gbench() {
  local program="$1" output="$2"
  shift 2
  "$program" --benchmark_format=json --benchmark_repetitions=3 --benchmark_report_aggregates_only=true "$@" >"$output"
}

runner_loadavg() {
  cut -d' ' -f1-3 /proc/loadavg
}

runner_commit() {
  if ! commit="$(git -C "$root" rev-parse --short HEAD 2>/dev/null)"; then
    # A copy without .git (the GPU machine's): the commit tools/gpu_check.sh read from the prebuilt binaries.
    commit="${REMATCH_COMMIT:-unknown}"
    return
  fi
  if [[ -n "$(git -C "$root" status --porcelain 2>/dev/null)" ]]; then commit="$commit+dirty"; fi
}

runner_machine_info() {
  cpu="$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //' || true)"
  runner_commit
}
