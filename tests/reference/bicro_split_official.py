"""Writes tests/fixtures/golden_steps/bicro_demo_split/ for tests/train/bicro_demo_split_test.cpp by running the
official BiCro split (xu5zhao/BiCro @0231631, `co_train.py: eval_train` with fit_type "gmm" and "bmm", then
`split_prob`) on the per-pair losses rematch fitted at the last epoch of `rematch demo --methods triplet,bicro`
(seed 0, CPU: 6 warm-up and 3 co-training epochs; its last split kept 4 of 2,500 pairs, precision 0.25;
docs/methods/bicro.md §3.1).

Usage:  git --git-dir=<mirror of xu5zhao/BiCro> archive HEAD -- '*.py' | tar x -C /tmp/bicro_official
        /usr/bin/python3 tests/reference/bicro_split_official.py /tmp/bicro_official          (sklearn 1.2: Debian python3-sklearn; torch 1.13)
        [--from_dump A.txt B.txt]  first (re)writes the fixture's losses from a dump of the run: one line per training
                                   pair "loss normalised posterior clean truly_clean", the values BicroMethod::
                                   begin_epoch had for net A and net B at the last epoch (taken with a temporary print
                                   in begin_epoch; the losses are float32 values, exact in float64).

`eval_train` runs unchanged, in float64 (torch's default dtype): its nets are stand-ins whose `train(images, ...,
mode="eval_loss")` returns the fixture's losses of the batch's ids (`images` carries the ids), its loader batches of
128 ids. Its min-max normalisation, its GaussianMixture(2, max_iter=10, tol=1e-2, reg_covar=5e-4) (or
BetaMixture1D(max_iters=10)) and `split_prob(prob, 0.5)` are the official code's. sklearn starts the Gaussian mixture
from KMeans with random_state None (NumPy's global generator): the fixture's is seed 0; the flags of seeds 0..19 are
compared and printed. Loaded as tests/reference/bicro_step_official.py loads it (one textual patch of co_train.py
for Python 3, `.cuda()` removed from model.py; neither runs here).
"""
import argparse
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import golden_step_common as g  # noqa: E402
from bicro_step_official import load_official  # noqa: E402

SEEDS = 20


class LossesNet:
    """Stands in for SGRAF in `eval_train`: val_start, and train(..., mode="eval_loss") -> the batch's losses."""

    def __init__(self, losses):
        self.losses = torch.as_tensor(losses, dtype=torch.float64)

    def val_start(self):
        pass

    def train(self, images, captions, lengths, mode):
        assert mode == "eval_loss"
        return self.losses[images]


def official_split(co_train, fit_type, la, lb, seed):
    n = len(la)
    ids = torch.randperm(n, generator=torch.Generator().manual_seed(0))
    loader = [(ids[i:i + 128], None, None, ids[i:i + 128].tolist()) for i in range(0, n, 128)]
    opt = argparse.Namespace(fit_type=fit_type, log_step=10 ** 9, p_threshold=0.5)
    np.random.seed(seed)
    prob_a, prob_b, all_loss = co_train.eval_train(opt, LossesNet(la), LossesNet(lb), loader, n, [[], []])
    out = []
    for k, prob in enumerate((prob_a, prob_b)):
        prob = np.asarray(prob, dtype=np.float64).reshape(-1)
        out.append((all_loss[k][0].numpy(), prob, co_train.split_prob(prob, opt.p_threshold).astype(np.int64)))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bicro_dir", help="the official BiCro checkout (co_train.py, model.py, data.py, ...)")
    parser.add_argument("--out", default="bicro_demo_split", help="fixture folder under tests/fixtures/golden_steps/")
    parser.add_argument("--from_dump", nargs=2, metavar=("A", "B"), help="write the losses from a dump first")
    args = parser.parse_args()
    torch.set_default_dtype(torch.float64)
    out = g.folder(args.out)
    if args.from_dump:
        da, db = np.loadtxt(args.from_dump[0]), np.loadtxt(args.from_dump[1])
        assert (da[:, 4] == db[:, 4]).all()
        g.save(out, "A.losses", da[:, 0].astype(np.float64))
        g.save(out, "B.losses", db[:, 0].astype(np.float64))
        g.save(out, "truly_clean", da[:, 4].astype(np.int64))
        for tag, d in (("A", da), ("B", db)):
            g.save(out, f"{tag}.run_clean", d[:, 3].astype(np.int64))  # the flags the demo's run had
    la, lb = np.load(os.path.join(out, "A.losses.npy")), np.load(os.path.join(out, "B.losses.npy"))
    truth = np.load(os.path.join(out, "truly_clean.npy"))
    _, _, co_train = load_official(os.path.abspath(args.bicro_dir))
    for fit in ("gmm", "bmm"):
        first = official_split(co_train, fit, la, lb, 0)
        for tag, (x, prob, clean) in zip("AB", first):
            g.save(out, f"{tag}.normalised", x)
            g.save(out, f"{tag}.{fit}.probability", prob)
            g.save(out, f"{tag}.{fit}.clean", clean)
            print(f"{fit} {tag}: {int(clean.sum())} of {len(clean)} clean, precision "
                  f"{truth[clean == 1].mean() if clean.sum() else 0:.3f}; losses in [{la.min() if tag == 'A' else lb.min():.4f}, "
                  f"{la.max() if tag == 'A' else lb.max():.4f}], median {np.median(la if tag == 'A' else lb):.4f}")
        if fit == "gmm":
            same = sum(all((s[k][2] == first[k][2]).all() for k in range(2))
                       for s in (official_split(co_train, fit, la, lb, seed) for seed in range(1, SEEDS)))
            print(f"gmm: KMeans seeds 1..{SEEDS - 1}: {same} of {SEEDS - 1} give seed 0's flags for both nets")


if __name__ == "__main__":
    main()
