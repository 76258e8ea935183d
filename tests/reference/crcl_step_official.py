"""Writes the golden fixture of tests/train/crcl_golden_step_test.cpp into tests/fixtures/golden_steps/crcl/ by
running the OFFICIAL CRCL code itself (QinYang79/CRCL, `CRCL_NeurIPS23/model/CRCL.py: CRCL.train_self` on
`model/SGRAF.py: SGRAF`), not a transcription, for one training step of a 6-pair batch in float64.

Usage:  /usr/bin/python3 tests/reference/crcl_step_official.py <path of the extracted CRCL_NeurIPS23 folder>
        (torch 1.13 CPU, numpy, scikit-learn; e.g. the fetched repository `git show`n into /tmp/crcl_official)

What is changed, all of it here and nowhere else:
  1. `model/CRCL.py` is executed from its own text with every `.cuda()` removed (`torch.eye(k).cuda()`,
     `torch.Tensor(...).cuda()` in `train_self`): the only patch of the official code. `model/SGRAF.py` runs as
     is (its `.cuda()` calls sit behind `torch.cuda.is_available()`, false here).
  2. `model/VSEinfty.py` (imported by CRCL.py, unused by SGR) imports `tkinter.tix`, which this Python lacks: an
     empty `tkinter.tix` module is put in sys.modules first.
  3. The caller's side of `train.py`: `opt` is a Namespace with `opts.py`'s defaults except the toy sizes below;
     `model.logger` is a stand-in with `update()` (train.py sets a LogCollector); `move_gt` is set as train.py sets
     it (a NumPy array per training caption), here to chosen values; the learning rate is what
     `train.py: adjust_learning_rate` gives at the epoch (5e-4: epoch 2 < lr_update 15).
  4. Pinned randomness: every nn.Dropout's p set to 0 after construction (the official hard-codes 0.4 in
     EncoderText, VisualSA and TextSA, and a dropout mask cannot be drawn identically in another engine); the
     augmentation of `data.py` (Python's `random`, NumPy) is outside the step (`train_self` takes the batch), so
     the batch is given un-augmented and the C++ test runs with --no_augment.
  5. float64: torch.set_default_dtype(torch.float64) before the model is built, so the modules, `torch.eye`,
     `torch.Tensor(move_gt)` and every intermediate are float64 (the official runs float32; no code changes).
  6. The state before the step: the official initialisation, then a small perturbation of every parameter (so no
     bias is exactly 0), random BatchNorm affine parameters and running statistics, and AdamW moments as if 4
     steps had been made (golden_step_common.adam_with_moments' rule), so the step depends on the gradient's value.

Two steps from the same state: `epoch = warm_epoch = 2` (a main epoch of round 0: moving-average labels with the
confident floor; files `after.*`, `adam_after.*`, `loss`, `labels_after`), and `epoch = warm_epoch − 1 = 1` of
round 0 (labels frozen in the loss, then replaced by p; files `warm_after.*`, `warm_adam_after.*`, `warm_loss`,
`warm_labels_after`). Shared: images (float32), captions, lengths, before.*, adam.*, labels_before, p.
"""
import argparse
import os
import sys
import types

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import golden_step_common as g  # noqa: E402

B, REGIONS, IMG_DIM, VOCAB = 6, 36, 6, 12   # 36 regions: the official VisualSA hard-codes BatchNorm1d(36)
LENGTHS = [8, 7, 6, 5, 4, 3]
# Stored labels of the 6 training captions, exact in float32 (the official reads them through torch.Tensor):
# 0.0625 and 0.03125 fall under the 0.1 floor after the moving average, the others do not.
LABELS = [1.0, 0.75, 0.0625, 0.5, 0.03125, 1.0]


def load_official(root):
    sys.modules.setdefault("tkinter", types.ModuleType("tkinter"))
    tix = types.ModuleType("tkinter.tix")
    tix.Tree = object
    sys.modules["tkinter.tix"] = tix
    sys.path.insert(0, root)
    import model  # noqa: F401  (the official package)
    import model.SGRAF  # noqa: F401
    path = os.path.join(root, "model", "CRCL.py")
    with open(path) as f:
        text = f.read()
    patched = text.replace(".cuda()", "")
    assert patched.count("torch.eye(k)") == 1 and ".cuda()" not in patched
    module = types.ModuleType("model.CRCL")
    module.__file__ = path
    exec(compile(patched, path, "exec"), module.__dict__)
    sys.modules["model.CRCL"] = module
    return module


class Logger:
    def __init__(self):
        self.values = {}

    def update(self, k, v, n=0):
        self.values[k] = v


def options():
    # opts.py defaults, with the toy sizes of golden_step_common.sgr_dims and 36 regions.
    return argparse.Namespace(
        module_name="SGR", img_dim=IMG_DIM, word_dim=3, embed_size=4, sim_dim=4, num_layers=1, bi_gru=True,
        no_imgnorm=False, no_txtnorm=False, sgr_step=3, vocab_size=VOCAB + 1, learning_rate=5e-4, grad_clip=2.0,
        margin=0.2, max_violation=True, tau=0.05, alpha=0.8, mc=True, confident=True, warm_epoch=2)


def modules(crcl):
    m = crcl.base_model
    return [("img_enc.", m.img_enc), ("txt_enc.", m.txt_enc), ("sim_enc.", m.sim_enc)]


def state(crcl):
    out = {}
    for prefix, mod in modules(crcl):
        for k, v in mod.state_dict().items():
            out[prefix + k] = v.clone()
    return out


def named_params(crcl):
    return [(prefix + k, p) for prefix, mod in modules(crcl) for k, p in mod.named_parameters()]


def build(CRCL, opt, before=None, moments=None):
    crcl = CRCL(opt)
    for _, mod in modules(crcl):
        for sub in mod.modules():
            if isinstance(sub, torch.nn.Dropout):
                sub.p = 0.0
    if before is None:
        with torch.no_grad():
            for _, p in named_params(crcl):
                p.add_(torch.randn_like(p) * 0.05)
            for _, mod in modules(crcl):
                for sub in mod.modules():
                    if isinstance(sub, torch.nn.BatchNorm1d):
                        sub.weight.uniform_(0.5, 1.5)
                        sub.bias.normal_(0, 0.1)
                        sub.running_mean.normal_(0, 0.1)
                        sub.running_var.uniform_(0.5, 1.5)
                        sub.num_batches_tracked.fill_(3)
    else:
        with torch.no_grad():
            for prefix, mod in modules(crcl):
                mod.load_state_dict({k[len(prefix):]: v for k, v in before.items() if k.startswith(prefix)})
    opt_ = crcl.optimizer
    assert isinstance(opt_, torch.optim.AdamW) and opt_.defaults["weight_decay"] == 0.01
    for name, p in named_params(crcl):
        if moments is None:
            st = {"step": torch.tensor(float(g.ADAM_STEPS)), "exp_avg": torch.randn_like(p) * 1e-2,
                  "exp_avg_sq": (torch.rand_like(p) + 0.5) * 1e-4}
        else:
            st = {k: v.clone() for k, v in moments[name].items()}
        opt_.state[p] = st
    for group in opt_.param_groups:
        group["foreach"] = False
        group["lr"] = 5e-4
    crcl.logger = Logger()
    return crcl


def step(crcl, images, captions, lengths, epoch):
    crcl.move_gt = np.array(LABELS, dtype=np.float64)
    crcl.train_start()
    # train.py: images, img_lengths, targets, cap_lengths, text_ids = train_data (cap_lengths a float tensor)
    img_lengths = torch.full((B,), float(REGIONS))
    crcl.train_self(images, img_lengths, captions, lengths.to(torch.float64), list(range(B)), epoch=epoch,
                    schedule=0)
    return crcl


def save_after(out, prefix, crcl):
    g.save_state(out, prefix, types.SimpleNamespace(state_dict=lambda: state(crcl)))
    opt_ = crcl.optimizer
    for name, p in named_params(crcl):
        g.save(out, f"{prefix.replace('after.', 'adam_after.')}{name}.exp_avg", opt_.state[p]["exp_avg"])
        g.save(out, f"{prefix.replace('after.', 'adam_after.')}{name}.exp_avg_sq", opt_.state[p]["exp_avg_sq"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("official", help="the extracted CRCL_NeurIPS23 folder of QinYang79/CRCL")
    root = os.path.abspath(parser.parse_args().official)
    torch.set_default_dtype(torch.float64)
    torch.set_num_threads(1)
    torch.manual_seed(2023)
    np.random.seed(2023)
    CRCL = load_official(root).CRCL
    assert torch.Tensor(np.zeros(1)).dtype == torch.float64

    out = g.folder("crcl")
    opt = options()
    images, captions, lengths = g.precomp_set(B, REGIONS, IMG_DIM, LENGTHS, VOCAB)
    g.save_precomp(out, images, captions, lengths)
    first = build(CRCL, opt)
    before = state(first)
    moments = {name: {k: v.clone() for k, v in first.optimizer.state[p].items()} for name, p in named_params(first)}
    g.save_state(out, "before.", types.SimpleNamespace(state_dict=lambda: before))
    for name in moments:
        g.save(out, f"adam.{name}.exp_avg", moments[name]["exp_avg"])
        g.save(out, f"adam.{name}.exp_avg_sq", moments[name]["exp_avg_sq"])
    g.save(out, "labels_before", torch.tensor(LABELS))

    main_step = step(first, images, captions, lengths, epoch=opt.warm_epoch)
    g.save(out, "loss", torch.tensor(main_step.logger.values["loss"]))
    g.save(out, "labels_after", torch.tensor(main_step.move_gt))
    save_after(out, "after.", main_step)

    warm = step(build(CRCL, opt, before, moments), images, captions, lengths, epoch=opt.warm_epoch - 1)
    g.save(out, "warm_loss", torch.tensor(warm.logger.values["loss"]))
    g.save(out, "warm_labels_after", torch.tensor(warm.move_gt))   # = p of the batch
    save_after(out, "warm_after.", warm)
    y = main_step.move_gt
    print(f"crcl (official code): main-epoch loss {main_step.logger.values['loss']:.10f}, labels after {np.round(y, 6)}")
    print(f"  warm-up-end loss {warm.logger.values['loss']:.10f}, labels after (= p) {np.round(warm.move_gt, 6)}")


if __name__ == "__main__":
    main()
