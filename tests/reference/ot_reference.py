"""Writes the golden fixtures of tests/ot/*_test.cpp into tests/fixtures/ot/<case>/ with POT (python3-pot 0.8.2)
and a NumPy transcription of L2RM's partial-OT Sinkhorn.

Run from the repository root:  /usr/bin/python3 tests/reference/ot_reference.py
Every array is float64 unless said otherwise; scalars are 0-d arrays.

  sinkhorn_<case>/  C, a, b, reg; plan_sinkhorn and plan_sinkhorn_log from ot.sinkhorn(method='sinkhorn' /
                    'sinkhorn_log') run to stopThr 1e-13; f, g = reg * (log_u, log_v) of the log method. The
                    "masked" case also has mask (uint8, 1 = allowed); POT sees cost 1e4 there, whose kernel
                    exp(-1e4/reg) is exactly 0 in float64, so the POT plan is exactly 0 on masked entries.
  emd_<case>/       C, a, b; plan = ot.emd (exact OT), cost = <C, plan>.
  partial_<case>/   C, a, b, mass, reg; plan_aug_l2rm and plan_aug_zero: ot.sinkhorn(method='sinkhorn_log') on
                    the dummy-augmented problem (L2RM's costs xi = 100 max C, corner 2 xi + A with A = max C;
                    UOT-RCL's zero costs), real block; plan_epw = ot.partial.entropic_partial_wasserstein (Benamou
                    et al. 2015 — entropy on the real block only, so a different regularised problem); plan_exact
                    = ot.partial.partial_wasserstein (exact).
  l2rm_p<k>/        cost (float32 [128, 128], a synthetic L2RM cost C = max(1 - S, 1e-10) of sigmoid-like
                    similarities S with planted pairs and mismatches) and, per eps in (0.01, 0.07),
                    eps<eps>_iterations (int64), eps<eps>_err (the ||u - u_prev||_2 of every sweep),
                    eps<eps>_u, eps<eps>_v ([129] potentials) and eps<eps>_plan (float32 [128, 128]): the output
                    of the transcription of docs/methods/l2rm.md §1.5 (partial_ot + sinkhorn_log_domain).
"""
import os
import warnings

import numpy as np
import ot

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "ot")
STOP = dict(numItermax=1000000, stopThr=1e-13)


def save(folder, name, value):
    os.makedirs(folder, exist_ok=True)
    np.save(os.path.join(folder, name + ".npy"), np.ascontiguousarray(value), allow_pickle=False)


def random_weights(rng, n, total=1.0):
    w = rng.random(n) + 0.3
    return w / w.sum() * total


def point_cost(rng, n, m):
    x, y = rng.random((n, 2)), rng.random((m, 2)) + 0.25
    c = ot.dist(x, y)
    return c / c.max()


# ---- ot.sinkhorn, both methods ------------------------------------------------------------------------------
def sinkhorn_case(name, C, a, b, reg, mask=None):
    folder = os.path.join(OUT, "sinkhorn_" + name)
    M = C if mask is None else np.where(mask > 0, C, 1e4)
    plan_k = ot.sinkhorn(a, b, M, reg, method="sinkhorn", **STOP)
    plan_l, log = ot.sinkhorn(a, b, M, reg, method="sinkhorn_log", log=True, **STOP)
    assert np.abs(plan_k - plan_l).max() < 1e-10, name
    for k, v in dict(C=C, a=a, b=b, reg=np.float64(reg), plan_sinkhorn=plan_k, plan_sinkhorn_log=plan_l,
                     f=reg * log["log_u"], g=reg * log["log_v"]).items():
        save(folder, k, v)
    if mask is not None:
        save(folder, "mask", mask.astype(np.uint8))


def sinkhorn_cases():
    rng = np.random.default_rng(1)
    sinkhorn_case("small", rng.random((7, 5)), random_weights(rng, 7), random_weights(rng, 5), 0.1)
    sinkhorn_case("rect", point_cost(rng, 40, 25), random_weights(rng, 40), random_weights(rng, 25), 0.05)
    sinkhorn_case("eps001", point_cost(rng, 30, 30), np.full(30, 1 / 30), np.full(30, 1 / 30), 0.01)
    mask = (rng.random((12, 10)) > 0.3).astype(np.uint8)
    mask[np.arange(10), np.arange(10)] = 0
    sinkhorn_case("masked", rng.random((12, 10)), random_weights(rng, 12), random_weights(rng, 10), 0.1, mask)


# ---- ot.emd -------------------------------------------------------------------------------------------------
def emd_cases():
    rng = np.random.default_rng(3)
    for n, m in [(5, 4), (6, 6)]:
        C, a, b = rng.random((n, m)), random_weights(rng, n), random_weights(rng, m)
        plan = ot.emd(a, b, C)
        folder = os.path.join(OUT, "emd_%dx%d" % (n, m))
        for k, v in dict(C=C, a=a, b=b, plan=plan, cost=np.float64((plan * C).sum())).items():
            save(folder, k, v)


# ---- partial OT ---------------------------------------------------------------------------------------------
def augment(C, a, b, mass, form):
    """Chapel et al.: dummy row of weight sum(b) - mass, dummy column of weight sum(a) - mass."""
    n, m = C.shape
    Ch = np.zeros((n + 1, m + 1))
    Ch[:n, :m] = C
    if form == "l2rm":
        xi, A = 100 * C.max(), C.max()
        Ch[n, :], Ch[:, m], Ch[n, m] = xi, xi, 2 * xi + A
    return Ch, np.append(a, b.sum() - mass), np.append(b, a.sum() - mass)


def partial_case(name, C, a, b, mass, reg):
    folder = os.path.join(OUT, "partial_" + name)
    n, m = C.shape
    out = dict(C=C, a=a, b=b, mass=np.float64(mass), reg=np.float64(reg))
    for form, thr in (("l2rm", 1e-11), ("zero", 1e-13)):
        # With xi/reg ~ 1e4 the float64 potentials carry ~1e-12 relative rounding, so 1e-13 is out of reach.
        Ch, ah, bh = augment(C, a, b, mass, form)
        out["plan_aug_" + form] = ot.sinkhorn(ah, bh, Ch, reg, method="sinkhorn_log", numItermax=1000000,
                                              stopThr=thr)[:n, :m]
    out["plan_epw"] = ot.partial.entropic_partial_wasserstein(a, b, C, reg, m=mass, numItermax=1000000,
                                                              stopThr=1e-14)
    out["plan_exact"] = ot.partial.partial_wasserstein(a, b, C, m=mass)
    for k, v in out.items():
        save(folder, k, v)


def partial_cases():
    rng = np.random.default_rng(5)
    partial_case("uniform", point_cost(rng, 20, 20), np.full(20, 0.05), np.full(20, 0.05), 0.6, 0.02)
    partial_case("unequal", rng.random((12, 10)), random_weights(rng, 12), random_weights(rng, 10, 1.25), 0.5, 0.01)


# ---- L2RM's loop (docs/methods/l2rm.md §1.5), transcribed -------------------------------------------------
def l2rm_sinkhorn_log_domain(p, q, C, mask, reg, niter=1000, thresh=1e-3):
    """u, v in cost units; masked log-kernel -1e6; lse with max shift and +1e-10; stop on ||u - u_prev||_2."""
    def kernel(u, v):
        K = (-C + u[:, None] + v[None, :]) / reg
        K[mask == 0] = -1e6
        return K

    def lse_rows(A):
        mx = A.max(axis=1, keepdims=True)
        return (np.log(np.exp(A - mx).sum(axis=1, keepdims=True) + 1e-10) + mx).squeeze(1)

    u, v, errs = 0.0 * p, 0.0 * q, []
    for it in range(1, niter + 1):
        u_prev = u
        u = reg * (np.log(p) - lse_rows(kernel(u, v))) + u
        v = reg * (np.log(q) - lse_rows(kernel(u, v).T)) + v
        errs.append(np.linalg.norm(u - u_prev))
        if errs[-1] < thresh:
            break
    return np.exp(kernel(u, v)), u, v, it, np.array(errs)


def l2rm_partial_ot(C, rho, reg, q_dtype=np.float64):
    """xi = 100 max C, A = max C, corner 2 xi + A, positives masked (noise_ratio != 0), p = q = 1/B."""
    B = C.shape[0]
    C = C.astype(np.float64)
    xi, A = 100 * C.max(), C.max()
    Ch = np.full((B + 1, B + 1), xi)
    Ch[:B, :B] = C
    Ch[B, B] = 2 * xi + A
    mask = np.ones((B + 1, B + 1))
    mask[np.arange(B), np.arange(B)] = 0
    p = np.append(np.full(B, 1.0 / B), 1.0 - rho)
    # L2RM builds q from a float32 tensor; the transcription keeps float64 unless asked (checked below).
    q = np.append(np.full(B, 1.0 / B, dtype=q_dtype), q_dtype(1.0) - q_dtype(rho))
    return l2rm_sinkhorn_log_domain(p, q, Ch, mask, reg)


def l2rm_cost(seed, noise, B=128, dim=32):
    rng = np.random.default_rng(seed)
    img = rng.normal(size=(B, dim))
    txt = img + 0.9 * rng.normal(size=(B, dim))
    idx = rng.choice(B, int(noise * B), replace=False)
    txt[idx] = txt[rng.permutation(idx)]  # mismatched pairs
    img /= np.linalg.norm(img, axis=1, keepdims=True)
    txt /= np.linalg.norm(txt, axis=1, keepdims=True)
    S = 1 / (1 + np.exp(-(5 * img @ txt.T - 1.5)))  # sigmoid-like SGRAF similarities
    return np.maximum(np.maximum(1 - S, 0), 1e-10).astype(np.float32)  # f_c at init: relu(1 - S), clip


def l2rm_cases():
    for k, (seed, noise) in enumerate([(0, 0.2), (1, 0.5)]):
        folder = os.path.join(OUT, "l2rm_p%d" % k)
        C = l2rm_cost(seed, noise)
        save(folder, "cost", C)
        for reg in (0.01, 0.07):
            plan, u, v, iters, errs = l2rm_partial_ot(C, 0.1, reg)
            iters32 = l2rm_partial_ot(C, 0.1, reg, np.float32)[3]
            assert iters32 == iters, "float32 q changes the stop iteration"
            margin = min(abs(errs[-1] - 1e-3), abs(errs[-2] - 1e-3))
            print("l2rm_p%d eps %g: stops at %d, real mass %.4f, margin to the threshold %.2e"
                  % (k, reg, iters, plan[:-1, :-1].sum(), margin))
            tag = "eps%g_" % reg
            save(folder, tag + "iterations", np.int64(iters))
            save(folder, tag + "err", errs)
            save(folder, tag + "u", u)
            save(folder, tag + "v", v)
            save(folder, tag + "plan", np.float32(plan)[:-1, :-1])


def main():
    warnings.simplefilter("ignore")
    sinkhorn_cases()
    emd_cases()
    partial_cases()
    l2rm_cases()


if __name__ == "__main__":
    main()
