// ot/: entropic optimal transport for the training methods — Sinkhorn in the log domain (max-shifted
// log-sum-exp, the default) or the scaling domain, with masks (masked entries get exactly zero mass), partial
// transport through a dummy row and column (L2RM's and UOT-RCL's cost conventions), and batches of problems
// [B, n, m] with per-problem marginals, masks and sizes, solved in one call. CPU reference in float32 and
// float64; the device is chosen in one place (ot/batched.cpp), where the fused CUDA kernels plug in.
//
// The plan is returned detached: no gradient flows from it to C, a or b. The methods use it as a fixed
// target (L2RM's rematch plan π̃ in the symmetric-KL loss, UOT-RCL's corrected labels Ŷ and relation plan M),
// so recording up to 1000 unrolled iterations would only cost memory; a cost that requires grad is read
// through detach().
//
// It does not: differentiate through the solver, solve exact (unregularised) OT, handle unbalanced OT with KL
// marginal penalties, build costs from point clouds, or know about nn/ (it depends on tensor/ alone).
#pragma once

#include "ot/batched.h"
#include "ot/partial.h"
#include "ot/sinkhorn.h"
