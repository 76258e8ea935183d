"""Writes the golden fixture of tests/train/dscmr_golden_step_test.cpp into tests/fixtures/golden_steps/dscmr/ by
running the OFFICIAL DSCMR code itself (penghu-cs/DSCMR at 0e110b9: `train_model.py: train_model` with its
`calc_loss`, on `model.py: IDCM_NN`), not a transcription, for one training step of an 8-pair batch in float64.

Usage:  /usr/bin/python3 tests/reference/dscmr_step_official.py <folder holding model.py, train_model.py, evaluate.py>
        (torch, numpy, scipy; e.g. `git archive HEAD model.py train_model.py evaluate.py | tar -x -C /tmp/dscmr`
        in the fetched repository)

What is changed, all of it here and nowhere else:
  1. `torchvision` (imported by model.py for the VGG net DSCMR does not use on features, and by train_model.py
     to print its version) is not installed: a stand-in module with `models` and `__version__`.
  2. The caller's side of `main.py`: the model is `IDCM_NN(img_input_dim=6, text_input_dim=5, output_dim=K=3)`
     with the hidden widths given as constructor arguments (img_output_dim = text_output_dim = 7,
     minus_one_dim = 4; the official defaults 2048/1024 would not fit in a fixture); the optimizer is main.py's
     `optim.Adam(params, lr=1e-4, betas=(0.5, 0.999))` as a subclass that starts from moments of 4 earlier steps
     (golden_step_common.adam_with_moments' rule) and, at its first step, records the parameters, the update and
     the moments, then stops `train_model`; `alpha = 1e-3`, `beta = 1e-1` as main.py. The data loaders are
     load_data.py's `DataLoader(CustomDataSet(...), batch_size=8, shuffle=False)` over the fixture's arrays (the
     training labels one-hot, as `ind2vec` makes them, here the noisy ones).
  3. `train_model.calc_loss` is wrapped to record its value (the loss the step backpropagates) and its inputs;
     for the C++ test's per-term check the three terms come from calc_loss itself on those inputs:
     term1 = calc_loss(alpha=0, beta=0), term2 and term3 its increase at alpha = 1 and at beta = 1.
  4. torch.set_default_dtype(float64) before the model is built; the features are float64 arrays.

Files: images, texts (float32 values), labels (clean, all splits), noisy [2, N] (the training labels; one label
per pair as UOT-RCL's symmetric noise, so both rows agree), before.<p>, adam.<p>.exp_avg(_sq), after.<p>,
adam_after.<p>.exp_avg(_sq), losses [term1, term2, term3, total].
"""
import os
import sys
import types

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import golden_step_common as g  # noqa: E402

N, K, IMG_DIM, TXT_DIM, HIDDEN, COMMON = 8, 3, 6, 5, 7, 4
ALPHA, BETA, LR = 1e-3, 1e-1, 1e-4


class Captured(Exception):
    pass


def data():
    torch.manual_seed(35)
    labels = torch.tensor([0, 1, 2, 0, 1, 2, 0, 1])
    centres_v, centres_t = torch.randn(K, IMG_DIM), torch.randn(K, TXT_DIM)
    images = (centres_v[labels] + 0.7 * torch.randn(N, IMG_DIM)).to(torch.float32).double()
    texts = (centres_t[labels] + 0.7 * torch.randn(N, TXT_DIM)).to(torch.float32).double()
    noisy = torch.tensor([0, 2, 2, 1, 1, 2, 0, 0])  # 3 of 8 flipped
    return images, texts, labels, torch.stack([noisy, noisy])


def load_official(root):
    tv = types.ModuleType("torchvision")
    tv.models = types.SimpleNamespace()
    tv.__version__ = "stand-in"
    sys.modules["torchvision"] = tv
    sys.path.insert(0, root)
    import model  # noqa: F401
    import train_model  # noqa: F401
    return model, train_model


def main():
    root = os.path.abspath(sys.argv[1])
    torch.set_num_threads(1)
    torch.set_default_dtype(torch.float64)
    model_mod, train_mod = load_official(root)
    out = g.folder("dscmr")
    images, texts, labels, noisy = data()
    one_hot = torch.nn.functional.one_hot(noisy[0], K)  # ind2vec(...).astype(int)

    torch.manual_seed(12)
    net = model_mod.IDCM_NN(img_input_dim=IMG_DIM, img_output_dim=HIDDEN, text_input_dim=TXT_DIM,
                            text_output_dim=HIDDEN, minus_one_dim=COMMON, output_dim=K)
    named = list(net.named_parameters())
    moments = [(torch.randn_like(p) * 1e-2, (torch.rand_like(p) + 0.5) * 1e-4) for _, p in named]
    record = {}

    class RecordingAdam(torch.optim.Adam):
        def __init__(self, params, **kw):
            super().__init__(params, foreach=False, **kw)
            self.params = [p for group in self.param_groups for p in group["params"]]
            for p, (m, v) in zip(self.params, moments):
                self.state[p] = {"step": torch.tensor(float(g.ADAM_STEPS)), "exp_avg": m.clone(),
                                 "exp_avg_sq": v.clone()}

        def step(self, closure=None):
            record["before"] = [p.detach().clone() for p in self.params]
            super().step(closure)
            record["after"] = [p.detach().clone() for p in self.params]
            record["adam"] = [(self.state[p]["exp_avg"].clone(), self.state[p]["exp_avg_sq"].clone())
                              for p in self.params]
            raise Captured()

    official_calc_loss = train_mod.calc_loss

    def calc_loss(*args):
        value = official_calc_loss(*args)
        if value.requires_grad:
            record["loss"] = float(value)
            record["inputs"] = [a.detach().clone() if isinstance(a, torch.Tensor) else a for a in args]
        return value

    train_mod.calc_loss = calc_loss
    optimizer = RecordingAdam(list(net.parameters()), lr=LR, betas=(0.5, 0.999))  # main.py
    dataset = {"train": torch.utils.data.TensorDataset(images, texts, one_hot),
               "test": torch.utils.data.TensorDataset(images, texts,
                                                      torch.nn.functional.one_hot(labels, K))}
    loaders = {x: torch.utils.data.DataLoader(dataset[x], batch_size=N, shuffle=False, num_workers=0)
               for x in ("train", "test")}
    try:
        train_mod.train_model(net, loaders, optimizer, ALPHA, BETA, num_epochs=1)
        raise AssertionError("train_model returned without an optimizer step")
    except Captured:
        pass

    # The three terms, from calc_loss itself with unit weights: term1 = calc_loss(..., 0, 0); term2 and term3
    # from the differences at alpha = 1 and beta = 1.
    f1, f2, p1, p2, l1, l2, _, _ = record["inputs"]
    with torch.no_grad():
        t1 = float(official_calc_loss(f1, f2, p1, p2, l1, l2, 0.0, 0.0))
        t2 = float(official_calc_loss(f1, f2, p1, p2, l1, l2, 1.0, 0.0)) - t1
        t3 = float(official_calc_loss(f1, f2, p1, p2, l1, l2, 0.0, 1.0)) - t1
    assert abs(t1 + ALPHA * t2 + BETA * t3 - record["loss"]) < 1e-12

    g.save(out, "images", images, np.float32)
    g.save(out, "texts", texts, np.float32)
    g.save(out, "labels", labels)
    g.save(out, "noisy", noisy)
    for i, (name, _) in enumerate(named):
        g.save(out, "before." + name, record["before"][i])
        g.save(out, f"adam.{name}.exp_avg", moments[i][0])
        g.save(out, f"adam.{name}.exp_avg_sq", moments[i][1])
        g.save(out, "after." + name, record["after"][i])
        g.save(out, f"adam_after.{name}.exp_avg", record["adam"][i][0])
        g.save(out, f"adam_after.{name}.exp_avg_sq", record["adam"][i][1])
    g.save(out, "losses", torch.tensor([t1, t2, t3, record["loss"]]))
    step = max(float((a - b).abs().max()) for a, b in zip(record["after"], record["before"]))
    print(f"wrote {out}: terms {t1} {t2} {t3} total {record['loss']}; parameters {[n for n, _ in named]}; "
          f"largest parameter move {step:.3g}")


if __name__ == "__main__":
    main()
