"""Writes the golden fixtures of tests/nn/{optim,clip_grad,lr_schedule}_test.cpp into tests/fixtures/optim/
with PyTorch 1.13 itself (torch.optim's single-tensor path, foreach=False), in float64.

Run from the repository root:  /usr/bin/python3 tests/reference/optim_reference.py

Optimizers: a linear model pred = x @ w.T + b with mean squared error on fixed data, 5 steps each. For every
configuration we record the gradients each step saw (<name>_grad_w/_grad_b, [5, ...]), the parameters after
each step (<name>_w/_b, [5, ...]) and the loss before each step (<name>_loss, [5]).
clip_grad_norm_: three gradients (clip_g0..2) and, per case, the returned norm and the clipped gradients.
Schedules: the lr of two groups (base 0.1 and 0.02) at epochs 0..20, in the closed form.
"""
import os

import numpy as np
import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "optim")
STEPS = 5


def save(name, value):
    arr = value.detach().numpy() if isinstance(value, torch.Tensor) else np.asarray(value)
    np.save(os.path.join(OUT, name + ".npy"), np.array(arr, dtype=np.float64, order="C"), allow_pickle=False)


def problem():
    g = torch.Generator().manual_seed(20240531)
    x = torch.rand(6, 4, generator=g, dtype=torch.float64) * 2 - 1
    y = torch.rand(6, 3, generator=g, dtype=torch.float64) * 2 - 1
    w = torch.rand(3, 4, generator=g, dtype=torch.float64) - 0.5
    b = torch.rand(3, generator=g, dtype=torch.float64) - 0.5
    return x, y, w, b


OPTIMIZERS = {
    "sgd": lambda w, b: torch.optim.SGD([w, b], lr=0.1, momentum=0.9, weight_decay=1e-4, foreach=False),
    "sgd_nesterov": lambda w, b: torch.optim.SGD([w, b], lr=0.1, momentum=0.9, weight_decay=1e-4, nesterov=True,
                                                 foreach=False),
    "sgd_dampening": lambda w, b: torch.optim.SGD([w, b], lr=0.1, momentum=0.9, dampening=0.5, foreach=False),
    "adam": lambda w, b: torch.optim.Adam([w, b], lr=0.01, foreach=False),
    "adam_l2": lambda w, b: torch.optim.Adam([w, b], lr=0.01, weight_decay=1e-2, foreach=False),
    "adamw": lambda w, b: torch.optim.AdamW([w, b], lr=0.01, weight_decay=1e-2, foreach=False),
    "adam_groups": lambda w, b: torch.optim.Adam(
        [{"params": [w]}, {"params": [b], "lr": 0.05, "weight_decay": 0.1}], lr=0.01, foreach=False),
}


def run_optimizers():
    x, y, w0, b0 = problem()
    save("problem_x", x)
    save("problem_y", y)
    save("init_w", w0)
    save("init_b", b0)
    for name, make in OPTIMIZERS.items():
        w = w0.clone().requires_grad_(True)
        b = b0.clone().requires_grad_(True)
        opt = make(w, b)
        record = {k: [] for k in ("grad_w", "grad_b", "w", "b", "loss")}
        for _ in range(STEPS):
            opt.zero_grad()
            loss = ((x @ w.t() + b - y) ** 2).mean()
            loss.backward()
            record["loss"].append(loss.detach().clone())
            record["grad_w"].append(w.grad.clone())
            record["grad_b"].append(b.grad.clone())
            opt.step()
            record["w"].append(w.detach().clone())
            record["b"].append(b.detach().clone())
        for key, values in record.items():
            save(f"{name}_{key}", torch.stack(values))


CLIP_CASES = {"p2": (1.0, 2.0), "p1": (0.5, 1.0), "pinf": (0.3, float("inf")), "p3": (2.0, 3.0),
              "noclip": (100.0, 2.0)}


def run_clip():
    g = torch.Generator().manual_seed(7)
    grads = [torch.rand(3, 4, generator=g, dtype=torch.float64) * 2 - 1,
             torch.rand(5, generator=g, dtype=torch.float64) * 2 - 1,
             torch.rand(2, 2, 3, generator=g, dtype=torch.float64) * 2 - 1]
    for i, grad in enumerate(grads):
        save(f"clip_g{i}", grad)
    for case, (max_norm, norm_type) in CLIP_CASES.items():
        params = [torch.zeros_like(grad, requires_grad=True) for grad in grads]
        for p, grad in zip(params, grads):
            p.grad = grad.clone()
        norm = torch.nn.utils.clip_grad_norm_(params, max_norm, norm_type)
        save(f"clip_{case}_norm", norm)
        for i, p in enumerate(params):
            save(f"clip_{case}_g{i}", p.grad)


SCHEDULES = {
    "step": lambda opt: torch.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5),
    "multistep": lambda opt: torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[2, 5, 5, 9], gamma=0.1),
    "cosine": lambda opt: torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=7, eta_min=0.001),
}


def run_schedules():
    for name, make in SCHEDULES.items():
        p = torch.zeros(1, requires_grad=True)
        q = torch.zeros(1, requires_grad=True)
        opt = torch.optim.SGD([{"params": [p]}, {"params": [q], "lr": 0.02}], lr=0.1)
        sched = make(opt)
        lrs = [[group["lr"] for group in opt.param_groups]]  # epoch 0: what the constructor set
        for epoch in range(1, 21):
            sched.last_epoch = epoch
            lrs.append(sched._get_closed_form_lr())
        save(f"sched_{name}", np.array(lrs, dtype=np.float64))


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.set_default_dtype(torch.float64)
    run_optimizers()
    run_clip()
    run_schedules()
    print("wrote", OUT)


if __name__ == "__main__":
    main()
