"""Writes the golden fixtures of tests/nn/{linear,embedding,batchnorm,functional}_test.cpp into
tests/fixtures/nn_layers/<case>/<name>.npy, computed by PyTorch in float64.

Run from anywhere:  /usr/bin/python3 tests/reference/nn_layers_reference.py   (torch 1.13, numpy)

Every case draws its inputs from torch.manual_seed(<case seed>), runs the torch.nn layer or functional in
float64 and saves inputs, outputs and the gradients of a scalar loss sum(y * r) with a fixed random r (so
every output element gets a different weight). Dims stay <= 8 so the fixtures are a few KB.
"""
import os

import numpy as np
import torch
import torch.nn.functional as F

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "nn_layers")
F64 = torch.float64


def save(case, **arrays):
    folder = os.path.join(OUT, case)
    os.makedirs(folder, exist_ok=True)
    for name, value in arrays.items():
        arr = value.detach().numpy() if isinstance(value, torch.Tensor) else np.asarray(value)
        np.save(os.path.join(folder, name + ".npy"), arr, allow_pickle=False)


def linear():
    torch.manual_seed(1)
    layer = torch.nn.Linear(4, 5).double()
    x = torch.randn(2, 3, 4, dtype=F64, requires_grad=True)  # leading dims [2, 3]
    y = layer(x)
    r = torch.randn(y.shape, dtype=F64)
    (y * r).sum().backward()
    save("linear", weight=layer.weight, bias=layer.bias, x=x, y=y, r=r, grad_x=x.grad,
         grad_weight=layer.weight.grad, grad_bias=layer.bias.grad)


def embedding():
    torch.manual_seed(2)
    layer = torch.nn.Embedding(6, 3).double()
    ids = torch.tensor([[0, 5, 2, 5], [1, 2, 2, 4]], dtype=torch.int64)  # repeated ids accumulate
    y = layer(ids)
    r = torch.randn(y.shape, dtype=F64)
    (y * r).sum().backward()
    save("embedding", weight=layer.weight, ids=ids, y=y, r=r, grad_weight=layer.weight.grad)


def batchnorm(case, shape, seed):
    """Three training calls (statistics and running updates after each), then eval; gradients of the third
    training call and of the eval call. Channels get different shifts and scales."""
    torch.manual_seed(seed)
    c = shape[1]
    bn = torch.nn.BatchNorm1d(c).double()
    with torch.no_grad():
        bn.weight.copy_(torch.rand(c, dtype=F64) + 0.5)
        bn.bias.copy_(torch.randn(c, dtype=F64))
    view = (1, c) if len(shape) == 2 else (1, c, 1)
    shift = torch.randn(c, dtype=F64).view(view) * 2
    scale = (torch.rand(c, dtype=F64) * 3 + 0.5).view(view)
    arrays = {"weight": bn.weight.detach().clone(), "bias": bn.bias.detach().clone()}
    bn.train()
    for call in (1, 2, 3):
        x = (torch.randn(shape, dtype=F64) * scale + shift).requires_grad_(call == 3)
        y = bn(x)
        arrays.update({f"x{call}": x, f"y{call}": y, f"running_mean{call}": bn.running_mean.clone(),
                       f"running_var{call}": bn.running_var.clone()})
    r = torch.randn(shape, dtype=F64)
    (y * r).sum().backward()
    arrays.update(r=r, grad_x=x.grad, grad_weight=bn.weight.grad.clone(), grad_bias=bn.bias.grad.clone(),
                  num_batches_tracked=bn.num_batches_tracked)
    bn.eval()
    bn.zero_grad()
    x_eval = (torch.randn(shape, dtype=F64) * scale + shift).requires_grad_(True)
    y_eval = bn(x_eval)
    r_eval = torch.randn(shape, dtype=F64)
    (y_eval * r_eval).sum().backward()
    arrays.update(x_eval=x_eval, y_eval=y_eval, r_eval=r_eval, grad_x_eval=x_eval.grad,
                  grad_weight_eval=bn.weight.grad, grad_bias_eval=bn.bias.grad)
    save(case, **arrays)


def cross_entropy():
    torch.manual_seed(4)
    logits = (torch.randn(4, 5, dtype=F64) * 2).requires_grad_(True)
    target = torch.tensor([3, 0, 4, 3], dtype=torch.int64)
    loss = F.cross_entropy(logits, target)
    loss.backward()
    save("cross_entropy", logits=logits, target=target, loss_mean=loss,
         loss_sum=F.cross_entropy(logits, target, reduction="sum"),
         loss_none=F.cross_entropy(logits, target, reduction="none"), grad_logits=logits.grad)


def cross_entropy_soft():
    torch.manual_seed(5)
    logits = (torch.randn(4, 5, dtype=F64) * 2).requires_grad_(True)
    probs = torch.softmax(torch.randn(4, 5, dtype=F64), 1).requires_grad_(True)
    loss = F.cross_entropy(logits, probs)  # probability targets: mean over the batch
    loss.backward()
    save("cross_entropy_soft", logits=logits, probs=probs, loss=loss, grad_logits=logits.grad,
         grad_probs=probs.grad)


def kl_div():
    torch.manual_seed(6)
    inp = torch.log_softmax(torch.randn(4, 5, dtype=F64), 1).requires_grad_(True)
    target = torch.softmax(torch.randn(4, 5, dtype=F64), 1)
    target[1, 2] = 0  # 0·log 0 = 0; torch's target gradient is NaN there (the C++ test checks that entry apart)
    target = (target / target.sum(1, keepdim=True)).requires_grad_(True)
    loss = F.kl_div(inp, target, reduction="batchmean")
    loss.backward()
    save("kl_div", input=inp, target=target, loss=loss, loss_none=F.kl_div(inp, target, reduction="none"),
         grad_input=inp.grad, grad_target=target.grad)


def triplet():
    """SGRAF model.py ContrastiveLoss (VSE++), copied: rows are images, columns captions."""
    torch.manual_seed(7)
    scores = torch.sigmoid(torch.randn(5, 5, dtype=F64) * 2)
    margin = 0.2
    arrays = {"scores": scores, "margin": np.array(margin)}
    for tag, max_violation in (("max", True), ("sum", False)):
        s = scores.clone().requires_grad_(True)
        diagonal = s.diag().view(s.size(0), 1)
        d1, d2 = diagonal.expand_as(s), diagonal.t().expand_as(s)
        cost_s = (margin + s - d1).clamp(min=0)
        cost_im = (margin + s - d2).clamp(min=0)
        mask = torch.eye(s.size(0)) > 0.5
        cost_s, cost_im = cost_s.masked_fill_(mask, 0), cost_im.masked_fill_(mask, 0)
        if max_violation:
            cost_s, cost_im = cost_s.max(1)[0], cost_im.max(0)[0]
        loss = cost_s.sum() + cost_im.sum()
        loss.backward()
        arrays.update({f"loss_{tag}": loss, f"grad_{tag}": s.grad})
    save("triplet", **arrays)


def main():
    linear()
    embedding()
    batchnorm("batchnorm_2d", (5, 3), 3)
    batchnorm("batchnorm_3d", (4, 3, 5), 8)
    cross_entropy()
    cross_entropy_soft()
    kl_div()
    triplet()


if __name__ == "__main__":
    main()
