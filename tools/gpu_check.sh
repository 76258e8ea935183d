#!/usr/bin/env bash
# The GPU check of rematch, cut into slices that each fit one lent GPU machine's 15 minutes of device time (an
# H100 or H200, 16 cores, PyTorch in its image; every start, failed start, idle wait and close counts, no
# machine starts with under 4 minutes left, a command runs at most 10 minutes, a machine stays warm 30 s after
# a call). Whenever a GPU machine is lent, the next slice not yet done comes first (bench/RESULTS.md, GPU,
# "Slices done" says which):
#
#   slice 1  build; the GPU tests; the three headline measurements: the SGR and SAF training step at full size
#            against the official per-caption loop (time, peak GPU memory; bench/run_sgraf_step.sh), scoring
#            1,000 images × 5,000 captions with SGR through `rematch score --device cuda` against the official
#            encode + shard_attn_scores (bench/run_score.sh), and the fused Sinkhorn on 129×129 at B = 1, 128,
#            1024 against PyTorch eager (CASES=batch bench/run_sinkhorn_cuda.sh); then (its second call) the
#            data-parallel check (dist, docs/distributed.md §5: mpirun from tools/mpi_bundle.sh, 2 ranks
#            --dist_backend mpi and 1 rank --dist_backend nccl against one process on the GPU;
#            tests/parallel/data_parallel_gpu.sh) and the Python module on CUDA tensors (python: built there,
#            its GPU tests, the OT losses' forward + backward, bench/python_ot_grad.py --device cuda)
#   slice 2  the op benchmarks (elementwise bandwidth, softmax, matmul vs cuBLAS, Bi-GRU vs cuDNN;
#            bench/run_cuda.sh), the large OT problems against their bound (CASES=large
#            bench/run_sinkhorn_cuda.sh), one run per method at full size (pairs/s, CPU = GPU first losses;
#            DEMO=off bench/run_methods_cuda.sh), the SGR and SAF step within a memory budget against the official
#            loop (peak GPU memory <= 0.5x, docs/memory.md §4: DEVICE=cuda bench/run_sgraf_step.sh --memory_budget=1),
#            the Large test suites, and the GPU demo's time (DEMO=only:
#            stopped at its time cap and projected; then retune its GPU size to finish in a few minutes)
#   slice 3  compute-sanitizer memcheck, then racecheck, over the GPU tests (both resume suite by suite), then
#            whatever slices 1-2 found slow, fixed and measured again (its stages named after --slice 3)
#
# `tools/gpu_check.sh --plan SLICE` prints a slice's device-tool calls (command, carry, timeout_s) and their
# time estimate. A slice is at most two calls: the first at most ~9 minutes with the machine's start, the
# second only when status says warm and budget_left_s >= 240, made at once. `--slice N` skips what an earlier
# call of the same slice finished (stamps in build-gpu/slice-done/), so the second call is the first's command
# with the budget that is left. Stage times below are estimates (no GPU has run them yet): after slice 1,
# replace them (the `est` table) with the seconds column of summary.md. With the prebuilt binaries, as
# estimated (machine start 60-120 s, each call's transfer ~15 s):
#   slice 1  call 1 (BUDGET=395, timeout_s=420): build 15 + tests 120 + step 120 + score 90 + sinkhorn 45 s:
#            ~7.7 minutes of device time with the start, 9.2 at most; call 2 (at once, warm): dist 75 s, python
#            180 s (its build there ~120 of it, a guess: the engine under the module, 16 jobs) and what call 1
#            left: ~12.5 minutes in all
#   slice 2  call 1: build, ops 120, sinkhorn-large 90, methods (~200, cut to what is left); call 2
#            (BUDGET=<left - 75>): large 90, then the demo in the rest (~245 s): ~14.5 minutes in all
#   slice 3  call 1: memcheck, suite by suite, to its budget; call 2: memcheck's rest, racecheck, then the
#            re-measured stages; what is still left goes on in the next session's slice 3
#
# The build, measured here (2026-11-26, 2-core AMD EPYC shared with two other builds, load 7-11; nvcc 13.0,
# sm_90, Release, static librematch, ccache off): every target the slices need (rematch, the six test
# binaries, sgraf_step_bench, sinkhorn_cuda_bench, cuda_ops_bench, cuda_gru_bench; no Python module, no CPU-only
# benchmarks) is 287 build steps and 971 s of compiler CPU time (user + sys; 24.7 minutes of wall time with 2
# jobs), the CUDA files 240-290 s of it, the longest step tensor/cuda/elementwise.cu (54-67 s here, 29 s on
# an idle core). Building only a slice's targets saves nothing: the six test binaries pull in the library and
# almost everything else, so slice 1 needs 283 of the 287 steps, slice 2 285, slice 3 279. There, with 16 jobs:
# ~60 s of compiling if it spread perfectly, plus the critical path (elementwise.cu, the library's link, the
# largest test binary's compile and link) and the configure step: ~150 s of device time, in every slice, since
# each slice gets a bare machine.
# Built here instead (`--prebuild`: ~25 minutes cold on the 2 shared cores, ~3 minutes when ccache is warm, of
# which ~3 minutes pack with xz), stripped and packed with the libraries they load: build-gpu-pre/ holds
# prebuilt.tar.xz, 20.9 MB for 65 files, 269 MB unpacked (each binary carries the same ~19 MB of device code,
# which one solid xz stream with a 192 MiB dictionary stores once). A call then carries 52.6 MB of the 64 MiB
# allowed: the working tree 5.4 MB, build-gpu-deps 26.3 MB (kept for the fallback), build-gpu-pre 20.9 MB.
# With the MPI and NCCL backends (below; 2026-11-26, commit 09c5dfd): prebuilt.tar.xz 23.1 MB for 74 files
# (parallel_mpi_collectives, Open MPI's libraries), 300 MB unpacked, packed in 86 s; build-gpu-deps 29.1 MB with the
# Open MPI bundle (2.7 MB); a call carries 58.7 MB (56 MiB of 64): tree 6.6, build-gpu-deps 29.1, build-gpu-pre
# 23.1. Turning MPI and NCCL on changes the compile command of 166 of the 332 compiled files (rematch_train 91,
# train_tests 67, rematch_parallel 6, the CLI's main and parallel_mpi_collectives: every file of a target that links
# rematch_parallel gets Open MPI's include folders and REMATCH_WITH_MPI/NCCL), so ccache misses them once: 852 of
# the 1456 s of compile steps (2 jobs, nice, load 2-5); the library's files and every CUDA file keep their
# command (ccache hits). That switch, with the sources changed since the last prebuild: 731 s of wall time
# (875 s CPU) with 2 jobs; after it, --prebuild costs what it did (~3 minutes warm, mostly xz).
# There, unpacking and the check take ~2 s (measured here; ~15 s counted with the larger transfer).
# So the slices use the prebuilt binaries: ~2 minutes of every slice's 15 go to measurements instead.
#
# Prebuilt binaries (`tools/gpu_check.sh --prebuild`, here, right before the first call: the device gets the
# working tree as it is then). They are built in build-gpu/ here (the name the device uses), CUDA on, sm_90,
# Release, the MPI and NCCL backends on (libmpi and its libraries go into lib/, so the binaries start without
# the bundle and train as one process without mpirun, which --prebuild checks; NCCL is dlopen'ed at run time
# from LD_LIBRARY_PATH, which the dist stage points at the pip package nvidia-nccl-cu13 of the machine's
# Python; mpirun comes from build-gpu-deps/openmpi-bundle.tar.xz, tools/mpi_bundle.sh, packed by --prebuild
# when missing), -march=x86-64-v3 instead of -march=native (the device's CPU is another), RPATH $ORIGIN/lib and
# $ORIGIN/../lib (DT_RPATH, so the libraries' own dependencies are found there too), stripped; lib/ holds every
# library they load but the C/C++ runtime (glibc, libstdc++, libgcc_s), the NVIDIA driver and cuBLAS (opened
# at first use from the machine's CUDA: tensor/cuda/cublas_api.h). build-gpu-pre/manifest.txt records the
# commit, a hash of every source file the build reads (source_hash below), this checkout's path and the
# numbers above. The device side (build stage) uses them when the hash matches its tree, the CPU has AVX2,
# FMA and BMI2, and this checkout's path is the device's checkout or can be made a link to it (the ctest files
# and the test fixtures' path hold absolute paths); it unpacks them into build-gpu/ (once per machine), and
# then the check that decides: `rematch --help`, `tensor_tests --gtest_list_tests` and `sinkhorn_cuda_bench
# --benchmark_list_tests` must run (the loader finds every library, glibc and libstdc++ are new enough: the
# device runs another image; built on Debian 12 they need glibc >= 2.35 and GLIBCXX_3.4.29, GCC 11's
# libstdc++, so Ubuntu 22.04 or later). Anything else, and it builds there as before (JOBS jobs, only the targets of
# the stages asked for, build-gpu-deps/ for the libraries the machine lacks) and says why in the summary.
#
# Usage:
#   tools/gpu_check.sh --plan [SLICE]          here: what slice SLICE (1, 2, 3; all without) runs, and its time
#   tools/gpu_check.sh --prebuild              here: build, strip and pack the binaries into build-gpu-pre/
#   tools/gpu_check.sh --slice N [STAGE...]    there: slice N's stages (then STAGE...), skipping those an
#                                              earlier call of this machine finished
#   tools/gpu_check.sh STAGE...                there: these stages, in this order
#
# Stages (each needs the build; the targets it needs are built):
#   build           the prebuilt binaries, or configure build-gpu (CUDA on, sm_90, Release, no Python module; MPI
#                   when the Open MPI bundle came along, NCCL when the machine's Python package has nccl.h) and
#                   build the targets of the stages asked for; resumes where a call stopped
#   tests           the GPU tests (ctest -R 'Cuda|CUDA', the suites ending in "Large" left out), 16 in parallel
#   step            SGR and SAF training step, full size, vs the official per-caption loop and its batched
#                   variant: time and peak GPU memory (DEVICE=cuda bench/run_sgraf_step.sh)
#   score           `rematch score --device cuda`, 1,000 × 5,000, vs the official encode + shard_attn_scores
#                   (DEVICE=cuda bench/run_score.sh)
#   sinkhorn        fused Sinkhorn 129×129, B = 1, 128, 1024, vs PyTorch eager (CASES=batch run_sinkhorn_cuda.sh)
#   python          the Python module, built there for the machine's python3 in $BUILD_DIR-py (the prebuilt
#                   binaries cannot hold it), its GPU tests (test_cuda.py, test_zero_copy.py, test_ot_loss.py; a
#                   CUDA skip with a GPU listed fails) and bench/python_ot_grad.py --device cuda (python.log,
#                   python_ot_grad.log)
#   dist            data-parallel training under mpirun (docs/distributed.md §5;
#                   tests/parallel/data_parallel_gpu.sh): Open MPI from build-gpu-deps/openmpi-bundle.tar.xz
#                   (tools/mpi_bundle.sh; unpacked into build-gpu/openmpi, restricted to one node's shared memory),
#                   libnccl.so.2 from the machine's Python package
#                   (nvidia-nccl-cu13) on LD_LIBRARY_PATH; parallel_mpi_collectives mpi cuda on 2 ranks (one GPU
#                   shared, tensors staged through host memory) and nccl cuda on 1 rank; training compared
#                   record by record (metrics.jsonl) with one process --device cuda: 2 ranks --dist_backend mpi
#                   and 1 rank --dist_backend nccl, triplet/SGR and l2rm/SAF (triplet/SAF, l2rm/SGR,
#                   infonce/SGR when time is left), the max relative difference per case against a tolerance
#                   (2e-5, l2rm 2e-4: the CPU test's, until the first GPU run calibrates them); 2 CPU ranks as
#                   the control. dist.json, dist.log. Without a GPU the GPU cases are reported skipped ("no GPU
#                   listed by nvidia-smi") and only the control runs
#   ops             elementwise bandwidth, row softmax, kernels::matmul vs cuBLAS, Bi-GRU vs cuDNN
#                   (bench/run_cuda.sh)
#   sinkhorn-large  43,000×11, 32,000×201, 32,768² per sweep vs their bound (CASES=large run_sinkhorn_cuda.sh)
#   methods         one synthetic run per method at full model size (DEMO=off bench/run_methods_cuda.sh)
#   large           the suites ending in "Large" (beyond-32-bit indexing, large N×K and N×N Sinkhorn), 2 at a time
#   demo            `rematch demo --device cuda` until the stage's time is up, then its speed and projected time
#                   (DEMO=only bench/run_methods_cuda.sh)
#   memcheck        compute-sanitizer memcheck over the GPU tests but the "Large" suites, one run per suite; a
#                   suite whose run finished is recorded in build-gpu/memcheck/ and not run again until its
#                   binary changes (rm -r build-gpu/memcheck to start over), so the stage resumes where a call
#                   stopped. Where compute-sanitizer refuses the device ("Device not supported", as on a gVisor
#                   runtime) memcheck is reported unavailable, not failed.
#   racecheck       the same with compute-sanitizer's racecheck (shared-memory hazards), stamps in build-gpu/racecheck/
#   cpu-tests       every other test but the slow CPU behaviour tests (BehaviourTest.*, RcslBehaviourTest.*,
#                   *Study*, 5-20 minutes each); CI runs them: never worth device time, here for completeness
#   headline = step score sinkhorn; bench = ops sinkhorn sinkhorn-large; workloads = step score methods demo;
#   all = every stage but racecheck (far more than one call: use the slices)
#
# GPU tests: a test needing a device has "Cuda" or "CUDA" in its suite or test name (GRUCuda.OneStepOnly) and
# starts with SKIP_WITHOUT_CUDA() (tests/test_util.h), which skips with "needs a CUDA device: <why>". On a
# machine whose `nvidia-smi -L` lists a GPU such a skip is a failure (the stage says why CUDA saw no device),
# as is a CUDA benchmark that skips. A GPU test too slow for memcheck goes in a suite whose name ends in
# "Large" (SinkhornCudaLarge).
#
# Time. The summary prints before BUDGET seconds (default 395) from the start of the command: each stage gets
# what is left of it minus the least time (`need` below) of the later stages that would fit after it took its
# estimate (`est`); a stage that cannot get its least is not started and says so ("the next call runs it"); a
# stage cut short says so. With --slice, a stage that finished (passed or failed) is stamped in
# build-gpu/slice-done/ and skipped by the next call on the same machine; build, memcheck and racecheck resume
# within themselves.
#
# Output: the stage logs (build.log with the configure step; tests.log with the tests, large and cpu-tests
# stages; memcheck.log, racecheck.log; one <runner>.log per measurement), the measurements (sgraf_step.json,
# score.json, sinkhorn_cuda_batch.json, bench.json, sinkhorn_cuda_large.json, methods.json, demo.json, dist.json
# with dist.log) and the
# summary (summary.md, summary.json: every stage's result, earlier calls' too, and every runner's checks,
# value >= target) are written to build-gpu/check, emptied when a call starts. With $OUT set (the device
# tool's output folder, which brings back at most 8 files) the call ends by copying summary.md and
# summary.json there with check.tar.gz, an archive of the whole folder. The exit status is 1 when a stage
# failed or was left for a later call.
# Env: JOBS (default 16), BUDGET (seconds, default 395), BUILD_DIR (default build-gpu), PYTHON (default
# python3), SANITIZER (compute-sanitizer to use; default: the one on PATH or under /usr/local/cuda),
# NO_PREBUILT=1 (build there even when prebuilt binaries came along), PREBUILD_JOBS (--prebuild; default nproc),
# TEST_TIMEOUT (seconds a test may take in the ctest stages; default each stage's own: 120 tests, 300 large, 240
# cpu-tests; the CUDA emulator's rehearsal, tools/cuda_emu/rehearse_gpu_check.sh, raises it).
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root" || exit 1
build_dir="${BUILD_DIR:-build-gpu}"
jobs="${JOBS:-16}"
budget="${BUDGET:-395}"
python="${PYTHON:-python3}"
prebuilt_dir="$root/build-gpu-pre"
mpi_bundle="$root/build-gpu-deps/openmpi-bundle.tar.xz"  # tools/mpi_bundle.sh pack (tools/gpu_deps.sh fetch)
start=$SECONDS

# Seconds each stage is expected to take there (est; for --plan: estimates until a GPU run replaces them) and
# the least it needs to be worth starting (need; what earlier stages of a call leave to it).
declare -A est=([build]=15 [tests]=120 [step]=120 [score]=90 [sinkhorn]=45 [dist]=75 [python]=180 [ops]=120
                [sinkhorn-large]=90 [methods]=200 [memory]=90 [large]=90 [demo]=150 [memcheck]=420
                [racecheck]=420 [cpu-tests]=150)
declare -A need=([build]=0 [tests]=60 [step]=90 [score]=75 [sinkhorn]=40 [dist]=45 [python]=150 [ops]=90
                 [sinkhorn-large]=60 [methods]=120 [memory]=75 [large]=60 [demo]=60 [memcheck]=60 [racecheck]=60
                 [cpu-tests]=90)
build_there_est=150  # the build stage when it builds there (16 jobs; see the header)
# Stages no earlier stage keeps time for: dist and python are slice 1's second call's, so call 1's stages keep the
# slack they had without them; they run in call 1 only when they left them their least.
declare -A unreserved=([dist]=1 [python]=1)
all_stages=(build tests step score sinkhorn dist python ops sinkhorn-large methods memory large demo memcheck
            racecheck cpu-tests)
declare -A slice_stages=([1]="build tests step score sinkhorn dist python"
                         [2]="build ops sinkhorn-large methods memory large demo"
                         [3]="build memcheck racecheck")
declare -A slice_title=([1]="build, the GPU tests, the headline measurements, the data-parallel check, the Python module"
                        [2]="op benchmarks, large OT problems, every method at full size, the step within a memory budget, Large suites, GPU demo"
                        [3]="compute-sanitizer memcheck and racecheck over the GPU tests, then re-measurements")

# CMake targets. Every ctest stage needs all six test binaries (a missing one is a failing NOT_BUILT test).
test_targets="tensor_tests autograd_tests nn_tests ot_tests models_tests train_tests"
declare -A stage_targets=([tests]="$test_targets" [large]="$test_targets" [memcheck]="$test_targets"
                          [racecheck]="$test_targets" [cpu-tests]="$test_targets rematch_cli"
                          [step]="sgraf_step_bench" [memory]="sgraf_step_bench" [score]="rematch_cli" [sinkhorn]="sinkhorn_cuda_bench"
                          [ops]="cuda_ops_bench cuda_gru_bench" [sinkhorn-large]="sinkhorn_cuda_bench"
                          [methods]="rematch_cli" [demo]="rematch_cli" [dist]="rematch_cli parallel_mpi_collectives")
prebuilt_targets="rematch_cli $test_targets sgraf_step_bench sinkhorn_cuda_bench cuda_ops_bench cuda_gru_bench
                  parallel_mpi_collectives"
# The configuration of both builds, here and there: no Python module. The multi-process backends: here MPI
# (Debian's Open MPI, whose libraries go into lib/ like the others; mpirun comes from tools/mpi_bundle.sh) and
# NCCL (dlopen'ed at run time: nothing of it travels) are on; there (the fallback) MPI when the bundle came
# along, NCCL when the machine's Python has NCCL's headers and library (dist_args_there).
device_cmake_args=(-DREMATCH_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release -DREMATCH_PYTHON=OFF)
prebuild_dist_args=(-DREMATCH_MPI=ON -DREMATCH_NCCL=ON)

# Test selection, by ctest name (Suite.Test) and by gtest filter.
gpu_regex='Cuda|CUDA'
large_regex='Large\.'
slow_cpu_regex='BehaviourTest\.|Study'
memcheck_filter='*Cuda*:*CUDA*-*Large.*'

say() { echo "==== [$((SECONDS - start)) s] $*"; }

# A hash of every file the build reads (sources, headers, CMake files; not the test fixtures, read at run
# time), the same here and there: prebuilt binaries are used only for the tree they were built from.
source_hash() {
  (cd "$root" && find CMakeLists.txt cmake tensor autograd nn ot models parallel viz train tests bench -type f \
    \( -name '*.cpp' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' -o -name 'CMakeLists.txt' -o -name '*.cmake' \
    -o -name '*.in' \) -not -path 'tests/fixtures/*' -print0 2>/dev/null | LC_ALL=C sort -z |
    xargs -0 sha256sum | sha256sum | cut -c1-16)
}

manifest_get() { sed -n "s/^$1=//p" "$2" 2>/dev/null | head -n 1; }

# =============================================================================================================
# --plan: the device-tool calls of a slice and their time estimate.
# =============================================================================================================
carry_json='["build-gpu-pre", "build-gpu-deps"]'

# "stage est" lines of a slice's stages with the build at $1 seconds.
plan_stage_line() {
  local build_s="$1" s line="" total=0 e
  shift
  for s in "$@"; do
    e="${est[$s]}"
    [[ "$s" == build ]] && e="$build_s"
    line+="${line:+ + }$s $e"
    total=$((total + e))
  done
  echo "$line = $total s"
}

# Splits a slice's stages between call 1 (BUDGET b1) and call 2: prints the stages of call 1 and of call 2.
plan_split() {
  local build_s="$1" b1="$2" s e t=0 first=() second=()
  shift 2
  for s in "$@"; do
    e="${est[$s]}"
    [[ "$s" == build ]] && e="$build_s"
    if ((${#second[@]} == 0 && t + need[$s] <= b1 - 10)); then
      first+=("$s")
      t=$((t + e))
    else
      second+=("$s")
    fi
  done
  echo "${first[*]}|${second[*]}|$t"
}

print_plan() {
  local n="$1" stages b1=395 t1=420 first second t
  read -r -a stages <<<"${slice_stages[$n]}"
  echo "Slice $n: ${slice_title[$n]}"
  case "$n" in
    1) echo "  Stages: build, tests (the GPU tests), step (SGR and SAF full-size training step vs the official"
       echo "  per-caption loop: time, peak memory), score (rematch score --device cuda, 1,000 x 5,000, vs the official"
       echo "  encode + shard_attn_scores), sinkhorn (fused Sinkhorn 129x129 at B = 1, 128, 1024 vs PyTorch eager),"
       echo "  dist (docs/distributed.md §5: mpirun from build-gpu-deps/openmpi-bundle.tar.xz; collectives mpi cuda on 2 ranks, nccl"
       echo "  cuda on 1; triplet/SGR and l2rm/SAF: 2 ranks --dist_backend mpi and 1 rank nccl vs one process on the"
       echo "  GPU, every metrics record, max relative difference per case; 2 CPU ranks as the control; dist.json),"
       echo "  python (the Python module built there for the machine's python3, its GPU tests: rematch.ot's losses and"
       echo "  gradients on CUDA tensors against the CPU, DLPack without a copy; bench/python_ot_grad.py --device cuda)." ;;
    2) echo "  Stages: build, ops (elementwise bandwidth, softmax, matmul vs cuBLAS, Bi-GRU vs cuDNN), sinkhorn-large"
       echo "  (large OT problems vs their bound), methods (one run per method at full size), memory (the SGR and SAF"
       echo "  step caption by caption, --memory_budget=1, vs the official loop: peak GPU memory <= 0.5x, time >= 3x;"
       echo "  docs/memory.md §4), large (the Large suites), demo (the GPU demo until its time is up: speed and projected"
       echo "  time; then retune its GPU size)." ;;
    3) echo "  Stages: build, memcheck, racecheck (both resume suite by suite); then what slices 1-2 found slow, fixed:"
       echo "  name those stages after --slice 3 (e.g. --slice 3 step ops) and they run once the sanitizers are done." ;;
  esac
  echo "  Here first, no device time: status (can_start_another true); tools/gpu_deps.sh fetch once (26 MB,"
  echo "  build-gpu-deps/, for the fallback build, and the Open MPI bundle, 2.7 MB, for dist); tools/gpu_check.sh"
  echo "  --prebuild (build-gpu-pre/, with the MPI and NCCL backends, see the header)."
  IFS='|' read -r first second t <<<"$(plan_split "${est[build]}" "$b1" "${stages[@]}")"
  echo "  Call 1: run(command=\"BUDGET=$b1 tools/gpu_check.sh --slice $n\", carry=$carry_json, timeout_s=$t1)"
  echo "          machine start 60-120 s, then $(plan_stage_line "${est[build]}" "${stages[@]}")"
  if [[ -n "$second" ]]; then
    echo "          fits in BUDGET $b1: $first (~$((t < b1 ? t : b1)) s); left for call 2: $second"
  fi
  local end1_lo=$(((60 + (t < b1 ? t : b1) + 15) / 6)) end1_hi=$(((120 + t1 + 15) / 6))
  echo "          device time at its end: $((end1_lo / 10)).$((end1_lo % 10)) min expected," \
    "$((end1_hi / 10)).$((end1_hi % 10)) at most (start 120 s + timeout_s + transfers)"
  echo "  Call 2, only when status then says warm true and budget_left_s L >= 240, at once (30 s warm):"
  echo "          run(command=\"BUDGET=<L - 75> tools/gpu_check.sh --slice $n\", carry=$carry_json, timeout_s=<L - 45>)"
  echo "          expected L ~ 420: BUDGET=345, timeout_s=375; at worst L ~ 330: BUDGET=255, timeout_s=285."
  echo "          It skips what call 1 finished (build-gpu/slice-done/) and runs the rest${second:+ ($second)}."
  case "$n" in
    1) echo "          It runs dist (~${est[dist]} s, at least ${need[dist]}) and python (~${est[python]} s, at least ${need[python]})"
       echo "          after what call 1 left; when call 1 finished everything (stages faster than their estimates):"
       echo "          skip call 2 (give_back)." ;;
    2) echo "          The demo gets what is left (~$((420 - 75 - 10 - est[memory] - est[large])) s with L = 420, at least ${need[demo]}): its speed and projection." ;;
    3) echo "          memcheck and racecheck go on where call 1 stopped, then the re-measured stages." ;;
  esac
  IFS='|' read -r first second t <<<"$(plan_split "$build_there_est" "$b1" "${stages[@]}")"
  echo "  When the prebuilt binaries cannot run there (the summary's build line says why), the build stage builds"
  echo "  there: ~$build_there_est s instead of ${est[build]}: $(plan_stage_line "$build_there_est" "${stages[@]}");"
  echo "  call 1 then runs $first, call 2 ${second:-nothing}."
  echo "  Then give_back (a warm machine's idle time counts), fetch nothing more, and record the numbers in"
  echo "  bench/RESULTS.md (GPU) with device, date and commit; when all the slice's stages are done, its row in"
  echo "  'Slices done'. A call that finds no warm machine starts bare: the stamps went with the old one, so"
  echo "  the slice starts again (prebuilt binaries make that cheap); with under 4 minutes left, stop."
}

# =============================================================================================================
# --prebuild (here): the binaries the slices need, built, stripped and packed with their libraries.
# =============================================================================================================
prebuild() {
  local dir="$root/build-gpu" jobs_here="${PREBUILD_JOBS:-$(nproc)}"
  local launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  # Open MPI for the dist stage's mpirun there (build-gpu-deps/, carried), when it is not packed yet.
  if [[ ! -f "$mpi_bundle" ]]; then
    say "pack Open MPI into $mpi_bundle (tools/mpi_bundle.sh)"
    "$root/tools/mpi_bundle.sh" pack "$mpi_bundle" || return 1
  fi
  say "configure $dir (CUDA on, sm_90, Release, MPI and NCCL backends, -march=x86-64-v3, RPATH \$ORIGIN/lib)"
  mkdir -p "$dir"
  # shellcheck disable=SC2016  # $ORIGIN is for the loader, literally
  cmake -S "$root" -B "$dir" -G Ninja "${device_cmake_args[@]}" "${prebuild_dist_args[@]}" -DREMATCH_NATIVE=OFF \
    -DCMAKE_CXX_FLAGS=-march=x86-64-v3 "${launcher[@]}" \
    -DCMAKE_BUILD_RPATH_USE_ORIGIN=ON '-DCMAKE_BUILD_RPATH=$ORIGIN/lib;$ORIGIN/../lib' \
    -DCMAKE_EXE_LINKER_FLAGS=-Wl,--disable-new-dtags >"$dir/configure.log" 2>&1 ||
    { tail -n 30 "$dir/configure.log"; echo "error: configure failed ($dir/configure.log)" >&2; return 1; }
  say "build with $jobs_here jobs: $prebuilt_targets"
  local t0=$SECONDS
  # shellcheck disable=SC2086  # the target list is words
  ninja -C "$dir" -j "$jobs_here" $prebuilt_targets || { echo "error: the build failed" >&2; return 1; }
  local build_s=$((SECONDS - t0))
  local stage="$dir/prebuilt-stage"
  rm -rf "$stage"
  mkdir -p "$stage/tests" "$stage/bench" "$stage/lib"
  local f
  strip -o "$stage/rematch" "$dir/rematch"
  for f in $test_targets parallel_mpi_collectives; do strip -o "$stage/tests/$f" "$dir/tests/$f"; done
  for f in sgraf_step_bench sinkhorn_cuda_bench cuda_ops_bench cuda_gru_bench; do
    strip -o "$stage/bench/$f" "$dir/bench/$f"
  done
  # ctest's files (absolute paths of this checkout: the device links this path to its own when they differ).
  (cd "$dir" && find . -name CTestTestfile.cmake -o -path './tests/*_tests\[*\]_*.cmake') |
    while read -r f; do mkdir -p "$stage/$(dirname "$f")" && cp "$dir/$f" "$stage/$f"; done
  # Every library the binaries load but the C/C++ runtime, the driver and cuBLAS (opened at first use).
  local libs
  libs="$(cd "$stage" && find . -type f -perm -u+x -exec ldd {} \; 2>/dev/null |
    awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u |
    grep -vE '/(ld-linux[^/]*|libc|libm|libdl|libpthread|librt|libresolv|libutil|libstdc\+\+|libgcc_s|libcuda|libcublas[^/]*)\.so')"
  for f in $libs; do cp -L "$f" "$stage/lib/$(basename "$f")"; done
  strip --strip-unneeded "$stage"/lib/*.so* 2>/dev/null
  # A library's own run path would send the loader back to this machine's folders for its dependencies, before
  # the binaries' RPATH (Debian's libmpi and libopen-rte have RUNPATH /usr/lib/x86_64-linux-gnu/openmpi/lib,
  # where the device has nothing: rematch would not start there): each becomes $ORIGIN, in place.
  "$python" - "$stage"/lib/*.so* <<'PYEOF' || { echo "error: could not rewrite the libraries' run paths" >&2; return 1; }
import struct, sys

def set_origin(path):
    """DT_RPATH/DT_RUNPATH strings of an ELF64 little-endian file rewritten in place to $ORIGIN (NUL-padded: the
    string table keeps its size). Returns the old values."""
    data = bytearray(open(path, "rb").read())
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return []
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    loads, dyn = [], None
    for i in range(phnum):
        p_type, _, p_offset, p_vaddr, _, p_filesz, _, _ = struct.unpack_from("<IIQQQQQQ", data, phoff + i * phentsize)
        if p_type == 1:
            loads.append((p_vaddr, p_offset, p_filesz))
        elif p_type == 2:
            dyn = (p_offset, p_filesz)
    if dyn is None:
        return []
    def off(vaddr):
        for v, o, n in loads:
            if v <= vaddr < v + n:
                return vaddr - v + o
        raise ValueError(f"{path}: address {vaddr:#x} is in no PT_LOAD segment")
    entries, strtab = [], None
    for i in range(dyn[1] // 16):
        tag, val = struct.unpack_from("<qQ", data, dyn[0] + i * 16)
        if tag == 0:
            break
        if tag == 5:
            strtab = val
        elif tag in (15, 29):  # DT_RPATH, DT_RUNPATH
            entries.append(val)
    old = []
    for e in entries:
        start = off(strtab) + e
        end = data.index(0, start)
        old.append(data[start:end].decode())
        if end - start < len(b"$ORIGIN"):
            raise ValueError(f"{path}: its run path {old[-1]!r} is shorter than $ORIGIN")
        data[start:end] = b"$ORIGIN" + b"\0" * (end - start - len(b"$ORIGIN"))
    if old:
        open(path, "wb").write(data)
    return old

for p in sys.argv[1:]:
    o = set_origin(p)
    if o:
        print(f"{p.rsplit('/', 1)[-1]}: run path {', '.join(o)} -> $ORIGIN")
PYEOF
  # Every library but those left out now resolves into lib/ (the RPATH), and the binaries start.
  local stray
  stray="$(cd "$stage" && find . -type f -perm -u+x -exec ldd {} \; 2>/dev/null |
    awk '$2 == "=>" {print $3}' | sort -u | while read -r f; do readlink -m "$f"; done | grep -v "^$stage/lib/" |
    grep -vE '/(ld-linux[^/]*|libc|libm|libdl|libpthread|librt|libresolv|libutil|libstdc\+\+|libgcc_s)\.so')"
  if [[ -n "$stray" ]]; then
    echo "error: the staged binaries load libraries from outside $stage/lib: $stray" >&2
    return 1
  fi
  if ! "$stage/rematch" --help >/dev/null || ! "$stage/tests/tensor_tests" --gtest_list_tests >/dev/null; then
    echo "error: the staged binaries do not start here" >&2
    return 1
  fi
  # Built with MPI, rematch still trains as one process without mpirun (a world of one: MPI is not started).
  local try
  try="$(mktemp -d)"
  if ! (cd "$try" && env -u OMPI_COMM_WORLD_SIZE -u PMI_SIZE -u PMIX_SIZE "$stage/rematch" synth --kind pairs \
          --out d --images 8 --dev_images 4 --test_images 4 --regions 4 --feature_dim 8 >/dev/null &&
        "$stage/rematch" train --method triplet --module_name SGR --num_epochs 1 --data_path d --batch_size 4 \
          --preset f30k --data_name synth_precomp --embed_size 8 --word_dim 8 --sim_dim 8 --progress none \
          --no_plots --run_dir run >train.log 2>&1); then
    tail -n 5 "$try/train.log"
    echo "error: the staged rematch does not train as one process without mpirun" >&2
    rm -rf "$try"
    return 1
  fi
  rm -rf "$try"
  say "the staged rematch trains as one process without mpirun (MPI and NCCL built in, not started)"
  local unpacked_mb
  unpacked_mb="$(du -sm "$stage" | cut -f1)"
  mkdir -p "$prebuilt_dir"
  rm -f "$prebuilt_dir"/prebuilt.tar.xz "$prebuilt_dir"/manifest.txt
  say "pack $(find "$stage" -type f | wc -l) files (${unpacked_mb} MB) into $prebuilt_dir/prebuilt.tar.xz"
  t0=$SECONDS
  # One solid stream with a dictionary larger than a binary: the statically linked device code every binary
  # holds is packed once (the binaries hold ~19 MB of it each).
  tar -C "$stage" -cf - . | xz -T1 -9 --lzma2=preset=9,dict=192MiB >"$prebuilt_dir/prebuilt.tar.xz" ||
    { echo "error: packing failed" >&2; return 1; }
  local pack_s=$((SECONDS - t0))
  local commit
  commit="$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  [[ -n "$(git -C "$root" status --porcelain 2>/dev/null)" ]] && commit+="+dirty"
  {
    echo "commit=$commit"
    echo "source_hash=$(source_hash)"
    echo "root=$root"
    echo "built=$(date -u +%Y-%m-%dT%H:%MZ) on $(uname -n), $(ldd --version | head -n 1)"
    echo "targets=$(tr -s ' \n' ' ' <<<"$prebuilt_targets")"
    echo "backends=mpi (Open MPI $(dpkg-query -W -f='${Version}' libopenmpi3 2>/dev/null), libmpi in lib/)," \
      "nccl (dlopen'ed there from LD_LIBRARY_PATH)"
    echo "build_seconds=$build_s (with $jobs_here jobs, ccache $( ((${#launcher[@]})) && echo on || echo off))"
    echo "pack_seconds=$pack_s"
    echo "unpacked_mb=$unpacked_mb"
  } >"$prebuilt_dir/manifest.txt"
  # What a call would carry: the working tree (tracked and untracked files git does not ignore), and the
  # carried folders.
  local tree deps pre total limit=$((64 * 1024 * 1024))
  if git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
    tree="$(git -C "$root" ls-files -co --exclude-standard -z | (cd "$root" && xargs -0 -r du -cb 2>/dev/null) |
      grep total$ | awk '{s += $1} END {print s + 0}')"
  else  # a copy without git: every file but the build folders
    tree="$(cd "$root" && find . -path './build*' -prune -o -type f -print0 | xargs -0 -r du -cb |
      grep total$ | awk '{s += $1} END {print s + 0}')"
  fi
  deps="$(du -sb "$root/build-gpu-deps" 2>/dev/null | cut -f1)"
  pre="$(du -sb "$prebuilt_dir" | cut -f1)"
  total=$((tree + ${deps:-0} + pre))
  echo "carried_bytes=$total (tree $tree, build-gpu-deps ${deps:-0}, build-gpu-pre $pre)" >>"$prebuilt_dir/manifest.txt"
  cat "$prebuilt_dir/manifest.txt"
  if ((total > limit)); then
    echo "error: the tree and the carried folders are $total bytes, over the 64 MiB a call may carry" >&2
    return 1
  fi
  rm -rf "$stage"
  say "done: carry [\"build-gpu-pre\", \"build-gpu-deps\"] ($((total / 1048576)) of 64 MiB)"
}

# =============================================================================================================
# The stages (there).
# =============================================================================================================
out="$build_dir/check"
declare -A result seconds_taken earlier
stages=()
stage_finished=1  # a stage sets it to 0 when it stopped for time (the next call resumes it)
slice=""
prebuilt_note=""

# Seconds the current stage may use: what is left of the budget (less 10 s for the summary), less the least
# time of the later stages of this call that would still fit once this one took its estimate (so a stage
# running long leaves them their share, and none is held back for stages that cannot fit anyway, nor for the
# unreserved ones); at least
# its own least. The build, which everything needs, gets all that is left. Empty when not even its least is.
stage_limit() {
  local left=$((budget - 10 - (SECONDS - start)))
  ((left < need[$1])) && return 0
  [[ "$1" == build ]] && { echo "$left"; return 0; }
  local later=0 s seen=0 room=$((left - est[$1]))
  for s in "${stages[@]}"; do
    if ((seen)) && [[ -z "${earlier[$s]:-}" && -z "${unreserved[$s]:-}" ]]; then
      ((room >= need[$s])) || break
      later=$((later + need[$s]))
      room=$((room - need[$s]))
    fi
    [[ "$s" == "$1" ]] && seen=1
  done
  local limit=$((left - later))
  echo $((limit < need[$1] ? need[$1] : limit))
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

# --- MPI and NCCL there ------------------------------------------------------------------------------------
# The Open MPI bundle unpacked into $build_dir/openmpi (once per machine): sets mpi_env_file to its env.sh,
# or returns 1 when the bundle did not come along or does not unpack (mpi_note says why).
mpi_note=""
mpi_env_file=""
mpi_bundle_env() {
  if [[ ! -f "$mpi_bundle" ]]; then
    mpi_note="no $mpi_bundle (tools/mpi_bundle.sh pack here; carry build-gpu-deps)"
    return 1
  fi
  if ! mpi_env_file="$(MPI_BUNDLE="$mpi_bundle" tools/mpi_bundle.sh unpack "$build_dir/openmpi" \
                         2>"$out/mpi_bundle.log")"; then
    mpi_note="could not unpack $mpi_bundle: $(head -n 1 "$out/mpi_bundle.log")"
    return 1
  fi
  mpi_note="Open MPI from the bundle ($(head -n 1 "$build_dir/openmpi/openmpi/VERSION" | cut -d, -f1))"
}

# The folder holding libnccl.so.2 for the nccl backend's dlopen (parallel/nccl_api.cpp): the pip package of the
# machine's Python (nvidia-nccl-cu13: site-packages/nvidia/.../lib), else the CUDA root or the system. Empty
# when there is none.
nccl_lib_dir() {
  local d
  d="$("$python" - <<'PYEOF' 2>/dev/null
import glob, os, site, sys
roots = []
try:
    roots += site.getsitepackages()
except AttributeError:
    pass
roots += [site.getusersitepackages()] + sys.path
for r in roots:
    for p in sorted(glob.glob(os.path.join(r, "nvidia", "**", "libnccl.so.2"), recursive=True)):
        print(os.path.dirname(p))
        sys.exit(0)
PYEOF
)"
  if [[ -z "$d" ]]; then
    for d in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/lib/x86_64-linux-gnu ""; do
      [[ -z "$d" || -f "$d/libnccl.so.2" ]] && break
    done
  fi
  echo "$d"
}

# The fallback build's backends (sets dist_args, mpi_env and dist_note): MPI from the bundle (its mpicxx on
# PATH while configuring), NCCL with the headers and library of the pip package when they are there.
dist_note=""
dist_args_there() {
  dist_args=(-DREMATCH_MPI=OFF -DREMATCH_NCCL=OFF)
  if mpi_bundle_env; then
    mpi_env="$mpi_env_file"
    dist_args=(-DREMATCH_MPI=AUTO -DREMATCH_NCCL=AUTO)
    dist_note="MPI: $mpi_note"
    local lib inc
    lib="$(nccl_lib_dir)"
    inc="${lib%/lib}/include"
    if [[ -n "$lib" && -f "$inc/nccl.h" ]]; then
      dist_args+=(-DREMATCH_NCCL_INCLUDE="$inc" -DREMATCH_NCCL_LIB="$lib/libnccl.so.2")
      dist_note+="; NCCL: $lib"
    else
      dist_note+="; NCCL: the CUDA root's, if any (no nccl.h beside ${lib:-a libnccl.so.2})"
    fi
  else
    mpi_env=""
    dist_note="no MPI/NCCL backends: $mpi_note"
  fi
}

# --- build -------------------------------------------------------------------------------------------------
# Removes what use_prebuilt unpacked (not the check folder, the stamps or the sanitizers' records).
drop_prebuilt() {
  local f
  for f in rematch lib tests bench .prebuilt CTestTestfile.cmake; do rm -rf "${build_dir:?}/$f"; done
}

# Uses build-gpu-pre/ when it fits this tree and runs here (see the header); sets prebuilt_note to what was
# used or why not. Returns 0 when $build_dir holds the prebuilt binaries, ready.
use_prebuilt() {
  local manifest="$prebuilt_dir/manifest.txt" archive="$prebuilt_dir/prebuilt.tar.xz"
  if [[ -n "${NO_PREBUILT:-}" ]]; then prebuilt_note="NO_PREBUILT set"; return 1; fi
  if [[ ! -f "$manifest" || ! -f "$archive" ]]; then prebuilt_note="no prebuilt binaries carried"; return 1; fi
  local want_hash want_root commit
  want_hash="$(manifest_get source_hash "$manifest")"
  want_root="$(manifest_get root "$manifest")"
  commit="$(manifest_get commit "$manifest")"
  if [[ "$(source_hash)" != "$want_hash" ]]; then
    prebuilt_note="prebuilt binaries ($commit) are of other sources: the tree changed after --prebuild"
    return 1
  fi
  if [[ "$build_dir" != build-gpu ]]; then prebuilt_note="BUILD_DIR is not build-gpu"; return 1; fi
  local flag
  for flag in avx2 fma bmi2; do
    if ! grep -qw "$flag" /proc/cpuinfo; then prebuilt_note="the CPU lacks $flag (x86-64-v3)"; return 1; fi
  done
  if [[ "$want_root" != "$root" ]]; then
    if [[ -e "$want_root" || -L "$want_root" ]]; then
      if [[ "$(cd "$want_root" 2>/dev/null && pwd -P)" != "$(pwd -P)" ]]; then
        prebuilt_note="$want_root, the path the prebuilt binaries were built at, is another folder here"
        return 1
      fi
    elif ! mkdir -p "$(dirname "$want_root")" || ! ln -s "$root" "$want_root"; then
      prebuilt_note="cannot link $want_root to $root"
      return 1
    fi
  fi
  if [[ -f "$build_dir/CMakeCache.txt" ]]; then
    prebuilt_note="$build_dir holds a build made here by an earlier call: it goes on"
    return 1
  fi
  if [[ "$(manifest_get source_hash "$build_dir/.prebuilt" 2>/dev/null)" != "$want_hash" ]]; then
    drop_prebuilt
    mkdir -p "$build_dir"
    if ! tar -xJf "$archive" -C "$build_dir" 2>"$out/prebuilt.log" &&
       ! "$python" -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$archive" \
         "$build_dir" 2>>"$out/prebuilt.log"; then
      prebuilt_note="could not unpack $archive (prebuilt.log)"
      return 1
    fi
  fi
  # The check that decides: the loader finds everything and the programs start.
  if ! "$build_dir/rematch" --help >/dev/null 2>>"$out/prebuilt.log" ||
     ! "$build_dir/tests/tensor_tests" --gtest_list_tests >/dev/null 2>>"$out/prebuilt.log" ||
     ! "$build_dir/bench/sinkhorn_cuda_bench" --benchmark_list_tests=true >/dev/null 2>>"$out/prebuilt.log"; then
    prebuilt_note="the prebuilt binaries do not run here: $(grep -m 1 -v '^$' "$out/prebuilt.log" | cut -c1-200)"
    drop_prebuilt
    return 1
  fi
  cp "$manifest" "$build_dir/.prebuilt"
  prebuilt_note="prebuilt binaries of $commit ($(manifest_get built "$manifest"))"
  return 0
}

stage_build() {
  if use_prebuilt; then
    say "build: $prebuilt_note"
    result[build]="ok: $prebuilt_note"
    return 0
  fi
  say "build: $prebuilt_note; building here"
  # What an earlier call unpacked goes: this folder becomes a CMake build.
  [[ -f "$build_dir/.prebuilt" ]] && drop_prebuilt
  setup_deps || { result[build]="dependencies missing (see above)"; return 1; }
  # Ninja when the machine has it, unless the folder was already configured with another generator.
  local generator=()
  if command -v ninja >/dev/null && [[ ! -f "$build_dir/CMakeCache.txt" || -f "$build_dir/build.ninja" ]]; then
    generator=(-G Ninja)
  fi
  local dist_args=() mpi_env=""
  dist_args_there
  say "configure $build_dir (CUDA on, sm_90, Release; ${dist_note})"
  # With the bundle's environment (mpicxx on PATH for FindMPI), in a subshell: the stages after it get it only
  # where they need it (dist).
  # shellcheck disable=SC1090  # written by tools/mpi_bundle.sh unpack
  if ! (if [[ -n "$mpi_env" ]]; then . "$mpi_env"; fi
        cmake -S . -B "$build_dir" "${generator[@]}" "${device_cmake_args[@]}" "${dist_args[@]}" \
          "${cmake_dep_args[@]}") >"$out/build.log" 2>&1; then
    tail -n 40 "$out/build.log"
    result[build]="configure failed (build.log)"
    return 1
  fi
  # Only the targets of the stages of this call that are still to run.
  local s targets=""
  for s in "${stages[@]}"; do
    [[ -n "${earlier[$s]:-}" ]] || targets+=" ${stage_targets[$s]:-}"
  done
  # shellcheck disable=SC2086
  targets="$(printf '%s\n' $targets | sort -u | tr '\n' ' ')"
  [[ -n "${targets// /}" ]] || targets="$prebuilt_targets"
  local limit
  limit="$(stage_limit build)"
  say "build with $jobs jobs (at most $limit s): $targets"
  # The native tool directly under `timeout`, so a stop reaches the compilers too (ninja stops its children).
  local tool=(make -C "$build_dir" -j "$jobs")
  [[ -f "$build_dir/build.ninja" ]] && tool=(ninja -C "$build_dir" -j "$jobs")
  # shellcheck disable=SC2086
  timeout --kill-after=15 "$limit" "${tool[@]}" $targets >>"$out/build.log" 2>&1
  local rc=$?
  if ((rc == 0)); then
    result[build]="ok: built here ($prebuilt_note)"
  elif ((rc == 124 || rc == 137)); then
    result[build]="stopped after $limit s: the next call resumes it"
    stage_finished=0
  else
    grep -E "error|Error" "$out/build.log" | head -n 30
    tail -n 20 "$out/build.log"
    result[build]="failed (build.log)"
  fi
  ((rc == 0))
}

# --- tests -------------------------------------------------------------------------------------------------
# One ctest run into tests.log: run_ctest STAGE PER_TEST_SECONDS PARALLEL CTEST_ARG... Sets result[STAGE] to
# ctest's count line, failed when a test failed, nothing ran, or a test skipped for want of a device while
# nvidia-smi lists a GPU (read from Testing/Temporary/LastTest.log, where ctest keeps every test's output).
run_ctest() {
  local stage="$1" per_test="${TEST_TIMEOUT:-$2}" parallel="$3"
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
  ((rc == 124 || rc == 137)) && stage_finished=0
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

# --- compute-sanitizer -------------------------------------------------------------------------------------
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
  local units=0 earlier_units=0 ran=0 errors=0 failed=0 stopped=0 unavailable=""
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
        earlier_units=$((earlier_units + 1))
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
    ((earlier_units > 0)) && result[$checker]+="; $earlier_units suites checked by earlier calls, $errors errors"
    return 0
  fi
  result[$checker]="$errors errors in $((earlier_units + ran)) of $units suites of GPU tests ($ran run now)"
  ((failed)) && result[$checker]+=", $failed suites failed (a test failed or skipped, or broke: $checker.log)"
  if ((stopped)); then
    result[$checker]+="; $stopped suites left (out of time: the next call resumes)"
    stage_finished=0
  fi
  judge_skips "$checker" "$(device_skips "$log")" || failed=$((failed + 1))
  ((errors == 0 && failed == 0 && stopped == 0))
}

stage_memcheck() { sanitizer_stage memcheck; }
# Shared-memory hazards of the kernels that use shared memory (reductions, softmax, sort, Sinkhorn, GRU).
stage_racecheck() { sanitizer_stage racecheck; }

# --- measurements ------------------------------------------------------------------------------------------
# One bench/ runner: run_runner STAGE NAME COMMAND... with BUILD, PYTHON, JSON ($out/NAME.json) and BUDGET
# (its limit less 25 s) set, under the stage's limit, output in NAME.log. The result is the runner's last
# "targets met" (or "skipped") line; a failure when it fails, is stopped, or skips while nvidia-smi lists a GPU.
run_runner() {
  local stage="$1" name="$2" limit rc line
  shift 2
  limit="$(stage_limit "$stage")"
  say "$stage: $* (at most $limit s)"
  BUILD="$build_dir" PYTHON="$python" JSON="$out/$name.json" BUDGET=$((limit - 25)) \
    timeout --kill-after=15 "$limit" "$@" >"$out/$name.log" 2>&1
  rc=$?
  tail -n 40 "$out/$name.log"
  line="$(grep -E "targets? met|CUDA benchmarks skipped|skipped \(no CUDA device\)" "$out/$name.log" | tail -n 1)"
  if ((rc == 124 || rc == 137)); then
    stage_finished=0
    result[$stage]="stopped after $limit s${line:+; $line} ($name.log)"
    return 1
  fi
  if ((rc != 0)); then
    result[$stage]="FAILED, exit $rc${line:+; $line} ($name.log)"
    return 1
  fi
  if grep -qE "CUDA benchmarks skipped|skipped \(no CUDA device\)|no CUDA device visible" "$out/$name.log" &&
     gpu_listed; then
    result[$stage]="FAILED: skipped although nvidia-smi lists a GPU (${line:-$name.log})"
    return 1
  fi
  result[$stage]="${line:-done, no target line} ($name.log)"
}

stage_step() { run_runner step sgraf_step env DEVICE=cuda bench/run_sgraf_step.sh; }
# docs/memory.md §2: the same step caption by caption (--memory_budget below what one pass keeps), its peak GPU memory
# against the official loop's (target: at most 0.5x) and its time (target: at least 3x faster).
stage_memory() { run_runner memory sgraf_step_memory env DEVICE=cuda bench/run_sgraf_step.sh --memory_budget=1; }
stage_score() { run_runner score score env DEVICE=cuda bench/run_score.sh; }
# run_sinkhorn_cuda.sh writes its JSON into $OUT (here the check folder), named after CASES.
stage_sinkhorn() { run_runner sinkhorn sinkhorn_batch env CASES=batch OUT="$out" bench/run_sinkhorn_cuda.sh "$build_dir"; }
stage_sinkhorn_large() {
  run_runner sinkhorn-large sinkhorn_large env CASES=large OUT="$out" bench/run_sinkhorn_cuda.sh "$build_dir"
}
stage_ops() { run_runner ops bench env bench/run_cuda.sh; }
# The methods runner keeps to BUDGET itself (each run's cap cut to what is left).
stage_methods() { run_runner methods methods env DEMO=off LOGS="$out/methods_runs.log" bench/run_methods_cuda.sh; }
# The demo until its cap (the stage's time less the runner's set-up), then its speed and projected time.
stage_demo() {
  local limit
  limit="$(stage_limit demo)"
  run_runner demo demo env DEMO=only DEMO_SECONDS=$((limit - 40)) LOGS="$out/demo_runs.log" \
    bench/run_methods_cuda.sh
}

# --- dist: data-parallel training on the GPU (docs/distributed.md §5) -------------------------------------
# mpirun from the Open MPI bundle (or the machine's own), libnccl.so.2 from the machine's Python package, then
# tests/parallel/data_parallel_gpu.sh: the collectives programs (mpi cuda on 2 ranks sharing the GPU, nccl cuda on
# 1), and training runs compared record by record with one process --device cuda (2 ranks --dist_backend mpi,
# 1 rank --dist_backend nccl; triplet/SGR and l2rm/SAF, more when time is left), 2 CPU ranks as the control;
# dist.json and dist.log in the check folder. Without a GPU (nvidia-smi lists none) the GPU cases are reported
# skipped, "no GPU", and the CPU control still runs.
stage_dist() {
  local limit
  limit="$(stage_limit dist)"
  if [[ ! -x "$build_dir/tests/parallel_mpi_collectives" ]]; then
    result[dist]="not run: the build has no MPI backend (no $build_dir/tests/parallel_mpi_collectives; the build line"
    result[dist]+=" says how it was made)"
    return 1
  fi
  local mpirun_path="" how
  if mpi_bundle_env; then
    mpirun_path="$build_dir/openmpi/openmpi/bin/mpirun"
    how="$mpi_note"
  elif command -v mpirun >/dev/null; then
    mpi_env_file=""
    mpirun_path="$(command -v mpirun)"
    how="the machine's mpirun ($mpi_note)"
  else
    result[dist]="not run: no mpirun: $mpi_note"
    return 1
  fi
  local gpu=0 gpu_note="no GPU listed by nvidia-smi" nccl_dir
  gpu_listed && gpu=1
  nccl_dir="$(nccl_lib_dir)"
  say "dist: $how; NCCL ${nccl_dir:-not found}; GPU cases $( ((gpu)) && echo on || echo "off ($gpu_note)")" \
    "(at most $limit s)"
  (
    # shellcheck disable=SC1090  # written by tools/mpi_bundle.sh unpack
    if [[ -n "$mpi_env_file" ]]; then . "$mpi_env_file"; fi
    [[ -n "$nccl_dir" ]] && export LD_LIBRARY_PATH="$nccl_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    GPU=$gpu GPU_NOTE="$gpu_note" LIMIT=$((limit - 15)) PYTHON="$python" RUN_TIMEOUT=$((limit / 2)) \
      timeout --kill-after=15 "$limit" tests/parallel/data_parallel_gpu.sh "$build_dir/rematch" \
      "$build_dir/tests/parallel_mpi_collectives" "$mpirun_path" "$build_dir/dist_work" "$out/dist.json"
  ) >"$out/dist.log" 2>&1
  local rc=$?
  cat "$out/dist.log"
  local line
  line="$(grep -E "^dist: [0-9]+ passed" "$out/dist.log" | tail -n 1)"
  if ((rc == 124 || rc == 137)); then
    stage_finished=0
    result[dist]="stopped after $limit s${line:+; ${line#dist: }} (dist.log)"
    return 1
  fi
  # The largest difference of each comparison that ran, for the summary line.
  local worst
  worst="$("$python" - "$out/dist.json" <<'PYEOF' 2>/dev/null
import json, sys
d = json.load(open(sys.argv[1]))
t = [c for c in d["cases"] if c["kind"] == "training" and c["max_rel_diff"] is not None]
if t:
    w = max(t, key=lambda c: c["max_rel_diff"] / c["tolerance"])
    print(f"largest {w['max_rel_diff']:.3g} ({w['case']}, tolerance {w['tolerance']:g})")
PYEOF
)"
  line="${line#dist: }"
  result[dist]="${line:-no result line}${worst:+; $worst}; $how (dist.json, dist.log)"
  ((rc == 0))
}

# --- python: the Python module on CUDA tensors (rematch.ot's losses, DLPack without a copy) -----------------
# The prebuilt binaries hold no module: it is compiled against the machine's python3 (3.12 in its image, with
# pybind11, pytest, NumPy and PyTorch among its pip packages; no POT), so it is built there, in $build_dir-py
# (CUDA on, sm_90, Release; no tests, benchmarks, MPI or NCCL: target rematch_python and the engine under it),
# with build-gpu-deps/ for the libraries the machine lacks. Then the module's tests that use the GPU
# (tests/python/test_cuda.py, test_zero_copy.py, test_ot_loss.py: its CUDA case compares the losses and their
# gradients on CUDA tensors with the CPU; the POT comparisons skip, as the image has no POT), a "needs a CUDA"
# skip being a failure when nvidia-smi lists a GPU; then bench/python_ot_grad.py --device cuda on the L2RM
# problems (B = 1, 128, 1024: forward + backward, CUDA allocator peak) into python_ot_grad.log. python.log holds
# the configure, build and pytest output.
stage_python() {
  local limit dir="$build_dir-py" log="$out/python.log"
  limit="$(stage_limit python)"
  local stop=$((SECONDS + limit))
  setup_deps >>"$log" 2>&1 || { result[python]="dependencies missing (python.log)"; return 1; }
  local generator=() py
  command -v ninja >/dev/null && [[ ! -f "$dir/CMakeCache.txt" || -f "$dir/build.ninja" ]] && generator=(-G Ninja)
  py="$(command -v "$python")"
  say "python: configure $dir for $py ($("$py" --version 2>&1)), CUDA on (at most $limit s)"
  if ! cmake -S . -B "$dir" "${generator[@]}" -DREMATCH_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
       -DCMAKE_BUILD_TYPE=Release -DREMATCH_PYTHON=ON -DPython_EXECUTABLE="$py" -DREMATCH_BUILD_TESTS=OFF \
       -DREMATCH_BUILD_BENCH=OFF -DREMATCH_MPI=OFF -DREMATCH_NCCL=OFF "${cmake_dep_args[@]}" >>"$log" 2>&1; then
    tail -n 30 "$log"
    result[python]="configure failed (python.log: $(grep -m 1 -E 'CMake Error|cannot be built' "$log" | cut -c1-160))"
    return 1
  fi
  local tool=(make -C "$dir" -j "$jobs")
  [[ -f "$dir/build.ninja" ]] && tool=(ninja -C "$dir" -j "$jobs")
  # The build leaves 60 s for the tests and the benchmark.
  timeout --kill-after=15 $((stop - SECONDS - 60)) "${tool[@]}" rematch_python >>"$log" 2>&1
  local rc=$?
  if ((rc == 124 || rc == 137)); then
    stage_finished=0
    result[python]="the module's build stopped for time: the next call resumes it (python.log)"
    return 1
  elif ((rc != 0)); then
    grep -E "error" "$log" | head -n 20
    result[python]="the module's build failed (python.log)"
    return 1
  fi
  say "python: pytest over the module's GPU tests"
  local part="$out/python_pytest.part"
  PYTHONPATH="$dir/python" OMP_NUM_THREADS=4 timeout --kill-after=10 $((stop - SECONDS - 20)) \
    "$py" -m pytest -q -rs -p no:cacheprovider tests/python/test_cuda.py tests/python/test_zero_copy.py \
    tests/python/test_ot_loss.py >"$part" 2>&1
  rc=$?
  cat "$part" >>"$log"
  tail -n 15 "$part"
  local line skips
  line="$(grep -E "[0-9]+ (passed|failed)" "$part" | tail -n 1)"
  skips="$(grep -c "needs a CUDA" "$part")"
  rm -f "$part"
  result[python]="pytest: ${line:-no result line}"
  ((rc == 124 || rc == 137)) && { stage_finished=0; result[python]+=" (stopped for time)"; return 1; }
  if ((skips > 0)) && gpu_listed; then
    result[python]+="; FAILED: $skips skips for want of a CUDA device although nvidia-smi lists a GPU"
    rc=1
  fi
  local left=$((stop - SECONDS - 5))
  if ((left >= 30)); then
    say "python: bench/python_ot_grad.py --device cuda (at most $left s)"
    PYTHONPATH="$dir/python" timeout --kill-after=10 "$left" "$py" bench/python_ot_grad.py --device cuda \
      --cases l2rm1,l2rm128,l2rm1024 --mem-budget 16 >"$out/python_ot_grad.log" 2>&1 ||
      result[python]+="; python_ot_grad.py did not finish (python_ot_grad.log)"
    tail -n 8 "$out/python_ot_grad.log"
    result[python]+="; OT loss bench in python_ot_grad.log"
  else
    result[python]+="; no time left for bench/python_ot_grad.py"
  fi
  ((rc == 0))
}

# --- summary -------------------------------------------------------------------------------------------------
write_summary() {
  local s summary=("| stage | result | seconds |" "|---|---|---:|")
  for s in "${stages[@]}"; do summary+=("| $s | ${result[$s]:-not run} | ${seconds_taken[$s]:--} |"); done
  printf '%s\n' "${summary[@]}" >"$out/summary.md"
  local left=() done_all=1
  for s in "${stages[@]}"; do
    if [[ "$s" == build ]]; then
      [[ "${result[build]:-}" == ok* ]] && continue
    elif [[ -n "${earlier[$s]:-}" || -f "$build_dir/slice-done/$s" ]]; then
      continue
    fi
    left+=("$s")
    done_all=0
  done
  if [[ -n "$slice" ]]; then
    {
      echo
      if ((done_all)) && ! gpu_listed; then
        echo "Slice $slice: every stage ran, but nvidia-smi lists no GPU: nothing was measured, no slice is done."
      elif ((done_all)); then
        echo "Slice $slice: every stage ran (a failed one is in the table). Record it in bench/RESULTS.md (GPU," \
          "Slices done), with the numbers:" \
          "| $slice | $(date -u +%Y-%m-%d) | ${REMATCH_COMMIT:-unknown} | $(nvidia-smi --query-gpu=name \
          --format=csv,noheader 2>/dev/null | head -n 1) |"
      else
        echo "Slice $slice: left for the next call: ${left[*]} (the same command with BUDGET=<budget_left_s - 75>," \
          "timeout_s=<budget_left_s - 45>, if status says warm and budget_left_s >= 240)"
      fi
    } >>"$out/summary.md"
  fi
  local pairs=()
  for s in "${stages[@]}"; do
    pairs+=("$s" "${result[$s]:-not run}" "${seconds_taken[$s]:-}" "${earlier[$s]:+1}")
  done
  "$python" - "$out" "$slice" "${REMATCH_COMMIT:-unknown}" "$done_all" "${pairs[@]}" <<'PYEOF'
import glob, json, os, sys

out, slice_, commit, done_all, rest = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1", sys.argv[5:]
stages = {rest[i]: {"result": rest[i + 1], "seconds": int(rest[i + 2]) if rest[i + 2] else None,
                    "earlier_call": rest[i + 3] == "1"}
          for i in range(0, len(rest), 4)}
summary = {"slice": slice_ or None, "slice_done": done_all if slice_ else None, "commit": commit,
           "stages": stages, "checks": [], "measurements": {}}
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
}

# The commit the binaries are of, for the runners' reports (runner_commit) where git is not there.
set_commit() {
  local c
  c="$(git -C "$root" rev-parse --short HEAD 2>/dev/null)"
  if [[ -n "$c" ]]; then
    [[ -n "$(git -C "$root" status --porcelain 2>/dev/null)" ]] && c+="+dirty"
  elif [[ -f "$prebuilt_dir/manifest.txt" && "$(manifest_get source_hash "$prebuilt_dir/manifest.txt")" == \
          "$(source_hash)" ]]; then
    c="$(manifest_get commit "$prebuilt_dir/manifest.txt")"
  fi
  export REMATCH_COMMIT="${c:-unknown}"
}

usage() {
  cat >&2 <<'EOF'
usage: tools/gpu_check.sh --plan [1|2|3]          (here) what a slice runs and its time estimate
       tools/gpu_check.sh --prebuild              (here) build and pack the binaries into build-gpu-pre/
       tools/gpu_check.sh --slice 1|2|3 [STAGE...] (there) a slice, resuming what an earlier call left
       tools/gpu_check.sh STAGE...                 (there) these stages
STAGE: build tests step score sinkhorn dist python ops sinkhorn-large methods memory large demo memcheck
       racecheck cpu-tests,
       headline (step score sinkhorn), bench (ops sinkhorn sinkhorn-large), workloads (step score methods demo),
       all (every stage but racecheck)
EOF
  exit 2
}

add_stage() {
  local s
  case "$1" in
    headline) for s in step score sinkhorn; do add_stage "$s"; done ;;
    bench) for s in ops sinkhorn sinkhorn-large; do add_stage "$s"; done ;;
    workloads) for s in step score methods demo; do add_stage "$s"; done ;;
    all) for s in "${all_stages[@]}"; do [[ "$s" == racecheck ]] || add_stage "$s"; done ;;
    *)
      [[ -n "${est[$1]:-}" ]] || usage
      for s in "${stages[@]}"; do [[ "$s" == "$1" ]] && return 0; done
      stages+=("$1")
      ;;
  esac
}

# --- main ----------------------------------------------------------------------------------------------------
main() {
  case "${1:-}" in
    --plan)
      if [[ -n "${2:-}" ]]; then
        [[ -n "${slice_stages[$2]:-}" ]] || usage
        print_plan "$2"
      else
        print_plan 1; echo; print_plan 2; echo; print_plan 3
      fi
      return 0
      ;;
    --prebuild) prebuild; return ;;
    --slice)
      slice="${2:-}"
      [[ -n "$slice" && -n "${slice_stages[$slice]:-}" ]] || usage
      local s
      for s in ${slice_stages[$slice]}; do add_stage "$s"; done
      shift 2
      ;;
    "" | -h | --help) usage ;;
  esac
  local arg
  for arg in "$@"; do add_stage "$arg"; done
  ((${#stages[@]})) || usage

  rm -rf "$out"
  mkdir -p "$out" && out="$(cd "$out" && pwd)"
  set_commit
  # With --slice: what an earlier call on this machine finished is skipped (build always runs: it is quick
  # once done, and checks the binaries).
  local s
  if [[ -n "$slice" ]]; then
    for s in "${stages[@]}"; do
      if [[ "$s" != build && -f "$build_dir/slice-done/$s" ]]; then
        earlier[$s]=1
        result[$s]="done in an earlier call: $(sed -n 1p "$build_dir/slice-done/$s")"
        seconds_taken[$s]="$(sed -n 2p "$build_dir/slice-done/$s")"
      fi
    done
  fi
  say "rematch GPU check${slice:+, slice $slice}: ${stages[*]} (budget $budget s, commit $REMATCH_COMMIT, output in $out)"
  nvidia-smi --format=csv \
    --query-gpu=name,driver_version,memory.total,memory.used,clocks.sm,clocks.mem,temperature.gpu,power.draw 2>&1 ||
    echo "nvidia-smi failed: no GPU visible?"
  nvcc --version 2>/dev/null | tail -n 1 || true

  local t0 failed=0 limit
  for s in "${stages[@]}"; do
    [[ -n "${earlier[$s]:-}" ]] && continue
    if [[ "$s" != build && ! -f "$build_dir/CMakeCache.txt" && ! -f "$build_dir/.prebuilt" ]]; then
      result[$s]="not run: no build in $build_dir (run the build stage first)"
      failed=1
      continue
    fi
    if [[ "${result[build]:-ok}" != ok* ]]; then
      result[$s]="not run: the build did not finish"
      failed=1
      continue
    fi
    limit="$(stage_limit "$s")"
    if [[ -z "$limit" ]]; then
      result[$s]="not started: $((budget - 10 - (SECONDS - start))) s left of the budget, it needs ${need[$s]} s:"
      result[$s]+=" the next call runs it"
      failed=1
      continue
    fi
    t0=$SECONDS
    stage_finished=1
    "stage_${s//-/_}" || failed=1
    seconds_taken[$s]=$((SECONDS - t0))
    if [[ -n "$slice" && "$s" != build ]] && ((stage_finished)); then
      mkdir -p "$build_dir/slice-done"
      printf '%s\n%s\n' "${result[$s]:-done}" "${seconds_taken[$s]}" >"$build_dir/slice-done/$s"
    fi
    ((stage_finished)) || failed=1
  done

  write_summary
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
