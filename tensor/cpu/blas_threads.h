// OpenBLAS runs on one thread in rematch: the CPU kernels parallelise around BLAS calls with OpenMP instead
// (tensor/cpu/matmul.cpp explains why). The setting is process-wide and must be made before the first BLAS
// call of the process, whoever makes it: a product computed by OpenBLAS's own threads can differ in its last
// bits from the same product on one thread (seen with its Haswell and Prescott kernels), so a process whose
// first BLAS call came from the Bi-GRU (nn/cpu/gru.cpp) computed that one step differently from a process that
// had already set the setting, and a run resumed mid-epoch drifted from the uninterrupted one. Every file that
// calls cblas_* calls this first; it costs an atomic load after the first call.
#pragma once

namespace rematch::cpu {

void single_threaded_blas();

}  // namespace rematch::cpu
