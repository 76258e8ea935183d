"""Writes the golden fixture of tests/train/mrl_golden_step_test.cpp into tests/fixtures/golden_steps/mrl/ by
running the OFFICIAL MRL code itself (penghu-cs/MRL at e0f5c8f: `main_noisy.py: main` with its closures `train`
and `cross_modal_contrastive_ctriterion`, `nets/ImageNet.py`, `nets/TextNet.py`, `src/utils.py:
MeanClusteringError`), not a transcription, for one training step of an 8-pair batch in float64.

Usage:  /usr/bin/python3 tests/reference/mrl_step_official.py <folder holding main_noisy.py, nets/, src/, utils/>
        (torch, numpy, scipy; e.g. `git archive HEAD main_noisy.py nets src utils | tar -x -C /tmp/mrl_official`
        in the fetched repository)

What is changed, all of it here and nowhere else:
  1. `main_noisy.py` is executed from its own text with every `.cuda()` removed, and the progress line's
     `'Loss: %.3f` printed as `'Loss: %.17g` (so the batch's loss reaches this script exactly; display only).
  2. `nets/ImageNet.py` and `nets/TextNet.py` hard-code the hidden width `mid_num = 4096`; it is set to 7 here
     (a 4096² float64 fixture would not fit in the repository). Nothing else of the networks changes.
  3. Modules the step does not use are stand-ins: `torch.utils.tensorboard.SummaryWriter` (not installed),
     `utils.bar_show.progress_bar` (reads the terminal; here it keeps the loss of the progress line),
     `src.logger` (imports pandas, not installed) and `src.noisydataset.cross_modal_dataset` (reads HDF5 files
     and draws noise): a dataset of the fixture's 8 pairs with the given per-modality noisy labels (train) and
     the clean ones (valid, test).
  4. `utils/config.py` parses this script's argument list (below): MCE, β = 0.7, τ = 0.5 (it scales both the
     MCE softmax and the contrastive loss), lr 1e-3, batch 8 (the whole training set: the DataLoader's
     shuffle only permutes the batch, and both losses are sums over pairs), L = 4, views Img Txt.
  5. `optim.Adam` is a subclass of torch.optim.Adam that starts from moments of 4 earlier steps
     (golden_step_common.adam_with_moments' rule) and, at its first step, records the parameters (after the
     batch's `C.data = C / ‖C‖`), the gradients, the update and the moments, then stops `main()`; and
     `utils.MeanClusteringError` records each view's loss. torch.set_default_dtype(float64) before `main()`
     makes the networks, C, the one-hot embedding and every intermediate float64.

The step runs in the first epoch (after `train(-1)`, which makes no update, and `test(-1)`); the learning rate is
`lr_schedu.step(0)`'s, the base 1e-3. Files: images, texts, labels (clean, all splits), noisy [2, N] (per-modality
training labels), before.<p>, adam.<p>.exp_avg(_sq), after.<p> (C renormalised as the next batch sees it, which
rematch does right after the update), adam_after.<p>.exp_avg(_sq), losses [mce_img, mce_txt, contrastive, total]
(the contrastive term is (total − β·Σ mce)/(1 − β)), and the same after.* / losses for the `--loss CE` baseline
(files ce.*), run from the same state.
"""
import os
import re
import sys
import tempfile
import types

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import golden_step_common as g  # noqa: E402

N, K, IMG_DIM, TXT_DIM, HIDDEN, L = 8, 3, 6, 5, 7, 4
BETA, TAU, LR = 0.7, 0.5, 1e-3


class Captured(Exception):
    pass


def data():
    torch.manual_seed(34)
    labels = torch.tensor([0, 1, 2, 0, 1, 2, 0, 1])
    centres_v, centres_t = torch.randn(K, IMG_DIM), torch.randn(K, TXT_DIM)
    images = (centres_v[labels] + 0.7 * torch.randn(N, IMG_DIM)).to(torch.float32).double()
    texts = (centres_t[labels] + 0.7 * torch.randn(N, TXT_DIM)).to(torch.float32).double()
    # Per-modality noisy labels (MRL draws each modality's own): 3 image and 2 text labels flipped.
    noisy_v = torch.tensor([0, 2, 2, 1, 1, 2, 0, 0])
    noisy_t = torch.tensor([0, 1, 1, 0, 1, 0, 0, 1])
    return images, texts, labels, torch.stack([noisy_v, noisy_t])


def run(root, loss_name, images, texts, labels, noisy, moments):
    """main() of main_noisy.py up to and including its first optimizer step; returns what it recorded."""
    record = {"mce": []}
    for name in list(sys.modules):
        if name in ("nets", "src", "utils") or name.startswith(("nets.", "src.", "utils.")):
            del sys.modules[name]
    sys.path.insert(0, root)
    sys.argv = ["main_noisy.py", "--loss", loss_name, "--beta", str(BETA), "--tau", str(TAU), "--lr", str(LR),
                "--train_batch_size", str(N), "--eval_batch_size", str(N), "--max_epochs", "2",
                "--output_dim", str(L), "--views", "Img", "Txt", "--root_dir", tempfile.mkdtemp()]

    tb = types.ModuleType("torch.utils.tensorboard")
    tb.SummaryWriter = lambda *a, **k: types.SimpleNamespace(add_scalars=lambda *a, **k: None)
    sys.modules["torch.utils.tensorboard"] = tb
    bar = types.ModuleType("utils.bar_show")

    def progress_bar(i, n, msg):  # called after the batch's step: stop main() after the first one
        record["progress_loss"] = float(re.match(r"Loss: (\S+) ", msg).group(1))
        if "after" in record:
            raise Captured()

    bar.progress_bar = progress_bar
    sys.modules["utils.bar_show"] = bar
    logger = types.ModuleType("src.logger")
    logger.create_logger = logger.PD_Stats = None
    sys.modules["src.logger"] = logger

    class Dataset(torch.utils.data.Dataset):
        def __init__(self, name, ratio, mode):
            self.train_data = [images.numpy(), texts.numpy()]
            lab = noisy if mode == "train" else torch.stack([labels, labels])
            self.noise_label = [lab[0].numpy(), lab[1].numpy()]
            self.class_num = K

        def __getitem__(self, i):
            return [self.train_data[0][i], self.train_data[1][i]], [self.noise_label[0][i],
                                                                    self.noise_label[1][i]], i

        def __len__(self):
            return N

    nd = types.ModuleType("src.noisydataset")
    nd.cross_modal_dataset = Dataset
    sys.modules["src.noisydataset"] = nd

    import nets  # noqa: F401  (the official package), then its two networks at hidden width 7
    for cls_name in ("ImageNet", "TextNet"):
        path = os.path.join(root, "nets", cls_name + ".py")
        text = open(path).read()
        assert text.count("mid_num = 4096") == 1
        mod = types.ModuleType("nets." + cls_name)
        exec(compile(text.replace("mid_num = 4096", f"mid_num = {HIDDEN}"), path, "exec"), mod.__dict__)
        setattr(nets, cls_name, getattr(mod, cls_name))
        nets.__dict__[cls_name] = getattr(mod, cls_name)
    import src.utils as official_utils

    class RecordingMce(official_utils.MeanClusteringError):
        def forward(self, input, target, threshold=1):
            out = super().forward(input, target, threshold)
            if input.requires_grad:  # train(-1) and train(0); the last two are the step's
                record["mce"] = (record["mce"] + [float(out)])[-2:]
            return out

    path = os.path.join(root, "main_noisy.py")
    text = open(path).read()
    assert text.count("'Loss: %.3f | LR: %g'") == 1
    patched = text.replace(".cuda()", "").replace("'Loss: %.3f | LR: %g'", "'Loss: %.17g | LR: %g'")
    main = types.ModuleType("main_noisy")
    main.__file__ = path
    cwd = os.getcwd()
    os.chdir(tempfile.mkdtemp())
    exec(compile(patched, path, "exec"), main.__dict__)

    class RecordingAdam(torch.optim.Adam):
        def __init__(self, params, **kw):
            super().__init__(params, foreach=False, **kw)
            record["betas"] = kw["betas"]
            self.params = [p for group in self.param_groups for p in group["params"]]
            for p, (m, v) in zip(self.params, moments):
                self.state[p] = {"step": torch.tensor(float(g.ADAM_STEPS)), "exp_avg": m.clone(),
                                 "exp_avg_sq": v.clone()}

        def step(self, closure=None):
            record["before"] = [p.detach().clone() for p in self.params]
            record["grad"] = [p.grad.detach().clone() for p in self.params]
            record["lr"] = self.param_groups[0]["lr"]
            super().step(closure)
            record["after"] = [p.detach().clone() for p in self.params]
            record["adam"] = [(self.state[p]["exp_avg"].clone(), self.state[p]["exp_avg_sq"].clone())
                              for p in self.params]

    main.optim = types.SimpleNamespace(Adam=RecordingAdam, lr_scheduler=torch.optim.lr_scheduler)
    assert re.findall(r"[=(] *utils\.(\w+)", patched) == ["MeanClusteringError"]  # what main() takes of src.utils
    main.utils = types.SimpleNamespace(MeanClusteringError=RecordingMce)
    try:
        main.main()
        raise AssertionError("main() returned without an optimizer step")
    except Captured:
        pass
    finally:
        os.chdir(cwd)
        sys.path.remove(root)
    return record


NAMES = ["C"] + [f"{net}.{fc}.{kind}" for net in ("img_net", "txt_net") for fc in ("fc1", "fc2", "fc3")
                 for kind in ("weight", "bias")]


def main():
    root = os.path.abspath(sys.argv[1])
    torch.set_num_threads(1)
    torch.set_default_dtype(torch.float64)
    out = g.folder("mrl")
    images, texts, labels, noisy = data()
    torch.manual_seed(7)
    shapes = [(L, K), (HIDDEN, IMG_DIM), (HIDDEN,), (HIDDEN, HIDDEN), (HIDDEN,), (L, HIDDEN), (L,),
              (HIDDEN, TXT_DIM), (HIDDEN,), (HIDDEN, HIDDEN), (HIDDEN,), (L, HIDDEN), (L,)]
    moments = [(torch.randn(s) * 1e-2, (torch.rand(s) + 0.5) * 1e-4) for s in shapes]

    results = {}
    for loss_name in ("MCE", "CE"):
        torch.manual_seed(11)  # the same initial networks and C for both
        results[loss_name] = run(root, loss_name, images, texts, labels, noisy, moments)
    mce, ce = results["MCE"], results["CE"]
    for a, b in zip(mce["before"], ce["before"]):
        assert torch.equal(a, b)
    assert mce["lr"] == LR and list(mce["betas"]) == [0.5, 0.999]

    g.save(out, "images", images, np.float32)
    g.save(out, "texts", texts, np.float32)
    g.save(out, "labels", labels)
    g.save(out, "noisy", noisy)
    for i, name in enumerate(NAMES):
        assert mce["before"][i].shape == shapes[i], (name, mce["before"][i].shape)
        g.save(out, "before." + name, mce["before"][i])
        g.save(out, f"adam.{name}.exp_avg", moments[i][0])
        g.save(out, f"adam.{name}.exp_avg_sq", moments[i][1])
        for prefix, rec in (("", mce), ("ce.", ce)):
            after = rec["after"][i]
            if name == "C":  # the next batch's `C.data = (C / norm).detach()`, which rematch does after the step
                after = after / after.norm(dim=0, keepdim=True)
            g.save(out, prefix + "after." + name, after)
            g.save(out, f"{prefix}adam_after.{name}.exp_avg", rec["adam"][i][0])
            g.save(out, f"{prefix}adam_after.{name}.exp_avg_sq", rec["adam"][i][1])
    total = mce["progress_loss"]
    contrastive = (total - BETA * sum(mce["mce"])) / (1 - BETA)
    g.save(out, "losses", torch.tensor(mce["mce"] + [contrastive, total]))
    assert len(ce["mce"]) == 0 and len(mce["mce"]) == 2
    g.save(out, "ce.losses", torch.tensor([ce["progress_loss"]]))
    step = max(float((a - b).abs().max()) for a, b in zip(mce["after"], mce["before"]))
    print(f"wrote {out}: losses {mce['mce']} contrastive {contrastive} total {total}; CE total "
          f"{ce['progress_loss']}; largest parameter move {step:.3g}")


if __name__ == "__main__":
    main()
