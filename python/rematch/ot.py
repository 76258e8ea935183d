"""Entropic optimal transport with rematch's Sinkhorn solvers: log-domain sweeps with max-shifted log-sum-exp
(no overflow for any cost/eps), masks that give forbidden entries exactly zero mass, partial transport through a
dummy row and column (L2RM's and UOT-RCL's conventions), and batches of problems solved in one call — on the
CPU with OpenMP, on a CUDA device with rematch's fused kernels (every sweep of a solve in one launch).

C is a NumPy array or a PyTorch tensor (CPU or CUDA), float32 or float64: one problem [n, m] or a batch
[B, n, m]. The plan P comes back as the same kind of array, with C's dtype, on C's device; it shares rematch's
memory (no copy), and a contiguous C is read in place. Python threads keep running while a problem is solved.

sinkhorn2 and partial_sinkhorn2 are the same solves as PyTorch losses: the OT value (POT's <P, C>, or the entropic
optimum) as a tensor with gradients with respect to C, the weights and the partial mass, taken at the converged
plan and potentials (docs/ot.md §9).
"""
import math
import operator
import warnings

from . import _arrays, _core


def _number(op, name, value, integer=False):
    """An option as the float (or int) the solver takes; a TypeError naming the argument for anything else
    (float(eps) alone says "only size-1 arrays can be converted", and pybind11 dumps its signature table)."""
    try:
        return operator.index(value) if integer else float(value)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{op}: {name} must be {'an integer' if integer else 'a number'}, got {value!r}") from e


def _word(op, name, value):
    """A string option; the solver's own error lists the words it knows."""
    if not isinstance(value, str):
        raise TypeError(f"{op}: {name} must be a string, got {value!r}")
    return value


def _info(kind, f, g, iterations, error, converged):
    return {"iterations": iterations, "error": error, "converged": converged,
            "f": _arrays.wrap(f, kind), "g": _arrays.wrap(g, kind)}


def sinkhorn(C, a=None, b=None, *, eps, max_iter=1000, tol=1e-6, stop="marginal", mask=None, domain="log"):
    """Entropic OT plan between the weights a and b for the cost C (Cuturi 2013), by Sinkhorn's sweeps.

    The plan is P_ij = exp((f_i + g_j - C_ij) / eps), with row sums a and column sums b. One sweep updates f
    (the rows) and then g, so after a sweep the column sums are exact and the rows carry the error. A plan whose
    column sums miss b by more than 1e-3 of sum(b) raises ValueError: |C|/eps past what the dtype resolves
    (nearing 1e7 in float32, 4e15 in float64) leaves the plan no correct digit.

    Parameters
    ----------
    C : array [n, m] or [B, n, m], float32 or float64 (NumPy, or PyTorch on the CPU or a CUDA device)
        The cost; entries must be finite where the mask allows transport.
    a, b : array [n] and [m] (or [B, n], [B, m]: one per problem), C's dtype and device, optional
        Non-negative weights with equal sums; None gives uniform weights 1/n and 1/m.
    eps : float
        Entropic regularisation, > 0 (L2RM's ``reg``, POT's ``reg``).
    max_iter : int
        Sweeps at most.
    tol : float
        Stop once the rule below is met; 0 runs exactly max_iter sweeps.
    stop : "marginal" or "potential"
        "marginal": the L1 error of the row sums, sum_i |(P 1)_i - a_i| < tol. "potential": L2RM's rule,
        ||f - f_prev||_2 < tol between sweeps (f in cost units).
    mask : bool array [n, m] (or [B, n, m]), C's device, optional
        True where transport is allowed. Masked entries get exactly zero mass and their cost is never read; a row
        or column of positive weight with nothing allowed is an error.
    domain : "log" or "scaling"
        "log" (no overflow for any C/eps) or the scaling domain u = a / Kv, for well-conditioned problems only.

    Returns
    -------
    P : array shaped like C (same kind, dtype and device)
    info : dict
        ``iterations`` (sweeps run), ``error`` (the L1 row-marginal error after the last sweep), ``converged``
        (the rule was met before max_iter) — one value each, or a list with one per problem for a batch — and the
        log-potentials ``f`` [n] / [B, n] and ``g`` [m] / [B, m] in cost units, arrays like P.

    Raises
    ------
    TypeError for an input that is not a NumPy array or PyTorch tensor or has the wrong dtype; ValueError for
    wrong shapes, devices, option values or weights (unequal sums, negative entries), and for a row or column
    that the mask leaves nowhere to send its weight.
    """
    op = "rematch.ot.sinkhorn"
    kind = _arrays.kind(C, "C")
    eps, max_iter, tol = _number(op, "eps", eps), _number(op, "max_iter", max_iter, True), _number(op, "tol", tol)
    stop, domain = _word(op, "stop", stop), _word(op, "domain", domain)
    P, f, g, iterations, error, converged = _core.sinkhorn(
        _arrays.capsule(C, "C"), _arrays.optional_capsule(a, "a"), _arrays.optional_capsule(b, "b"), eps, max_iter,
        tol, stop, _arrays.optional_capsule(mask, "mask", bool_ok=True), domain)
    return _arrays.wrap(P, kind), _info(kind, f, g, iterations, error, converged)


def _masses(mass):
    # A number, or one per problem as a sequence or a 1-D array of either kind (tolist() moves it to the host).
    if hasattr(mass, "tolist"):
        mass = mass.tolist()
    values = mass if isinstance(mass, (list, tuple)) else [mass]
    try:
        return [float(v) for v in values]
    except (TypeError, ValueError) as e:
        raise TypeError(f"mass: expected a number, or one number per problem, got {mass!r}") from e


def partial_sinkhorn(C, mass, a=None, b=None, *, eps, dummy="l2rm", mask=None, max_iter=1000, tol=1e-6,
                     stop="potential"):
    """Partial entropic OT: move only ``mass`` between a and b, at least cost (Chapel et al. 2020).

    One dummy row of weight sum(b) - mass and one dummy column of weight sum(a) - mass absorb what is not
    transported, and Sinkhorn solves the (n+1) x (m+1) problem; P is its real block [n, m], which carries
    ``mass`` up to an entropic leak through the dummy corner. This is L2RM's ``partial_ot`` with
    ``dummy="l2rm"``, and UOT-RCL's label correction with ``dummy="zero"``.

    Parameters
    ----------
    C : array [n, m] or [B, n, m], float32 or float64 (NumPy, or PyTorch on the CPU or a CUDA device)
        The cost; finite and >= 0 everywhere (masked entries included: the dummy costs come from max C).
    mass : float, or one per problem for a batch (a sequence or 1-D array)
        The mass to transport, 0 < mass <= min(sum(a), sum(b)) (L2RM's ``rho``); a mass above the minimum by
        rounding only (1e-6 relative, 1e-5 for float32) is taken as the minimum.
    a, b : array [n] and [m] (or [B, n], [B, m]), C's dtype and device, optional
        Non-negative weights; None gives uniform weights 1/n and 1/m.
    eps : float
        Entropic regularisation, > 0 (L2RM's ``reg``).
    dummy : "l2rm" or "zero"
        The dummy costs. "l2rm": L2RM's xi = 100 max C on the dummy row and column and 2 xi + max C in the corner,
        solved with xi subtracted from the dummy row and column — the same plan, and no float32 cancellation of
        numbers of size xi/eps. "zero": zero dummy costs (UOT-RCL Eq. 14).
    mask : bool array [n, m] (or [B, n, m]), C's device, optional
        True where transport is allowed (L2RM forbids the diagonal); the dummy row and column are always
        allowed, so an all-masked row sends its weight to the dummy.
    max_iter, tol, stop
        As in :func:`sinkhorn`; L2RM itself stops with stop="potential", tol=1e-3.

    Returns
    -------
    P : array [n, m] or [B, n, m], the real block (same kind, dtype and device as C)
    info : dict
        ``iterations``, ``error``, ``converged`` as in :func:`sinkhorn`, for the augmented problem; ``f`` [n+1]
        and ``g`` [m+1] (or [B, n+1], [B, m+1]) its log-potentials, the last entry the dummy's (for "l2rm" in the
        shifted convention: L2RM's minus xi); ``mass``, what the real block carries (a float, or a list for a
        batch): the mass asked up to the leak through the dummy corner and what the stopping rule leaves. With
        "l2rm" the corner's surcharge max C holds the leak back; where it is small against eps (costs near 0) a
        RuntimeWarning says how much leaks.

    Raises
    ------
    TypeError and ValueError as :func:`sinkhorn`; ValueError also for a mass larger than the smaller marginal and
    for negative costs.
    """
    op = "rematch.ot.partial_sinkhorn"
    kind = _arrays.kind(C, "C")
    eps, max_iter, tol = _number(op, "eps", eps), _number(op, "max_iter", max_iter, True), _number(op, "tol", tol)
    dummy, stop = _word(op, "dummy", dummy), _word(op, "stop", stop)
    asked = _masses(mass)
    P, f, g, iterations, error, converged = _core.partial_sinkhorn(
        _arrays.capsule(C, "C"), asked, _arrays.optional_capsule(a, "a"), _arrays.optional_capsule(b, "b"),
        eps, dummy, _arrays.optional_capsule(mask, "mask", bool_ok=True), max_iter, tol, stop)
    P = _arrays.wrap(P, kind)
    info = _info(kind, f, g, iterations, error, converged)
    moved = _per_problem(P, "sum", 2)
    info["mass"] = moved if P.ndim == 3 else moved[0]
    _warn_unpriced_corner(op, C, a, b, asked, moved, eps, dummy)
    return P, info


def _per_problem(x, op, dims):
    """op ("sum" or "max") over the last `dims` axes of x, as a list with one float per problem."""
    axes = tuple(range(-dims, 0))
    if _arrays.kind(x, "x") == "numpy":
        t = getattr(x, op)(axis=axes)
    else:
        t = x.detach().sum(dim=axes) if op == "sum" else x.detach().amax(dim=axes)
    t = t.tolist()
    return t if isinstance(t, list) else [t]


def _corner_leak(s, ra, rb, q):
    """The leak c through the dummy corner when the real costs are all equal: real block s + c, dummy column ra - c,
    dummy row rb - c, corner c, and the entropic plan's cross ratio real * corner = column * row * q with
    q = exp(-A / eps). The root in [0, min(ra, rb)] of (1 - q) c^2 + (s + q (ra + rb)) c - q ra rb = 0."""
    lin = s + q * (ra + rb)
    if q >= 1:
        return ra * rb / lin if lin > 0 else 0.0
    return 2 * q * ra * rb / (lin + (lin * lin + 4 * (1 - q) * q * ra * rb) ** 0.5)


def _warn_unpriced_corner(op, C, a, b, masses, moved, eps, dummy):
    """With dummy="l2rm" the real block carries ``mass`` up to a leak through the dummy corner, whose surcharge
    A = max C over leaving the mass on the dummy edges is all that holds it back (docs/ot.md §3.2). Costs near 0
    against eps leave it unpriced: all costs 0 move 0.53 for a mass of 0.1, while the solve's error and convergence
    look as usual. Warns when the plan moves more than 1% over the mass of a problem and _corner_leak, the leak with
    equal real costs, allows that much; each problem is priced by its own max C (ot/partial.cpp)."""
    if dummy != "l2rm":
        return
    tops = _per_problem(C, "max", 2)
    count = len(tops)

    def sums(w):  # a weight vector per problem ([B, n]) or one for all ([n]); None is uniform, summing to 1
        t = [1.0] if w is None else _per_problem(w, "sum", 1)
        return t * count if len(t) == 1 else t

    sa, sb = sums(a), sums(b)
    masses = masses * count if len(masses) == 1 else masses
    for k, top in enumerate(tops):
        s = min(masses[k], sa[k], sb[k])
        leak = _corner_leak(s, sa[k] - s, sb[k] - s, math.exp(-top / eps))
        if leak <= 1e-2 * s or moved[k] - s <= 1e-2 * s:
            continue
        where = f"problem {k}: " if C.ndim == 3 else ""
        warnings.warn(f"{op}: {where}the plan moves {moved[k]:.6g} for mass = {s:.6g}: the dummy corner's surcharge "
                      f"max C = {top:.3g} is small against eps = {eps:g}, and lets up to about {leak:.3g} more through "
                      f"(scale the costs up or lower eps); info['mass'] holds what moved", RuntimeWarning, stacklevel=3)
        return


# ---- losses with gradients (PyTorch) ----------------------------------------------------------------------------

_VALUES = ("linear", "entropic")


def _loss_setup(op, C, a, b, mask, eps, value, tol):
    """Checks shared by the losses; returns (torch, eps, tol)."""
    from . import _ot_grad
    _ot_grad._check_tensor(C, "C", op)
    torch = _arrays._torch()
    if C.dtype not in (torch.float32, torch.float64):
        raise TypeError(f"{op}: C must be float32 or float64, got {C.dtype}")
    if C.dim() not in (2, 3):
        raise ValueError(f"{op}: C must be one cost matrix [n, m] or a batch [B, n, m], got shape "
                         f"{list(C.shape)}")
    for w, name in ((a, "a"), (b, "b")):
        if w is not None:
            _ot_grad._check_tensor(w, name, op, like=C)
    if mask is not None:
        _ot_grad._check_tensor(mask, "mask", op)
        _ot_grad._check_no_grad(mask, "mask", op, "it says where transport is allowed, a constraint")
        if mask.device != C.device:
            raise ValueError(f"{op}: mask is on {mask.device} but C is on {C.device}; pass mask on C's device "
                             f"(mask.to(C.device))")
    _ot_grad._check_no_grad(eps, "eps", op, "the regularisation is a setting")
    if value not in _VALUES:
        raise ValueError(f"{op}: value = {value!r} is not a loss value; use 'linear' (<P, C>, POT's sinkhorn2) or "
                         f"'entropic' (<P, C> + eps sum P log P)")
    for w, name in ((a, "a"), (b, "b")):
        _ot_grad._check_positive_if_grad(w, name, op)
    if tol is None:
        tol = 1e-9 if C.dtype == torch.float64 else 1e-6
    return torch, _number(op, "eps", eps), _number(op, "tol", tol)


def sinkhorn2(C, a=None, b=None, *, eps, mask=None, value="linear", max_iter=1000, tol=None, stop="marginal",
              domain="log"):
    """The entropic OT loss between a and b for the cost C, with gradients: a PyTorch tensor to call
    ``.backward()`` on (docs/ot.md §9).

    One solve by :func:`sinkhorn` on C's device; the backward uses only the converged plan P and potentials, so
    its memory does not grow with the number of sweeps.

    Parameters
    ----------
    C : torch.Tensor [n, m] or [B, n, m], float32 or float64, on the CPU or a CUDA device (read in place)
    a, b : torch.Tensor [n] and [m] (or [B, n], [B, m]), C's dtype and device, optional
        Weights with equal sums; None gives uniform weights. Gradients with respect to them need positive entries.
    eps : float
        Entropic regularisation, > 0 (POT's ``reg``).
    mask : bool tensor [n, m] (or [B, n, m]), optional
        True where transport is allowed; masked entries carry no mass, their cost is never read (it may be inf) and
        their gradient is 0.
    value : "linear" or "entropic"
        "linear" (the default): <P, C>, the value POT's ``ot.sinkhorn2`` returns, with its exact gradient at
        convergence (an implicit-function solve, docs/ot.md §9.3). "entropic": <P, C> + eps sum P log P, the
        regularised optimum, whose gradient is the plan (for C) and the centred potentials (for a and b).
    max_iter, tol, stop, domain
        As in :func:`sinkhorn`. tol=None: 1e-9 for float64, 1e-6 for float32 (the L1 error of the row sums). The
        value and gradient are exact for the problem whose row weights are the returned plan's row sums, which
        differ from a by less than tol (docs/ot.md §9.3); a problem that misses tol warns (RuntimeWarning).

    Returns
    -------
    torch.Tensor: a scalar for one problem, [B] for a batch; C's dtype and device. Its gradient with respect to
    C has C's shape; with respect to a and b it is centred (mean 0 per problem), as POT centres the potentials:
    a balanced problem keeps sum(a) = sum(b), so only the centred part is defined.

    Raises
    ------
    TypeError for a non-tensor or non-float C, a or b of another dtype, and a mask or eps that requires grad;
    ValueError for tensors on another device, zero weights that require grad, and everything :func:`sinkhorn`
    refuses (shapes, NaN or inf costs and weights, unequal sums, option values); RuntimeError for a second
    derivative (create_graph=True): the backward is first-order only.
    """
    op = "rematch.ot.sinkhorn2"
    _, eps, tol = _loss_setup(op, C, a, b, mask, eps, value, tol)
    from ._ot_grad import Sinkhorn2
    opts = dict(max_iter=_number(op, "max_iter", max_iter, True), tol=tol, stop=_word(op, "stop", stop),
                domain=_word(op, "domain", domain))
    return Sinkhorn2.apply(C, a, b, mask, eps, value, opts)


def _mass_tensor(op, mass, B, C, torch):
    """mass as a [B] tensor of C's dtype on C's device (a tensor keeps its graph, for ∂/∂mass)."""
    if isinstance(mass, torch.Tensor):
        if not mass.is_floating_point():
            raise TypeError(f"{op}: mass must be a float tensor, got {mass.dtype}")
        if mass.device != C.device:
            raise ValueError(f"{op}: mass is on {mass.device} but C is on {C.device}; pass mass on C's device "
                             f"(mass.to(C.device))")
        t = mass.to(C.dtype)
    else:
        t = torch.tensor(_masses(mass), dtype=C.dtype, device=C.device)
    if t.dim() > 1 or (t.dim() == 1 and t.numel() not in (1, B)):
        raise ValueError(f"{op}: mass has shape {list(t.shape)} for {B} problem{'s' if B > 1 else ''}; give one "
                         f"number, or one per problem [{B}]")
    if not bool(torch.isfinite(t.detach()).all()):
        raise ValueError(f"{op}: mass = {t.detach().tolist()} is not finite")
    return t.reshape(-1).expand(B)


def partial_sinkhorn2(C, mass, a=None, b=None, *, eps, dummy="l2rm", mask=None, value="linear", max_iter=1000,
                      tol=None, stop="marginal"):
    """The partial entropic OT loss — move only ``mass`` between a and b — with gradients with respect to C, a, b
    and the mass (docs/ot.md §9.5).

    One solve by :func:`partial_sinkhorn` (the dummy row and column of docs/ot.md §3) on C's device; the backward
    uses only the converged augmented plan and potentials.

    Parameters
    ----------
    C : torch.Tensor [n, m] or [B, n, m], float32 or float64 (finite and >= 0 everywhere, as partial_sinkhorn)
    mass : float, one per problem (sequence), or a float tensor (scalar or [B]) on C's device — a tensor that
        requires grad gets the gradient with respect to the mass (minus the mass constraint's multiplier)
    a, b : torch.Tensor [n] and [m] (or [B, n], [B, m]), C's dtype and device, optional (uniform when None)
    eps, dummy, mask
        As in :func:`partial_sinkhorn`. dummy="l2rm" makes the corner cost max C, which C's gradient follows.
    value : "linear" or "entropic"
        "linear" (the default): <P, C> over the real block (POT's partial value, ``sum(M * plan)``), with its exact
        gradient at convergence. "entropic": the augmented problem's <P̂, Ĉ> + eps sum P̂ log P̂ (dummy row and column
        at cost 0, the corner at max C for "l2rm" and 0 for "zero").
    max_iter, tol, stop
        As in :func:`sinkhorn2` (note: stop="marginal" by default, not L2RM's "potential" rule of
        partial_sinkhorn — the gradient is only exact at convergence).

    Returns
    -------
    torch.Tensor: a scalar for one problem, [B] for a batch. Unlike the balanced loss, a and b may change freely
    (the dummies absorb the difference), so their gradients are not centred.

    Raises
    ------
    As :func:`sinkhorn2`, and :func:`partial_sinkhorn`'s errors (mass above the smaller marginal, negative costs);
    ValueError when a gradient with respect to a, b or the mass is asked for at mass = sum(a) or sum(b) (a dummy of
    weight 0: not differentiable there); RuntimeError for a second derivative, as :func:`sinkhorn2`.
    """
    op = "rematch.ot.partial_sinkhorn2"
    torch, eps, tol = _loss_setup(op, C, a, b, mask, eps, value, tol)
    if dummy not in ("l2rm", "zero"):
        raise ValueError(f"{op}: dummy = {dummy!r} is not a dummy cost; use 'l2rm' or 'zero'")
    batched = C.dim() == 3
    B = C.shape[0] if batched else 1
    mass_t = _mass_tensor(op, mass, B, C, torch)
    if any(x is not None and x.requires_grad for x in (a, b, mass_t)):
        sum_a = a.detach().sum(-1).expand(B) if a is not None else torch.ones(B, dtype=C.dtype, device=C.device)
        sum_b = b.detach().sum(-1).expand(B) if b is not None else torch.ones(B, dtype=C.dtype, device=C.device)
        # A mass above the minimum by more than rounding is refused by the solver as too large; up to that, it is
        # taken as the minimum (ot/partial.cpp), so it equals it.
        smaller, rel = torch.minimum(sum_a, sum_b), 1e-5 if C.dtype == torch.float32 else 1e-6
        full = ((mass_t.detach() >= smaller) & (mass_t.detach() <= smaller * (1 + rel))).nonzero()
        if len(full):
            k = int(full[0])
            where = f" (problem {k})" if batched else ""
            raise ValueError(f"{op}: mass = {float(mass_t[k])!r} equals min(sum(a), sum(b)) = {float(smaller[k])!r}"
                             f"{where} (to {rel:g} relative): a dummy has weight 0 and the gradient with respect to "
                             f"a, b and mass is not finite there; transport less mass, use sinkhorn2 for a balanced "
                             f"problem, or detach a, b and mass")
    from ._ot_grad import PartialSinkhorn2
    opts = dict(max_iter=_number(op, "max_iter", max_iter, True), tol=tol, stop=_word(op, "stop", stop))
    return PartialSinkhorn2.apply(C, a, b, mass_t, mask, eps, dummy, value, opts)
