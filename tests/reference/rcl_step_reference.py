"""Writes the golden fixture of tests/train/rcl_golden_step_test.cpp into tests/fixtures/golden_steps/rcl/:
one whole RCL training step (docs/methods/rcl.md §2.2) transcribed from that page in the structure of the official
RCL-SGRAF train.py / model.py (SGRAF.train_emb): S = g(V, T) in train mode, L = CCL(S) (§2.1, φ = log, all
B − 1 negatives, τ = 0.05), zero_grad, backward, clip_grad_norm_(2.0), Adam step (lr 2e-4).

Run from anywhere:  /usr/bin/python3 tests/reference/rcl_step_reference.py   (torch 1.13, numpy)

Pinned randomness: dropout 0 (text encoder and self-attention); the negative mask uses all B − 1 negatives
(ratio −1, the default), so CCL draws nothing; the batch is the whole 6-pair training set, its order fixed by
the distinct caption lengths (golden_step_common.precomp_set). Adam starts from moments of 4 earlier steps.

Files: images (float32), captions, lengths; before.<state name> (SGR parameters and BatchNorm buffers);
adam.<param>.exp_avg/.exp_avg_sq; loss, grad_norm; after.<state name> every parameter and buffer after the step.
"""
import torch

import golden_step_common as g

B, REGIONS, VOCAB = 6, 3, 12  # VOCAB words incl. the 4 specials; RCL appends <mask> (§0.1): 13 rows
LENGTHS = [8, 7, 6, 5, 4, 3]
TAU, EPS, LR, CLIP = 0.05, 1e-10, 2e-4, 2.0


def ccl_log(S):
    """RCL CCL (§2.1): p^{i2t} row softmax, p^{t2i} column softmax stored transposed, + ε in the denominators;
    Φ(P) = (1/B) Σ_i Σ_{j≠i} −log(1 − P_ij + ε)."""
    e = (S / TAU).exp()
    i2t = e / (e.sum(1, keepdim=True) + EPS)
    t2i = e.t() / (e.t().sum(1, keepdim=True) + EPS)
    mask = 1.0 - torch.eye(S.size(0), dtype=S.dtype)
    phi = lambda p: -((1.0 - p + EPS).log() * mask).sum(1).mean()
    return phi(i2t) + phi(t2i)


def main():
    torch.manual_seed(2015)
    torch.set_num_threads(1)
    out = g.folder("rcl")
    model = g.sgr_model(VOCAB + 1, REGIONS)
    images, captions, lengths = g.precomp_set(B, REGIONS, 6, LENGTHS, VOCAB)
    g.save_precomp(out, images, captions, lengths)
    g.save_state(out, "before.", model)
    params = list(model.named_parameters())
    opt = g.adam_with_moments(params, LR)
    g.save_adam(out, "adam.", opt, params)

    model.train()
    loss = ccl_log(model(images, captions, lengths))
    opt.zero_grad()
    loss.backward()
    norm = g.clip_grad_norm(model.parameters(), CLIP)
    opt.step()
    g.save(out, "loss", loss)
    g.save(out, "grad_norm", torch.tensor(norm, dtype=g.F64))
    g.save_state(out, "after.", model)
    print(f"rcl: loss {loss.item():.6f}, grad norm {norm:.4f} ({'clipped' if norm > CLIP else 'not clipped'})")


if __name__ == "__main__":
    main()
