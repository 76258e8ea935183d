"""Writes the golden fixtures of tests/train/uotrcl_golden_step_test.cpp into tests/fixtures/golden_steps/uotrcl/:
one whole UOT-RCL training step of each phase as our documented reading does it (docs/methods/uotrcl.md §4.3,
docs/uotrcl-choices.md; UOT-RCL has no public code), on the MLP+prototype model of mlp_reference.py (MRL's
ImageNet / TextNet and prototypes C, docs/methods/uotrcl.md §4.2) at toy sizes, in float64:

  main step (after the warm-up), in uotrcl_method.cpp's order. The per-epoch label correction (JSD, confident set
  G, C_S, the partial OT of Eq. 14, and with --target_update epoch the Eq. (9) update) happens in begin_epoch, so
  its results are given: the corrected labels Ŷ = N·T [N, K], the targets y [N, K] and G. The step:
    forward of the batch (z = f(x) / (‖f(x)‖ + 1e-8), logits zᵀC / τ₁);
    L_PLC = −(1/B) Σ_i Ŷ_iᵀ(log p_iᵛ + log p_iᵗ)                                                (Eq. 15)
    relation vectors R_i = softmax_g(cos(z_i, z_g)/τ₂) of the (detached) batch against G embedded by the current
      networks (no grad), C^R_ij = JSD(R_iᵛ, R_jᵗ)                                               (Eqs. 16-17)
    the relation plan M: log-domain Sinkhorn on C^R / mean(C^R), uniform marginals 1/B, ε = 0.02, at most 100
      sweeps, stopping after the first sweep whose L1 row-marginal error is below 1e-6 (ot::StopRule::MarginalL1,
      docs/uotrcl-choices.md §1)                                                                    (Eq. 17)
    L_BHG = −(1/B) Σ_i [M_i^{v2t}·log p_i^{v2t} + M_i^{t2v}·log p_i^{t2v}], p^{v2t} = softmax_j(z_iᵛ·z_jᵗ/τ₃), M^{v2t}
      = M row-normalised, M^{t2v} = Mᵀ row-normalised                                              (Eq. 18)
    L = L_PLC + λ L_BHG (λ = 0.4)                                                                  (Eq. 19)
    with --target_update batch: y_i ← γ y_i + (1 − γ) onehot(argmax_k μ_kᵀ(z_iᵛ + z_iᵗ)) for the batch's rows, from
      this forward's embeddings and the prototypes before the update (γ = 0.99)                    (Eq. 9)
    zero_grad, backward, Adam (lr 1e-4, PyTorch's betas, no clip: --grad_clip 0), then C's columns renormalised
      (MRL's C.data = C / C.norm(dim=0); docs/uotrcl-choices.md §3 item 5).
  the epoch's label correction (begin_epoch of main epoch 2 of 1 warm-up + 3: s = 0.5), from the same weights
    and the given targets y: p = softmax(zᵀC/τ₁) of the whole training set; G = per predicted class argmax(pᵛ + pᵗ)
    the 2 pairs of smallest JSD(pᵛ, pᵗ) (Eq. 5); c_iᵛ = cos(z_iᵛ, z_◇ᵛ) / max(cos(z_iᵗ, z_◇ᵗ), 1e-6) with ◇ the
    closest pair of G in image space, c_iᵗ the same with the spaces swapped (Eq. 7); the 𝒦 = 3 nearest other pairs
    of each space vote (1/𝒦) Σ cos·y_k; C_S = −log(max(cᵛ·votesᵛ + cᵗ·votesᵗ, 1e-8)) (Eq. 8); the (N+1)×(K+1)
    partial OT of Eq. (14) on C_S − min(0, min C_S) with zero-cost dummies, α = [1/N; Σβ − s], β = [1/K; Σα − s],
    log-domain Sinkhorn at ε = 0.5, at most 1000 sweeps, L1 row-marginal stop at 1e-6; Ŷ = N·T[:N, :K]; then
    Eq. (9) for every pair from the whole-set embeddings (--target_update epoch). The prototypes C sit at the unit
    class means of (z_v + z_t)/2 (place_prototypes), so the 16 pairs predict all 3 classes (3, 8 and 5 pairs) and
    G = [5, 10, 9, 8, 13, 6] holds 2 pairs of each class; min C_S = −0.383 < 0, so the shift is exercised.
  warm-up step: L_CE = −(1/B) Σ_i [t_iᵛᵀ log p_iᵛ + t_iᵗᵀ log p_iᵗ] with the noisy one-hot labels (Eq. 2), then
    the same Adam step and renormalisation.

Run from anywhere:  /usr/bin/python3 tests/reference/uotrcl_step_reference.py   (torch, numpy)

Pinned randomness: the batch is rows ORDER[8:16] (step 1 of an epoch whose permutation ORDER is given through the
state); Ŷ, y and G are given through the state; no label noise (--noise_ratio 0: the noisy labels are the
labels of the training file). Adam starts from moments of 4 earlier steps. Nothing else in a step draws.
Files: images, texts, labels (the training = valid = test set), order, confident, corrected, targets; before.<p>,
adam.<p>.exp_avg(_sq) (shared by both steps); main.after.<p>, main.adam.<p>.exp_avg(_sq), main.losses
[plc, bhg, total], main.targets_batch (y after the step with --target_update batch), main.relation_iterations;
warmup.after.<p>, warmup.adam.<p>.exp_avg(_sq), warmup.losses [ce]; epoch.confident, epoch.corrected,
epoch.targets, epoch.iterations, epoch.cost_shift (min(0, min C_S)) (the label correction).
"""
import torch

import golden_step_common as g
import mlp_reference

N, K, IMG_DIM, TXT_DIM, HIDDEN, L, B = 16, 3, 6, 5, 7, 4, 8
LR, LAMBDA, GAMMA, TAU1, TAU2, TAU3 = 1e-4, 0.4, 0.99, 1.0, 1.0, 1.0
REL_EPS, REL_ITERS, REL_TOL = 0.02, 100, 1e-6
PER_CLASS, KNN, S_MASS, LC_EPS, LC_ITERS, LC_TOL = 2, 3, 0.5, 0.5, 1000, 1e-6
STEP = 1  # the batch is ORDER[STEP·B : (STEP+1)·B]
F64 = g.F64


def Model():
    """MRL's two modality nets and the K unit prototypes (docs/methods/uotrcl.md §4.2), at this fixture's sizes."""
    return mlp_reference.Model(IMG_DIM, TXT_DIM, HIDDEN, L, K)


def place_prototypes(model, images, texts, labels):
    """C's column k = the unit mean of (z_v + z_t)/2 over the pairs labelled k, as if training had pulled the
    prototypes to their classes. With MRL's orthogonal draw (the model's init) every pair of this fixture predicts
    one class at these untrained weights, so Eq. (5)'s G would hold that class's 2 pairs only; at the class means
    the predictions spread over the 3 classes (3, 8 and 5 pairs) and G holds 2 pairs of each. Columns stay unit,
    as after MRL's renormalisation; C is no longer orthogonal (C's columns are updated freely in training)."""
    with torch.no_grad():
        z = (model.img_net(images) + model.txt_net(texts)) * 0.5
        means = torch.stack([z[labels == k].mean(0) for k in range(K)], 1)  # [L, K]
        model.C.copy_(means / means.norm(dim=0, keepdim=True))


def soft_ce(logits, targets):  # nn::cross_entropy_soft: −Σ_k t_k log_softmax_k, mean over rows
    return -(targets * torch.log_softmax(logits, 1)).sum(1).mean()


def xlogx(x):
    return x * torch.log(x.clamp(min=1e-30))


def jsd(p, q):  # Eq. (4): ½Σ p log p + ½Σ q log q − Σ m log m, m = (p + q)/2
    m = (p + q) * 0.5
    own = (xlogx(p).sum(-1, keepdim=True) + xlogx(q).sum(-1, keepdim=True)) * 0.5
    return (own - xlogx(m).sum(-1, keepdim=True)).squeeze(-1)


def unit(x, eps=1e-8):
    return x / (x.norm(dim=1, keepdim=True) + eps)


def relation_vectors(z, zg):  # Eq. (16) with dist = 1 − cos: softmax_g(cos / τ₂)
    return torch.softmax((unit(z) @ unit(zg).t()) / TAU2, 1)


def sinkhorn(cost, eps=REL_EPS, iters=REL_ITERS, tol=REL_TOL, a=None, b=None):
    """Log-domain Sinkhorn with uniform marginals (ot::sinkhorn): one sweep is φ = log a − LSE_j(ψ − C/ε), then
    ψ = log b − LSE_i(φ − C/ε); stop after the first sweep whose Σ_i |(P·1)_i − a_i| < tol, at most max sweeps."""
    n, m = cost.shape
    cs = cost / eps
    a = torch.full((n,), 1.0 / n, dtype=F64) if a is None else a
    b = torch.full((m,), 1.0 / m, dtype=F64) if b is None else b
    log_a, log_b = a.log(), b.log()
    phi, psi = torch.zeros(n, dtype=F64), torch.zeros(m, dtype=F64)
    for it in range(1, iters + 1):
        phi = log_a - torch.logsumexp(psi[None, :] - cs, 1)
        psi = log_b - torch.logsumexp(phi[:, None] - cs, 0)
        rows = torch.exp(phi + torch.logsumexp(psi[None, :] - cs, 1))
        if (rows - a).abs().sum() < tol:
            break
    return torch.exp(phi[:, None] + psi[None, :] - cs), it


def bhg_loss(z_v, z_t, plan):  # Eq. (18)
    scores = z_v @ z_t.t() / TAU3
    m_v2t = plan / plan.sum(1, keepdim=True)
    m_t2v = plan.t() / plan.t().sum(1, keepdim=True)
    return soft_ce(scores, m_v2t) + soft_ce(scores.t(), m_t2v)


def label_correction(model, images, texts, targets):
    """begin_epoch's pass (docs/methods/uotrcl.md §4.3.2, docs/uotrcl-choices.md §3 items 6, 7, 15, 16)."""
    with torch.no_grad():
        z_v, z_t = model.img_net(images), model.txt_net(texts)
        p_v, p_t = torch.softmax(z_v @ model.C / TAU1, 1), torch.softmax(z_t @ model.C / TAU1, 1)
        predicted, d = torch.argmax(p_v + p_t, 1).tolist(), jsd(p_v, p_t).tolist()
        G = []
        for k in range(K):  # Eq. (5): per predicted class, smallest JSD first (ties: lower index)
            members = sorted([i for i in range(N) if predicted[i] == k], key=lambda i: d[i])
            G += members[:PER_CLASS]
        s_v, s_t = unit(z_v) @ unit(z_v[G]).t(), unit(z_t) @ unit(z_t[G]).t()

        def ratio(query, other):  # Eq. (7)
            closest, where = query.max(1, keepdim=True)
            return closest.squeeze(1) / other.gather(1, where).squeeze(1).clamp(min=1e-6)

        c_v, c_t = ratio(s_v, s_t), ratio(s_t, s_v)

        def votes(z):  # Eq. (8)'s neighbour vote, the pair itself excluded
            u = unit(z)
            sims = (u @ u.t()).masked_fill(torch.eye(N, dtype=torch.bool), float("-inf"))
            values, index = sims.topk(KNN, 1)
            return (targets[index] * values[:, :, None]).sum(1) / KNN

        cost = -torch.log((c_v[:, None] * votes(z_v) + c_t[:, None] * votes(z_t)).clamp(min=1e-8))
        shift = min(0.0, cost.min().item())
        c = cost - shift
        a, b = torch.full((N,), 1.0 / N, dtype=F64), torch.full((K,), 1.0 / K, dtype=F64)
        aug = torch.zeros(N + 1, K + 1, dtype=F64)  # Eq. (14): zero-cost dummy row, column and corner
        aug[:N, :K] = c
        a_aug = torch.cat([a, (b.sum() - S_MASS).reshape(1)])
        b_aug = torch.cat([b, (a.sum() - S_MASS).reshape(1)])
        plan, iters = sinkhorn(aug, LC_EPS, LC_ITERS, LC_TOL, a_aug, b_aug)
        corrected = plan[:N, :K] * N
        hit = torch.argmax((z_v + z_t) @ model.C, 1)  # Eq. (9), --target_update epoch
        new_targets = targets * GAMMA + torch.nn.functional.one_hot(hit, K).to(F64) * (1 - GAMMA)
    return torch.tensor(G), corrected, new_targets, iters, shift


def adam_step(out, prefix, model, opt, loss):
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():  # MRL: C.data = C / C.norm(dim=0)
        model.C.data = model.C / model.C.norm(dim=0)
    g.save_state(out, prefix + "after.", model)
    g.save_adam(out, prefix + "adam.", opt, list(model.named_parameters()))


def main():
    torch.set_num_threads(1)
    torch.manual_seed(15)
    out = g.folder("uotrcl")
    model = Model().double()
    images = torch.rand(N, IMG_DIM, dtype=torch.float32).to(F64) * 2 - 1  # float32 values, as a feature file
    texts = torch.rand(N, TXT_DIM, dtype=torch.float32).to(F64) * 2 - 1
    labels = torch.tensor([0, 1, 2] * 5 + [1], dtype=torch.int64)[torch.randperm(N)]
    place_prototypes(model, images, texts, labels)  # draws nothing: the stream below is unchanged
    order = torch.randperm(N)
    confident = torch.tensor([3, 11, 6, 0, 14, 9], dtype=torch.int64)  # G, two per class as Eq. (5) would group it
    targets = torch.softmax(torch.randn(N, K, dtype=F64) * 2, 1)  # y: soft rows, as after some Eq. (9) updates
    corrected = torch.rand(N, K, dtype=F64)
    corrected = corrected / corrected.sum(1, keepdim=True) * torch.rand(N, 1, dtype=F64)  # N·T rows sum to ≤ 1
    g.save(out, "images", images)
    g.save(out, "texts", texts)
    g.save(out, "labels", labels)
    g.save(out, "order", order)
    g.save(out, "confident", confident)
    g.save(out, "targets", targets)
    g.save(out, "corrected", corrected)
    g.save_state(out, "before.", model)
    params = list(model.named_parameters())
    opt = g.adam_with_moments(params, LR)
    g.save_adam(out, "adam.", opt, params)
    start = {k: v.clone() for k, v in model.state_dict().items()}
    moments = {n: {k: v.clone() for k, v in opt.state[p].items()} for n, p in params}

    G, lc_corrected, lc_targets, lc_iters, shift = label_correction(model, images, texts, targets)
    g.save(out, "epoch.confident", G)
    g.save(out, "epoch.corrected", lc_corrected)
    g.save(out, "epoch.targets", lc_targets)
    g.save(out, "epoch.iterations", torch.tensor([lc_iters]))
    g.save(out, "epoch.cost_shift", torch.tensor([shift], dtype=F64))
    print(f"uotrcl label correction: G {G.tolist()}, C_S shift {shift:.4f}, {lc_iters} sweeps, "
          f"mass {lc_corrected.sum().item() / N:.6f}")

    rows = order[STEP * B:(STEP + 1) * B]
    # --- main step ---
    z_v, z_t = model.img_net(images[rows]), model.txt_net(texts[rows])
    logits_v, logits_t = z_v @ model.C / TAU1, z_t @ model.C / TAU1
    plc = soft_ce(logits_v, corrected[rows]) + soft_ce(logits_t, corrected[rows])
    with torch.no_grad():
        g_v, g_t = model.img_net(images[confident]), model.txt_net(texts[confident])
        cost = jsd(relation_vectors(z_v.detach(), g_v)[:, None, :], relation_vectors(z_t.detach(), g_t)[None, :, :])
        plan, iters = sinkhorn(cost * (1.0 / cost.mean()))
        # Eq. (9) for the batch's rows (--target_update batch), before the update
        hit = torch.argmax((z_v + z_t) @ model.C, 1)
        new_rows = targets[rows] * GAMMA + torch.nn.functional.one_hot(hit, K).to(F64) * (1 - GAMMA)
        targets_batch = targets.clone()
        targets_batch[rows] = new_rows
    bhg = bhg_loss(z_v, z_t, plan)
    loss = plc + bhg * LAMBDA
    adam_step(out, "main.", model, opt, loss)
    g.save(out, "main.losses", torch.stack([plc, bhg, loss]).detach())
    g.save(out, "main.targets_batch", targets_batch)
    g.save(out, "main.relation_iterations", torch.tensor([iters]))
    print(f"uotrcl main: plc {plc.item():.6f}, bhg {bhg.item():.6f}, loss {loss.item():.6f}, relation OT {iters} "
          f"sweeps, targets changed on rows {sorted(rows.tolist())}")

    # --- warm-up step, from the same weights and moments ---
    model.load_state_dict(start)
    for n, p in params:
        opt.state[p] = {k: v.clone() for k, v in moments[n].items()}
    one_hot = torch.nn.functional.one_hot(labels, K).to(F64)
    z_v, z_t = model.img_net(images[rows]), model.txt_net(texts[rows])
    ce = soft_ce(z_v @ model.C / TAU1, one_hot[rows]) + soft_ce(z_t @ model.C / TAU1, one_hot[rows])
    adam_step(out, "warmup.", model, opt, ce)
    g.save(out, "warmup.losses", torch.stack([ce]).detach())
    print(f"uotrcl warm-up: ce {ce.item():.6f}")


if __name__ == "__main__":
    main()
