"""Entropic optimal transport with rematch's Sinkhorn solvers: log-domain sweeps with max-shifted log-sum-exp
(stable for any cost/eps), masks that give forbidden entries exactly zero mass, partial transport through a
dummy row and column (L2RM's and UOT-RCL's conventions), and batches of problems solved in one call — on the
CPU with OpenMP, on a CUDA device with rematch's fused kernels (every sweep of a solve in one launch).

C is a NumPy array or a PyTorch tensor (CPU or CUDA), float32 or float64: one problem [n, m] or a batch
[B, n, m]. The plan P comes back as the same kind of array, with C's dtype, on C's device; it shares rematch's
memory (no copy), and a contiguous C is read in place. Python threads keep running while a problem is solved.
"""
from . import _arrays, _core


def _info(kind, f, g, iterations, error, converged):
    return {"iterations": iterations, "error": error, "converged": converged,
            "f": _arrays.wrap(f, kind), "g": _arrays.wrap(g, kind)}


def sinkhorn(C, a=None, b=None, *, eps, max_iter=1000, tol=1e-6, stop="marginal", mask=None, domain="log"):
    """Entropic OT plan between the weights a and b for the cost C (Cuturi 2013), by Sinkhorn's sweeps.

    The plan is P_ij = exp((f_i + g_j - C_ij) / eps), with row sums a and column sums b. One sweep updates f
    (the rows) and then g, so after a sweep the column sums are exact and the rows carry the error.

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
        "log" (stable for any C/eps) or the scaling domain u = a / Kv, for well-conditioned problems only.

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
    kind = _arrays.kind(C, "C")
    P, f, g, iterations, error, converged = _core.sinkhorn(
        _arrays.capsule(C, "C"), _arrays.optional_capsule(a, "a"), _arrays.optional_capsule(b, "b"), eps, max_iter,
        tol, stop, _arrays.optional_capsule(mask, "mask"), domain)
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
        The mass to transport, 0 < mass <= min(sum(a), sum(b)) (L2RM's ``rho``).
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
        shifted convention: L2RM's minus xi).

    Raises
    ------
    TypeError and ValueError as :func:`sinkhorn`; ValueError also for a mass larger than the smaller marginal and
    for negative costs.
    """
    kind = _arrays.kind(C, "C")
    P, f, g, iterations, error, converged = _core.partial_sinkhorn(
        _arrays.capsule(C, "C"), _masses(mass), _arrays.optional_capsule(a, "a"), _arrays.optional_capsule(b, "b"),
        eps, dummy, _arrays.optional_capsule(mask, "mask"), max_iter, tol, stop)
    return _arrays.wrap(P, kind), _info(kind, f, g, iterations, error, converged)
