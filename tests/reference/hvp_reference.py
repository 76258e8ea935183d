"""Writes the fixtures of tests/models/hvp_golden_test.cpp into tests/fixtures/hvp/: Hessian-vector products of
three losses with respect to all their parameters, by PyTorch's double backward,

    g = torch.autograd.grad(loss, params, create_graph=True),   H v = torch.autograd.grad(Σ_k <g_k, v_k>, params),

on the SGR and SAF networks of sgraf_reference.py (written from docs/backbones.md) with the weights, BatchNorm
statistics and batch of tests/fixtures/sgraf/{sgr,saf} (5 images x 5 captions, float64):

  sgr_triplet, saf_triplet  the VSE++ hardest-negative triplet (margin 0.2, max violation, summed; the loss
                            of docs/methods/shared.md) on the train-mode similarity matrix (dropout 0, batch
                            statistics in the BatchNorms), w.r.t. every parameter of the network;
  l2rm_cost                 L2RM's cost-function loss L_OT = Σ π ⊙ f_c(S) (docs/methods/l2rm.md §1.4, f_c =
                            ReLU(S Wᵀ + b), models/cost_net.h) on SGR's eval-mode similarity matrix, w.r.t. SGR's
                            parameters and f_c's together. (In training S is computed without gradient, and the
                            Hessian over f_c alone is 0: ReLU is piecewise linear. Through S it is not.)

Per case (folder <case>/): v.<name> (the direction, normal), hvp.<name>, grad.<name> (first order) and loss; for
l2rm_cost also plan (π, 0/1 with two ones per row) and the cost net's parameters under their names "fc.weight",
"fc.bias" (−I and 1 plus noise, a trained f_c).

Run from anywhere:  /usr/bin/python3 tests/reference/hvp_reference.py   (torch 1.13, numpy)
"""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sgraf_reference as sgraf  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SGRAF = os.path.join(HERE, "..", "fixtures", "sgraf")
OUT = os.path.join(HERE, "..", "fixtures", "hvp")
F64 = torch.float64
MARGIN = 0.2


def load(folder, name):
    return torch.from_numpy(np.load(os.path.join(SGRAF, folder, name + ".npy")))


def fixture_model(module_name):
    """The network and batch of tests/fixtures/sgraf/<module>, every parameter and buffer as stored there."""
    folder = module_name.lower()
    model = sgraf.Model(module_name, dropout=0.0).double()
    model.load_state_dict({name: load(folder, name) for name in model.state_dict()})
    return model, load(folder, "images"), load(folder, "captions"), load(folder, "lengths")


def hardest_triplet(S):  # VSE++ max violation, summed (nn::hardest_negative_triplet)
    d = S.diag()
    eye = torch.eye(S.size(0), dtype=torch.bool)
    cost_s = (MARGIN + S - d.view(-1, 1)).clamp(min=0).masked_fill(eye, 0)
    cost_im = (MARGIN + S - d.view(1, -1)).clamp(min=0).masked_fill(eye, 0)
    return cost_s.max(1)[0].sum() + cost_im.max(0)[0].sum()


def save(folder, name, value):
    arr = value.detach().numpy() if isinstance(value, torch.Tensor) else np.asarray(value)
    np.save(os.path.join(folder, name + ".npy"), np.array(arr, order="C"), allow_pickle=False)


def write_hvp(case, loss, named_params, extra=()):
    folder = os.path.join(OUT, case)
    os.makedirs(folder, exist_ok=True)
    names = [n for n, _ in named_params]
    params = [p for _, p in named_params]
    grads = torch.autograd.grad(loss, params, create_graph=True)
    vs = [torch.randn(p.shape, dtype=F64) for p in params]
    hvp = torch.autograd.grad(sum((g * v).sum() for g, v in zip(grads, vs)), params)
    save(folder, "loss", loss)
    for name, g, v, h in zip(names, grads, vs, hvp):
        save(folder, "grad." + name, g)
        save(folder, "v." + name, v)
        save(folder, "hvp." + name, h)
    for name, value in extra:
        save(folder, name, value)
    largest = max(h.abs().max().item() for h in hvp)
    print(f"{case}: loss {loss.item():.6f}, {len(params)} parameters, largest |Hv| entry {largest:.4g}")


def main():
    torch.set_num_threads(1)
    torch.manual_seed(38)
    for module_name in ("SGR", "SAF"):
        model, images, captions, lengths = fixture_model(module_name)
        model.train()
        loss = hardest_triplet(model(images, captions, lengths))
        write_hvp(module_name.lower() + "_triplet", loss, list(model.named_parameters()))

    model, images, captions, lengths = fixture_model("SGR")
    model.eval()
    S = model(images, captions, lengths)
    n = S.size(0)
    fc = torch.nn.Linear(n, n).double()
    with torch.no_grad():
        fc.weight.copy_(-torch.eye(n, dtype=F64) + 0.05 * torch.randn(n, n, dtype=F64))
        fc.bias.copy_(1 + 0.05 * torch.randn(n, dtype=F64))
    plan = torch.zeros(n, n, dtype=F64)
    for i in range(n):
        plan[i, torch.randperm(n)[:2]] = 1
    loss = (plan * torch.relu(fc(S))).sum()
    params = list(model.named_parameters()) + [("fc." + k, p) for k, p in fc.named_parameters()]
    write_hvp("l2rm_cost", loss, params, [("plan", plan), ("fc.weight", fc.weight), ("fc.bias", fc.bias)])


if __name__ == "__main__":
    main()
