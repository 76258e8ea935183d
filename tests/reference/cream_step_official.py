"""Writes the golden fixture of tests/train/cream_golden_step_test.cpp into tests/fixtures/golden_steps/cream/ by
running the official CREAM code itself (XLearning-SCU/2024-TIP-CREAM @f487d6f: `model.py`, `InfoNCELoss.py`,
`data.py`, `train.py`), not a transcription:

  * `InfoNCELoss.forward` on a hand-made 5x5 score matrix (modes "train" with soft labels and a filter that keeps
    some negative weights and drops others, "predict", "eval_loss", "warmup"): the loss and its gradient;
  * `SGRAF.train(..., mode="eval_loss")`, the call `train.py: eval_train` makes per batch: both nets' per-pair losses
    over the 24 training pairs;
  * `train.py: train_one_epoch(opt, model_A, model_B, ...)` then `train_one_epoch(opt, model_B, model_A, ...)`, each
    on fresh `data.get_loader(..., "train", ...)` loaders, as `train.py: main` runs them, in two settings:
      "filtered."  8 clean, 8 hard, 8 noisy pairs (ratio 1/3 <= 0.85), batch 8, co-training epoch 1 with
                   --hard_start_epoch 1 --noisy_start_epoch 1: per net one clean, one hard and one noisy Adam step
                   with the filter f (the mean refined label; it zeroes every negative weight at these sizes);
      "open."      21 clean, 2 hard, 1 noisy pair (ratio 0.875 > 0.85), batch 21: the clean and hard filters are 0,
                   so every negative weight (and its gradient through S) enters; the noisy batch of one pair is not
                   trained (but its label enters the filter).

Usage:  git --git-dir=<mirror of XLearning-SCU/2024-TIP-CREAM> archive HEAD | tar x -C /tmp/cream_official
        /usr/bin/python3 tests/reference/cream_step_official.py /tmp/cream_official          (torch 1.13)

What is changed around the official code, all of it here (no file of it is edited on disk):
  1. `train.py` is loaded with one textual patch: `hard_iter.next()` / `noisy_iter.next()` -> `next(hard_iter)` /
     `next(noisy_iter)` (the DataLoader iterator has no `.next` in PyTorch >= 1.13). No `.cuda()` call runs: every one
     is behind `torch.cuda.is_available()`, false on this machine.
  2. `nltk`, `matplotlib` and `sklearn.mixture` are stubbed in sys.modules when missing: data.py/vocab.py import nltk
     for the tokenizer, utils.py imports pyplot, train.py imports GaussianMixture for `eval_train`; none of them is
     called here (captions are given as word ids; the mixture is NCR's, tested by ncr_golden_step_test.cpp, and the
     split the iterations use is given below).
  3. torch's default dtype is float64 (`torch.set_default_dtype`), so the official code computes in float64 unchanged.
  4. The instances, not the code, are configured: every nn.Dropout's p set to 0 (rematch's --dropout 0), the
     BatchNorms' affine parameters and running statistics randomised, and each Adam's state set to 4 earlier steps
     (golden_step_common.py).
  5. The shuffles of the loaders do not matter: each loader holds a single batch, and every loss, label and the
     filter are invariant under a permutation of the batch.
"""
import argparse
import os
import sys
import types

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import golden_step_common as g  # noqa: E402

N, REGIONS, IMG_DIM, VOCAB = 24, 36, 6, 12  # VisualSA hard-codes 36 regions (model.py: EncoderSimilarity)
LENGTHS = [10, 9, 8, 7, 6, 5, 4, 3] * 3
# Clean posteriors of the two nets' mixtures (clean iff > 0.5). "filtered": pairs 0..7 clean by both, 8..15 by one
# (hard), 16..23 by neither (noisy). "open": 0..20 clean, 21 and 22 hard, 23 noisy.
FILTERED_A = [0.9, 0.75, 0.6, 0.97, 0.55, 0.8, 0.66, 0.88, 0.3, 0.7, 0.45, 0.92, 0.2, 0.65, 0.1, 0.58,
              0.3, 0.1, 0.45, 0.2, 0.05, 0.4, 0.35, 0.15]
FILTERED_B = [0.95, 0.7, 0.52, 0.85, 0.61, 0.99, 0.77, 0.58, 0.81, 0.2, 0.9, 0.05, 0.62, 0.33, 0.95, 0.4,
              0.25, 0.1, 0.4, 0.3, 0.02, 0.45, 0.2, 0.33]
OPEN_A = [0.9, 0.75, 0.6, 0.97, 0.55, 0.8, 0.66, 0.88, 0.91, 0.72, 0.64, 0.93, 0.57, 0.86, 0.7, 0.99,
          0.62, 0.78, 0.83, 0.51, 0.94, 0.3, 0.7, 0.2]
OPEN_B = [0.95, 0.7, 0.52, 0.85, 0.61, 0.99, 0.77, 0.58, 0.68, 0.81, 0.9, 0.54, 0.74, 0.96, 0.63, 0.59,
          0.87, 0.69, 0.76, 0.92, 0.53, 0.8, 0.1, 0.4]


def stub(name, **attrs):
    module = types.ModuleType(name)
    for k, v in attrs.items():
        setattr(module, k, v)
    sys.modules[name] = module
    return module


def load_official(cream_dir):
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
    sys.path.insert(0, cream_dir)
    import model  # noqa: F401  (the official model.py)
    import data  # noqa: F401
    import InfoNCELoss  # noqa: F401
    source = open(os.path.join(cream_dir, "train.py")).read()
    patched = source.replace("hard_iter.next()", "next(hard_iter)").replace("noisy_iter.next()", "next(noisy_iter)")
    assert patched.count("next(hard_iter)") == 1 and patched.count("next(noisy_iter)") == 2, "train.py changed"
    train = types.ModuleType("cream_train")
    train.__file__ = os.path.join(cream_dir, "train.py")
    exec(compile(patched, train.__file__, "exec"), train.__dict__)
    return model, data, InfoNCELoss, train


def official_names(net):
    """rematch's state-dict names are the official ones under img_enc./txt_enc./sim_enc. (docs/backbones.md §4.9)."""
    named = []
    for prefix, module in (("img_enc.", net.img_enc), ("txt_enc.", net.txt_enc), ("sim_enc.", net.sim_enc)):
        named += [(prefix + n, p) for n, p in module.named_parameters()]
    return named


def save_net(out, prefix, net):
    for prefix2, module in (("img_enc.", net.img_enc), ("txt_enc.", net.txt_enc), ("sim_enc.", net.sim_enc)):
        for n, t in module.state_dict().items():
            g.save(out, prefix + prefix2 + n, t)


def save_moments(out, prefix, net, steps):
    for name, p in official_names(net):
        st = net.optimizer.state[p]
        g.save(out, f"{prefix}{name}.exp_avg", st["exp_avg"])
        g.save(out, f"{prefix}{name}.exp_avg_sq", st["exp_avg_sq"])
        assert float(st["step"]) == g.ADAM_STEPS + steps, (name, st["step"], steps)


def prepare(net, sgraf_reference, moments):
    for enc in (net.img_enc, net.txt_enc, net.sim_enc):
        for m in enc.modules():
            if isinstance(m, torch.nn.Dropout):
                m.p = 0.0
        sgraf_reference.randomise_batchnorms(enc)
    for _, p in official_names(net):
        moments.append((torch.randn_like(p) * 1e-2, (torch.rand_like(p) + 0.5) * 1e-4))
    set_moments(net, moments)


def set_moments(net, moments):
    for (_, p), (m, v) in zip(official_names(net), moments):
        net.optimizer.state[p] = {"step": torch.tensor(float(g.ADAM_STEPS)), "exp_avg": m.clone(),
                                  "exp_avg_sq": v.clone()}


def load_net(net, saved, moments):
    net.load_state_dict(saved)
    set_moments(net, moments)


def loss_fixture(out, InfoNCELoss):
    """The criterion alone on scores whose soft negative weights straddle the filter."""
    torch.manual_seed(34)
    scores = torch.tensor([[0.91, 0.12, 0.55, 0.05, 0.30],
                           [0.40, 0.85, 0.08, 0.61, 0.22],
                           [0.02, 0.33, 0.77, 0.45, 0.70],
                           [0.64, 0.09, 0.18, 0.52, 0.11],
                           [0.27, 0.58, 0.36, 0.14, 0.95]])
    labels = torch.tensor([[0.9], [0.35], [0.6], [0.1], [0.75]])
    crit = InfoNCELoss.InfoNCELoss(temperature=0.07)
    g.save(out, "loss.scores", scores)
    g.save(out, "loss.labels", labels.view(-1))
    for tag, tau, f in (("filter", 0.07, 0.15), ("open", 0.07, 0.0), ("tau", 0.2, 0.15)):
        crit.temperature = tau
        s = scores.clone().requires_grad_(True)
        loss, _, _ = crit(s, labels=labels, mode="train", soft_label=True, smooth_label=False, filter=f)
        loss.backward()
        g.save(out, f"loss.{tag}.value", loss.detach().view(1))
        g.save(out, f"loss.{tag}.grad", s.grad)
    crit.temperature = 0.07
    g.save(out, "loss.predict", crit(scores.clone(), mode="predict").view(-1))
    g.save(out, "loss.eval_loss", crit(scores.clone(), mode="eval_loss")[0].view(-1))
    s = scores.clone().requires_grad_(True)
    loss, _, _ = crit(s, mode="warmup")
    loss.backward()
    g.save(out, "loss.warmup.value", loss.detach().view(1))
    g.save(out, "loss.warmup.grad", s.grad)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cream_dir", help="the official CREAM folder (model.py, data.py, train.py, ...)")
    args = parser.parse_args()
    torch.set_default_dtype(torch.float64)
    torch.set_num_threads(1)
    torch.manual_seed(2024)
    model, data, InfoNCELoss, train = load_official(os.path.abspath(args.cream_dir))
    import sgraf_reference

    out = g.folder("cream")
    loss_fixture(out, InfoNCELoss)
    torch.manual_seed(2024)
    opt = argparse.Namespace(img_dim=IMG_DIM, word_dim=3, embed_size=4, sim_dim=4, num_layers=1, bi_gru=True,
                             no_imgnorm=False, no_txtnorm=False, module_name="SGR", sgr_step=3, vocab_size=VOCAB,
                             grad_clip=2.0, learning_rate=2e-4, num_epochs=40, p_threshold=0.5, log_step=1000,
                             workers=0, noise_ratio=0, noise_file="", warmup_epoch=0, soft_label=True,
                             smooth_label=False, hard_start_epoch=1, noisy_start_epoch=1)
    model_A = model.SGRAF(opt)
    model_B = model.SGRAF(opt)
    moments_A, moments_B = [], []
    prepare(model_A, sgraf_reference, moments_A)
    prepare(model_B, sgraf_reference, moments_B)
    saved_A, saved_B = model_A.state_dict(), model_B.state_dict()
    saved_A = [{k: v.clone() for k, v in d.items()} for d in saved_A]
    saved_B = [{k: v.clone() for k, v in d.items()} for d in saved_B]

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

    # (1) eval_train's per-batch call: both nets, eval mode, one batch of all 24 pairs.
    loader, data_size, _ = data.get_loader(caption_ids, images_np, "warmup", N, 0, 0, "")
    model_A.val_start()
    model_B.val_start()
    losses = {"A": torch.zeros(N), "B": torch.zeros(N)}
    with torch.no_grad():
        for imgs, caps, lens, ids in loader:
            for tag, net in (("A", model_A), ("B", model_B)):
                per = net.train(imgs, caps, lens, mode="eval_loss")
                for b in range(imgs.size(0)):
                    losses[tag][ids[b]] = per[b]
    for tag in ("A", "B"):
        g.save(out, f"eval_loss.{tag}", losses[tag])

    # (2) one co-training iteration of A, then one of B, in each setting.
    epoch = 1
    for setting, prob_a, prob_b, batch in (("filtered", FILTERED_A, FILTERED_B, 8), ("open", OPEN_A, OPEN_B, 21)):
        load_net(model_A, saved_A, moments_A)
        load_net(model_B, saved_B, moments_B)
        pa, pb = np.array(prob_a), np.array(prob_b)
        clean, hard, noisy = train.split_samples(pa, pb, opt.p_threshold)
        ratio = np.sum(clean) / (np.sum(clean) + np.sum(hard) + np.sum(noisy))
        g.save(out, f"{setting}.parts", (hard * 1 + noisy * 2).astype(np.int64))
        steps = {}
        for tag, net, peer, who in (("A", model_A, model_B, "A"), ("B", model_B, model_A, "B")):
            c_l, h_l, n_l = data.get_loader(caption_ids, images_np, "train", batch, 0, 0, "", clean=clean,
                                            hard=hard, noisy=noisy, prob_A=pa, prob_B=pb)
            assert len(c_l) == 1 and len(h_l) == 1 and len(n_l) == 1
            before = net.Eiters
            train.train_one_epoch(opt, net, peer, c_l, h_l, n_l, epoch, model=who, ratio=ratio)
            steps[tag] = net.Eiters - before
            save_net(out, f"{setting}.A.after_{tag}.", model_A)
            save_net(out, f"{setting}.B.after_{tag}.", model_B)
            save_moments(out, f"{setting}.{tag}.adam_after.", net, steps[tag])
        g.save(out, f"{setting}.prob_A", pa)
        g.save(out, f"{setting}.prob_B", pb)
        print(f"cream {setting}: ratio {ratio:.3f}, Adam steps A {steps['A']}, B {steps['B']}")
    print(f"cream: written to {out}")


if __name__ == "__main__":
    main()
