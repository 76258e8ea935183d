"""Writes the golden fixture of tests/train/sdml_golden_step_test.cpp into tests/fixtures/golden_steps/sdml/ by
running the OFFICIAL SDML code itself (penghu-cs/SDML at b71a8dc: `SDML.py: Solver.__init__` and
`Solver.train_view` on `model.py: Dense_Net`), not a transcription, for the first training step of each view in
float64.

Usage:  /usr/bin/python3 tests/reference/sdml_step_official.py <folder holding SDML.py, model.py, utils_PyTorch.py>
        (torch, numpy, scipy; e.g. `git archive HEAD SDML.py model.py utils_PyTorch.py | tar -x -C /tmp/sdml`)

What is changed, all of it here and nowhere else:
  1. `SDML.py` is executed from its own text with every `.cuda()` removed (`W.cuda()` in train_view is
     unconditional); `model.py` hard-codes the hidden width `mid_num = 1024`, set to 7 here.
  2. `data_loader.load_deep_features` (reads HDF5 files) is a stand-in returning the fixture's arrays: 10 training
     pairs of K = 3 classes (every class present, as Solver.__init__ counts the classes from the training labels),
     4 validation and 4 test pairs, `MAP = -1`.
  3. `optim.Adam` (SDML.py's `from torch import optim`) is a subclass of torch.optim.Adam that starts from moments of
     4 earlier steps and records the parameters before and after the view's first step and its moments;
     `utils.show_progressbar` (called with the batch's loss after the step) records the loss and stops
     train_view; `model.Dense_Net` is subclassed to record the first training batch the view's Net sees (rows
     `rand_idx[0:4]` of np.random.seed(0)'s shuffle, the same for both views).
  4. config: output_shape L = 4, alpha 0.5, batch 4, lr [1e-4, 2e-4] (main_SDML.py's per-view defaults), betas
     (0.5, 0.999). torch.set_default_dtype(float64) first, so W (drawn by Solver.__init__, no OrthP_4X4.mat
     present), the nets and every intermediate are float64.

Files: images, texts (float32 values), labels [10] (training, also valid = first 4 and test = last 4 rows), W [L, K],
order (the first batch's rows, then the rest of the permutation), and per view v in {img, txt}:
<v>.before.<p>, <v>.adam.<p>.exp_avg(_sq), <v>.after.<p>, <v>.adam_after.<p>.exp_avg(_sq), <v>.loss.
<p> is net.fc{1,2,3}.{weight,bias} or ae.fc{1,2,3}.{weight,bias}.
"""
import argparse
import os
import sys
import tempfile
import types

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import golden_step_common as g  # noqa: E402

N, K, IMG_DIM, TXT_DIM, HIDDEN, L, B = 10, 3, 6, 5, 7, 4, 4
ALPHA, LRS = 0.5, [1e-4, 2e-4]


class Captured(Exception):
    pass


def data():
    torch.manual_seed(36)
    labels = torch.tensor([0, 1, 2, 0, 1, 2, 0, 1, 2, 1])
    cv, ct = torch.randn(K, IMG_DIM), torch.randn(K, TXT_DIM)
    images = (cv[labels] + 0.7 * torch.randn(N, IMG_DIM)).to(torch.float32).double()
    texts = (ct[labels] + 0.7 * torch.randn(N, TXT_DIM)).to(torch.float32).double()
    return images, texts, labels


def main():
    root = os.path.abspath(sys.argv[1])
    torch.set_num_threads(1)
    torch.set_default_dtype(torch.float64)
    out = g.folder("sdml")
    images, texts, labels = data()
    img, txt, lab = images.numpy(), texts.numpy(), labels.numpy()

    loader = types.ModuleType("data_loader")
    loader.load_deep_features = lambda name: ([img, txt], [lab, lab], [img[:4], txt[:4]], [lab[:4], lab[:4]],
                                              [img[-4:], txt[-4:]], [lab[-4:], lab[-4:]], -1)
    sys.modules["data_loader"] = loader
    sys.path.insert(0, root)
    model_path = os.path.join(root, "model.py")
    model_text = open(model_path).read()
    assert model_text.count("mid_num = 1024") == 1
    model_mod = types.ModuleType("model")
    exec(compile(model_text.replace("mid_num = 1024", f"mid_num = {HIDDEN}"), model_path, "exec"), model_mod.__dict__)
    import utils_PyTorch  # noqa: F401  (the official helpers; show_progressbar is replaced below)

    record = {}

    class RecordingNet(model_mod.Dense_Net):
        def forward(self, x):
            if torch.is_grad_enabled() and "batch" not in record and x.shape[1] in (IMG_DIM, TXT_DIM):
                record["batch"] = x.detach().clone()
            return super().forward(x)

    proxy = types.ModuleType("model")  # what train_view's `from model import Dense_Net` finds
    proxy.Dense_Net = RecordingNet
    sys.modules["model"] = proxy

    path = os.path.join(root, "SDML.py")
    text = open(path).read()
    sdml = types.ModuleType("SDML")
    exec(compile(text.replace(".cuda()", ""), path, "exec"), sdml.__dict__)
    moments = {}

    class RecordingAdam(torch.optim.Adam):
        def __init__(self, params, lr, betas):
            super().__init__(params, lr=lr, betas=betas, foreach=False)
            record["lr"], record["betas"] = lr, list(betas)
            self.params = [p for group in self.param_groups for p in group["params"]]
            torch.manual_seed(100 + len(moments))
            moments[len(moments)] = [(torch.randn_like(p) * 1e-2, (torch.rand_like(p) + 0.5) * 1e-4)
                                     for p in self.params]
            for p, (m, v) in zip(self.params, moments[len(moments) - 1]):
                self.state[p] = {"step": torch.tensor(float(g.ADAM_STEPS)), "exp_avg": m.clone(),
                                 "exp_avg_sq": v.clone()}

        def step(self, closure=None):
            record["before"] = [p.detach().clone() for p in self.params]
            super().step(closure)
            record["after"] = [p.detach().clone() for p in self.params]
            record["adam"] = [(self.state[p]["exp_avg"].clone(), self.state[p]["exp_avg_sq"].clone())
                              for p in self.params]

    def show_progressbar(rate, *args, **kwargs):
        record["loss"] = float(kwargs["loss"])
        if "after" in record:
            raise Captured()

    sdml.optim = types.SimpleNamespace(Adam=RecordingAdam)
    sdml.utils.show_progressbar = show_progressbar
    config = argparse.Namespace(output_shape=L, datasets="wiki_doc2vec", lr=LRS, beta1=0.5, beta2=0.999,
                                batch_size=B, alpha=ALPHA, view_id=-1, epochs=1, sample_interval=1, cuda_list=[0],
                                compute_all=False, just_valid=False, multiprocessing=False, running_time=False)
    cwd = os.getcwd()
    os.chdir(tempfile.mkdtemp())
    try:
        torch.manual_seed(5)
        solver = sdml.Solver(config)
        W = torch.tensor(solver.W)
        assert W.shape == (L, K) and solver.num_classes == K
        g.save(out, "W", W)
        names = [f"{m}.fc{i}.{k}" for m in ("net", "ae") for i in (1, 2, 3) for k in ("weight", "bias")]
        for view, tag in ((0, "img"), (1, "txt")):
            record.clear()
            try:
                solver.train_view(view)
                raise AssertionError("train_view returned without a step")
            except Captured:
                pass
            assert record["lr"] == LRS[view] and record["betas"] == [0.5, 0.999]
            for i, name in enumerate(names):
                g.save(out, f"{tag}.before.{name}", record["before"][i])
                g.save(out, f"{tag}.adam.{name}.exp_avg", moments[view][i][0])
                g.save(out, f"{tag}.adam.{name}.exp_avg_sq", moments[view][i][1])
                g.save(out, f"{tag}.after.{name}", record["after"][i])
                g.save(out, f"{tag}.adam_after.{name}.exp_avg", record["adam"][i][0])
                g.save(out, f"{tag}.adam_after.{name}.exp_avg_sq", record["adam"][i][1])
            g.save(out, f"{tag}.loss", torch.tensor([record["loss"]]))
            x = (images if view == 0 else texts)
            # The batch the Net saw: rows of np.random.seed(0)'s permutation, found by value.
            rows = [int((x - r).abs().sum(1).argmin()) for r in record["batch"]]
            assert all(torch.equal(x[i], r) for i, r in zip(rows, record["batch"]))
            if view == 0:
                np.random.seed(0)
                perm = np.arange(N)
                np.random.shuffle(perm)
                assert list(perm[:B]) == rows, (perm, rows)
                g.save(out, "order", torch.tensor(perm))
            else:
                assert list(np.load(os.path.join(out, "order.npy"))[:B]) == rows
            print(f"{tag}: loss {record['loss']}, batch rows {rows}")
    finally:
        os.chdir(cwd)
    g.save(out, "images", images, np.float32)
    g.save(out, "texts", texts, np.float32)
    g.save(out, "labels", labels)


if __name__ == "__main__":
    main()
