#!/usr/bin/env bash
# Runs tests of an emulated build (docs/cuda_emulator.md) twice, in the emulator's forward and reverse schedules,
# and compares what each test process read back from the device byte for byte (REMATCH_CUDA_EMU_DIGEST,
# tools/cuda_emu/digest.cpp): a test whose digest differs computed something that depends on the order its threads
# and blocks ran in (a race, an atomic or block-order sum), even where its own tolerance let the answer pass.
#
# Usage: tools/cuda_emu/compare_schedules.sh BUILD [CTEST_ARG...]   (default: -R 'Cuda|CUDA' -E Large -j nproc)
# Prints each process whose digest differs or that ran in one schedule only, then a count; exit 1 when any did
# or a ctest run failed. The digests and ctest logs stay in the folder it names.
set -uo pipefail

(($# >= 1)) || { sed -n '7,9p' "${BASH_SOURCE[0]}" | sed 's/^# //' >&2; exit 2; }
build=$1
shift
(($# > 0)) || set -- -R 'Cuda|CUDA' -E Large -j "$(nproc)"
grep -q '^REMATCH_CUDA:STRING=EMULATE$' "$build/CMakeCache.txt" 2>/dev/null ||
  { echo "compare_schedules: $build is not configured with -DREMATCH_CUDA=EMULATE" >&2; exit 2; }
work="$(mktemp -d)"
failed=0
for s in forward reverse; do
  echo "compare_schedules: ctest $* in the $s schedule ..."
  if ! REMATCH_CUDA_EMU_SCHEDULE=$s REMATCH_CUDA_EMU_DIGEST="$work/$s.digest" \
       ctest --test-dir "$build" --output-on-failure "$@" >"$work/$s.log" 2>&1; then
    echo "compare_schedules: ctest failed in the $s schedule ($work/$s.log):"
    sed -n '/The following tests FAILED/,$p' "$work/$s.log"
    failed=1
  fi
  grep -E "tests passed" "$work/$s.log"
done
python3 - "$work/forward.digest" "$work/reverse.digest" <<'PYEOF'
import collections, sys

def read(path):
    try:
        return collections.Counter(l.rstrip("\n") for l in open(path) if l.strip())
    except FileNotFoundError:
        return collections.Counter()

fwd, rev = read(sys.argv[1]), read(sys.argv[2])
def by_command(c):
    d = collections.defaultdict(list)
    for line, n in c.items():
        digest, nbytes, copies, command = line.split(" ", 3)
        d[command] += [(digest, nbytes, copies)] * n
    return d
f, r = by_command(fwd), by_command(rev)
differ = 0
for command in sorted(set(f) | set(r)):
    if sorted(f.get(command, [])) != sorted(r.get(command, [])):
        differ += 1
        print(f"differs: {command}\n  forward {sorted(f.get(command, []))}\n  reverse {sorted(r.get(command, []))}")
print(f"compare_schedules: {len(set(f) | set(r))} test processes with device reads, {differ} differ between the "
      f"schedules ({sum(int(b) for _, b, _ in (x for v in f.values() for x in v))} bytes read back in the forward run)")
sys.exit(1 if differ else 0)
PYEOF
rc=$?
echo "compare_schedules: digests and logs in $work"
((rc == 0 && failed == 0))
