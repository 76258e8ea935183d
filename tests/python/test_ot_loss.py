"""rematch.ot.sinkhorn2 and partial_sinkhorn2 as PyTorch losses (docs/ot.md §9): torch.autograd.gradcheck in float64
for every loss, value and argument; values and gradients against POT's torch backend (autodiff through its
sweeps), against POT's exact partial OT as eps -> 0, and against a converged solve for the exactness claim of
§9.3; a training loop that reaches a known optimum; a graph that does not grow with the sweeps; named errors."""
import warnings

import numpy as np
import pytest

import rematch
from support import needs_cuda, point_cost, torch, weights

try:
    import ot
except ImportError:
    ot = None

pytestmark = pytest.mark.skipif(torch is None, reason="needs PyTorch (apt-get install python3-torch)")
needs_pot = pytest.mark.skipif(ot is None, reason="needs POT (apt-get install python3-pot)")

# Every sweep of a fixed count (tol = 0): the forward is one smooth function of its inputs, converged to rounding
# at these sizes and eps, so central differences see no change of the iteration count.
FIXED = dict(tol=0, max_iter=3000)
GRADCHECK = dict(atol=1e-8, rtol=1e-6)  # gradcheck's own defaults are atol 1e-5, rtol 1e-3
CONVERGED = dict(tol=1e-14, max_iter=10 ** 6)


def t64(x, grad=False):
    return torch.tensor(np.asarray(x), dtype=torch.float64, requires_grad=grad)


def problem(seed, n=5, m=4, B=None, mass_b=1.0):
    rng = np.random.default_rng(seed)
    shape = (n, m) if B is None else (B, n, m)
    C = rng.random(shape) + 0.05
    mask = np.ones((n, m), bool)
    mask[0, 0] = mask[2, 1] = mask[n - 1, m - 1] = False
    a = rng.random(n if B is None else (B, n)) + 0.3
    b = rng.random(m if B is None else (B, m)) + 0.3
    return C, a / a.sum(-1, keepdims=True), b / b.sum(-1, keepdims=True) * mass_b, mask


def normalised(w, total=1.0):
    # a balanced problem needs sum(a) = sum(b): the weights are checked through a normalisation, so only the
    # centred part of their gradient is seen (the part the loss defines).
    return w / w.sum(-1, keepdim=True) * total


# ---- gradcheck ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("value", ["linear", "entropic"])
@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("batch", [None, 3])
@pytest.mark.parametrize("arg", ["C", "a", "b"])
def test_sinkhorn2_gradcheck(value, masked, batch, arg):
    C, a, b, mask = problem(10 + (batch or 0), B=batch)
    inputs = {"C": t64(C), "a": t64(a), "b": t64(b)}
    inputs[arg].requires_grad_()
    mask = torch.from_numpy(mask) if masked else None

    def loss(x):
        args = dict(inputs, **{arg: x})
        if arg != "C":
            args[arg] = normalised(x)
        return rematch.ot.sinkhorn2(args["C"], args["a"], args["b"], eps=0.2, mask=mask, value=value, **FIXED)

    assert torch.autograd.gradcheck(loss, (inputs[arg],), **GRADCHECK)


@pytest.mark.parametrize("value", ["linear", "entropic"])
@pytest.mark.parametrize("dummy", ["l2rm", "zero"])
@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("batch", [None, 3])
@pytest.mark.parametrize("arg", ["C", "a", "b", "mass"])
def test_partial_sinkhorn2_gradcheck(value, dummy, masked, batch, arg):
    C, a, b, mask = problem(20 + (batch or 0), B=batch, mass_b=1.25)
    mass = [0.6, 0.45, 0.7] if batch else 0.6
    inputs = {"C": t64(C), "a": t64(a), "b": t64(b), "mass": t64(mass)}
    inputs[arg].requires_grad_()
    mask = torch.from_numpy(mask) if masked else None

    def loss(x):  # a, b and the mass change freely: the dummies absorb the difference
        args = dict(inputs, **{arg: x})
        return rematch.ot.partial_sinkhorn2(args["C"], args["mass"], args["a"], args["b"], eps=0.2, dummy=dummy,
                                            mask=mask, value=value, **FIXED)

    assert torch.autograd.gradcheck(loss, (inputs[arg],), **GRADCHECK)


def test_gradcheck_with_shared_weights_over_a_batch():
    """a [n] shared by the problems of C [B, n, m]: its gradient is the sum over the problems."""
    C, _, b, mask = problem(30, B=2)
    a = t64(np.random.default_rng(31).random(5) + 0.3, grad=True)
    loss = lambda a: rematch.ot.sinkhorn2(t64(C), normalised(a), t64(b), eps=0.2, mask=torch.from_numpy(mask),
                                          **FIXED)
    assert torch.autograd.gradcheck(loss, (a,), **GRADCHECK)
    loss = lambda a: rematch.ot.partial_sinkhorn2(t64(C), 0.5, a, t64(b), eps=0.2, **FIXED)
    assert torch.autograd.gradcheck(loss, (a,), **GRADCHECK)


def test_the_large_problem_path_gives_the_dense_paths_gradient(monkeypatch):
    """Above DENSE_LIMIT the adjoint system is solved by conjugate gradients: the same gradient."""
    from rematch import _ot_grad
    rng = np.random.default_rng(32)
    C, a, b = point_cost(rng, 30, 20), weights(rng, 30), weights(rng, 20)
    grads = []
    for limit in (_ot_grad.DENSE_LIMIT, 2):
        monkeypatch.setattr(_ot_grad, "DENSE_LIMIT", limit)
        Ct, at, bt = t64(C, True), t64(a, True), t64(b, True)
        grads.append(torch.autograd.grad(rematch.ot.sinkhorn2(Ct, at, bt, eps=0.02, **CONVERGED), (Ct, at, bt)))
    for dense, cg in zip(*grads):
        torch.testing.assert_close(cg, dense, rtol=1e-9, atol=1e-12)


# ---- against POT ----------------------------------------------------------------------------------------------

POT = dict(method="sinkhorn_log", numItermax=20000, stopThr=1e-15)


def pot_quietly(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # POT's "did not converge" at a stopThr below what float64 reaches
        return fn(*args, **kw)


def grads(fn, *xs):
    xs = [x.detach().clone().requires_grad_() for x in xs]
    out = fn(*xs)
    return out.detach(), torch.autograd.grad(out, xs)


def centred(v):
    return v - v.mean(-1, keepdim=True)


@needs_pot
@pytest.mark.parametrize("seed,n,m,eps", [(0, 7, 5, 0.1), (1, 40, 25, 0.05), (2, 30, 30, 0.02)])
@pytest.mark.parametrize("masked", [False, True])
def test_sinkhorn2_equals_pot_sinkhorn2_autodiff(seed, n, m, eps, masked):
    """POT's ot.sinkhorn2 returns <P, M> and differentiates through its sweeps: at convergence, the same value and
    gradients (for a and b the centred part: POT's autodiff gradient has an arbitrary constant)."""
    rng = np.random.default_rng(seed)
    C, a, b = t64(point_cost(rng, n, m)), t64(weights(rng, n)), t64(weights(rng, m))
    mask = torch.from_numpy(rng.random((n, m)) > 0.2) if masked else None
    if masked:
        mask[np.arange(min(n, m)), np.arange(min(n, m))] = True
    value, (gC, ga, gb) = grads(lambda C, a, b: rematch.ot.sinkhorn2(C, a, b, eps=eps, mask=mask, **CONVERGED),
                                C, a, b)
    # POT has no mask: a cost of 1e4 has kernel exp(-1e4 / eps) = 0 in float64, the same problem.
    pot_cost = (lambda C: C) if mask is None else (lambda C: torch.where(mask, C, torch.full_like(C, 1e4)))
    expected, (eC, ea, eb) = grads(lambda C, a, b: pot_quietly(ot.sinkhorn2, a, b, pot_cost(C), eps, **POT), C, a, b)
    assert abs(float(value - expected)) < 1e-12
    torch.testing.assert_close(gC, eC, rtol=1e-8, atol=1e-12)
    torch.testing.assert_close(ga, centred(ea), rtol=1e-8, atol=1e-12)
    torch.testing.assert_close(gb, centred(eb), rtol=1e-8, atol=1e-12)
    assert abs(float(ga.sum())) < 1e-12 and abs(float(gb.sum())) < 1e-12
    if masked:
        assert (gC[~mask] == 0).all()


@needs_pot
def test_entropic_value_equals_pots_plan_value_and_its_gradient_is_the_plan():
    """value="entropic" is <P, M> + eps sum P log P (POT's Omega); its gradient with respect to M is the plan."""
    rng = np.random.default_rng(3)
    C, a, b, eps = t64(point_cost(rng, 20, 15)), t64(weights(rng, 20)), t64(weights(rng, 15)), 0.05
    value, (gC, ga, gb) = grads(lambda C, a, b: rematch.ot.sinkhorn2(C, a, b, eps=eps, value="entropic",
                                                                     **CONVERGED), C, a, b)

    def pot_entropic(C, a, b):
        P = pot_quietly(ot.sinkhorn, a, b, C, eps, **POT)
        return (P * C).sum() + eps * (P * torch.log(P)).sum()

    expected, (eC, ea, eb) = grads(pot_entropic, C, a, b)
    P = torch.from_numpy(ot.sinkhorn(a.numpy(), b.numpy(), C.numpy(), eps, **POT))
    assert abs(float(value - expected)) < 1e-12
    torch.testing.assert_close(gC, P, rtol=1e-8, atol=1e-13)
    torch.testing.assert_close(gC, eC, rtol=1e-7, atol=1e-12)
    torch.testing.assert_close(ga, centred(ea), rtol=1e-7, atol=1e-12)
    torch.testing.assert_close(gb, centred(eb), rtol=1e-7, atol=1e-12)


@pytest.mark.skipif(ot is None or not hasattr(ot, "solve"),
                    reason=f"POT {getattr(ot, '__version__', '(not installed)')} has no ot.solve (POT >= 0.9)")
def test_equals_pot_solve_implicit():
    import inspect
    if "grad" not in inspect.signature(ot.solve).parameters:
        pytest.skip(f"POT {ot.__version__}'s ot.solve has no grad= argument")
    rng = np.random.default_rng(4)
    C, a, b, eps = t64(point_cost(rng, 20, 15)), t64(weights(rng, 20)), t64(weights(rng, 15)), 0.05
    for value, field in (("linear", "value_linear"), ("entropic", "value")):
        ours, (gC, ga, gb) = grads(lambda C, a, b: rematch.ot.sinkhorn2(C, a, b, eps=eps, value=value,
                                                                        **CONVERGED), C, a, b)
        theirs, (eC, ea, eb) = grads(lambda C, a, b: getattr(ot.solve(
            C, a, b, reg=eps, reg_type="entropy", grad="implicit", max_iter=100000, tol=1e-14), field), C, a, b)
        assert abs(float(ours - theirs)) < 1e-10
        torch.testing.assert_close(gC, eC, rtol=1e-6, atol=1e-10)
        torch.testing.assert_close(ga, centred(ea), rtol=1e-6, atol=1e-10)
        torch.testing.assert_close(gb, centred(eb), rtol=1e-6, atol=1e-10)


@needs_pot
def test_batched_sinkhorn2_is_each_problem_alone():
    rng = np.random.default_rng(5)
    C = t64(np.stack([point_cost(rng, 12, 9) for _ in range(4)]))
    a, b = t64(np.stack([weights(rng, 12) for _ in range(4)])), t64(weights(rng, 9))
    values, (gC, ga) = grads(lambda C, a: rematch.ot.sinkhorn2(C, a, b, eps=0.05, **CONVERGED).sum(), C, a)
    for k in range(4):
        value, (eC, ea) = grads(lambda C, a: pot_quietly(ot.sinkhorn2, a, b, C, 0.05, **POT), C[k], a[k])
        torch.testing.assert_close(gC[k], eC, rtol=1e-8, atol=1e-12)
        torch.testing.assert_close(ga[k], centred(ea), rtol=1e-8, atol=1e-12)
    assert values.shape == ()


def augmented(C, a, b, mass, dummy):
    """Chapel et al.'s (n+1)x(m+1) problem (docs/ot.md §3) built with differentiable torch ops: dummy row and
    column at cost 0, corner max C ("l2rm", xi subtracted) or 0 ("zero")."""
    n, m = C.shape
    corner = C.max() if dummy == "l2rm" else torch.zeros((), dtype=C.dtype)
    Ch = torch.cat([torch.cat([C, torch.zeros(n, 1, dtype=C.dtype)], 1),
                    torch.cat([torch.zeros(1, m, dtype=C.dtype), corner.view(1, 1)], 1)], 0)
    return Ch, torch.cat([a, (b.sum() - mass).view(1)]), torch.cat([b, (a.sum() - mass).view(1)])


@needs_pot
@pytest.mark.parametrize("dummy", ["l2rm", "zero"])
@pytest.mark.parametrize("value", ["linear", "entropic"])
@pytest.mark.parametrize("seed,n,m,mass,eps", [(6, 20, 20, 0.6, 0.02), (7, 12, 10, 0.5, 0.05)])
def test_partial_sinkhorn2_equals_pot_on_the_augmented_problem(dummy, value, seed, n, m, mass, eps):
    """POT's partial construction (ot.partial: dummy row and column) solved by ot.sinkhorn on the torch backend and
    differentiated through its sweeps and through the augmentation (the corner's max C included)."""
    rng = np.random.default_rng(seed)
    C, a, b, s = t64(point_cost(rng, n, m)), t64(weights(rng, n)), t64(weights(rng, m, 1.25)), t64(mass)
    value_, (gC, ga, gb, gs) = grads(lambda C, a, b, s: rematch.ot.partial_sinkhorn2(
        C, s, a, b, eps=eps, dummy=dummy, value=value, **CONVERGED), C, a, b, s)

    def pot(C, a, b, s):
        Ch, ah, bh = augmented(C, a, b, s, dummy)
        P = pot_quietly(ot.sinkhorn, ah, bh, Ch, eps, **POT)
        if value == "linear":
            return (P[:n, :m] * C).sum()
        return (P * Ch).sum() + eps * (P * torch.log(P)).sum()

    expected, (eC, ea, eb, es) = grads(pot, C, a, b, s)
    assert abs(float(value_ - expected)) < 1e-12
    for ours, theirs in ((gC, eC), (ga, ea), (gb, eb), (gs, es)):
        torch.testing.assert_close(ours, theirs, rtol=1e-7, atol=1e-11)


@needs_pot
def test_partial_gradients_tend_to_pots_exact_partial_ot():
    """As eps -> 0: the value tends to POT's exact partial cost (ot.partial.partial_wasserstein2), the gradient
    with respect to C to its exact partial plan, and the gradient with respect to the mass to the exact cost's
    slope in the mass — the multiplier of the mass constraint (docs/ot.md §9.5)."""
    rng = np.random.default_rng(8)
    n, m, s = 12, 9, 0.6
    C, a, b = point_cost(rng, n, m), weights(rng, n), weights(rng, m, 1.25)
    exact = ot.partial.partial_wasserstein2(a, b, C, m=s)
    plan = ot.partial.partial_wasserstein(a, b, C, m=s)
    h = 1e-4
    cost = lambda s: ot.partial.partial_wasserstein2(a, b, C, m=s)  # noqa: E731
    slope = (cost(s + h) - cost(s - h)) / (2 * h)
    errors = []
    for eps in (0.02, 0.005, 0.001):
        value, (gC, gs) = grads(lambda C, s: rematch.ot.partial_sinkhorn2(C, s, t64(a), t64(b), eps=eps,
                                                                          tol=1e-12, max_iter=10 ** 6), t64(C), t64(s))
        errors.append((abs(float(value) - exact), np.abs(gC.numpy() - plan).sum(), abs(float(gs) - slope)))
    # measured: (8.7e-3, 0.42, 1.3e-2), (7.1e-4, 0.16, 1.8e-3), (7.0e-5, 0.015, 4.7e-6); the slope is 0.0397
    assert errors[-1][0] < 2e-4 and errors[-1][1] < 0.03 and errors[-1][2] < 1e-4
    assert errors[0][0] > errors[1][0] > errors[2][0] and errors[0][1] > errors[1][1] > errors[2][1]


# ---- what tol buys --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("value", ["linear", "entropic"])
def test_a_loose_solve_is_exact_for_the_plans_own_row_weights(value):
    """docs/ot.md §9.3: stopped early, the plan P is the converged plan of the problem with row weights P·1; the
    value and the gradient with respect to C are exactly those of that problem."""
    rng = np.random.default_rng(9)
    C, a, b, eps = t64(point_cost(rng, 25, 20)), t64(weights(rng, 25)), t64(weights(rng, 20)), 0.02
    with pytest.warns(RuntimeWarning, match="did not reach tol"):
        loose, (gC,) = grads(lambda C: rematch.ot.sinkhorn2(C, a, b, eps=eps, value=value, max_iter=5, tol=1e-12), C)
    P, info = rematch.ot.sinkhorn(C, a, b, eps=eps, max_iter=5, tol=0)
    assert info["error"] > 1e-3  # far from a: the loose answer is not the converged one for a
    row_weights = P.sum(1)
    tight, (eC,) = grads(lambda C: rematch.ot.sinkhorn2(C, row_weights, b, eps=eps, value=value, **CONVERGED), C)
    assert abs(float(loose - tight)) < 1e-12
    torch.testing.assert_close(gC, eC, rtol=1e-7, atol=1e-11)
    converged, (cC,) = grads(lambda C: rematch.ot.sinkhorn2(C, a, b, eps=eps, value=value, **CONVERGED), C)
    assert (gC - cC).abs().max() > 1e-4


# ---- float32, training, memory --------------------------------------------------------------------------------

@pytest.mark.parametrize("loss", ["sinkhorn2", "partial_sinkhorn2"])
def test_float32_follows_float64(loss):
    rng = np.random.default_rng(11)
    C = np.stack([point_cost(rng, 30, 30) for _ in range(3)])
    mask = torch.from_numpy(~np.eye(30, dtype=bool))
    fn = (lambda C: rematch.ot.sinkhorn2(C, eps=0.05, mask=mask)) if loss == "sinkhorn2" else \
        (lambda C: rematch.ot.partial_sinkhorn2(C, 0.3, eps=0.05, mask=mask))
    v64, (g64,) = grads(lambda C: fn(C).sum(), t64(C))
    v32, (g32,) = grads(lambda C: fn(C).sum(), torch.tensor(C, dtype=torch.float32))
    assert v32.dtype == torch.float32 and g32.dtype == torch.float32
    assert abs(float(v32) - float(v64)) < 1e-5 * abs(float(v64))
    assert float((g32.double() - g64).abs().max()) < 1e-3 * float(g64.abs().max())


def rotation(theta, scale):
    c, s = np.cos(theta), np.sin(theta)
    return torch.tensor(scale * np.array([[c, -s], [s, c]]))


def fit(params, loss, steps=200, lr=0.02):
    opt = torch.optim.Adam(params, lr=lr)
    for _ in range(steps):
        opt.zero_grad()
        value = loss()
        value.backward()
        opt.step()
    return float(value)


def test_training_recovers_a_linear_map_through_a_batched_sinkhorn_divergence():
    """Y = X A*ᵀ shuffled. The Sinkhorn divergence W(XAᵀ, Y) - W(XAᵀ, XAᵀ)/2 - W(Y, Y)/2 of the entropic value is
    >= 0 and 0 only when the point sets are equal (Feydy et al. 2019), so its minimum is A* at any eps: gradient
    descent through one batched call [3, n, n] reaches it."""
    rng = np.random.default_rng(12)
    X = torch.tensor(rng.random((10, 2)) * 2 - 1)
    A_true = rotation(0.5, 1.2)
    Y = (X @ A_true.T)[torch.from_numpy(rng.permutation(10))]
    A = (A_true + 0.15 * torch.tensor(rng.standard_normal((2, 2)))).requires_grad_()

    def divergence():
        Z = X @ A.T
        W = rematch.ot.sinkhorn2(torch.stack([torch.cdist(Z, Y), torch.cdist(Z, Z), torch.cdist(Y, Y)]) ** 2,
                                 eps=0.5, value="entropic")
        return W[0] - W[1] / 2 - W[2] / 2

    start = float((A - A_true).abs().max())
    final = fit([A], divergence)
    # measured: |A - A*| 2.3e-6 from 0.19, divergence 8e-12
    assert float((A - A_true).abs().max()) < 1e-4 < start and final < 1e-9


@pytest.mark.parametrize("masked", [False, True])
def test_training_recovers_a_translation_through_the_linear_value(masked):
    """C(t)_ij = |x_i + t - y_j|^2 = |x_i - y_j|^2 + |t|^2 + 2 t.(x_i - y_j): the t terms shift rows and columns,
    which does not move the plan, so <P, C(t)> = const + |t|^2 + 2 t.(mean x - mean y) (uniform weights) and its
    minimum is t* = mean y - mean x exactly, at any eps and under any mask. Its gradient is right only if the
    implicit term of (9.4) vanishes on row and column shifts, as the adjoint system makes it."""
    rng = np.random.default_rng(13)
    X = torch.tensor(rng.random((10, 2)) * 2 - 1)
    Y = (X + torch.tensor([0.7, -0.3]))[torch.from_numpy(rng.permutation(10))]
    mask = torch.from_numpy(rng.random((10, 10)) > 0.3) if masked else None
    t = torch.zeros(2, dtype=torch.float64, requires_grad=True)
    fit([t], lambda: rematch.ot.sinkhorn2(torch.cdist(X + t, Y) ** 2, eps=0.3, mask=mask), lr=0.05)
    assert float((t - (Y.mean(0) - X.mean(0))).abs().max()) < 1e-4  # measured 3.7e-6


@pytest.mark.parametrize("dummy", ["l2rm", "zero"])
@pytest.mark.parametrize("value", ["linear", "entropic"])
def test_training_ignores_outliers_through_partial_sinkhorn2(dummy, value):
    """Y = X + t* plus 4 outliers 4 or more away: transporting 0.9 of the inliers' mass 1.0 leaves the outliers to
    the dummy (their kernel exp(-16 / eps) is 1e-23), and the fit reaches t*; the balanced loss would be pulled
    towards the outliers."""
    rng = np.random.default_rng(14)
    X = torch.tensor(rng.random((10, 2)) * 2 - 1)
    t_true = torch.tensor([0.7, -0.3], dtype=torch.float64)
    Y = torch.cat([X + t_true, torch.tensor(rng.random((4, 2)) + 4)])
    a, b = torch.full((10,), 0.1, dtype=torch.float64), torch.full((14,), 0.1, dtype=torch.float64)
    t = torch.zeros(2, dtype=torch.float64, requires_grad=True)
    fit([t], lambda: rematch.ot.partial_sinkhorn2(torch.cdist(X + t, Y) ** 2, 0.9, a, b, eps=0.3, dummy=dummy,
                                                  value=value), lr=0.05)
    assert float((t - t_true).abs().max()) < 1e-4  # measured 0.9e-6 to 7e-6


def graph_size(t):
    seen, todo = set(), [t.grad_fn]
    while todo:
        node = todo.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        todo.extend(n for n, _ in node.next_functions)
    return len(seen)


@pytest.mark.parametrize("sweeps", [10, 1000])
def test_the_graph_is_one_node_whatever_the_sweeps(sweeps):
    """No per-sweep graph: the loss is one autograd node over C, a, b (the backward keeps P, f, g and C only)."""
    rng = np.random.default_rng(14)
    C, a, b = t64(point_cost(rng, 8, 6), True), t64(weights(rng, 8), True), t64(weights(rng, 6), True)
    L = rematch.ot.sinkhorn2(C, a, b, eps=0.1, max_iter=sweeps, tol=0)
    assert type(L.grad_fn).__name__ == "Sinkhorn2Backward"
    assert graph_size(L) == 1 + 3  # the loss, and one AccumulateGrad per input
    saved = [t.shape for t in L.grad_fn.saved_tensors if t is not None]  # C, P, f, g (the mask is None)
    assert saved == [(1, 8, 6), (1, 8, 6), (1, 8), (1, 6)]
    L = rematch.ot.partial_sinkhorn2(C, 0.5, a, b, eps=0.1, max_iter=sweeps, tol=0)
    saved = [t.shape for t in L.grad_fn.saved_tensors if t is not None]  # C, P̂, f, g
    assert saved == [(1, 8, 6), (1, 9, 7), (1, 9), (1, 7)]


# ---- errors ---------------------------------------------------------------------------------------------------

if torch is not None:  # (the module is skipped without PyTorch, but still imported)
    C0 = torch.rand(5, 4, dtype=torch.float64)
    U5, U4 = torch.full((5,), 0.2, dtype=torch.float64), torch.full((4,), 0.25, dtype=torch.float64)


@pytest.mark.parametrize("call,error,message", [
    (lambda: rematch.ot.sinkhorn2(C0.numpy(), eps=0.1), TypeError,
     r"sinkhorn2: C must be a PyTorch tensor \(the loss is a PyTorch loss\), got numpy.ndarray \(use "
     r"rematch.ot.sinkhorn"),
    (lambda: rematch.ot.sinkhorn2(C0.long(), eps=0.1), TypeError, "C must be float32 or float64, got torch.int64"),
    (lambda: rematch.ot.sinkhorn2(C0, U5.float(), eps=0.1), TypeError,
     r"a is torch.float32 but C is torch.float64; pass a in C's dtype \(a.to\(C.dtype\)\)"),
    (lambda: rematch.ot.sinkhorn2(C0, U5, U4.to("meta"), eps=0.1), ValueError,
     r"b is on meta but C is on cpu; pass b on C's device \(b.to\(C.device\)\)"),
    (lambda: rematch.ot.sinkhorn2(C0, mask=torch.ones(5, 4, dtype=torch.bool, device="meta"), eps=0.1),
     ValueError, "mask is on meta but C is on cpu"),
    (lambda: rematch.ot.partial_sinkhorn2(C0, torch.tensor(0.5, device="meta"), eps=0.1), ValueError,
     "mass is on meta but C is on cpu"),
    # gradients asked through an argument that has none
    (lambda: rematch.ot.sinkhorn2(C0, mask=torch.ones(5, 4, requires_grad=True), eps=0.1), TypeError,
     r"mask requires grad, but the loss has no gradient with respect to mask \(it says where transport is "
     r"allowed, a constraint\); pass mask.detach\(\)"),
    (lambda: rematch.ot.sinkhorn2(C0, eps=torch.tensor(0.1, requires_grad=True)), TypeError,
     "eps requires grad, but the loss has no gradient with respect to eps"),
    (lambda: rematch.ot.sinkhorn2(C0, torch.tensor([0.4, 0, 0.2, 0.2, 0.2], dtype=torch.float64,
                                                   requires_grad=True), eps=0.1), ValueError,
     r"a\[1\] = 0.0 while a requires grad: the gradient with respect to a zero weight is not finite"),
    (lambda: rematch.ot.partial_sinkhorn2(C0, torch.tensor(1.0, requires_grad=True), eps=0.1), ValueError,
     r"mass = 1.0 equals min\(sum\(a\), sum\(b\)\) = 1.0 \(to 1e-06 relative\): a dummy has weight 0"),
    # a mass above the smaller marginal is too large, whether or not it requires grad (not "equals")
    (lambda: rematch.ot.partial_sinkhorn2(C0, torch.tensor(1.5, dtype=torch.float64, requires_grad=True), eps=0.1),
     ValueError, r"partial_sinkhorn2: partial_sinkhorn: mass = 1.5 is larger than the smaller marginal"),
    # options name the argument
    (lambda: rematch.ot.sinkhorn2(C0, eps="x"), TypeError, "rematch.ot.sinkhorn2: eps must be a number, got 'x'"),
    (lambda: rematch.ot.sinkhorn2(C0, eps=np.array([0.1, 0.2])), TypeError,
     r"rematch.ot.sinkhorn2: eps must be a number, got array\(\[0.1, 0.2\]\)"),
    (lambda: rematch.ot.partial_sinkhorn2(C0, 0.5, eps=torch.tensor([0.1, 0.2])), TypeError,
     "rematch.ot.partial_sinkhorn2: eps must be a number"),
    (lambda: rematch.ot.sinkhorn2(C0, eps=0.1, tol="x"), TypeError, "rematch.ot.sinkhorn2: tol must be a number"),
    (lambda: rematch.ot.sinkhorn2(C0, eps=0.1, max_iter=1.5), TypeError,
     "^rematch.ot.sinkhorn2: max_iter must be an integer, got 1.5"),
    (lambda: rematch.ot.partial_sinkhorn2(C0, 0.5, eps=0.1, stop=None), TypeError,
     "^rematch.ot.partial_sinkhorn2: stop must be a string, got None"),
    # NaN and inf
    (lambda: rematch.ot.sinkhorn2(C0.index_put((torch.tensor([1]), torch.tensor([2])),
                                              torch.tensor(float("nan"), dtype=torch.float64)), eps=0.1),
     ValueError, r"cost C\[1, 2\] = nan is not finite"),
    (lambda: rematch.ot.sinkhorn2(C0, torch.tensor([0.2, 0.2, float("inf"), 0.2, 0.2], dtype=torch.float64),
                                  eps=0.1), ValueError, r"weight a\[2\] = inf must be finite and >= 0"),
    (lambda: rematch.ot.partial_sinkhorn2(C0.index_put((torch.tensor([3]), torch.tensor([0])),
                                                       torch.tensor(float("inf"), dtype=torch.float64)), 0.5, eps=0.1),
     ValueError, r"cost C\[3, 0\] = inf is not finite"),
    (lambda: rematch.ot.partial_sinkhorn2(C0, float("nan"), eps=0.1), ValueError, r"mass = \[nan\] is not finite"),
    (lambda: rematch.ot.sinkhorn2(C0, eps=float("nan")), ValueError, "eps = nan must be finite and > 0"),
    # options and shapes
    (lambda: rematch.ot.sinkhorn2(C0, eps=0.1, value="plan"), ValueError, "value = 'plan' is not a loss value"),
    (lambda: rematch.ot.partial_sinkhorn2(C0, 0.5, eps=0.1, dummy="none"), ValueError,
     "dummy = 'none' is not a dummy cost"),
    (lambda: rematch.ot.partial_sinkhorn2(C0.expand(3, 5, 4), [0.5, 0.5], eps=0.1), ValueError,
     r"mass has shape \[2\] for 3 problems"),
    (lambda: rematch.ot.sinkhorn2(C0[0], eps=0.1), ValueError, r"C must be one cost matrix \[n, m\] or a batch"),
])
def test_errors_are_named(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_masked_costs_may_be_infinite():
    """The solver never reads a masked cost; neither do the value and the gradient."""
    mask = torch.ones(5, 4, dtype=torch.bool)
    mask[1, 2] = False
    C = C0.clone()
    C[1, 2] = float("inf")
    C.requires_grad_()
    for fn in (rematch.ot.sinkhorn2, lambda C, **kw: rematch.ot.partial_sinkhorn2(C.nan_to_num(posinf=0), 0.5, **kw)):
        L = fn(C, eps=0.1, mask=mask)
        (g,) = torch.autograd.grad(L, C)
        assert torch.isfinite(L) and torch.isfinite(g).all() and g[1, 2] == 0


# ---- CUDA -----------------------------------------------------------------------------------------------------

@needs_cuda
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64] if torch is not None else [])
@pytest.mark.parametrize("loss", ["sinkhorn2", "partial_sinkhorn2"])
def test_cuda_loss_and_gradients_match_the_cpu(dtype, loss):
    rng = np.random.default_rng(15)
    C = torch.tensor(np.stack([point_cost(rng, 40, 30) for _ in range(4)]), dtype=dtype)
    a = torch.tensor(np.stack([weights(rng, 40) for _ in range(4)]), dtype=dtype)
    mask = torch.from_numpy(rng.random((40, 30)) > 0.1)
    mask[np.arange(30), np.arange(30)] = True

    def run(device):
        Cd, ad, md = (x.to(device).requires_grad_(x.is_floating_point()) for x in (C, a, mask))
        if loss == "sinkhorn2":
            L = rematch.ot.sinkhorn2(Cd, ad, eps=0.05, mask=md)
        else:
            L = rematch.ot.partial_sinkhorn2(Cd, 0.4, ad, eps=0.05, mask=md)
        g = torch.autograd.grad(L.sum(), (Cd, ad))
        assert L.device == Cd.device and all(x.device == Cd.device for x in g)
        return L.cpu(), [x.cpu() for x in g]

    L_cpu, g_cpu = run("cpu")
    L_gpu, g_gpu = run("cuda")
    rtol = 1e-4 if dtype == torch.float32 else 1e-8
    torch.testing.assert_close(L_gpu, L_cpu, rtol=rtol, atol=rtol * 1e-2)
    for x, y in zip(g_gpu, g_cpu):
        torch.testing.assert_close(x, y, rtol=10 * rtol, atol=10 * rtol * float(y.abs().max()))


# ---- second derivatives ---------------------------------------------------------------------------------------

@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")  # torch's reference-cycle note
@pytest.mark.filterwarnings("ignore:rematch.ot.partial_sinkhorn. the plan moves")  # eps = 0.5: the corner leaks
@pytest.mark.parametrize("loss", ["sinkhorn2", "partial_sinkhorn2"])
def test_second_derivatives_are_refused_not_dropped(loss):
    """The backward is not differentiable (python/rematch/_ot_grad.py, _first_order_only): a graph of the gradient
    (create_graph=True, gradgradcheck) is an error naming the loss, not a detached gradient whose second-order
    terms are silently 0; the first-order gradient is the same as without the check."""
    rng = np.random.default_rng(15)
    C = t64(point_cost(rng, 5, 4), True)
    fn = (lambda C: rematch.ot.sinkhorn2(C, eps=0.5)) if loss == "sinkhorn2" else \
        (lambda C: rematch.ot.partial_sinkhorn2(C, 0.5, eps=0.5))
    refused = rf"rematch.ot.{loss}: second derivatives are not supported \(create_graph=True\)"
    with pytest.raises(RuntimeError, match=refused):
        torch.autograd.grad(fn(C), C, create_graph=True)
    with pytest.raises(RuntimeError, match=refused):
        fn(C).backward(create_graph=True)
    with pytest.raises(RuntimeError, match=refused):
        torch.autograd.gradgradcheck(fn, (C,))
    (g,) = torch.autograd.grad(fn(C), C)
    L = fn(C)
    L.backward()
    assert not g.requires_grad and torch.equal(C.grad, g) and bool((g != 0).any())
