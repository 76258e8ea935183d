#!/usr/bin/env bash
# Recompiles the CPU elementwise, reduction and softmax kernels with GCC's vectoriser report and prints, per
# file, how many loops were vectorised and the source lines of the ones that were not. Run from anywhere:
#   tools/vectorization_report.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
files=(tensor/cpu/elementwise.cpp tensor/cpu/reduce.cpp tensor/cpu/softmax.cpp)
for f in "${files[@]}"; do
  report=$(g++ -std=c++17 -O3 -march=native -fopenmp -I"$root" -I/usr/include/x86_64-linux-gnu \
    -fopt-info-vec-optimized -c "$root/$f" -o /dev/null 2>&1 | grep -E "^$root/$f" || true)
  n=$(grep -c "loop vectorized" <<<"$report" || true)
  lines=$(grep "loop vectorized" <<<"$report" | sed -E 's/^[^:]+:([0-9]+):.*/\1/' | sort -un | tr '\n' ' ')
  echo "$f: $n vectorised loop versions, at lines: $lines"
done
