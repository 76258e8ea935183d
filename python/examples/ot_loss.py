#!/usr/bin/python3
"""rematch's optimal transport as a PyTorch loss: three short fits, a few seconds on a CPU (docs/ot.md §9).

1. Point clouds: Y is X under an unknown linear map A*, shuffled. Gradient descent on the Sinkhorn divergence
   W(XAᵀ, Y) − W(XAᵀ, XAᵀ)/2 − W(Y, Y)/2 — three entropic OT values in one batched call of rematch.ot.sinkhorn2 —
   finds A*: the divergence is 0 only when the two clouds coincide.
2. Outliers: Y is X moved by t*, plus outliers. Balanced OT must move all of X onto all of Y and is pulled towards
   the outliers; partial OT (rematch.ot.partial_sinkhorn2) transports only the inliers' mass and finds t*.
3. L2RM's loss shape: a batch of 128x128 costs with the diagonal masked, partial transport of mass 0.1 — one
   forward + backward, with its time.

Run: PYTHONPATH=build/python /usr/bin/python3 python/examples/ot_loss.py [--device cuda]
"""
import argparse
import time

import torch

import rematch


def fit(params, loss, steps, lr):
    opt = torch.optim.Adam(params, lr=lr)
    for _ in range(steps):
        opt.zero_grad()
        value = loss()
        value.backward()
        opt.step()
    return float(value)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu")
    dev = parser.parse_args().device
    torch.manual_seed(0)
    f64 = dict(dtype=torch.float64, device=dev)

    # 1. A linear map through the Sinkhorn divergence.
    X = torch.rand(20, 2, **f64) * 2 - 1
    A_true = torch.tensor([[1.1, -0.5], [0.4, 0.9]], **f64)
    Y = (X @ A_true.T)[torch.randperm(20, device=dev)]
    A = (A_true + 0.2 * torch.randn(2, 2, **f64)).requires_grad_()

    def divergence():
        Z = X @ A.T
        W = rematch.ot.sinkhorn2(torch.stack([torch.cdist(Z, Y), torch.cdist(Z, Z), torch.cdist(Y, Y)]) ** 2,
                                 eps=0.5, value="entropic")
        return W[0] - W[1] / 2 - W[2] / 2

    start = float((A - A_true).abs().max())
    value = fit([A], divergence, steps=200, lr=0.02)
    error = float((A - A_true).abs().max())
    print(f"1. linear map: |A - A*| {start:.3f} -> {error:.1e} (Sinkhorn divergence {value:.1e})")

    # 2. A translation, with outliers.
    t_true = torch.tensor([0.7, -0.3], **f64)
    Y = torch.cat([X + t_true, torch.rand(5, 2, **f64) + 3])  # 20 inliers, 5 outliers
    a, b = torch.full((20,), 1 / 20, **f64), torch.full((25,), 1 / 20, **f64)
    errors = {}
    for name in ("balanced", "partial"):
        t = torch.zeros(2, **f64, requires_grad=True)
        if name == "balanced":
            loss = lambda: rematch.ot.sinkhorn2(torch.cdist(X + t, Y) ** 2, eps=0.3)  # noqa: E731
        else:
            loss = lambda: rematch.ot.partial_sinkhorn2(torch.cdist(X + t, Y) ** 2, 0.9, a, b, eps=0.3)  # noqa: E731
        fit([t], loss, steps=200, lr=0.05)
        errors[name] = float((t - t_true).abs().max())
    print(f"2. translation with 5 outliers: |t - t*| balanced OT {errors['balanced']:.2f}, "
          f"partial OT {errors['partial']:.1e}")

    # 3. L2RM's masked partial OT over a batch, forward + backward.
    C = torch.rand(32, 128, 128, device=dev, requires_grad=True)
    mask = ~torch.eye(128, dtype=torch.bool, device=dev)
    rematch.ot.partial_sinkhorn2(C, 0.1, eps=0.05, mask=mask).sum().backward()  # warm-up
    C.grad = None
    start = time.perf_counter()
    loss = rematch.ot.partial_sinkhorn2(C, 0.1, eps=0.05, mask=mask).sum()
    loss.backward()
    if dev.startswith("cuda"):
        torch.cuda.synchronize()
    took = time.perf_counter() - start
    diagonal_zero = bool((C.grad[:, ~mask] == 0).all())
    print(f"3. L2RM-shaped loss, 32 x 128x128 float32 on {dev}: {loss.item():.4f}, forward + backward "
          f"{took * 1e3:.0f} ms; gradient zero on the masked diagonal: {diagonal_zero}")

    ok = error < 1e-3 and errors["partial"] < 1e-3 and errors["balanced"] > 0.1
    print("ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
