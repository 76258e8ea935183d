"""Shared pieces of the golden-step references (tests/reference/*_step_reference.py): fixture writing, the tiny
SGR model (the PyTorch SGR of sgraf_reference.py at toy sizes), the precomp training set the C++ tests write to
a data folder, and Adam moments as if some steps had already been taken (so the step under test depends on the
gradient's value, not only on its sign as Adam's very first step does).

Not run by itself; each *_step_reference.py imports it.
"""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sgraf_reference  # noqa: E402  (the SGR/SAF networks written from docs/backbones.md §2-§4)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "golden_steps")
F64 = torch.float64
ADAM_STEPS = 4  # the moments below stand for 4 earlier updates


def folder(name):
    path = os.path.join(ROOT, name)
    os.makedirs(path, exist_ok=True)
    return path


def save(path, name, value, dtype=None):
    arr = value.detach().cpu().numpy() if isinstance(value, torch.Tensor) else np.asarray(value)
    if dtype is not None:
        arr = arr.astype(dtype)
    np.save(os.path.join(path, name + ".npy"), np.array(arr, order="C"), allow_pickle=False)


def sgr_dims(vocab, regions):
    return dict(img_dim=6, word_dim=3, embed=4, sim_dim=4, vocab=vocab, regions=regions, sgr_step=3)


def sgr_model(vocab, regions, module="SGR"):
    """SGR (or SAF) in float64 with dropout 0 (the one random draw of a train-mode forward, pinned off) and
    random BatchNorm affine parameters and running statistics."""
    model = sgraf_reference.Model(module, 0.0, sgr_dims(vocab, regions)).double()
    sgraf_reference.randomise_batchnorms(model)
    return model


def precomp_set(n, regions, img_dim, lengths, vocab):
    """n images (float32 values, as the .npy features) and n captions (one per image) of the given lengths,
    <start> w ... w <end>, word ids in [4, vocab). The C++ test writes them as a precomp folder whose word i
    is spelled "w<i>". Lengths are distinct and decreasing, so the loader's sort by length (Batcher::make_batch,
    the official collate_fn) keeps this order whatever its shuffle."""
    images = torch.rand(n, regions, img_dim, dtype=torch.float32).to(F64)
    captions = torch.zeros(n, max(lengths), dtype=torch.int64)
    for i, m in enumerate(lengths):
        captions[i, 0], captions[i, m - 1] = 1, 2
        captions[i, 1:m - 1] = torch.randint(4, vocab, (m - 2,))
    return images, captions, torch.tensor(lengths, dtype=torch.int64)


def save_precomp(path, images, captions, lengths):
    save(path, "images", images, np.float32)
    save(path, "captions", captions)
    save(path, "lengths", lengths)


def adam_with_moments(named_params, lr, weight_decay=0.0, decoupled=False, seed_scale=1e-2):
    """torch.optim.Adam/AdamW (single-tensor path) whose state holds ADAM_STEPS earlier updates: exp_avg
    ~ N(0, seed_scale²), exp_avg_sq ~ U(0.5, 1.5)·seed_scale²."""
    params = [p for _, p in named_params]
    cls = torch.optim.AdamW if decoupled else torch.optim.Adam
    opt = cls(params, lr=lr, weight_decay=weight_decay, foreach=False)
    for _, p in named_params:
        opt.state[p] = {"step": torch.tensor(float(ADAM_STEPS)),
                        "exp_avg": torch.randn_like(p) * seed_scale,
                        "exp_avg_sq": (torch.rand_like(p) + 0.5) * seed_scale ** 2}
    return opt


def save_adam(path, prefix, opt, named_params):
    for name, p in named_params:
        save(path, f"{prefix}{name}.exp_avg", opt.state[p]["exp_avg"])
        save(path, f"{prefix}{name}.exp_avg_sq", opt.state[p]["exp_avg_sq"])


def save_state(path, prefix, module):
    for name, value in module.state_dict().items():
        save(path, prefix + name, value)


def clip_grad_norm(params, max_norm):
    """torch.nn.utils.clip_grad_norm_ (norm of the per-tensor 2-norms; coefficient max/(norm + 1e-6))."""
    return float(torch.nn.utils.clip_grad_norm_(params, max_norm))
