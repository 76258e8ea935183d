"""Writes the golden fixtures of tests/train/uotrcl_reference_test.cpp into tests/fixtures/uotrcl/.

Run from the repository root:  /usr/bin/python3 tests/reference/uotrcl_reference.py
UOT-RCL has no public code; this is an independent NumPy + POT transcription of docs/methods/uotrcl.md §4.3 (the paper's
Eqs. 4-18 with rematch's recorded readings: dist = 1 - cos in Eq. 16, denominators of Eq. 7 clamped to >= 1e-6,
the bracket of Eq. 8 to >= 1e-8, C_S shifted up by -min(0, min C_S) before Eq. 14, a sample is not its own
neighbour) on one fixed float64 case: N = 30 pairs, K = 4 classes, L = 6. Saved as .npy (float64), `case.`:
  inputs  z_v z_t [N, L] (unit rows), prototypes [L, K], targets [N, K], meta = [per_class, knn, s, lc_eps,
          rel_eps, batch, tau1, tau2, tau3]
  values  confident [|G|], knn_v knn_t [N, knn], c_v c_t [N], votes_v votes_t [N, K], cost (C_S) [N, K],
          corrected (N·T[:N, :K]) [N, K], R_v R_t [B, |G|], relation_cost [B, B], relation_plan [B, B],
          plc (L_PLC of the first B rows), bhg (L_BHG of the first B rows)
The label-correction OT is POT's log-domain Sinkhorn on the (N+1)x(K+1) problem of UOT-RCL Eq. (14) (zero-cost
dummy row, column and corner; marginals [1/N; 1-s] and [1/K; 1-s]); the relation OT is POT's log-domain Sinkhorn
with uniform marginals on C^R / mean(C^R).
"""
import os

import numpy as np
import ot

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "uotrcl")
N, K, L = 30, 4, 6
PER_CLASS, KNN, S, LC_EPS, REL_EPS, BATCH = 3, 5, 0.4, 0.05, 0.1, 8
TAU1, TAU2, TAU3 = 1.0, 1.0, 1.0


def save(name, value):
    np.save(os.path.join(OUT, "case." + name + ".npy"), np.ascontiguousarray(np.asarray(value, np.float64)),
            allow_pickle=False)


def unit(x):
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def xlogx(x):
    return np.where(x > 0, x * np.log(np.where(x > 0, x, 1.0)), 0.0)


def jsd(p, q):
    """UOT-RCL Eq. (4) along the last axis."""
    m = 0.5 * (p + q)
    return 0.5 * xlogx(p).sum(-1) + 0.5 * xlogx(q).sum(-1) - xlogx(m).sum(-1)


def confident_set(p_v, p_t):
    """Eq. (5): per argmax class of the averaged prediction, the PER_CLASS smallest JSD (stable by index)."""
    predicted = np.argmax(p_v + p_t, axis=1)
    d = jsd(p_v, p_t)
    out = []
    for k in range(K):
        members = np.flatnonzero(predicted == k)
        out.extend(members[np.argsort(d[members], kind="stable")][:PER_CLASS])
    return np.array(out, dtype=np.int64)


def neighbours(z):
    """The KNN most cosine-similar other rows, most similar first."""
    sims = unit(z) @ unit(z).T
    np.fill_diagonal(sims, -np.inf)
    index = np.argsort(-sims, axis=1, kind="stable")[:, :KNN]
    return index, np.take_along_axis(sims, index, axis=1)


def ratios(z_v, z_t, g):
    """Eq. (7) in both directions, denominators clamped to >= 1e-6."""
    s_v, s_t = unit(z_v) @ unit(z_v[g]).T, unit(z_t) @ unit(z_t[g]).T
    rows = np.arange(N)
    dv, dt = np.argmax(s_v, axis=1), np.argmax(s_t, axis=1)
    c_v = s_v[rows, dv] / np.maximum(s_t[rows, dv], 1e-6)
    c_t = s_t[rows, dt] / np.maximum(s_v[rows, dt], 1e-6)
    return c_v, c_t


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(20240613)
    centers = unit(rng.normal(size=(K, L)))
    truth = np.arange(N) % K
    z_v = unit(centers[truth] + 0.6 * rng.normal(size=(N, L)))
    z_t = unit(centers[truth] + 0.6 * rng.normal(size=(N, L)))
    prototypes = unit(rng.normal(size=(K, L))).T
    noisy = np.where(rng.random(N) < 0.3, rng.integers(0, K, N), truth)
    targets = 0.8 * np.eye(K)[noisy] + 0.2 * softmax(rng.normal(size=(N, K)))

    p_v = softmax(z_v @ prototypes / TAU1)
    p_t = softmax(z_t @ prototypes / TAU1)
    g = confident_set(p_v, p_t)
    knn_v, sim_v = neighbours(z_v)
    knn_t, sim_t = neighbours(z_t)
    c_v, c_t = ratios(z_v, z_t, g)
    votes_v = (sim_v[:, :, None] * targets[knn_v]).sum(axis=1) / KNN   # Eq. (8), one space
    votes_t = (sim_t[:, :, None] * targets[knn_t]).sum(axis=1) / KNN
    cost = -np.log(np.maximum(c_v[:, None] * votes_v + c_t[:, None] * votes_t, 1e-8))

    shifted = cost - min(0.0, cost.min())
    aug = np.zeros((N + 1, K + 1))
    aug[:N, :K] = shifted
    a = np.concatenate([np.full(N, 1.0 / N), [1 - S]])
    b = np.concatenate([np.full(K, 1.0 / K), [1 - S]])
    plan = ot.bregman.sinkhorn_log(a, b, aug, LC_EPS, numItermax=200000, stopThr=1e-14)
    corrected = N * plan[:N, :K]

    rows = np.arange(BATCH)
    R_v = softmax(unit(z_v[rows]) @ unit(z_v[g]).T / TAU2)   # Eq. (16) with dist = 1 - cos
    R_t = softmax(unit(z_t[rows]) @ unit(z_t[g]).T / TAU2)
    C_R = jsd(R_v[:, None, :], R_t[None, :, :])
    uniform = np.full(BATCH, 1.0 / BATCH)
    M = ot.bregman.sinkhorn_log(uniform, uniform, C_R / C_R.mean(), REL_EPS, numItermax=200000, stopThr=1e-14)

    def log_softmax(x):
        return x - x.max(axis=1, keepdims=True) - np.log(np.exp(x - x.max(axis=1, keepdims=True)).sum(1, keepdims=True))

    lv, lt = log_softmax(z_v[rows] @ prototypes / TAU1), log_softmax(z_t[rows] @ prototypes / TAU1)
    plc = -(corrected[rows] * (lv + lt)).sum() / BATCH                  # Eq. (15)
    scores = z_v[rows] @ z_t[rows].T / TAU3
    m_v2t = M / M.sum(axis=1, keepdims=True)
    m_t2v = M.T / M.T.sum(axis=1, keepdims=True)
    bhg = -((m_v2t * log_softmax(scores)).sum() + (m_t2v * log_softmax(scores.T)).sum()) / BATCH   # Eq. (18)

    for name, value in [("z_v", z_v), ("z_t", z_t), ("prototypes", prototypes), ("targets", targets),
                        ("meta", [PER_CLASS, KNN, S, LC_EPS, REL_EPS, BATCH, TAU1, TAU2, TAU3]),
                        ("confident", g), ("knn_v", knn_v), ("knn_t", knn_t), ("c_v", c_v), ("c_t", c_t),
                        ("votes_v", votes_v), ("votes_t", votes_t), ("cost", cost), ("corrected", corrected),
                        ("R_v", R_v), ("R_t", R_t), ("relation_cost", C_R), ("relation_plan", M),
                        ("plc", plc), ("bhg", bhg)]:
        save(name, value)
    print("C_S range [%.4f, %.4f], transported mass %.6f, |G| = %d" % (cost.min(), cost.max(), plan[:N, :K].sum(),
                                                                       len(g)))


if __name__ == "__main__":
    main()
