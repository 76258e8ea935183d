"""Writes the golden fixture of tests/train/ncr_golden_step_test.cpp into tests/fixtures/golden_steps/ncr/ by running
the official NCR code itself (XLearning-SCU/2021-NeurIPS-NCR @60256ba: `NCR/model.py`, `NCR/data.py`,
`NCR/co_train.py`), not a transcription:

  * `co_train.py: eval_train` -- both nets' per-sample losses over the training set (one loader batch of all 16
    pairs), min-max normalised, sklearn's GaussianMixture(2, max_iter=10, tol=1e-2, reg_covar=5e-4) each, the clean
    posterior -- and `split_prob` (p_threshold 0.5);
  * `co_train.py: train(opt, model_A, model_B, ...)` then `train(opt, model_B, model_A, ...)` -- one co-training
    iteration of A on B's split, then one of B on A's, in the second half of training (epoch = num_epochs // 2 = 1),
    so each iteration makes both of its Adam steps (labelled, then unlabelled).

Usage:  git --git-dir=<mirror of XLearning-SCU/2021-NeurIPS-NCR> archive HEAD NCR | tar x -C /tmp/ncr_official
        /usr/bin/python3 tests/reference/ncr_step_official.py /tmp/ncr_official/NCR     (torch 1.13, sklearn 1.2)

What is changed around the official code, all of it here (no file of it is edited on disk):
  1. `co_train.py` is loaded with one textual patch: `unlabeled_train_iter.next()` -> `next(unlabeled_train_iter)`
     (the DataLoader iterator has no `.next` in PyTorch >= 1.13; docs/backbones.md §9 item 9). No `.cuda()` call
     runs: every one in model.py and co_train.py is behind `torch.cuda.is_available()`, false on this machine.
  2. `nltk` and `matplotlib` are stubbed in sys.modules when missing: data.py/vocab.py import nltk for
     `get_dataset`'s tokenizer and utils.py imports pyplot, none of which this script calls (the captions are given
     as word ids, as `get_dataset` returns them).
  3. torch's default dtype is float64 (`torch.set_default_dtype`), so the official code computes in float64 unchanged:
     its `torch.Tensor(...)` images and captions, `torch.zeros(data_size)` losses and the SGRAF modules.
  4. The instances, not the code, are configured: every nn.Dropout's p set to 0 (dropout draws from torch's RNG,
     which rematch cannot replay: rematch's --dropout 0 is the same model), the BatchNorms' affine parameters and
     running statistics randomised, and each Adam's state set to 4 earlier steps (golden_step_common.py), so the
     step depends on the gradient's value, not only on its sign.
  5. The shuffles of the loaders do not matter: each loader holds a single batch, and every loss is invariant under
     a permutation of the batch. The k-means initialisation of sklearn's mixture draws from NumPy's global RNG:
     seeded here, and its labels are recomputed (KMeans(2, n_init=1) from the same seed, the call GaussianMixture
     makes) and saved, so the C++ mixture starts from the same labels.
The split the training iteration uses is given (pred/prob below, not the mixture's: 16 pairs would not give two
batches of 8), A's labelled batch captions 0..7 (B's split), B's labelled batch 8..15 (A's split).
"""
import argparse
import os
import sys
import types

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import golden_step_common as g  # noqa: E402

N, B, REGIONS, IMG_DIM, VOCAB = 16, 8, 36, 6, 12  # VisualSA hard-codes 36 regions (model.py: EncoderSimilarity)
LENGTHS = [10, 9, 8, 7, 6, 5, 4, 3] * 2
SEED = 7
# The split the iteration uses (clean probability of the peer's mixture; clean iff > 0.5).
PROB_A = [0.3, 0.1, 0.45, 0.2, 0.05, 0.4, 0.35, 0.15, 0.9, 0.75, 0.6, 0.97, 0.55, 0.8, 0.66, 0.88]
PROB_B = [0.95, 0.7, 0.52, 0.85, 0.61, 0.99, 0.77, 0.58, 0.25, 0.1, 0.4, 0.3, 0.02, 0.45, 0.2, 0.33]


def stub(name, **attrs):
    module = types.ModuleType(name)
    for k, v in attrs.items():
        setattr(module, k, v)
    sys.modules[name] = module
    return module


def load_official(ncr_dir):
    for name in ("nltk", "matplotlib"):
        try:
            __import__(name)
        except ImportError:
            if name == "nltk":
                nltk = stub("nltk")
                nltk.tokenize = stub("nltk.tokenize")
            else:
                mpl = stub("matplotlib")
                mpl.pyplot = stub("matplotlib.pyplot")
    sys.path.insert(0, ncr_dir)
    import model  # noqa: F401  (the official NCR/model.py)
    import data  # noqa: F401
    source = open(os.path.join(ncr_dir, "co_train.py")).read()
    patched = source.replace("unlabeled_train_iter.next()", "next(unlabeled_train_iter)")
    assert patched.count("next(unlabeled_train_iter)") == 2, "co_train.py changed: check the patch"
    co_train = types.ModuleType("co_train")
    co_train.__file__ = os.path.join(ncr_dir, "co_train.py")
    exec(compile(patched, co_train.__file__, "exec"), co_train.__dict__)
    return model, data, co_train


def official_names(net):
    """rematch's state-dict names are the official ones under img_enc./txt_enc./sim_enc. (docs/backbones.md §4.9)."""
    named = []
    for prefix, module in (("img_enc.", net.img_enc), ("txt_enc.", net.txt_enc), ("sim_enc.", net.sim_enc)):
        named += [(prefix + n, p) for n, p in module.named_parameters()]
    return named


def state(net):
    out = {}
    for prefix, module in (("img_enc.", net.img_enc), ("txt_enc.", net.txt_enc), ("sim_enc.", net.sim_enc)):
        out.update({prefix + n: t.detach().clone() for n, t in module.state_dict().items()})
    return out


def save_net(out, prefix, net):
    for name, value in state(net).items():
        g.save(out, prefix + name, value)


def save_moments(out, prefix, net):
    for name, p in official_names(net):
        st = net.optimizer.state[p]
        g.save(out, f"{prefix}{name}.exp_avg", st["exp_avg"])
        g.save(out, f"{prefix}{name}.exp_avg_sq", st["exp_avg_sq"])
        assert float(st["step"]) == g.ADAM_STEPS + 2 or prefix.startswith("adam_before"), (name, st["step"])


def prepare(net, sgraf_reference):
    for enc in (net.img_enc, net.txt_enc, net.sim_enc):
        for m in enc.modules():
            if isinstance(m, torch.nn.Dropout):
                m.p = 0.0
        sgraf_reference.randomise_batchnorms(enc)
    for _, p in official_names(net):
        net.optimizer.state[p] = {"step": torch.tensor(float(g.ADAM_STEPS)),
                                  "exp_avg": torch.randn_like(p) * 1e-2,
                                  "exp_avg_sq": (torch.rand_like(p) + 0.5) * 1e-4}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ncr_dir", help="the official NCR/ folder (model.py, data.py, co_train.py, ...)")
    args = parser.parse_args()
    torch.set_default_dtype(torch.float64)
    torch.set_num_threads(1)
    torch.manual_seed(2021)
    model, data, co_train = load_official(os.path.abspath(args.ncr_dir))
    import sgraf_reference

    opt = argparse.Namespace(img_dim=IMG_DIM, word_dim=3, embed_size=4, sim_dim=4, num_layers=1, bi_gru=True,
                             no_imgnorm=False, no_txtnorm=False, module_name="SGR", sgr_step=3, vocab_size=VOCAB,
                             grad_clip=2.0, margin=0.2, learning_rate=2e-4, batch_size=B, num_epochs=2,
                             p_threshold=0.5, soft_margin="exponential", log_step=1000, workers=0,
                             noise_ratio=0, noise_file="", warmup_epoch=0)
    model_A = model.SGRAF(opt)
    model_B = model.SGRAF(opt)
    prepare(model_A, sgraf_reference)
    prepare(model_B, sgraf_reference)

    out = g.folder("ncr")
    images, captions, lengths = g.precomp_set(N, REGIONS, IMG_DIM, LENGTHS, VOCAB)
    g.save_precomp(out, images, captions, lengths)
    images_np = images.numpy()
    caption_ids = [captions[i, :m].tolist() for i, m in enumerate(LENGTHS)]  # what get_dataset returns
    save_net(out, "A.before.", model_A)
    save_net(out, "B.before.", model_B)
    for tag, net in (("A", model_A), ("B", model_B)):
        for name, p in official_names(net):
            st = net.optimizer.state[p]
            g.save(out, f"{tag}.adam.{name}.exp_avg", st["exp_avg"])
            g.save(out, f"{tag}.adam.{name}.exp_avg_sq", st["exp_avg_sq"])

    # (1) eval_train + split_prob over all 16 pairs, one batch.
    loader, data_size, clean_labels = data.get_loader(caption_ids, images_np, "warmup", N, 0, 0, "")
    np.random.seed(SEED)
    prob_a, prob_b, all_loss = co_train.eval_train(opt, model_A, model_B, loader, data_size, [[], []],
                                                   clean_labels, 0)
    from sklearn.cluster import KMeans
    np.random.seed(SEED)  # eval_train's two fits drew their k-means++ centres in this order: A's, then B's
    labels = [KMeans(n_clusters=2, n_init=1).fit(all_loss[k][0].reshape(-1, 1).numpy()).labels_ for k in (0, 1)]
    for k, (tag, prob) in enumerate((("A", prob_a), ("B", prob_b))):
        g.save(out, f"split.{tag}.normalised", all_loss[k][0])
        g.save(out, f"split.{tag}.kmeans_labels", labels[k].astype(np.int64))
        g.save(out, f"split.{tag}.probability", np.asarray(prob, dtype=np.float64))
        g.save(out, f"split.{tag}.clean", co_train.split_prob(prob, opt.p_threshold).astype(np.int64))
    # (2) one co-training iteration of A on B's split, then one of B on A's (epoch 1 >= num_epochs // 2: both steps).
    pred_a, pred_b = np.array(PROB_A) > 0.5, np.array(PROB_B) > 0.5
    epoch = opt.num_epochs // 2
    labeled, unlabeled = data.get_loader(caption_ids, images_np, "train", B, 0, 0, "", pred=pred_b, prob=PROB_B)
    assert len(labeled) == 1 and len(unlabeled) == 1
    co_train.train(opt, model_A, model_B, labeled, unlabeled, epoch)
    save_net(out, "A.after_A.", model_A)
    save_net(out, "B.after_A.", model_B)
    save_moments(out, "A.adam_after.", model_A)
    labeled, unlabeled = data.get_loader(caption_ids, images_np, "train", B, 0, 0, "", pred=pred_a, prob=PROB_A)
    co_train.train(opt, model_B, model_A, labeled, unlabeled, epoch)
    save_net(out, "A.after_B.", model_A)
    save_net(out, "B.after_B.", model_B)
    save_moments(out, "B.adam_after.", model_B)
    g.save(out, "prob_A", np.array(PROB_A))
    g.save(out, "prob_B", np.array(PROB_B))
    print(f"ncr: eval_train clean A {int(co_train.split_prob(prob_a, 0.5).sum())}, B "
          f"{int(co_train.split_prob(prob_b, 0.5).sum())} of {N}; one iteration of A, then of B, written to {out}")


if __name__ == "__main__":
    main()
