#!/usr/bin/env bash
# Rehearses stages of tools/gpu_check.sh on the CUDA emulator (docs/cuda_emulator.md, "Rehearsing the GPU check"):
# the stages run against BUILD, a folder configured with -DREMATCH_CUDA=EMULATE (-DREMATCH_MPI=ON for dist), with a
# stand-in nvidia-smi first on PATH that lists the emulator's devices. So the code gpu_check.sh runs only when a
# GPU is listed runs here: a test that skips for want of a device fails the stage, the dist stage's GPU cases
# (tests/parallel/data_parallel_gpu.sh: mpi ranks sharing the device, nccl on the emulator's NCCL), and the
# summary (BUILD/check/summary.md, summary.json) is written as on the machine.
#
# Usage: tools/cuda_emu/rehearse_gpu_check.sh BUILD STAGE...
#   STAGE: tests, dist, large, methods, demo, cpu-tests (the others: build would configure BUILD for real CUDA;
#   step, score, sinkhorn, sinkhorn-large, ops and python measure against PyTorch or cuBLAS on the GPU, which this
#   machine lacks; memcheck and racecheck need compute-sanitizer and a GPU)
# The targets the stages need are built first. Env: REMATCH_CUDA_EMU_DEVICES (default 1, as on the lent machine;
# 2 or more adds the dist stage's nccl cases on 2 ranks), BUDGET (seconds, default 3600), JOBS (default nproc),
# TEST_TIMEOUT (seconds a test may take, default 1200: the method-level GPU tests take minutes here), DIMS and
# METHODS (bench/run_methods_cuda.sh's; DIMS default reduced: at that size triplet on SGR already takes ~5
# minutes here).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
usage() {
  sed -n '9,/^set /{/^set /d;p}' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
(($# >= 2)) || usage
build="$(cd "$1" 2>/dev/null && pwd)" || { echo "rehearse_gpu_check: no folder $1" >&2; exit 2; }
shift
if ! grep -q '^REMATCH_CUDA:STRING=EMULATE$' "$build/CMakeCache.txt" 2>/dev/null; then
  echo "rehearse_gpu_check: $build is not configured with -DREMATCH_CUDA=EMULATE (docs/cuda_emulator.md, Use)" >&2
  exit 2
fi

# With MPI the GPU tests include ParallelMpiCudaEmulated.*, which run parallel_mpi_collectives.
mpi=""
cmake --build "$build" --target help 2>/dev/null | grep -q 'parallel_mpi_collectives' && mpi=parallel_mpi_collectives
tests="tensor_tests autograd_tests nn_tests ot_tests models_tests train_tests $mpi"
targets=""
for s in "$@"; do
  case "$s" in
    tests | large) targets+=" $tests" ;;
    cpu-tests) targets+=" $tests rematch_cli" ;;
    methods | demo) targets+=" rematch_cli" ;;
    dist)
      [[ -n "$mpi" ]] || { echo "rehearse_gpu_check: dist needs $build configured with MPI (-DREMATCH_MPI=ON)" >&2; exit 2; }
      targets+=" rematch_cli parallel_mpi_collectives" ;;
    *)
      echo "rehearse_gpu_check: stage $s cannot be rehearsed here (the usage says why)" >&2
      usage ;;
  esac
done
# shellcheck disable=SC2086  # targets are words
cmake --build "$build" -j "${JOBS:-$(nproc)}" --target $targets

shim="$(mktemp -d)"
trap 'rm -rf "$shim"' EXIT
cat >"$shim/nvidia-smi" <<'EOF'
#!/bin/sh
# The CUDA emulator's devices, as nvidia-smi lists GPUs (tools/cuda_emu/rehearse_gpu_check.sh).
n=${REMATCH_CUDA_EMU_DEVICES:-1}
case "$*" in
  -L) i=0; while [ "$i" -lt "$n" ]; do echo "GPU $i: CUDA emulator, tools/cuda_emu (UUID: GPU-emulated-$i)"; i=$((i + 1)); done ;;
  *compute_mode*) echo "Default" ;;
  *noheader*) echo "CUDA emulator, tools/cuda_emu" ;;
  *--query-gpu*) echo "name"; echo "CUDA emulator, tools/cuda_emu" ;;
  *) echo "CUDA emulator (tools/cuda_emu/rehearse_gpu_check.sh): no real GPU" ;;
esac
EOF
chmod +x "$shim/nvidia-smi"
export REMATCH_CUDA_EMU_DEVICES="${REMATCH_CUDA_EMU_DEVICES:-1}"
export DIMS="${DIMS:-reduced}"  # bench/run_methods_cuda.sh (methods, demo) at its CPU-sized smoke size
PATH="$shim:$PATH" BUILD_DIR="$build" BUDGET="${BUDGET:-3600}" JOBS="${JOBS:-$(nproc)}" \
  TEST_TIMEOUT="${TEST_TIMEOUT:-1200}" "$root/tools/gpu_check.sh" "$@"
