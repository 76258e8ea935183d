"""Writes the golden fixtures of tests/train/decl_golden_step_test.cpp into tests/fixtures/golden_steps/decl/ (SGR)
and decl_saf/ (SAF) by running the OFFICIAL DECL code itself — QinYang79/DECL at commit
1b0a7756ed0b9c060834516ba7a733438be9af77, `2022-ACMMM-DECL/model/DECL.py` (DECL: get_alpha, RDH_loss,
warmup_batch, train_batch; mse_loss, KL), `model/SGRAF.py` (the SGR/SAF network, forward_emb, forward_sim) and
`train.py: get_correspondence` (the per-epoch evidential split) — not a transcription of it.

Run:  /usr/bin/python3 tests/reference/decl_step_official.py <path>/2022-ACMMM-DECL   (torch 1.13, numpy)
where <path>/2022-ACMMM-DECL is the extracted official folder (holding model/ and train.py), e.g.
  git --git-dir=<mirror of QinYang79/DECL> archive HEAD 2022-ACMMM-DECL | tar x -C /tmp/decl_official

Every change made to the official code, all of them here:
  1. Device calls: every `.cuda()` in model/DECL.py, model/SGRAF.py and in get_correspondence's source is removed
     (text replacement of ".cuda()" by "", before the source is executed); nothing else in the files is edited.
     (SGRAF.py's other device code sits under `torch.cuda.is_available()`, false on the CPU.)
  2. train.py is not imported (it imports tensorboard_logger, sklearn and the data loaders at module level):
     the one function get_correspondence is cut out of it with `ast` and executed with the globals it reads,
     `torch`, `np`, `logger` (a stub that prints nothing) and `train_loader` (only for its log line's
     `len(train_loader.dataset) // train_loader.batch_size`).
  3. No file edits for the numbers: float64 by torch.set_default_dtype(torch.float64) before the model is built
     (so KL's `torch.ones((1, c))` and the labels' eye are float64 as well), and `.double()` on the modules.
  4. Dropout: the official modules hard-code nn.Dropout(0.4) (EncoderText, VisualSA, TextSA) and draw masks in
     train mode that no other program can reproduce; after construction every nn.Dropout's p is set to 0, the
     largest deterministic piece of the step (as the other golden steps run dropout 0).
  5. State, not code: every BatchNorm's affine parameters and running statistics are set to random values (so
     train mode's batch statistics and eval mode's running ones differ, and the split's eval mode is tested);
     Adam's state is set as if 4 steps had been taken (golden_step_common.adam_with_moments's moments); a stub
     `model.logger` records what warmup_batch/train_batch log (the loss).
The model's sizes are toys (embed 4, word 3, sim 4, image features 6), but VisualSA's BatchNorm1d(36) is
hard-coded in SGRAF.py, so images have the 36 regions it expects.

The fixture: one training set of B = 8 pairs, lengths 10..3 (distinct, so the loader's sort keeps the order),
batch_size 8, μ = 2, η = 1.5 (hardness max(int(8 − 1.5·step), 2): 6 at the warm-up step 1, 5 at the main step
2), λ₁ = 0.8, λ₂ = 0.1, τ = 0.1, margin 0.2, clip 2, lr 2e-4.
  before.*        parameters and buffers; adam.* the Adam moments before the warm-up step (4 earlier steps)
  1. warmup_batch (model.step 0 -> 1): warmup_loss; after_warmup.* and adam_after_warmup.*
  2. get_correspondence in eval mode on the warmed-up weights: preds (1 = clean, per caption), uncertainty
  3. train_batch (model.step 1 -> 2) with those preds: main_loss; after_main.* and adam_after_main.*
The seed is the first from 2022 whose split keeps at least 2 clean and 2 noisy pairs (both sides of train_batch).
"""
import argparse
import ast
import os
import sys
import types

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import golden_step_common as g  # noqa: E402

B, REGIONS, IMG_DIM, VOCAB = 8, 36, 6, 12
LENGTHS = [10, 9, 8, 7, 6, 5, 4, 3]
LR = 2e-4


def load_official(folder):
    """model.SGRAF and model.DECL from the official files, `.cuda()` removed (change 1)."""
    package = types.ModuleType("model")
    package.__path__ = []
    sys.modules["model"] = package
    for name in ("SGRAF", "DECL"):
        path = os.path.join(folder, "model", name + ".py")
        source = open(path).read().replace(".cuda()", "")
        module = types.ModuleType("model." + name)
        module.__file__ = path
        sys.modules["model." + name] = module
        setattr(package, name, module)
        exec(compile(source, path, "exec"), module.__dict__)
    return sys.modules["model.DECL"]


class Quiet:
    def info(self, *args, **kwargs):
        pass


def load_get_correspondence(folder, train_loader):
    """train.py's get_correspondence, cut out with ast (change 2), `.cuda()` removed (change 1)."""
    path = os.path.join(folder, "train.py")
    tree = ast.parse(open(path).read())
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "get_correspondence")
    source = ast.get_source_segment(open(path).read(), fn).replace(".cuda()", "")
    env = {"torch": torch, "np": np, "logger": Quiet(), "train_loader": train_loader}
    exec(compile(source, path, "exec"), env)
    return env["get_correspondence"]


class Logger:
    """The stub model.logger (change 5): keeps the last value of each name."""

    def __init__(self):
        self.values = {}

    def update(self, name, value, n=1):
        self.values[name] = value


class Dataset:
    length = B

    def __len__(self):
        return B


class Loader:
    """One batch as the official collate_fn returns it: images, targets, lengths, ids, labels."""

    def __init__(self, batch):
        self.batch = batch
        self.batch_size = B
        self.dataset = Dataset()

    def __iter__(self):
        return iter([self.batch])


def options(module):
    return argparse.Namespace(
        img_dim=IMG_DIM, word_dim=3, embed_size=4, sim_dim=4, num_layers=1, bi_gru=True, no_imgnorm=False,
        no_txtnorm=False, module_name=module, sgr_step=3, margin=0.2, max_violation=True, grad_clip=2.0,
        learning_rate=LR, lambda1=0.8, lambda2=0.1, tau=0.1, eta=1.5, mu=2, batch_size=B, vocab_size=VOCAB,
        log_step=100)


def randomise(decl_model):
    """Change 4 (dropout p = 0) and change 5 (random BatchNorm state)."""
    sim = decl_model.similarity_model
    for enc in (sim.img_enc, sim.txt_enc, sim.sim_enc):
        enc.double()
        for m in enc.modules():
            if isinstance(m, torch.nn.Dropout):
                m.p = 0.0
            if isinstance(m, torch.nn.BatchNorm1d):
                with torch.no_grad():
                    m.weight.uniform_(0.5, 1.5)
                    m.bias.uniform_(-0.3, 0.3)
                    m.running_mean.uniform_(-0.2, 0.2)
                    m.running_var.uniform_(0.5, 1.5)


def named(decl_model):
    sim = decl_model.similarity_model
    for prefix, enc in (("img_enc.", sim.img_enc), ("txt_enc.", sim.txt_enc), ("sim_enc.", sim.sim_enc)):
        for name, p in enc.named_parameters():
            yield prefix + name, p


def save_model(out, prefix, decl_model):
    sim = decl_model.similarity_model
    for p, enc in (("img_enc.", sim.img_enc), ("txt_enc.", sim.txt_enc), ("sim_enc.", sim.sim_enc)):
        for name, value in enc.state_dict().items():
            g.save(out, prefix + p + name, value)


def save_moments(out, prefix, decl_model):
    opt = decl_model.optimizer
    for name, p in named(decl_model):
        g.save(out, f"{prefix}{name}.exp_avg", opt.state[p]["exp_avg"])
        g.save(out, f"{prefix}{name}.exp_avg_sq", opt.state[p]["exp_avg_sq"])


def run(folder, module, out_name, seed):
    torch.manual_seed(seed)
    DECL = load_official(folder).DECL
    opt = options(module)
    model = DECL(opt)
    randomise(model)
    model.logger = Logger()
    for _, p in named(model):  # as golden_step_common.adam_with_moments: 4 earlier steps
        model.optimizer.state[p] = {"step": torch.tensor(float(g.ADAM_STEPS)),
                                    "exp_avg": torch.randn_like(p) * 1e-2,
                                    "exp_avg_sq": (torch.rand_like(p) + 0.5) * 1e-4}
    images, captions, lengths = g.precomp_set(B, REGIONS, IMG_DIM, LENGTHS, VOCAB)
    ids, labels = list(range(B)), [1] * B
    before = {}
    for p, enc in (("img_enc.", model.similarity_model.img_enc), ("txt_enc.", model.similarity_model.txt_enc),
                   ("sim_enc.", model.similarity_model.sim_enc)):
        for name, value in enc.state_dict().items():
            before["before." + p + name] = value.clone()
    moments = {}
    for name, p in named(model):
        moments[f"adam.{name}.exp_avg"] = model.optimizer.state[p]["exp_avg"].clone()
        moments[f"adam.{name}.exp_avg_sq"] = model.optimizer.state[p]["exp_avg_sq"].clone()

    # 1. the warm-up step (train.py: train(mode='warmup') calls model.train_start() then warmup_batch).
    model.step = 0
    model.train_start()
    model.warmup_batch(images, captions, list(lengths.tolist()))
    warmup_loss = model.logger.values["Loss"]
    warmup_hardness = model.logger.values["H_n"]

    # 2. the split (train.py main loop: adjust_learning_rate, then get_correspondence in eval mode).
    loader = Loader((images, captions, list(lengths.tolist()), ids, labels))
    get_correspondence = load_get_correspondence(folder, loader)
    preds, _, _, uncertainty = get_correspondence(opt, model, loader, 0)
    n_clean = int(preds.sum())
    if not 2 <= n_clean <= B - 2:
        return None
    after_warmup = {}
    for p, enc in (("img_enc.", model.similarity_model.img_enc), ("txt_enc.", model.similarity_model.txt_enc),
                   ("sim_enc.", model.similarity_model.sim_enc)):
        for name, value in enc.state_dict().items():
            after_warmup["after_warmup." + p + name] = value.clone()
    for name, p in named(model):
        after_warmup[f"adam_after_warmup.{name}.exp_avg"] = model.optimizer.state[p]["exp_avg"].clone()
        after_warmup[f"adam_after_warmup.{name}.exp_avg_sq"] = model.optimizer.state[p]["exp_avg_sq"].clone()

    # 3. the main step with those predictions (train.py: train(mode='train'): train_start, train_batch(preds[ids])).
    model.train_start()
    model.train_batch(images, captions, list(lengths.tolist()), preds=preds[ids])
    main_loss = model.logger.values["Loss"]
    main_hardness = model.logger.values["H_n"]

    out = g.folder(out_name)
    g.save_precomp(out, images, captions, lengths)
    for k, v in {**before, **moments, **after_warmup}.items():
        g.save(out, k, v)
    save_model(out, "after_main.", model)
    save_moments(out, "adam_after_main.", model)
    g.save(out, "warmup_loss", torch.tensor(float(warmup_loss), dtype=g.F64))
    g.save(out, "main_loss", torch.tensor(float(main_loss), dtype=g.F64))
    g.save(out, "preds", preds.to(torch.int64))
    g.save(out, "uncertainty", uncertainty.to(g.F64))
    g.save(out, "hardness", torch.tensor([warmup_hardness, main_hardness], dtype=torch.int64))
    print(f"{out_name} ({module}, seed {seed}): warm-up loss {warmup_loss:.6f} (k = {warmup_hardness}), "
          f"split {n_clean}/{B} clean {preds.tolist()}, main loss {main_loss:.6f} (k = {main_hardness})")
    return True


def main():
    if len(sys.argv) != 2 or not os.path.isfile(os.path.join(sys.argv[1], "model", "DECL.py")):
        sys.exit("usage: decl_step_official.py <extracted 2022-ACMMM-DECL folder (holding model/DECL.py)>")
    torch.set_default_dtype(torch.float64)  # change 3
    torch.set_num_threads(1)
    for module, out_name in (("SGR", "decl"), ("SAF", "decl_saf")):
        for seed in range(2022, 2122):
            if run(sys.argv[1], module, out_name, seed):
                break
        else:
            sys.exit(f"{module}: no seed in 2022..2121 gives a split of 2 to {B - 2} clean pairs")


if __name__ == "__main__":
    main()
