"""Writes the golden fixture of tests/train/mscn_golden_step_test.cpp into tests/fixtures/golden_steps/mscn/ by running
the official MSCN code itself (hhc1997/MSCN @01febc2: `main_MSCN.py: train`, `models.py: SGRAF, Meta_Sim`,
`utils.py: MetaAdam`, `data.py: PrecompDataset_meta_C, get_loader, get_loader_correct`), not a transcription:

  one call of `main_MSCN.py: train(opt, correct_trainloader, meta_dataloader, net, meta_net, optimizer,
  meta_optimizer, epoch=0, BCE_Loss)` on a training set of 16 pairs of which the given split keeps 8 (one batch of 8)
  and a meta set of 4 clean pairs (with the 4 non-correspondences `train` draws: one meta batch of 8). Its single
  iteration makes the virtual step (`MetaAdam.meta_step` after `torch.autograd.grad(..., create_graph=True)`), the
  BCE meta loss of the stepped copy and the meta net's Adam step through it, then the net's main step.

Usage:  git --git-dir=<mirror of hhc1997/MSCN> archive HEAD | tar x -C /tmp/mscn_official
        /usr/bin/python3 tests/reference/mscn_step_official.py /tmp/mscn_official     (torch 1.13)

What is changed around the official code, all of it here (no file of it is edited on disk):
  1. Modules the step does not use are stubbed in sys.modules when missing: `nltk` (data.py's tokenizer; the
     captions are given as word ids, as `get_dataset` returns them), `prefetch_generator` (data.py's DataLoaderX,
     unused), `tqdm`, `tensorboardX` and `pomegranate` (main_MSCN.py's imports for split_data and main, not called).
  2. `.cuda()` is the identity (`torch.Tensor.cuda`, `torch.nn.Module.cuda`): `train` calls it unconditionally and this
     machine has no GPU. `torch.backends.cudnn.flags(enabled=False)` runs unchanged on the CPU.
  3. torch's default dtype is float64, so the official code computes in float64 unchanged.
  4. The instances, not the code, are configured: every nn.Dropout's p set to 0 — also in the copy `train` builds,
     through `main_MSCN.SGRAF`, bound here to a function that builds `models.SGRAF` and sets its dropouts to 0
     (rematch's --dropout 0 is the same model; torch's masks cannot be replayed) — the BatchNorms' affine parameters
     and running statistics randomised, each Adam's state set to 4 earlier steps (golden_step_common.py), and
     `clip_grad_norm_` wrapped to record the norms it saw (what it returns and does is unchanged).
  5. Hyper-parameters chosen so every term matters at 1e-10: lr 0.05 (the virtual step's size: the meta gradient's
     second-order part scales with it), meta_lr 0.01, grad_clip 0.05 (below the gradient norm, 0.12: the clip acts).
  6. Shuffles do not matter: each loader holds one batch and both losses are invariant under a permutation of the
     batch (SGR: its only BatchNorm takes batch statistics). The non-correspondences `train` drew are saved.
The module is SGR: SAF's per-caption BatchNorm updates its running statistics in the batch's order, which the
official loaders shuffle.
"""
import argparse
import os
import sys
import types

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import golden_step_common as g  # noqa: E402

N, N_META, B, REGIONS, IMG_DIM, VOCAB = 16, 4, 8, 36, 6, 12  # VisualSA hard-codes 36 regions
LENGTHS = [10, 9, 8, 7, 6, 5, 4, 3] * 2
META_LENGTHS = [9, 7, 5, 4]
LR, META_LR, GRAD_CLIP, MARGIN = 0.05, 0.01, 0.05, 0.2
# The split `split_data` would give (clean iff prob > 0.5): 8 of the 16 pairs.
PROB = [0.9, 0.2, 0.8, 0.7, 0.1, 0.95, 0.3, 0.6, 0.4, 0.85, 0.05, 0.75, 0.45, 0.15, 0.99, 0.35]


def stub(name, **attrs):
    module = types.ModuleType(name)
    for k, v in attrs.items():
        setattr(module, k, v)
    sys.modules[name] = module
    return module


class Anything:
    def __init__(self, *args, **kwargs):
        pass


def load_official(mscn_dir):
    for name in ("nltk", "prefetch_generator", "tqdm", "tensorboardX", "pomegranate"):
        try:
            __import__(name)
        except ImportError:
            if name == "nltk":
                stub("nltk").tokenize = stub("nltk.tokenize")
            elif name == "prefetch_generator":
                stub(name, BackgroundGenerator=Anything)
            elif name == "tqdm":
                stub(name, tqdm=lambda x, *a, **k: x)
            elif name == "tensorboardX":
                stub(name, SummaryWriter=Anything)
            else:
                stub(name, GeneralMixtureModel=Anything, TrueBetaDistribution=Anything)
    torch.Tensor.cuda = lambda self, *a, **k: self
    torch.nn.Module.cuda = lambda self, *a, **k: self
    sys.path.insert(0, mscn_dir)
    import models
    import data
    import main_MSCN
    return models, data, main_MSCN


def no_dropout(module):
    for m in module.modules():
        if isinstance(m, torch.nn.Dropout):
            m.p = 0.0
    return module


def captions_of(lengths, vocab):
    ids = []
    for m in lengths:
        ids.append([1] + torch.randint(4, vocab, (m - 2,)).tolist() + [2])
    return ids


def padded(ids):
    out = torch.zeros(len(ids), max(len(c) for c in ids), dtype=torch.int64)
    for i, c in enumerate(ids):
        out[i, :len(c)] = torch.tensor(c)
    return out


def with_moments(opt, params):
    for p in params:
        opt.state[p] = {"step": torch.tensor(float(g.ADAM_STEPS)),
                        "exp_avg": torch.randn_like(p) * 1e-2,
                        "exp_avg_sq": (torch.rand_like(p) + 0.5) * 1e-4}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mscn_dir", help="the official MSCN folder (main_MSCN.py, models.py, utils.py, data.py)")
    args = parser.parse_args()
    torch.set_default_dtype(torch.float64)
    torch.set_num_threads(1)
    torch.manual_seed(2023)
    np.random.seed(2023)
    models, data, main_MSCN = load_official(os.path.abspath(args.mscn_dir))
    import sgraf_reference

    opt = argparse.Namespace(img_dim=IMG_DIM, word_dim=3, embed_size=4, sim_dim=4, num_layers=1, bi_gru=True,
                             no_imgnorm=False, no_txtnorm=False, module_name="SGR", sgr_step=3, vocab_size=VOCAB,
                             grad_clip=GRAD_CLIP, margin=MARGIN, lr=LR, meta_lr=META_LR, lr_update=30,
                             meta_interval=1, batch_size=B, workers=0, log_step=1000, noise_ratio=0, noise_file="")
    main_MSCN.SGRAF = lambda o: no_dropout(models.SGRAF(o))  # the copy `train` builds: dropout 0 too
    norms = []
    official_clip = main_MSCN.clip_grad_norm_

    def recording_clip(params, max_norm, *a, **k):
        params = list(params)
        norm = official_clip(params, max_norm, *a, **k)
        norms.append(float(norm))
        return norm

    main_MSCN.clip_grad_norm_ = recording_clip

    net = no_dropout(models.SGRAF(opt))
    sgraf_reference.randomise_batchnorms(net)
    meta_net = models.Meta_Sim(input_size=opt.sim_dim, hidden_size=64, num_layers=1)
    optimizer = torch.optim.Adam(net.parameters(), lr=LR, foreach=False)
    meta_optimizer = torch.optim.Adam(meta_net.parameters(), lr=META_LR, foreach=False)
    with_moments(optimizer, net.parameters())
    with_moments(meta_optimizer, meta_net.parameters())

    out = g.folder("mscn")
    images = torch.rand(N, REGIONS, IMG_DIM, dtype=torch.float32).to(torch.float64)
    meta_images = torch.rand(N_META, REGIONS, IMG_DIM, dtype=torch.float32).to(torch.float64)
    caption_ids = captions_of(LENGTHS, VOCAB)
    meta_caption_ids = captions_of(META_LENGTHS, VOCAB)
    g.save_precomp(out, images, padded(caption_ids), torch.tensor(LENGTHS))
    g.save(out, "meta_images", meta_images, np.float32)
    g.save(out, "meta_captions", padded(meta_caption_ids))
    g.save(out, "meta_lengths", torch.tensor(META_LENGTHS))
    g.save(out, "prob", np.array(PROB))
    g.save_state(out, "net.before.", net)
    g.save_state(out, "meta.before.", meta_net)
    g.save_adam(out, "net.adam.", optimizer, list(net.named_parameters()))
    g.save_adam(out, "meta.adam.", meta_optimizer, list(meta_net.named_parameters()))

    images_np = images.numpy()
    pred = np.array(PROB) > 0.5
    correct = data.get_loader_correct(caption_ids, images_np, B, 0, noise_ratio=0, noise_file="", pred=pred,
                                      prob=np.array(PROB))
    meta_loader = data.get_loader(meta_caption_ids, meta_images.numpy(), "meta_C", B, 0,
                                  captions_add=caption_ids, images_add=images_np)
    assert len(correct) == 1 and len(meta_loader) == 1
    main_MSCN.train(opt, correct, meta_loader, net, meta_net, optimizer, meta_optimizer, 0, torch.nn.BCELoss())
    drawn = meta_loader.dataset
    g.save(out, "noise_captions", np.asarray(drawn.rand_caption_idx, dtype=np.int64))
    g.save(out, "noise_images", np.asarray(drawn.nocor_rand_t2i_idx, dtype=np.int64))
    g.save_state(out, "net.after.", net)
    g.save_state(out, "meta.after.", meta_net)
    g.save_adam(out, "net.adam_after.", optimizer, list(net.named_parameters()))
    g.save_adam(out, "meta.adam_after.", meta_optimizer, list(meta_net.named_parameters()))
    for p in list(net.parameters()) + list(meta_net.parameters()):
        assert float(optimizer.state.get(p, meta_optimizer.state.get(p))["step"]) == g.ADAM_STEPS + 1
    assert len(norms) == 2 and norms[1] > GRAD_CLIP, norms  # the virtual step's (no gradient: 0), the main step's
    print(f"mscn: one iteration of train (virtual step, meta step, main step) written to {out}; "
          f"clip norms {norms}; drawn captions {drawn.rand_caption_idx.tolist()}, images "
          f"{drawn.nocor_rand_t2i_idx.tolist()}")


if __name__ == "__main__":
    main()
