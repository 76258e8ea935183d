// train/: the robust cross-modal retrieval suite on top of the engine: data sets and noise protocols,
// synthetic benchmarks, retrieval evaluation, training methods, run folders, and the `rematch` program.
// Nothing below train/ includes it.
#pragma once
