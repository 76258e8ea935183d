"""Writes the golden fixtures of tests/train/rcsl_golden_step_test.cpp into tests/fixtures/golden_steps/
rcsl_learning/ and rcsl_mining/: one whole RCSL training step of each stage (docs/methods/rcsl.md §3.3–§3.5),
transcribed from that page in the structure of the official QinYang79/RCSL train.py / model.py (SVSE.train_emb),
with the VSE model of vse_reference.py (§3.2) and the loss terms of rcsl_reference.py at toy sizes:

  learning stage  view 0 = the batch's pairs (K_p = 5 paired captions first, 3 unpaired) in train mode;
                  L = L_trl (paired block, hardest negatives, margin 0.2) + L_reg (alignment on the paired rows +
                  the mean of both uniformities over the whole batch)
  mining stage    the same plus view 1 = the bank's mined image of each caption and mined caption of each image
                  row (un-augmented, train mode, after view 0), L += L_rcm (τ = 0.03) on S¹ = Ĩ·g(T)ᵀ and
                  S² = T̃·f(I)ᵀ
  then zero_grad, backward, clip_grad_norm_(2.0), AdamW (lr 5e-4, weight decay 0.01).

Run from anywhere:  /usr/bin/python3 tests/reference/rcsl_step_reference.py   (torch 1.13, numpy)

Pinned randomness: the augmentation is off (--no_augment: region dropping and token masking are the step's only
draws besides dropout), the text dropout is 0, and the batch (its order included) and the memory bank are given
(the bank: paired items map to their own partner, unpaired ones to fixed other items). AdamW starts from moments
of 4 earlier steps (as if the stage's optimizer had already run; the re-creation at mine_epoch is the schedule
test's business).
"""
import torch

import golden_step_common as g
import rcsl_reference
import vse_reference as vse

N, REGIONS, IMG_DIM, WORDS = 8, 3, 6, 12  # 12 words incl. the 4 specials; RCSL appends <mask>: 13 rows
PAIRED = 5
LENGTHS = [10, 9, 8, 7, 6, 5, 4, 3]
LR, WD, CLIP, TAU = 5e-4, 0.01, 2.0, 0.03
# the bank (§3.4): unpaired caption c → image, unpaired image row r → caption; paired ones → their own partner
CAPTION_TO_IMAGE = [0, 1, 2, 3, 4, 1, 7, 2]
IMAGE_TO_CAPTION = [0, 1, 2, 3, 4, 6, 3, 0]

vse.IMG_DIM, vse.EMBED, vse.VOCAB, vse.WORD_DIM = IMG_DIM, 4, WORDS + 1, 3


def vse_model():
    model = vse.VSE().double()
    with torch.no_grad():
        for bn in model.img_enc.mlp.bns:
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.uniform_(-0.5, 0.5)
            bn.running_mean.uniform_(-0.3, 0.3)
            bn.running_var.uniform_(0.5, 1.5)
    return model


def encode(model, images, captions, lengths):
    full = torch.full((images.size(0),), REGIONS, dtype=torch.int64)
    return model.img_enc(images, full), model.txt_enc(captions, lengths)


def write_case(stage, seed):
    torch.manual_seed(seed)
    out = g.folder("rcsl_" + stage)
    model = vse_model()
    images, captions, lengths = g.precomp_set(N, REGIONS, IMG_DIM, LENGTHS, WORDS)
    g.save_precomp(out, images, captions, lengths)
    g.save_state(out, "before.", model)
    params = list(model.named_parameters())
    opt = g.adam_with_moments(params, LR, weight_decay=WD, decoupled=True)
    g.save_adam(out, "adam.", opt, params)

    model.train()
    img0, cap0 = encode(model, images, captions, lengths)
    sims = img0 @ cap0.t()
    trl = rcsl_reference.contrastive_loss(sims, PAIRED)
    reg = rcsl_reference.lalign(img0, cap0, PAIRED) + (rcsl_reference.lunif(img0) + rcsl_reference.lunif(cap0)) / 2
    loss = trl + reg
    parts = [trl, reg]
    if stage == "mining":
        mined_caps = captions[IMAGE_TO_CAPTION]
        img1, cap1 = encode(model, images[CAPTION_TO_IMAGE], mined_caps, lengths[IMAGE_TO_CAPTION])
        p_up_txt = torch.cat([cap0[:PAIRED], cap1[PAIRED:]], 0)
        p_up_img = torch.cat([img0[:PAIRED], img1[PAIRED:]], 0)
        rcm = (rcsl_reference.robust_mining_loss(p_up_img @ cap0.t(), TAU) +
               rcsl_reference.robust_mining_loss(p_up_txt @ img0.t(), TAU))
        loss = loss + rcm
        parts.append(rcm)
    opt.zero_grad()
    loss.backward()
    norm = g.clip_grad_norm(model.parameters(), CLIP)
    opt.step()
    g.save(out, "losses", torch.stack(parts).detach())
    g.save_state(out, "after.", model)
    print(f"rcsl {stage}: losses {[round(p.item(), 6) for p in parts]}, grad norm {norm:.4f}")


def main():
    torch.set_num_threads(1)
    write_case("learning", 31)
    write_case("mining", 32)


if __name__ == "__main__":
    main()
