"""Writes the golden fixtures of tests/train/rcsl_losses_test.cpp into tests/fixtures/rcsl/.

Run from the repository root:  /usr/bin/python3 tests/reference/rcsl_reference.py
A PyTorch transcription of RCSL's losses (docs/methods/rcsl.md §3.3-3.4; QinYang79/RCSL model.py: ContrastiveLoss with
margin 0.2, SVSE.train_emb's lalign / lunif and its assembly of the two mined matrices, robust_mining_loss) on
fixed float64 unit embeddings. Each case has two views of a batch of B pairs, K_p of them paired and first:
view 0 (img0, cap0) is the original pair, view 1 (img1, cap1) the mined items. Saved as .npy, per case `<case>.`:
  inputs   img0 cap0 img1 cap1 [B, E], meta = [B, K_p, tau]
  values   triplet (L_trl), align, unif_img, unif_cap, reg (L_reg), mining (L_rcm), total
  grads    <term>.grad.<input> for term in triplet, reg, mining, total (zeros where a term does not use an input)
"""
import os

import numpy as np
import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "rcsl")
MARGIN = 0.2
EMBED = 5


def save(name, value):
    value = np.asarray(value, dtype=np.float64)
    # ascontiguousarray turns a 0-d array into 1-d: reshape back so scalars stay scalars.
    np.save(os.path.join(OUT, name + ".npy"), np.ascontiguousarray(value).reshape(value.shape), allow_pickle=False)


def l2norm(x):
    return x / (x.pow(2).sum(dim=1, keepdim=True).sqrt() + 1e-8)


def contrastive_loss(scores, paired_l, margin=MARGIN):
    """model.py ContrastiveLoss.forward (max_violation, paired block only)."""
    diagonal = scores.diag().view(scores.size(0), 1)
    d1 = diagonal.expand_as(scores)
    d2 = diagonal.t().expand_as(scores)
    scores_ = torch.ones_like(scores).mul(-1)
    scores_[:paired_l, :paired_l] = scores[:paired_l, :paired_l]
    scores = scores_
    cost_s = (margin + scores - d1).clamp(min=0)
    cost_im = (margin + scores - d2).clamp(min=0)
    mask = torch.eye(scores.size(0), scores.size(1)) > .5
    cost_s = cost_s.masked_fill_(mask, 0)
    cost_im = cost_im.masked_fill_(mask, 0)
    cost_s = cost_s.max(1)[0]
    cost_im = cost_im.max(0)[0]
    return cost_s[0:paired_l].sum() + cost_im[0:paired_l].sum()


def lalign(x, y, paired_l, alpha=2):
    return (x - y).norm(dim=1).pow(alpha)[0:paired_l].mean()


def lunif(x, t=2):
    sq_pdist = torch.pdist(x, p=2).pow(2)
    return sq_pdist.mul(-t).exp().mean().log()


def robust_mining_loss(scores, tau):
    p1 = torch.softmax(scores / tau, dim=1)
    p2 = torch.softmax(scores.t() / tau, dim=1)
    return ((1 - p1.diag()).sum() + (1 - p2.diag()).sum()) / 2


def terms(img0, cap0, img1, cap1, paired_l, tau):
    """SVSE.train_emb with the embeddings already computed and sorted paired-first (mining stage)."""
    sims = img0 @ cap0.t()
    triplet = contrastive_loss(sims, paired_l)
    align = lalign(img0, cap0, paired_l)
    unif_img, unif_cap = lunif(img0), lunif(cap0)
    reg = align + (unif_img + unif_cap) / 2
    p_up_txt = torch.cat([cap0[:paired_l], cap1[paired_l:]], dim=0)
    p_up_img = torch.cat([img0[:paired_l], img1[paired_l:]], dim=0)
    sims1 = p_up_img @ cap0.t()
    sims2 = p_up_txt @ img0.t()
    mining = robust_mining_loss(sims1, tau) + robust_mining_loss(sims2, tau)
    return {"triplet": triplet, "align": align, "unif_img": unif_img, "unif_cap": unif_cap, "reg": reg,
            "mining": mining, "total": triplet + reg + mining}


def write_case(name, views, paired_l, tau):
    inputs = {k: v.clone().requires_grad_(True) for k, v in zip(("img0", "cap0", "img1", "cap1"), views)}
    save(f"{name}.meta", [views[0].shape[0], paired_l, tau])
    for k, v in inputs.items():
        save(f"{name}.{k}", v.detach().numpy())
    values = terms(*inputs.values(), paired_l, tau)
    for k, v in values.items():
        save(f"{name}.{k}", v.detach().numpy())
    for term in ("triplet", "reg", "mining", "total"):
        grads = torch.autograd.grad(values[term], list(inputs.values()), retain_graph=True, allow_unused=True)
        for k, g in zip(inputs, grads):
            save(f"{name}.{term}.grad.{k}", (torch.zeros_like(inputs[k]) if g is None else g).numpy())


def random_views(gen, batch):
    return [l2norm(torch.randn(batch, EMBED, dtype=torch.float64, generator=gen)) for _ in range(4)]


def main():
    os.makedirs(OUT, exist_ok=True)
    gen = torch.Generator().manual_seed(20260)
    # A mixed batch: 3 of 6 paired, the official temperature.
    write_case("mixed", random_views(gen, 6), 3, 0.03)
    # One paired pair whose positive is nearly antipodal: only the −1 entries outside the block are its
    # negatives, and they are violated (0.2 − 1 − S_00 > 0).
    views = random_views(gen, 5)
    views[1][0] = l2norm(-views[0][0:1] + 0.05 * torch.randn(1, EMBED, dtype=torch.float64, generator=gen))[0]
    write_case("one_paired", views, 1, 0.2)
    # Every pair paired: the mined view is unused, the triplet sees the whole matrix.
    write_case("all_paired", random_views(gen, 4), 4, 0.2)


if __name__ == "__main__":
    main()
