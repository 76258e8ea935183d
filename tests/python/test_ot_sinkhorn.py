"""rematch.ot.sinkhorn against POT's ot.sinkhorn(method="sinkhorn_log") on random problems, with masks,
marginals, NumPy against PyTorch, batches against one problem at a time."""
import numpy as np
import pytest

import rematch
from support import needs_torch, point_cost, random_mask, torch, weights

ot = pytest.importorskip("ot", reason="needs POT (apt-get install python3-pot)")

CONVERGED = dict(tol=1e-12, max_iter=100000)
POT = dict(method="sinkhorn_log", numItermax=100000, stopThr=1e-13)


@pytest.mark.parametrize("seed,n,m,eps", [(0, 7, 5, 0.1), (1, 40, 25, 0.05), (2, 30, 30, 0.01), (3, 64, 48, 0.02)])
def test_matches_pot_sinkhorn_log(seed, n, m, eps):
    rng = np.random.default_rng(seed)
    C, a, b = point_cost(rng, n, m), weights(rng, n), weights(rng, m)
    P, info = rematch.ot.sinkhorn(C, a, b, eps=eps, **CONVERGED)
    expected = ot.sinkhorn(a, b, C, eps, **POT)
    assert info["converged"]
    np.testing.assert_allclose(P, expected, rtol=1e-8, atol=1e-14)
    # The potentials: P = exp((f + g - C) / eps).
    np.testing.assert_allclose(np.exp((info["f"][:, None] + info["g"][None, :] - C) / eps), P, rtol=1e-10, atol=1e-16)


@pytest.mark.parametrize("seed", [4, 5])
def test_masked_entries_are_exactly_zero_and_the_rest_matches_pot(seed):
    rng = np.random.default_rng(seed)
    n, m, eps = 12, 10, 0.1
    C, a, b, mask = rng.random((n, m)), weights(rng, n), weights(rng, m), random_mask(rng, n, m)
    P, info = rematch.ot.sinkhorn(C, a, b, eps=eps, mask=mask, **CONVERGED)
    assert (P[~mask] == 0).all()
    # POT has no mask: a cost of 1e4 has kernel exp(-1e5) = 0 in float64, the same problem.
    expected = ot.sinkhorn(a, b, np.where(mask, C, 1e4), eps, **POT)
    np.testing.assert_allclose(P, expected, rtol=1e-8, atol=1e-14)


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-9), (np.float32, 1e-5)])
@pytest.mark.parametrize("stop", ["marginal", "potential"])
def test_marginals_are_met(dtype, tol, stop):
    rng = np.random.default_rng(6)
    C = point_cost(rng, 50, 30).astype(dtype)
    a, b = weights(rng, 50).astype(dtype), weights(rng, 30).astype(dtype)
    P, info = rematch.ot.sinkhorn(C, a, b, eps=0.05, tol=tol * 0.1, stop=stop, mask=random_mask(rng, 50, 30))
    assert P.dtype == dtype and P.shape == (50, 30)
    assert info["converged"]
    np.testing.assert_allclose(P.sum(0), b, atol=tol)  # exact after the column half-step
    np.testing.assert_allclose(P.sum(1), a, atol=10 * tol)
    if stop == "marginal":
        assert info["error"] < tol * 0.1
        assert abs(np.abs(P.astype(np.float64).sum(1) - a).sum() - info["error"]) < tol


def test_uniform_weights_when_a_and_b_are_none():
    C = point_cost(np.random.default_rng(7), 8, 6)
    P, _ = rematch.ot.sinkhorn(C, eps=0.1, **CONVERGED)
    Q, _ = rematch.ot.sinkhorn(C, np.full(8, 1 / 8), np.full(6, 1 / 6), eps=0.1, **CONVERGED)
    np.testing.assert_array_equal(P, Q)


def test_scaling_domain_agrees_with_log_domain():
    rng = np.random.default_rng(8)
    C, a, b = point_cost(rng, 20, 15), weights(rng, 20), weights(rng, 15)
    P_log, _ = rematch.ot.sinkhorn(C, a, b, eps=0.1, **CONVERGED)
    P_scaling, _ = rematch.ot.sinkhorn(C, a, b, eps=0.1, domain="scaling", **CONVERGED)
    np.testing.assert_allclose(P_scaling, P_log, rtol=1e-8, atol=1e-15)


def test_tol_zero_runs_exactly_max_iter():
    C = point_cost(np.random.default_rng(9), 10, 10)
    _, info = rematch.ot.sinkhorn(C, eps=0.1, tol=0, max_iter=37)
    assert info["iterations"] == 37 and not info["converged"]


def test_batched_equals_one_by_one():
    rng = np.random.default_rng(10)
    B, n, m = 5, 16, 12
    C = np.stack([point_cost(rng, n, m) for _ in range(B)])
    a = np.stack([weights(rng, n) for _ in range(B)])
    b = np.stack([weights(rng, m) for _ in range(B)])
    mask = np.stack([random_mask(rng, n, m) for _ in range(B)])
    P, info = rematch.ot.sinkhorn(C, a, b, eps=0.05, mask=mask, tol=1e-10)
    assert P.shape == (B, n, m) and info["f"].shape == (B, n) and info["g"].shape == (B, m)
    assert len(info["iterations"]) == len(info["error"]) == len(info["converged"]) == B
    for k in range(B):
        Pk, ik = rematch.ot.sinkhorn(C[k], a[k], b[k], eps=0.05, mask=mask[k], tol=1e-10)
        np.testing.assert_array_equal(P[k], Pk)
        np.testing.assert_array_equal(info["f"][k], ik["f"])
        assert (info["iterations"][k], info["error"][k], info["converged"][k]) == \
            (ik["iterations"], ik["error"], ik["converged"])


def test_batch_shares_a_mask_and_weights_given_once():
    rng = np.random.default_rng(11)
    C = np.stack([point_cost(rng, 9, 9) for _ in range(3)])
    mask = ~np.eye(9, dtype=bool)
    P, _ = rematch.ot.sinkhorn(C, np.full(9, 1 / 9), None, eps=0.1, mask=mask, **CONVERGED)
    for k in range(3):
        np.testing.assert_array_equal(P[k], rematch.ot.sinkhorn(C[k], eps=0.1, mask=mask, **CONVERGED)[0])


def test_a_strided_view_gives_the_plan_of_its_copy():
    rng = np.random.default_rng(12)
    big = point_cost(rng, 30, 40)
    view = big.T[::2, 1:25]  # non-contiguous: rematch copies it once
    P, _ = rematch.ot.sinkhorn(view, eps=0.05, **CONVERGED)
    Q, _ = rematch.ot.sinkhorn(np.ascontiguousarray(view), eps=0.05, **CONVERGED)
    np.testing.assert_array_equal(P, Q)
    reversed_rows = np.ascontiguousarray(view)[::-1]  # negative strides: copied on the Python side
    R, _ = rematch.ot.sinkhorn(reversed_rows, eps=0.05, **CONVERGED)
    np.testing.assert_array_equal(R, rematch.ot.sinkhorn(reversed_rows.copy(), eps=0.05, **CONVERGED)[0])


def test_read_only_arrays_are_accepted():
    C = point_cost(np.random.default_rng(13), 6, 6)
    C.flags.writeable = False
    mask = np.broadcast_to(~np.eye(6, dtype=bool), (6, 6))  # read-only view
    P, _ = rematch.ot.sinkhorn(C, eps=0.1, mask=mask)
    assert (np.diag(P) == 0).all()


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_numpy_and_torch_give_the_same_plan(dtype):
    rng = np.random.default_rng(14)
    C = point_cost(rng, 25, 20).astype(dtype)
    a, b, mask = weights(rng, 25).astype(dtype), weights(rng, 20).astype(dtype), random_mask(rng, 25, 20)
    P, info = rematch.ot.sinkhorn(C, a, b, eps=0.05, mask=mask)
    T, tinfo = rematch.ot.sinkhorn(torch.from_numpy(C).requires_grad_(), torch.from_numpy(a), torch.from_numpy(b),
                                   eps=0.05, mask=torch.from_numpy(mask))
    assert isinstance(T, torch.Tensor) and T.dtype == getattr(torch, dtype) and T.device.type == "cpu"
    assert isinstance(tinfo["f"], torch.Tensor) and not T.requires_grad
    np.testing.assert_array_equal(T.numpy(), P)
    np.testing.assert_array_equal(tinfo["g"].numpy(), info["g"])
    assert tinfo["iterations"] == info["iterations"]


@needs_torch
def test_matches_pot_with_its_torch_backend():
    rng = np.random.default_rng(15)
    C, a, b = (torch.from_numpy(x) for x in (point_cost(rng, 20, 30), weights(rng, 20), weights(rng, 30)))
    P, _ = rematch.ot.sinkhorn(C, a, b, eps=0.05, **CONVERGED)
    expected = ot.sinkhorn(a, b, C, 0.05, **POT)
    assert isinstance(expected, torch.Tensor)
    torch.testing.assert_close(P, expected, rtol=1e-8, atol=1e-14)
