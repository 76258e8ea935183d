"""The OT losses of rematch.ot (sinkhorn2, partial_sinkhorn2) as torch.autograd.Functions: the forward is one
solve by rematch's solver (rematch.ot.sinkhorn / partial_sinkhorn, in place through DLPack, on C's device), the
backward uses only the converged plan and potentials, so memory does not depend on the number of sweeps.
docs/ot.md §9 derives every formula used here; the equation numbers below are that section's.

Notation (one problem; a batch adds a leading dim everywhere). The solver returns P = exp((f ⊕ g − Ĉ)/ε) with
row sums α = P·1 and column sums β = Pᵀ·1 (= b after the last column half-step; α = a to the reported marginal
error). For the partial problem Ĉ, P, f, g are those of the (n+1)×(m+1) augmented problem (docs/ot.md §3).

  entropic value  W = <P, Ĉ> + ε Σ P log P = <f, α> + <g, β>                                    (9.1)
                  dW = <P, dĈ> + <F, dâ> + <G, db̂>,  F ⊕ G = f ⊕ g + ε (the multipliers of Σ P log P) (9.2)
  linear value    L = <P, N>  (N = the cost on the real entries, 0 on the dummies)
                  solve H [x; y] = [r; c],  H = [[diag α, P], [Pᵀ, diag β]],  r = (P∘N)·1, c = (P∘N)ᵀ·1 (9.3)
                  dL = <P∘(x ⊕ y − N)/ε, dĈ> + <P, dN> + <x, dâ> + <y, db̂>                        (9.4)
"""
import functools
import warnings

import torch

# Above this size k of the smaller side the adjoint system (9.3) is solved by conjugate gradients instead of a dense
# Cholesky factorisation of its Schur complement: forming the k×k complement costs 2·n·k² flops and factoring it
# k³/3, while a CG iteration costs two products with P (4·n·k) and CG needs about the square root of the
# iterations Sinkhorn needed (docs/ot.md §9.3). Measured at 2000×2000, eps = 0.01: 1.8 s dense, 0.5 s CG.
DENSE_LIMIT = 512


def _check_tensor(x, name, op, like=None):
    """x is a torch.Tensor (and, given `like`, has its dtype and device); errors name the argument."""
    if not isinstance(x, torch.Tensor):
        kind = f"{type(x).__module__}.{type(x).__qualname__}"
        hint = (" (use rematch.ot.sinkhorn / partial_sinkhorn for NumPy plans without gradients, or "
                "torch.from_numpy)") if type(x).__module__ == "numpy" else ""
        raise TypeError(f"{op}: {name} must be a PyTorch tensor (the loss is a PyTorch loss), got {kind}{hint}")
    if like is None:
        return
    if x.dtype != like.dtype:
        raise TypeError(f"{op}: {name} is {x.dtype} but C is {like.dtype}; pass {name} in C's dtype "
                        f"({name}.to(C.dtype))")
    if x.device != like.device:
        raise ValueError(f"{op}: {name} is on {x.device} but C is on {like.device}; pass {name} on C's device "
                         f"({name}.to(C.device))")


def _check_no_grad(x, name, op, why):
    if isinstance(x, torch.Tensor) and x.requires_grad:
        raise TypeError(f"{op}: {name} requires grad, but the loss has no gradient with respect to {name} ({why}); "
                        f"pass {name}.detach()")


def _check_positive_if_grad(w, name, op):
    # A zero weight has potential −inf: the value is not differentiable there (docs/ot.md §9.4).
    if w is not None and w.requires_grad:
        zero = (w.detach() <= 0).nonzero()
        if len(zero):
            where = ", ".join(str(int(i)) for i in zero[0])
            raise ValueError(f"{op}: {name}[{where}] = {float(w.detach()[tuple(zero[0])])} while {name} requires "
                             f"grad: the gradient with respect to a zero weight is not finite (its potential is "
                             f"-inf); give every weight a positive value, or pass {name}.detach()")


def _warn_unconverged(op, info, tol, max_iter):
    converged = info["converged"] if isinstance(info["converged"], list) else [info["converged"]]
    errors = info["error"] if isinstance(info["error"], list) else [info["error"]]
    missed = [e for c, e in zip(converged, errors) if not c]
    if missed and tol > 0:
        which = "the problem" if len(converged) == 1 else f"{len(missed)} of {len(converged)} problems"
        warnings.warn(f"{op}: {which} did not reach tol = {tol:g} in max_iter = {max_iter} sweeps (largest "
                      f"marginal error {max(missed):.3g}); the value and gradient are those of the problem whose "
                      f"row weights are the plan's row sums (docs/ot.md §9.3): raise max_iter or eps for the "
                      f"gradient of the problem you posed", RuntimeWarning, stacklevel=5)


def _solved(op, opts, solver, C, *args, **kw):
    """(P, f, g) of solver(C, ...) with a leading batch dim; the solver's errors start with `op`, and a problem
    that misses tol warns."""
    try:
        P, info = solver(C, *args, **kw)
    except (ValueError, TypeError) as e:
        raise type(e)(f"{op}: {e}") from e
    _warn_unconverged(op, info, opts["tol"], opts["max_iter"])
    f, g = info["f"], info["g"]
    return (P[None], f[None], g[None]) if C.dim() == 2 else (P, f, g)


def _first_order_only(op):
    """Decorates a backward (outside @once_differentiable, which turns grad mode off) so that a second
    differentiation is refused: PyTorch runs a backward with grad mode on exactly when it records a graph of the
    gradient (create_graph=True, gradgradcheck). @once_differentiable alone raises only when grad_output itself
    requires grad; for torch.autograd.grad(loss, C, create_graph=True) it returns a detached gradient, and a
    penalty on that gradient silently contributes nothing. First-order backwards are not affected."""
    def decorate(backward):
        @functools.wraps(backward)
        def checked(ctx, *grads):
            if torch.is_grad_enabled():
                raise RuntimeError(f"{op}: second derivatives are not supported (create_graph=True): the backward "
                                   f"is computed from the converged plan and potentials, not recorded as a graph "
                                   f"(docs/ot.md §9.1); differentiate the loss once, without create_graph, or "
                                   f"keep this loss out of the terms that are differentiated twice")
            return backward(ctx, *grads)
        return checked
    return decorate


def _solve_spd(S, rhs):
    """S [B, k, k] symmetric positive semi-definite, rhs [B, k] in its range. Cholesky; where it fails — a plan
    whose entries between some blocks of rows and columns underflowed to 0 has one more null direction per extra
    block (a gauge per block) — the pseudo-inverse gives the least-norm solution. The gradient with respect to C
    does not depend on which solution (x_i + y_j is the same on every entry that carries mass)."""
    L, info = torch.linalg.cholesky_ex(S)
    y = torch.cholesky_solve(rhs.unsqueeze(-1), L).squeeze(-1)
    bad = info != 0
    if bool(bad.any()):
        y[bad] = (torch.linalg.pinv(S[bad], hermitian=True) @ rhs[bad].unsqueeze(-1)).squeeze(-1)
    return y


def _schur_cg(P, alpha_inv, beta, rhs, tol=1e-12, max_iter=10000):
    """Solves S' y = rhs with S' = diag β − Pᵀ diag(1/α) P + β βᵀ / Σβ (+1 on zero-weight columns) by conjugate
    gradients preconditioned by diag β, without forming S' (two products with P per iteration)."""
    dead = (beta == 0).to(P.dtype)
    total = beta.sum(-1, keepdim=True)
    diag = beta + dead

    def apply(v):
        Pv = torch.bmm(P, v.unsqueeze(-1)).squeeze(-1) * alpha_inv
        return (diag * v - torch.bmm(P.transpose(-1, -2), Pv.unsqueeze(-1)).squeeze(-1)
                + beta * (beta * v).sum(-1, keepdim=True) / total)

    y = torch.zeros_like(rhs)
    r = rhs.clone()
    z = r / diag
    p = z.clone()
    rz = (r * z).sum(-1, keepdim=True)
    stop = tol * rhs.norm(dim=-1, keepdim=True)
    for _ in range(max_iter):
        if bool((r.norm(dim=-1, keepdim=True) <= stop).all()):
            return y
        Sp = apply(p)
        step = rz / (p * Sp).sum(-1, keepdim=True).clamp_min(torch.finfo(P.dtype).tiny)
        y = y + step * p
        r = r - step * Sp
        z = r / diag
        rz_next = (r * z).sum(-1, keepdim=True)
        p = z + rz_next / rz.clamp_min(torch.finfo(P.dtype).tiny) * p
        rz = rz_next
    worst = float((r.norm(dim=-1) / rhs.norm(dim=-1).clamp_min(torch.finfo(P.dtype).tiny)).max())
    warnings.warn(f"rematch.ot: the adjoint solve of the gradient (conjugate gradients) stopped after {max_iter} "
                  f"iterations at a relative residual of {worst:.3g}; the gradient is that inexact", RuntimeWarning,
                  stacklevel=2)
    return y


def adjoint(P, r, c, cg_tol=1e-12):
    """[x; y] with [[diag α, P], [Pᵀ, diag β]] [x; y] = [r; c] (9.3) for P [B, n, m], r [B, n], c [B, m], where
    α = P·1, β = Pᵀ·1 are P's own marginals, so H is the exact Jacobian of the marginals of the plan returned
    (docs/ot.md §9.3). H is singular along [1; −1] (f + t, g − t is the same plan) and Σr = Σc, so the system is
    consistent; the returned solution is one of the family [x + t; y − t], all of which give the same gradient.

    The smaller side k = min(n, m) is kept: x = (r − P y)/α eliminates the larger one and leaves the Schur
    complement S = diag β − Pᵀ diag(1/α) P (k×k, positive semi-definite, S·1 = 0), made definite by + β βᵀ/Σβ,
    which picks the solution with <β, y> = 0. Zero-weight rows and columns carry no plan: their x, y are 0.
    Conjugate gradients (k > DENSE_LIMIT) stop at a residual of cg_tol relative to the right-hand side."""
    if P.shape[-1] > P.shape[-2]:
        y, x = adjoint(P.transpose(-1, -2), c, r, cg_tol)
        return x, y
    alpha, beta = P.sum(-1), P.sum(-2)
    alpha_inv = torch.where(alpha > 0, 1.0 / alpha, torch.zeros_like(alpha))
    Pt = P.transpose(-1, -2)
    rhs = c - torch.bmm(Pt, (r * alpha_inv).unsqueeze(-1)).squeeze(-1)
    if P.shape[-1] <= DENSE_LIMIT:
        S = beta.unsqueeze(-1) * beta.unsqueeze(-2) / beta.sum(-1).view(-1, 1, 1)
        S.diagonal(dim1=-2, dim2=-1).add_(beta + (beta == 0).to(P.dtype))
        S.baddbmm_(Pt, P * alpha_inv.unsqueeze(-1), alpha=-1)
        y = _solve_spd(S, rhs)
    else:
        y = _schur_cg(P, alpha_inv, beta, rhs, cg_tol)
    x = (r - torch.bmm(P, y.unsqueeze(-1)).squeeze(-1)) * alpha_inv
    return x, y


def _linear_backward(P, N, eps, real=None, cg_tol=1e-12):
    """For the linear value L = <P, N> of each problem (P, N [B, n, m] float64): (G, x, y) with x = ∂L/∂â,
    y = ∂L/∂b̂ and G = ∂L/∂Ĉ + ∂L/∂N = P∘(x ⊕ y − N + ε)/ε on the block where N is the cost (all of it, or the
    top-left real = (n, m) block), P∘(x ⊕ y − N)/ε elsewhere (9.4). In place on one [B, n, m] buffer: the
    batches here are up to 1024 augmented problems."""
    PN = P * N
    x, y = adjoint(P, PN.sum(-1), PN.sum(-2), cg_tol)
    del PN
    G = x.unsqueeze(-1) + y.unsqueeze(-2)
    G -= N
    if real is None:
        G += eps
    else:
        G[:, :real[0], :real[1]] += eps
    G *= P
    G /= eps
    return G, x, y


def _cg_tol(dtype):
    # The adjoint runs in float64 either way; a float32 loss's gradient is returned in float32 (7 digits), so its
    # conjugate gradients stop at 1e-8 instead of 1e-12 (15 iterations instead of 19 at 2000×2000, eps = 0.01).
    return 1e-12 if dtype == torch.float64 else 1e-8


def _centred(v):
    # ∂/∂a of the balanced problem is defined up to a constant (Σa = Σb): the mean-zero representative, as POT's
    # emd2 gives it.
    return v - v.mean(-1, keepdim=True)


def _masked_cost(C, mask):
    """C with 0 where masked (the solver never reads those costs: they may be anything, inf included)."""
    return C if mask is None else torch.where(mask.bool(), C, torch.zeros((), dtype=C.dtype, device=C.device))


def _finish_forward(ctx, value, Ph, f, g, P, C, a, b, mask, eps):
    """The loss's value from a solve — W by (9.1) from the (augmented) plan Ph's marginals (no log of a zero entry),
    or L = <P, C> over the real block P — after saving what the backward needs: C, Ph, f, g, the mask."""
    if value == "entropic":
        alpha, beta = Ph.sum(-1), Ph.sum(-2)
        out = (torch.where(alpha > 0, f * alpha, torch.zeros_like(f)).sum(-1)
               + torch.where(beta > 0, g * beta, torch.zeros_like(g)).sum(-1))
    else:
        out = (P * _masked_cost(C, mask)).sum((-2, -1))
    ctx.save_for_backward(C, Ph, f, g, mask)
    ctx.eps, ctx.value = eps, value
    ctx.a_dim = a.dim() if a is not None else 0
    ctx.b_dim = b.dim() if b is not None else 0
    return out[0] if ctx.single else out


class Sinkhorn2(torch.autograd.Function):
    """The balanced loss. Inputs C [n, m] or [B, n, m], a, b ([n] / [B, n] / None), mask; returns the value, [B]
    for a batch."""

    @staticmethod
    def forward(ctx, C, a, b, mask, eps, value, opts):
        from . import ot
        op = "rematch.ot.sinkhorn2"
        P, f, g = _solved(op, opts, ot.sinkhorn, C, a, b, eps=eps, mask=mask, **opts)
        ctx.single = C.dim() == 2
        C = C.unsqueeze(0) if ctx.single else C
        return _finish_forward(ctx, value, P, f, g, P, C, a, b, mask, eps)

    @staticmethod
    @_first_order_only("rematch.ot.sinkhorn2")
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_out):
        C, P, f, g, mask = ctx.saved_tensors
        need_C, need_a, need_b = ctx.needs_input_grad[:3]
        w = grad_out.view(-1, 1, 1)
        grad_C = grad_a = grad_b = None
        if ctx.value == "entropic":  # (9.2): ∂W/∂C = P, ∂W/∂a = F = f + const, ∂W/∂b = g + const
            if need_C:
                grad_C = w * P
            if need_a:
                grad_a = w[:, :, 0] * _centred(f)
            if need_b:
                grad_b = w[:, :, 0] * _centred(g)
        else:  # (9.3), (9.4) with Ĉ = N = C: ∂L/∂C = P∘(x ⊕ y − C)/ε + P, ∂L/∂a = x, ∂L/∂b = y
            G, x, y = _linear_backward(P.double(), _masked_cost(C, mask).double(), ctx.eps,
                                       cg_tol=_cg_tol(C.dtype))
            if need_C:
                grad_C = (w * G).to(C.dtype)
            if need_a:
                grad_a = (w[:, :, 0] * _centred(x)).to(C.dtype)
            if need_b:
                grad_b = (w[:, :, 0] * _centred(y)).to(C.dtype)
        if grad_C is not None and ctx.single:
            grad_C = grad_C[0]
        if grad_a is not None:
            grad_a = grad_a.sum(0) if ctx.a_dim == 1 else grad_a
        if grad_b is not None:
            grad_b = grad_b.sum(0) if ctx.b_dim == 1 else grad_b
        return grad_C, grad_a, grad_b, None, None, None, None


def _dummy_plan(P, f, g, corner, eps):
    """The augmented plan [B, n+1, m+1] from the real block P and the augmented potentials: the dummy row and
    column cost 0, the corner `corner` [B] (docs/ot.md §3.2, §3.3)."""
    n, m = P.shape[-2], P.shape[-1]
    col = torch.exp((f[:, :n] + g[:, m:]) / eps)  # P̂_{i, m}
    row = torch.exp((f[:, n:] + g[:, :m]) / eps)  # P̂_{n, j}
    t = torch.exp((f[:, n] + g[:, m] - corner) / eps)
    top = torch.cat([P, col.unsqueeze(-1)], -1)
    bottom = torch.cat([row, t.view(-1, 1)], -1).unsqueeze(-2)
    return torch.cat([top, bottom], -2)


def _argmax_share(C):
    """∂(max C)/∂C per problem, as torch.amax has it: 1/k on each of the k entries that attain the max."""
    top = C == C.amax((-2, -1), keepdim=True)
    return top.to(C.dtype) / top.sum((-2, -1), keepdim=True).to(C.dtype)


class PartialSinkhorn2(torch.autograd.Function):
    """The partial loss. Inputs C [n, m] or [B, n, m], a, b ([n] / [B, n] / None), mass [B] (B = 1 for one
    problem), mask; returns the value, [B] for a batch."""

    @staticmethod
    def forward(ctx, C, a, b, mass, mask, eps, dummy, value, opts):
        from . import ot
        op = "rematch.ot.partial_sinkhorn2"
        P, f, g = _solved(op, opts, ot.partial_sinkhorn, C, mass.detach().tolist(), a, b, eps=eps, dummy=dummy,
                          mask=mask, **opts)
        ctx.single = C.dim() == 2
        C = C.unsqueeze(0) if ctx.single else C
        # The corner cost A: max C over the whole real block for "l2rm" (ot/partial.cpp), 0 for "zero".
        corner = C.detach().amax((-2, -1)) if dummy == "l2rm" else torch.zeros(C.shape[0], dtype=C.dtype,
                                                                               device=C.device)
        ctx.dummy = dummy
        return _finish_forward(ctx, value, _dummy_plan(P, f, g, corner, eps), f, g, P, C, a, b, mask, eps)

    @staticmethod
    @_first_order_only("rematch.ot.partial_sinkhorn2")
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_out):
        C, Ph, f, g, mask = ctx.saved_tensors
        need_C, need_a, need_b, need_mass = ctx.needs_input_grad[:4]
        n, m = C.shape[-2], C.shape[-1]
        w = grad_out.view(-1, 1)
        if ctx.value == "entropic":  # (9.2): ∂W/∂Ĉ = P̂; F ⊕ G = f ⊕ g + ε
            G_hat = Ph
            F = f + ctx.eps
            Gd = g
        else:  # (9.3), (9.4): N = [[C, 0], [0, 0]]
            N = torch.nn.functional.pad(_masked_cost(C, mask).double(), (0, 1, 0, 1))
            G_hat, F, Gd = _linear_backward(Ph.double(), N, ctx.eps, real=(n, m), cg_tol=_cg_tol(C.dtype))
        grad_C = grad_a = grad_b = grad_mass = None
        # â = [a; Σb − s], b̂ = [b; Σa − s] (docs/ot.md §3.1): ∂/∂a_i = F_i + G_m, ∂/∂b_j = G_j + F_n,
        # ∂/∂s = −(F_n + G_m): the multiplier of the mass constraint (docs/ot.md §9.5).
        if need_C:
            gC = G_hat[:, :n, :m]
            if ctx.dummy == "l2rm":  # the corner A = max C (docs/ot.md §3.2)
                gC = gC + G_hat[:, n, m].view(-1, 1, 1) * _argmax_share(C.detach()).to(gC.dtype)
            grad_C = (w.unsqueeze(-1) * gC).to(C.dtype)
            grad_C = grad_C[0] if ctx.single else grad_C
        if need_a:
            grad_a = (w * (F[:, :n] + Gd[:, m:])).to(C.dtype)
            grad_a = grad_a.sum(0) if ctx.a_dim == 1 else grad_a
        if need_b:
            grad_b = (w * (Gd[:, :m] + F[:, n:])).to(C.dtype)
            grad_b = grad_b.sum(0) if ctx.b_dim == 1 else grad_b
        if need_mass:
            grad_mass = (-w[:, 0] * (F[:, n] + Gd[:, m])).to(C.dtype)
        return grad_C, grad_a, grad_b, grad_mass, None, None, None, None, None


__all__ = ["Sinkhorn2", "PartialSinkhorn2", "adjoint"]
