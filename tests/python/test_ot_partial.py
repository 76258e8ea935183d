"""rematch.ot.partial_sinkhorn against POT: ot.sinkhorn(method="sinkhorn_log") on the same dummy-augmented
problem (the same plan), ot.partial.entropic_partial_wasserstein (a different regularisation of the same partial
problem: close, both above the exact cost), L2RM's own loop (tests/fixtures/ot/l2rm_p*), masks and batches."""
import numpy as np
import pytest

import rematch
from support import fixture, needs_torch, point_cost, random_mask, torch, weights

ot = pytest.importorskip("ot", reason="needs POT (apt-get install python3-pot)")

CONVERGED = dict(tol=1e-11, max_iter=1000000, stop="marginal")


def augmented(C, a, b, mass, dummy):
    """Chapel et al.'s (n+1) x (m+1) problem: L2RM's dummy costs (xi = 100 max C, corner 2 xi + max C) or zeros."""
    n, m = C.shape
    Ch = np.zeros((n + 1, m + 1))
    Ch[:n, :m] = C
    if dummy == "l2rm":
        xi = 100 * C.max()
        Ch[n, :], Ch[:, m], Ch[n, m] = xi, xi, 2 * xi + C.max()
    return Ch, np.append(a, b.sum() - mass), np.append(b, a.sum() - mass)


@pytest.mark.parametrize("dummy", ["l2rm", "zero"])
@pytest.mark.parametrize("seed,n,m,mass,eps", [(0, 20, 20, 0.6, 0.02), (1, 12, 10, 0.5, 0.05)])
def test_matches_pot_sinkhorn_log_on_the_augmented_problem(dummy, seed, n, m, mass, eps):
    rng = np.random.default_rng(seed)
    C, a, b = point_cost(rng, n, m), weights(rng, n), weights(rng, m, 1.25)
    P, info = rematch.ot.partial_sinkhorn(C, mass, a, b, eps=eps, dummy=dummy, **CONVERGED)
    Ch, ah, bh = augmented(C, a, b, mass, dummy)
    expected = ot.sinkhorn(ah, bh, Ch, eps, method="sinkhorn_log", numItermax=1000000, stopThr=1e-11)[:n, :m]
    assert info["converged"] and info["f"].shape == (n + 1,) and info["g"].shape == (m + 1,)
    np.testing.assert_allclose(P, expected, rtol=1e-6, atol=1e-12)
    if dummy == "l2rm":  # moving mass through the corner costs more: the real block carries the mass, no more
        assert abs(P.sum() - mass) < 1e-6
    else:  # the zero corner holds UOT-RCL's slack: the real block carries more than the mass
        assert P.sum() > mass


@pytest.mark.parametrize("seed,n,m,mass", [(2, 20, 20, 0.6), (3, 12, 10, 0.5), (7, 30, 25, 0.3)])
@pytest.mark.parametrize("eps", [0.02, 0.01, 0.005])
def test_close_to_pot_entropic_partial_wasserstein(seed, n, m, mass, eps):
    rng = np.random.default_rng(seed)
    C, a, b = point_cost(rng, n, m), weights(rng, n), weights(rng, m, 1.25)
    P, _ = rematch.ot.partial_sinkhorn(C, mass, a, b, eps=eps, **CONVERGED)
    epw = ot.partial.entropic_partial_wasserstein(a, b, C, eps, m=mass, numItermax=1000000, stopThr=1e-14)
    exact = ot.partial.partial_wasserstein(a, b, C, m=mass)
    # Entropy on the augmented problem (rematch) and on the real block only (Benamou et al., POT) regularise the
    # same partial problem differently. Both move the mass, both cost more than the exact partial plan by at most
    # the entropic bound eps log((n+1)(m+1)), and the two plans are closer to each other than either is to the
    # exact one.
    assert abs(P.sum() - mass) < 1e-6 and abs(epw.sum() - mass) < 1e-6
    bound = eps * np.log((n + 1) * (m + 1))
    for plan in (P, epw):
        assert 0 < (plan * C).sum() - (exact * C).sum() < bound
    assert np.abs(P - epw).sum() < min(np.abs(P - exact).sum(), np.abs(epw - exact).sum())


@pytest.mark.parametrize("case", ["l2rm_p0", "l2rm_p1"])
@pytest.mark.parametrize("eps", ["0.01", "0.07"])
def test_the_readme_call_gives_l2rms_plan(case, eps):
    """L2RM's partial_ot (rho = 0.1, diagonal masked, ||u - u_prev|| < 1e-3) as the README replaces it."""
    cost = fixture(case, "cost").astype(np.float64)
    mask = ~np.eye(len(cost), dtype=bool)
    P, info = rematch.ot.partial_sinkhorn(cost, 0.1, eps=float(eps), mask=mask, tol=1e-3)
    assert info["iterations"] == fixture(case, f"eps{eps}_iterations")
    np.testing.assert_allclose(P.astype(np.float32), fixture(case, f"eps{eps}_plan"), rtol=1e-6, atol=1e-12)
    assert (np.diag(P) == 0).all()
    # float32, as a training loop has it: the shifted dummy costs keep it on float64's plan.
    P32, _ = rematch.ot.partial_sinkhorn(cost.astype(np.float32), 0.1, eps=float(eps), mask=mask, tol=1e-3)
    assert P32.dtype == np.float32 and (np.diag(P32) == 0).all()
    assert np.abs(P32 - P).sum() < 1e-3 * P.sum()


def test_masked_entries_are_exactly_zero_and_the_mass_is_met():
    rng = np.random.default_rng(4)
    C, mask = point_cost(rng, 30, 30), random_mask(rng, 30, 30)
    P, info = rematch.ot.partial_sinkhorn(C, 0.4, eps=0.01, dummy="l2rm", mask=mask, **CONVERGED)
    assert (P[~mask] == 0).all()
    # L2RM's dummy costs leave only an entropic leak through the corner (1e-9 at this eps).
    assert abs(P.sum() - 0.4) < 1e-6
    assert (P.sum(1) <= 1 / 30 + 1e-12).all() and (P.sum(0) <= 1 / 30 + 1e-12).all()


def test_batched_equals_one_by_one_with_a_mass_per_problem():
    rng = np.random.default_rng(5)
    B, n = 4, 15
    C = np.stack([point_cost(rng, n, n) for _ in range(B)])
    mask = np.stack([random_mask(rng, n, n) for _ in range(B)])
    mass = np.array([0.1, 0.3, 0.5, 0.9])
    P, info = rematch.ot.partial_sinkhorn(C, mass, eps=0.05, mask=mask)
    assert P.shape == (B, n, n) and info["f"].shape == (B, n + 1)
    for k in range(B):
        Pk, ik = rematch.ot.partial_sinkhorn(C[k], mass[k], eps=0.05, mask=mask[k])
        np.testing.assert_array_equal(P[k], Pk)
        assert info["iterations"][k] == ik["iterations"]
    one_mass, _ = rematch.ot.partial_sinkhorn(C, 0.3, eps=0.05, mask=mask)
    np.testing.assert_array_equal(one_mass[1], P[1])


@needs_torch
def test_numpy_and_torch_give_the_same_plan():
    rng = np.random.default_rng(6)
    C = point_cost(rng, 33, 33).astype(np.float32)
    mask = ~np.eye(33, dtype=bool)
    P, _ = rematch.ot.partial_sinkhorn(C, 0.2, eps=0.03, mask=mask, tol=1e-3)
    T, info = rematch.ot.partial_sinkhorn(torch.from_numpy(C), torch.tensor(0.2), eps=0.03,
                                          mask=torch.from_numpy(mask), tol=1e-3)
    assert isinstance(T, torch.Tensor) and T.dtype == torch.float32 and isinstance(info["g"], torch.Tensor)
    np.testing.assert_array_equal(T.numpy(), P)


def test_an_unpriced_dummy_corner_is_reported_not_hidden():
    # All costs 0: L2RM's corner surcharge max C is 0, nothing holds the leak back, and the real block carries
    # (1 - s)^2 / (2 - s) more than s (0.526 for 0.1). POT's solve of the same augmented problem agrees: the
    # solver is right, the construction leaks. Until now this came back converged, its error ~1e-16, unremarked.
    C = np.zeros((5, 4))
    with pytest.warns(RuntimeWarning, match=r"moves 0\.526316 for mass = 0\.1: the dummy corner's surcharge "
                                            r"max C = 0 is small against eps = 0\.1, and lets up to about 0\.426"):
        P, info = rematch.ot.partial_sinkhorn(C, 0.1, eps=0.1)
    assert info["converged"] and info["mass"] == pytest.approx(P.sum()) == pytest.approx(0.9 ** 2 / 1.9 + 0.1)
    Ch, ah, bh = augmented(C, np.full(5, 0.2), np.full(4, 0.25), 0.1, "l2rm")
    assert P.sum() == pytest.approx(ot.sinkhorn(ah, bh, Ch, 0.1, method="sinkhorn_log")[:5, :4].sum(), rel=1e-6)
    # One problem of a batch is named; a priced corner (costs up to 1 at eps = 0.01) says nothing.
    rng = np.random.default_rng(3)
    with pytest.warns(RuntimeWarning, match="problem 1: the plan moves"):
        _, info = rematch.ot.partial_sinkhorn(np.stack([rng.random((5, 4)), C]), [0.5, 0.1], eps=0.01)
    assert len(info["mass"]) == 2 and info["mass"][0] == pytest.approx(0.5, abs=1e-3)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _, info = rematch.ot.partial_sinkhorn(rng.random((5, 4)), 0.5, eps=0.01)
    assert info["mass"] == pytest.approx(0.5, abs=1e-3)
