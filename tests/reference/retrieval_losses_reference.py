"""Writes the golden fixtures of tests/train/retrieval_losses_test.cpp into
tests/fixtures/losses/<case>/<name>.npy: values and gradients w.r.t. the score matrix S of the official
loss code, in float64.

Run from anywhere:  /usr/bin/python3 tests/reference/retrieval_losses_reference.py   (torch 1.13, numpy)

Transcribed (only `.cuda()` dropped, labels made float64, and CCL's random mask passed in):
  penghu-cs/RCL  RCL-SGRAF/model.py  class CCL (methods log, tan, abs, exp, gce, infoNCE)
  hhc1997/L2RM   models.py  RCE, KL_Divergence, sym_KL_Divergence, Soft_InfoNCE, JS_Divergence,
                            ContrastiveLoss(hard_negative="eval_loss")
plus the paper variants that have no code: the RCE label clipped to [eps, 1 - eps] (L2RM Eq. 5) and the
per-sample split loss with the hardest negative (L2RM Eq. 4 -> Eq. 2).

Inputs (folder `inputs`): S = sigmoid(2·randn) (SGR/SAF-like scores in (0, 1)), B = 6; a plan with an exact zero
diagonal (masked positives), one row of ~1e-19 entries (an untransported row, clipped to 1e-10) and random
mass elsewhere; CCL masks for ratio -1 (all negatives) and 0.5 (3 per row, drawn as CCL draws them); a random
weight r per sample for the [B]-shaped split loss (its gradient is that of sum(r * loss)).
"""
import os

import numpy as np
import torch
import torch.nn as nn

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "losses")
F64 = torch.float64
TAU = 0.05


def save(case, **arrays):
    folder = os.path.join(OUT, case)
    os.makedirs(folder, exist_ok=True)
    for name, value in arrays.items():
        arr = value.detach().numpy() if isinstance(value, torch.Tensor) else np.asarray(value)
        np.save(os.path.join(folder, name + ".npy"), arr, allow_pickle=False)


def ccl_mask(scores, ratio):
    """CCL.forward's negative mask (RCL model.py), on the CPU."""
    randn, eye = torch.rand_like(scores), torch.eye(scores.shape[0], dtype=scores.dtype)
    randn[eye > 0] = randn.min(dim=1)[0] - 1
    n = scores.shape[0]
    num = n - 1 if ratio <= 0 or ratio >= 1 else int(ratio * n)
    V, K = randn.topk(num, dim=1)
    mask = torch.zeros_like(scores)
    mask[torch.arange(n).reshape([-1, 1]), K] = 1.
    return mask


def ccl(scores, tau, method, q, mask):
    """RCL model.py CCL.forward with the mask given."""
    eps = 1e-10
    scores = (scores / tau).exp()
    i2t = scores / (scores.sum(1, keepdim=True) + eps)
    t2i = scores.t() / (scores.t().sum(1, keepdim=True) + eps)
    if method == 'log':
        criterion = lambda x: -((1. - x + eps).log() * mask).sum(1).mean()
    elif method == 'tan':
        criterion = lambda x: (x.tan() * mask).sum(1).mean()
    elif method == 'abs':
        criterion = lambda x: (x * mask).sum(1).mean()
    elif method == 'exp':
        criterion = lambda x: ((-(1. - x)).exp() * mask).sum(1).mean()
    elif method == 'gce':
        criterion = lambda x: ((1. - (1. - x + eps) ** q) / q * mask).sum(1).mean()
    elif method == 'infoNCE':
        criterion = lambda x: -x.diag().log().mean()
    else:
        raise Exception('Unknown Loss Function!')
    return criterion(i2t) + criterion(t2i)


def rce(scores, tau, label):
    """L2RM models.py RCE.forward; label 'paper' clips I to [eps, 1 - eps] instead of adding eps."""
    eps = 1e-7
    eye = torch.eye(scores.shape[0], dtype=F64)
    mask = eye + eps if label == 'code' else eye.clamp(eps, 1 - eps)
    scores = (scores / tau).exp()
    i2t = scores / (scores.sum(1, keepdim=True))
    t2i = scores.t() / (scores.t().sum(1, keepdim=True))
    cost_i2t_r = - (mask.log() * i2t).sum(1).mean()
    cost_t2i_r = - (mask.log() * t2i).sum(1).mean()
    cost_i2t = -i2t.diag().log().mean()
    cost_t2i = -t2i.diag().log().mean()
    return 0.5 * (cost_i2t_r + cost_t2i_r + cost_i2t + cost_t2i)


def soft_targets(scores, soft_labels, tau):
    eps = 1e-10
    scores = (scores / tau).exp()
    i2t = scores / (scores.sum(1, keepdim=True) + eps)
    t2i = scores.t() / (scores.t().sum(1, keepdim=True) + eps)
    soft_labels = soft_labels.clip(min=eps)
    normalized_labels_i2t = soft_labels / soft_labels.sum(dim=1, keepdim=True)
    normalized_labels_t2i = soft_labels.t() / soft_labels.t().sum(dim=1, keepdim=True)
    return i2t, t2i, normalized_labels_i2t, normalized_labels_t2i


def rematch(scores, soft_labels, tau, variant):
    """L2RM models.py KL_Divergence, sym_KL_Divergence, Soft_InfoNCE, JS_Divergence."""
    kl_loss = nn.KLDivLoss(reduction="batchmean")
    i2t, t2i, normalized_labels_i2t, normalized_labels_t2i = soft_targets(scores, soft_labels, tau)
    if variant == 'kl':
        return kl_loss(i2t.log(), normalized_labels_i2t) + kl_loss(t2i.log(), normalized_labels_t2i)
    if variant == 'sym_kl':
        cost_i2t = kl_loss(i2t.log(), normalized_labels_i2t)
        cost_t2i = kl_loss(t2i.log(), normalized_labels_t2i)
        cost_i2t_r = kl_loss(normalized_labels_i2t.log(), i2t)
        cost_t2i_r = kl_loss(normalized_labels_t2i.log(), t2i)
        return 0.5 * (cost_i2t + cost_t2i + cost_i2t_r + cost_t2i_r)
    if variant == 'soft_infonce':
        cost_i2t = - (i2t.log() * normalized_labels_i2t).sum(1).mean()
        cost_t2i = - (t2i.log() * normalized_labels_t2i).sum(1).mean()
        return cost_i2t + cost_t2i
    if variant == 'js':
        i2t_mix = 0.5 * (i2t + normalized_labels_i2t)
        t2i_mix = 0.5 * (t2i + normalized_labels_t2i)
        cost_i2t = 0.5 * (kl_loss(i2t.log(), i2t_mix) + kl_loss(normalized_labels_i2t.log(), i2t_mix))
        cost_t2i = 0.5 * (kl_loss(t2i.log(), t2i_mix) + kl_loss(normalized_labels_t2i.log(), t2i_mix))
        return cost_i2t + cost_t2i
    raise ValueError(variant)


def split_loss(scores, margin, mode):
    """L2RM models.py ContrastiveLoss(hard_negative="eval_loss"); mode 'hardest' takes maxima instead."""
    diagonal = scores.diag().view(scores.size(0), 1)
    d1 = diagonal.expand_as(scores)
    d2 = diagonal.t().expand_as(scores)
    cost_s = (margin + scores - d1).clamp(min=0)
    cost_im = (margin + scores - d2).clamp(min=0)
    mask = torch.eye(scores.size(0)) > 0.5
    cost_s, cost_im = cost_s.masked_fill_(mask, 0), cost_im.masked_fill_(mask, 0)
    if mode == 'mean':
        return cost_s.mean(1) + cost_im.mean(0)
    return cost_s.max(1)[0] + cost_im.max(0)[0]


def value_and_grad(scores, f):
    s = scores.clone().requires_grad_(True)
    loss = f(s)
    loss.backward()
    return loss, s.grad


def main():
    torch.manual_seed(31)
    b = 6
    scores = torch.sigmoid(2 * torch.randn(b, b, dtype=F64))
    plan = torch.rand(b, b, dtype=F64) / (10 * b * b)
    plan.fill_diagonal_(0)
    plan[2] = 1e-19 * torch.rand(b, dtype=F64)
    masks = {"all": ccl_mask(scores, -1), "ratio": ccl_mask(scores, 0.5)}
    r = torch.randn(b, dtype=F64)
    save("inputs", scores=scores, plan=plan, mask_all=masks["all"], mask_ratio=masks["ratio"], r=r,
         tau=np.float64(TAU), margin=np.float64(0.2), q=np.float64(0.2))

    loss, grad = value_and_grad(scores, lambda s: ccl(s, TAU, 'infoNCE', 0.2, masks["all"]))
    save("infonce", loss=loss, grad=grad)
    for method in ("log", "tan", "abs", "exp", "gce"):
        for tag, mask in masks.items():
            loss, grad = value_and_grad(scores, lambda s: ccl(s, TAU, method, 0.2, mask))
            save(f"ccl_{method}_{tag}", loss=loss, grad=grad)
    for label in ("code", "paper"):
        loss, grad = value_and_grad(scores, lambda s: rce(s, TAU, label))
        save(f"warmup_{label}", loss=loss, grad=grad)
    for mode in ("mean", "hardest"):
        s = scores.clone().requires_grad_(True)
        per_sample = split_loss(s, 0.2, mode)
        (per_sample * r).sum().backward()
        save(f"split_{mode}", loss=per_sample, grad=s.grad)
    for variant in ("sym_kl", "kl", "soft_infonce", "js"):
        loss, grad = value_and_grad(scores, lambda s: rematch(s, plan, TAU, variant))
        save(f"rematch_{variant}", loss=loss, grad=grad)


if __name__ == "__main__":
    main()
