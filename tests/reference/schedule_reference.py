"""Writes the golden learning-rate schedules of tests/train/lr_schedule_golden_test.cpp into
tests/fixtures/golden_steps/schedules/: the lr each epoch of a whole run trains at, from a transcription of each
official code's schedule (docs/methods/l2rm.md §1.1, rcl.md §2.2, rcsl.md §3.5) applied to a real torch
optimizer's param groups:

  rcl   RCL-SGRAF train.py adjust_learning_rate: lr = lr0 · 0.1^⌊epoch / lr_update⌋ at the top of every epoch
        (lr0 2e-4, lr_update 3, 7 epochs)
  l2rm  main_L2RM.py: warm-up epochs at the constant lr0; main epoch m (counted from 0 after the warm-up) at
        lr0 · 0.1^⌊m / lr_update⌋, for the retrieval net (2e-4) and the cost net (2e-6) alike
        (2 warm-up + 5 main epochs, lr_update 2)
  rcsl  train.py: AdamW(lr0 = 5e-4) created at the start and re-created at MineEpoch (lr back to lr0), then
        adjust_learning_rate(epoch): lr ← lr·0.1 when epoch ∈ lr_schedules, on the current lr
        (8 epochs, MineEpoch 4, lr_schedules [2, 4, 6]: a milestone before, on and after the re-creation)
  uotrcl no public code; our reading (docs/uotrcl-choices.md §3 item 10): Adam at the constant lr0 (the paper
        states lr 1e-4 and no schedule), or with --lr_update N lr0 · 0.1^⌊epoch / N⌋ at the top of every epoch,
        the warm-up epochs counted (they are inside num_epochs, docs/methods/uotrcl.md §4.3)
        (lr0 1e-4, 2 warm-up + 5 main epochs; constant, and lr_update 3: a drop inside the main phase)

Run from anywhere:  /usr/bin/python3 tests/reference/schedule_reference.py   (torch 1.13, numpy)
Files: rcl_lr, l2rm_lr, l2rm_cost_lr, rcsl_lr, uotrcl_lr, uotrcl_step_lr (float64 [epochs]).
"""
import torch

import golden_step_common as g


def one_param_optimizer(cls, lr):
    return cls([torch.nn.Parameter(torch.zeros(1, dtype=torch.float64))], lr=lr)


def rcl(lr0=2e-4, lr_update=3, epochs=7):
    opt = one_param_optimizer(torch.optim.Adam, lr0)
    lrs = []
    for epoch in range(epochs):
        for group in opt.param_groups:  # adjust_learning_rate(opt, optimizer, epoch)
            group["lr"] = lr0 * (0.1 ** (epoch // lr_update))
        lrs.append(opt.param_groups[0]["lr"])
    return lrs


def l2rm(lr0, warmup=2, epochs=5, lr_update=2):
    opt = one_param_optimizer(torch.optim.Adam, lr0)
    lrs = [opt.param_groups[0]["lr"] for _ in range(warmup)]  # warm-up: the constant initial lr
    for epoch in range(epochs):
        for group in opt.param_groups:
            group["lr"] = lr0 * (0.1 ** (epoch // lr_update))
        lrs.append(opt.param_groups[0]["lr"])
    return lrs


def rcsl(lr0=5e-4, epochs=8, mine_epoch=4, milestones=(2, 4, 6)):
    opt = one_param_optimizer(torch.optim.AdamW, lr0)
    lrs = []
    for epoch in range(epochs):
        if epoch == mine_epoch:  # the mining stage starts with a fresh optimizer
            opt = one_param_optimizer(torch.optim.AdamW, lr0)
        if epoch in milestones:  # adjust_learning_rate: ×0.1 on the current lr
            for group in opt.param_groups:
                group["lr"] *= 0.1
        lrs.append(opt.param_groups[0]["lr"])
    return lrs


def uotrcl(lr0=1e-4, epochs=7, lr_update=0):
    opt = one_param_optimizer(torch.optim.Adam, lr0)
    lrs = []
    for epoch in range(epochs):  # warm-up epochs 0, 1 included
        if lr_update > 0:
            for group in opt.param_groups:
                group["lr"] = lr0 * (0.1 ** (epoch // lr_update))
        lrs.append(opt.param_groups[0]["lr"])
    return lrs


def main():
    out = g.folder("schedules")
    for name, lrs in [("rcl_lr", rcl()), ("l2rm_lr", l2rm(2e-4)), ("l2rm_cost_lr", l2rm(2e-6)), ("rcsl_lr", rcsl()),
                      ("uotrcl_lr", uotrcl()), ("uotrcl_step_lr", uotrcl(lr_update=3))]:
        g.save(out, name, torch.tensor(lrs, dtype=g.F64))
        print(name, lrs)


if __name__ == "__main__":
    main()
