"""Writes the golden fixture of tests/train/l2rm_golden_step_test.cpp into tests/fixtures/golden_steps/l2rm/:
one whole main-phase L2RM training step and the per-sample loss pass, transcribed from docs/methods/l2rm.md in the
structure of the official main_L2RM.py train() / models.py (no official code copied):

  (a) cost-function update (§1.4): k clean images J go into queue slots Q of a copy of the queue (the previous
      noisy batch's images), π^sup[Q_t, J_t] = 1; S^key = g(queue copy, clean captions) in eval mode, no grad;
      L_OT = Σ π^sup ⊙ f_c(S^key); one Adam step (lr 2e-6) on f_c only; the queue becomes the noisy images;
  (b) clean batch (§1.7), first as in train(): S_c = g(V_c, T_c) in train mode, VSE++ hardest-negative triplet
      (margin 0.2), summed;
  (c) rematch (§1.5, §1.6): S = g(V_n, T_n) in train mode; C = max(f_c(S), 1e-10) with the updated f_c; the masked
      partial OT of the official sinkhorn_log_domain/partial_ot (A = max C, ξ = 100·max C, ρ = 0.1, positives
      masked, λ = 0.07, ≤ 1000 sweeps, stop when ‖Δu‖₂ < 1e-3); L_re = the symmetric KL of §1.6 (τ = 0.05);
      L = L_trip + L_re; zero_grad, backward, clip_grad_norm_(2.0) on the retrieval net, Adam (lr 2e-4).
The per-sample pass (§1.3): the net in eval mode, ℓ_i = (1/B) Σ_{j≠i}[α − S_ii + S_ij]_+ + (1/B) Σ_{j≠i}[α −
S_ii + S_ji]_+ on one batch holding the whole 16-pair training set (before the step).

Run from anywhere:  /usr/bin/python3 tests/reference/l2rm_step_reference.py   (torch 1.13, numpy)

Pinned randomness: dropout 0; the batches are fixed (training set = 8 clean captions 0..7 and 8 mismatched ones
8..15, each loader holding exactly one batch, ordered by the distinct caption lengths within it); the draws of
the reconstructed pairs (k ~ U{1..3}, J, Q) are the ones rematch's Philox generator makes from state
{seed 7, offset 0}: K, J, Q below, and the C++ test checks that it still draws exactly these. The plan stays in
float64 (the official code casts it to float32 because its S is float32; here everything is float64). Adam
(both nets) starts from moments of 4 earlier steps; f_c's weights are −I / 1 plus noise (a trained f_c).
"""
import torch

import golden_step_common as g

B, REGIONS, VOCAB = 8, 3, 12
LENGTHS = [10, 9, 8, 7, 6, 5, 4, 3] * 2  # clean captions 0..7, mismatched 8..15
K, J, Q = 2, [1, 2], [0, 6]  # Generator(7): 1 + randint(0, 3), randperm(8), randperm(8)
TAU, MARGIN, LR, COST_LR, CLIP = 0.05, 0.2, 2e-4, 2e-6, 2.0
REG, RHO, ITERS, TOL = 0.07, 0.1, 1000, 1e-3


def cost_function(S, fc):  # §1.4: C_ij = ReLU(Σ_k W_jk S_ik + b_j)
    return torch.relu(fc(S))


def sinkhorn_log_domain(p, q, C, mask, reg):
    """§1.5 step 5: log-domain Sinkhorn, masked log-kernel −1e6, lse with max shift and + 1e-10."""
    def kernel(u, v):
        M = (-C + u[:, None] + v[None, :]) / reg
        return torch.where(mask > 0, M, torch.full_like(M, -1e6))

    def lse(A):
        m = A.max(1, keepdim=True)[0]
        return (torch.log(torch.exp(A - m).sum(1, keepdim=True) + 1e-10) + m).squeeze(1)

    u, v = torch.zeros_like(p), torch.zeros_like(q)
    for it in range(ITERS):
        u0 = u
        u = reg * (torch.log(p) - lse(kernel(u, v))) + u
        v = reg * (torch.log(q) - lse(kernel(u, v).t())) + v
        if torch.linalg.norm(u - u0) < TOL:
            break
    return torch.exp(kernel(u, v)), it + 1


def partial_ot(C):
    """§1.5 steps 2-4: dummy row/column (Chapel et al.), A = max C, ξ = 100·max C, positives masked."""
    n = C.size(0)
    A, xi = C.max(), 100 * C.max()
    Ch = torch.full((n + 1, n + 1), float(xi), dtype=C.dtype)
    Ch[:n, :n] = C
    Ch[n, n] = 2 * xi + A
    p = torch.cat([torch.full((n,), 1.0 / n, dtype=C.dtype), torch.tensor([1.0 - RHO], dtype=C.dtype)])
    mask = torch.ones(n + 1, n + 1, dtype=C.dtype)
    mask[:n, :n] -= torch.eye(n, dtype=C.dtype)
    plan, iters = sinkhorn_log_domain(p, p.clone(), Ch, mask, REG)
    return plan[:n, :n], iters


def sym_kl(S, plan, eps=1e-10):
    """§1.6: 0.5·[KL(Π^{i2t}‖P^{i2t}) + KL(P^{i2t}‖Π^{i2t}) + KL(Π^{t2i}‖P^{t2i}) + KL(P^{t2i}‖Π^{t2i})],
    KL batchmean; gradients through P on both sides (the target side of F.kl_div too)."""
    e = (S / TAU).exp()
    p_i2t = e / (e.sum(1, keepdim=True) + eps)
    p_t2i = e.t() / (e.t().sum(1, keepdim=True) + eps)
    pi = plan.clamp(min=eps)
    pi_i2t = pi / pi.sum(1, keepdim=True)
    pi_t2i = (pi / pi.sum(0, keepdim=True)).t()
    kl = lambda a, b: (a * (a.log() - b.log())).sum() / a.size(0)
    return 0.5 * (kl(pi_i2t, p_i2t) + kl(p_i2t, pi_i2t) + kl(pi_t2i, p_t2i) + kl(p_t2i, pi_t2i))


def hardest_triplet(S):  # VSE++ max violation, summed (§1.7)
    d = S.diag()
    eye = torch.eye(S.size(0), dtype=torch.bool)
    cost_c = (MARGIN + S - d.view(-1, 1)).clamp(min=0).masked_fill(eye, 0)
    cost_i = (MARGIN + S - d.view(1, -1)).clamp(min=0).masked_fill(eye, 0)
    return cost_c.max(1)[0].sum() + cost_i.max(0)[0].sum()


def per_sample_losses(S):  # §1.3, mean over all B (diagonal zero)
    d = S.diag()
    eye = torch.eye(S.size(0), dtype=torch.bool)
    cost_c = (MARGIN - d.view(-1, 1) + S).clamp(min=0).masked_fill(eye, 0)
    cost_i = (MARGIN - d.view(1, -1) + S).clamp(min=0).masked_fill(eye, 0)
    return cost_c.mean(1) + cost_i.mean(0)


def main():
    torch.manual_seed(2024)
    torch.set_num_threads(1)
    out = g.folder("l2rm")
    model = g.sgr_model(VOCAB, REGIONS)
    images, captions, lengths = g.precomp_set(2 * B, REGIONS, 6, LENGTHS, VOCAB)
    g.save_precomp(out, images, captions, lengths)
    fc = torch.nn.Linear(B, B).double()
    with torch.no_grad():
        fc.weight.copy_(-torch.eye(B, dtype=g.F64) + 0.05 * torch.randn(B, B, dtype=g.F64))
        fc.bias.copy_(1 + 0.05 * torch.randn(B, dtype=g.F64))
    queue = torch.rand(B, REGIONS, 6, dtype=torch.float32).to(g.F64)
    g.save_state(out, "before.", model)
    g.save_state(out, "cost.before.fc.", fc)
    g.save(out, "queue", queue)
    g.save(out, "draws", torch.tensor([K] + J + Q, dtype=torch.int64))
    params = list(model.named_parameters())
    cost_params = [("fc." + n, p) for n, p in fc.named_parameters()]
    opt = g.adam_with_moments(params, LR)
    cost_opt = g.adam_with_moments(cost_params, COST_LR)
    g.save_adam(out, "adam.", opt, params)
    g.save_adam(out, "cost_adam.", cost_opt, cost_params)

    # The per-sample pass over the whole training set (one batch of 16), eval mode, before the step.
    model.eval()
    with torch.no_grad():
        g.save(out, "per_sample", per_sample_losses(model(images, captions, lengths)))

    clean = slice(0, B)
    noisy = slice(B, 2 * B)
    Vc, Tc, Lc = images[clean], captions[clean][:, :max(LENGTHS[:B])], lengths[clean]
    Vn, Tn, Ln = images[noisy], captions[noisy][:, :max(LENGTHS[B:])], lengths[noisy]

    # (a) the cost function learns from reconstructed pairs.
    keys = queue.clone()
    sup = torch.zeros(B, B, dtype=g.F64)
    for t in range(K):
        keys[Q[t]] = Vc[J[t]]
        sup[Q[t], J[t]] = 1
    model.eval()
    with torch.no_grad():
        s_key = model(keys, Tc, Lc)
    model.train()
    l_ot = (sup * cost_function(s_key, fc)).sum()
    cost_opt.zero_grad()
    l_ot.backward()
    cost_opt.step()
    queue = Vn.clone()

    # (b) the clean batch's triplet, first, as main_L2RM.py's train(): its training-mode forward updates the
    # BatchNorm statistics before the noisy batch's.
    model.train()
    l_trip = hardest_triplet(model(Vc, Tc, Lc))
    # (c) the rematch plan and loss of the noisy batch; L = L_trip + L_re, one clipped Adam step.
    s_noisy = model(Vn, Tn, Ln)
    with torch.no_grad():
        C = cost_function(s_noisy.detach(), fc).clamp(min=1e-10)
        plan, iters = partial_ot(C)
    l_re = sym_kl(s_noisy, plan)
    loss = l_trip + l_re
    opt.zero_grad()
    loss.backward()
    norm = g.clip_grad_norm(model.parameters(), CLIP)
    opt.step()

    g.save(out, "losses", torch.stack([l_ot, l_re, l_trip]).detach())
    g.save(out, "plan", plan)
    g.save(out, "queue_after", queue)
    g.save_state(out, "after.", model)
    g.save_state(out, "cost.after.fc.", fc)
    print(f"l2rm: L_OT {l_ot.item():.6f}, L_re {l_re.item():.6f}, L_trip {l_trip.item():.6f}, Sinkhorn sweeps "
          f"{iters}, plan mass {plan.sum().item():.4f}, grad norm {norm:.4f}")


if __name__ == "__main__":
    main()
