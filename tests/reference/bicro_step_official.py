"""Writes the golden fixture of tests/train/bicro_golden_step_test.cpp into tests/fixtures/golden_steps/bicro/ by
running the official BiCro code itself (xu5zhao/BiCro @0231631: `model.py`, `data.py`, `co_train.py`), not a
transcription:

  * `co_train.py: eval_train` with fit_type "bmm" -- both nets' per-pair losses over the training set (one loader
    batch of all 24 pairs), min-max normalised, `BetaMixture1D(max_iters=10)` each, the clean posterior -- and
    `split_prob` (p_threshold 0.5);
  * `co_train.py: warmup` (mode "warmup_sele", warmup_rate 0.3) of A, then of B, on that batch of 24;
  * `SGRAF.predict` of the peer (the soft labels c of the labelled batch and n of the unlabelled one) and
    `co_train.py: train(opt, model_A, model_B, ...)` then `train(opt, model_B, model_A, ...)` -- one co-training
    iteration of A on B's split, then one of B on A's, in the second half of training (epoch = num_epochs // 2 = 1:
    an Adam step on the unlabelled batch, then one on the labelled batch);
  * the same iteration of A in the first half (epoch 0: the labelled step only), from the nets before any step.

Usage:  git --git-dir=<mirror of xu5zhao/BiCro> archive HEAD | tar x -C /tmp/bicro_official
        /usr/bin/python3 tests/reference/bicro_step_official.py /tmp/bicro_official      (torch 1.13, scipy 1.10)

What is changed around the official code, all of it here (no file of it is edited on disk):
  1. `co_train.py` is loaded with one textual patch, `unlabeled_train_iter.next()` -> `next(unlabeled_train_iter)`
     (no `.next` on iterators in Python 3), and `model.py` with `.cuda()` removed: `SGRAF.predict` and the
     "warmup_sele" loss call it unconditionally, and this machine has no GPU.
  2. `nltk`, `matplotlib` and `sklearn` are stubbed in sys.modules when missing: data.py/vocab.py import nltk for
     the tokenizer, utils.py pyplot, model.py/co_train.py sklearn's GaussianMixture for fit_type "gmm" and the
     unused "y_score" mode; none of them runs here.
  3. torch's default dtype is float64, so the official code computes in float64 unchanged.
  4. The instances, not the code, are configured: every nn.Dropout's p set to 0 (rematch's --dropout 0), the
     BatchNorms' affine parameters and running statistics randomised, the score head `sim_eval_w`'s weights scaled
     by SCORE_SCALE (below), and each Adam's state set to 4 earlier steps.
  5. The co-training iterations get their batches as one-element lists (what `train` iterates, `len`s and `next`s),
     each batch made by the official `collate_fn` from the official `PrecompDataset` (modes "labeled" and
     "unlabeled", with the split below) in the order rematch's Batcher gives it (decreasing caption length, lengths
     distinct in each batch). BiCro's collate_fn keeps the shuffle's order, and the order matters: `SGRAF.predict`
     gives the k-th non-anchor the consistency of the batch's k-th pair (docs/methods/bicro.md §4.3). The warm-up
     and eval_train use the official loader over all 24 pairs (one batch; their losses do not depend on its order).
The split the iterations use is given (PROB_A/PROB_B), B's clean pairs 0..11 (A's labelled batch), A's 12..23.
"""
import argparse
import copy
import os
import sys
import types

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import golden_step_common as g  # noqa: E402

N, B, REGIONS, IMG_DIM, VOCAB = 24, 12, 36, 6, 12  # VisualSA hard-codes 36 regions
LENGTHS = list(range(14, 2, -1)) * 2
# The split of the co-training iterations: clean probability of each net's mixture (clean iff > 0.5).
PROB_B = [0.9, 0.8, 0.95, 0.7, 0.6, 0.99, 0.85, 0.75, 0.66, 0.91, 0.55, 0.77] + [0.1, 0.2, 0.3, 0.05, 0.45, 0.15,
                                                                              0.25, 0.35, 0.4, 0.01, 0.33, 0.22]
PROB_A = [1 - p for p in PROB_B]
# The score head's weights are scaled up: at these toy widths the scores all lie within 0.02 of 0.5, every hinge of
# the triplet is active with the same argmax whatever the margins, and no margin (--margin, --soft_margin, the soft
# labels, --noise_tem) would change a gradient (the hardest-negative triplet's gradient depends on the margins only
# through which hinges are active and largest). Scaled by 40 they spread over 0.5..0.95, wider than the margin.
SCORE_SCALE = 40.0
NOISE_TEM = 0.5  # the scripts' --noise_tem; the labels below spread around it, so it zeroes some and keeps others


def stub(name, **attrs):
    module = types.ModuleType(name)
    for k, v in attrs.items():
        setattr(module, k, v)
    sys.modules[name] = module
    return module


def load_official(bicro_dir):
    for name in ("nltk", "matplotlib", "sklearn"):
        try:
            __import__(name)
        except ImportError:
            if name == "nltk":
                stub("nltk").tokenize = stub("nltk.tokenize")
            elif name == "matplotlib":
                stub("matplotlib").pyplot = stub("matplotlib.pyplot")
            else:
                stub("sklearn").mixture = stub("sklearn.mixture", GaussianMixture=None)
    sys.path.insert(0, bicro_dir)

    def load(name, patches):
        source = open(os.path.join(bicro_dir, name + ".py")).read()
        for old, new, count in patches:
            assert source.count(old) == count, f"{name}.py changed: check the patch {old!r}"
            source = source.replace(old, new)
        module = types.ModuleType(name)
        module.__file__ = os.path.join(bicro_dir, name + ".py")
        sys.modules[name] = module
        exec(compile(source, module.__file__, "exec"), module.__dict__)
        return module

    model = load("model", [(".cuda()", "", source_count_cuda(bicro_dir))])
    import data  # noqa: F401  (the official data.py)
    co_train = load("co_train", [("unlabeled_train_iter.next()", "next(unlabeled_train_iter)", 2)])
    return model, data, co_train


def source_count_cuda(bicro_dir):
    return open(os.path.join(bicro_dir, "model.py")).read().count(".cuda()")


def official_names(net):
    named = []
    for prefix, module in (("img_enc.", net.img_enc), ("txt_enc.", net.txt_enc), ("sim_enc.", net.sim_enc)):
        named += [(prefix + n, p) for n, p in module.named_parameters()]
    return named


def save_net(out, prefix, net):
    for p, module in (("img_enc.", net.img_enc), ("txt_enc.", net.txt_enc), ("sim_enc.", net.sim_enc)):
        for name, t in module.state_dict().items():
            g.save(out, prefix + p + name, t)


def save_moments(out, prefix, net, steps):
    for name, p in official_names(net):
        st = net.optimizer.state[p]
        assert float(st["step"]) == g.ADAM_STEPS + steps, (name, st["step"])
        g.save(out, f"{prefix}{name}.exp_avg", st["exp_avg"])
        g.save(out, f"{prefix}{name}.exp_avg_sq", st["exp_avg_sq"])


def prepare(net, sgraf_reference):
    for enc in (net.img_enc, net.txt_enc, net.sim_enc):
        for m in enc.modules():
            if isinstance(m, torch.nn.Dropout):
                m.p = 0.0
        sgraf_reference.randomise_batchnorms(enc)
    with torch.no_grad():
        net.sim_enc.sim_eval_w.weight.mul_(SCORE_SCALE)
    for _, p in official_names(net):
        net.optimizer.state[p] = {"step": torch.tensor(float(g.ADAM_STEPS)),
                                  "exp_avg": torch.randn_like(p) * 1e-2,
                                  "exp_avg_sq": (torch.rand_like(p) + 0.5) * 1e-4}


def batches(data, caption_ids, images_np, pred, prob):
    """The labelled and the unlabelled batch of a split, each made by the official collate_fn in split order."""
    out = []
    for mode in ("labeled", "unlabeled"):
        dset = data.PrecompDataset(caption_ids, images_np, "train", 0, "", mode=mode, pred=pred, probability=prob)
        lengths = [len(dset.captions[i]) for i in range(len(dset))]
        assert lengths == sorted(lengths, reverse=True) and len(set(lengths)) == len(lengths)
        out.append([data.collate_fn([dset[i] for i in range(len(dset))])])
    return out


def main():
    global SCORE_SCALE
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bicro_dir", help="the official BiCro checkout (model.py, data.py, co_train.py, ...)")
    parser.add_argument("--out", default="bicro", help="fixture folder under tests/fixtures/golden_steps/")
    parser.add_argument("--margin", type=float, default=0.2, help="a nudge, to see it move the step (not the fixture's)")
    parser.add_argument("--noise_tem", type=float, default=NOISE_TEM, help="likewise")
    parser.add_argument("--score_scale", type=float, default=SCORE_SCALE, help="likewise")
    args = parser.parse_args()
    SCORE_SCALE = args.score_scale
    torch.set_default_dtype(torch.float64)
    torch.set_num_threads(1)
    torch.manual_seed(2023)
    model, data, co_train = load_official(os.path.abspath(args.bicro_dir))
    import sgraf_reference

    opt = argparse.Namespace(img_dim=IMG_DIM, word_dim=3, embed_size=4, sim_dim=4, num_layers=1, bi_gru=True,
                             no_imgnorm=False, no_txtnorm=False, module_name="SGR", sgr_step=3, vocab_size=VOCAB,
                             grad_clip=2.0, margin=args.margin, learning_rate=2e-4, batch_size=B, num_epochs=2,
                             p_threshold=0.5, soft_margin="exponential", log_step=1000, workers=0,
                             noise_ratio=0, noise_file="", warmup_epoch=1, warmup_type="warmup_sele",
                             warmup_rate=0.3, noise_train="noise_soft", noise_tem=args.noise_tem, fit_type="bmm")
    model_A = model.SGRAF(opt)
    model_B = model.SGRAF(opt)
    prepare(model_A, sgraf_reference)
    prepare(model_B, sgraf_reference)

    out = g.folder(args.out)
    images, captions, lengths = g.precomp_set(N, REGIONS, IMG_DIM, LENGTHS, VOCAB)
    images = images - 0.5  # centred features (exact in float32): global image embeddings of varied directions
    g.save_precomp(out, images, captions, lengths)
    images_np = images.numpy()
    caption_ids = [captions[i, :m].tolist() for i, m in enumerate(LENGTHS)]
    save_net(out, "A.before.", model_A)
    save_net(out, "B.before.", model_B)
    for tag, net in (("A", model_A), ("B", model_B)):
        for name, p in official_names(net):
            g.save(out, f"{tag}.adam.{name}.exp_avg", net.optimizer.state[p]["exp_avg"])
            g.save(out, f"{tag}.adam.{name}.exp_avg_sq", net.optimizer.state[p]["exp_avg_sq"])
    first_A, first_B = copy.deepcopy(model_A), copy.deepcopy(model_B)
    warm_A, warm_B = copy.deepcopy(model_A), copy.deepcopy(model_B)

    # (1) eval_train (bmm) + split_prob over all 24 pairs, one batch.
    loader, data_size, _ = data.get_loader(caption_ids, images_np, "warmup", N, 0, 0, "")
    prob_a, prob_b, all_loss = co_train.eval_train(opt, model_A, model_B, loader, data_size, [[], []])
    for k, (tag, prob) in enumerate((("A", prob_a), ("B", prob_b))):
        g.save(out, f"split.{tag}.normalised", all_loss[k][0])
        g.save(out, f"split.{tag}.probability", np.asarray(prob, dtype=np.float64).reshape(-1))
        g.save(out, f"split.{tag}.clean", co_train.split_prob(prob, opt.p_threshold).astype(np.int64).reshape(-1))
        print(f"split {tag}: normalised {np.round(all_loss[k][0].numpy(), 3)}\n  posterior "
              f"{np.round(np.asarray(prob).reshape(-1), 3)}")

    # (2) warm-up of A, then of B, one batch of all 24 pairs each.
    co_train.warmup(opt, loader, warm_A, 0)
    co_train.warmup(opt, loader, warm_B, 0)
    save_net(out, "warm.A.after.", warm_A)
    save_net(out, "warm.B.after.", warm_B)
    save_moments(out, "warm.A.adam_after.", warm_A, 1)
    save_moments(out, "warm.B.adam_after.", warm_B, 1)

    # (3) co-training, second half: A on B's split, then B on A's; the peer's labels first.
    pred_a, pred_b = np.array(PROB_A) > 0.5, np.array(PROB_B) > 0.5
    epoch = opt.num_epochs // 2
    for tag, net, peer, pred, prob in (("A", model_A, model_B, pred_b, PROB_B), ("B", model_B, model_A, pred_a, PROB_A)):
        labeled, unlabeled = batches(data, caption_ids, images_np, pred, prob)
        (il, tl, ll, *_), (iu, tu, lu, *_) = labeled[0], unlabeled[0]
        with torch.no_grad():
            peer.val_start()
            c_y, n_y = peer.predict(il, tl, ll, iu, tu, lu, epoch=epoch)
        g.save(out, f"labels.{tag}.labeled", c_y)
        g.save(out, f"labels.{tag}.unlabeled", n_y)
        print(f"labels of {tag}'s iteration: labelled {np.round(c_y.numpy(), 3)}\n  unlabelled {np.round(n_y.numpy(), 3)}")
        co_train.train(opt, net, peer, labeled, unlabeled, epoch)
        save_net(out, f"A.after_{tag}.", model_A)
        save_net(out, f"B.after_{tag}.", model_B)
        save_moments(out, f"{tag}.adam_after.", net, 2)

    # (4) the first half: A's labelled step only, from the nets before any step.
    labeled, unlabeled = batches(data, caption_ids, images_np, pred_b, PROB_B)
    co_train.train(opt, first_A, first_B, labeled, unlabeled, 0)
    save_net(out, "first.A.after.", first_A)
    save_net(out, "first.B.after.", first_B)
    save_moments(out, "first.A.adam_after.", first_A, 1)
    g.save(out, "prob_A", np.array(PROB_A))
    g.save(out, "prob_B", np.array(PROB_B))
    print(f"bicro: split clean A {int(co_train.split_prob(prob_a, 0.5).sum())}, B "
          f"{int(co_train.split_prob(prob_b, 0.5).sum())} of {N}; warm-up, iterations of A then B, first half: {out}")


if __name__ == "__main__":
    main()
