"""Writes the golden fixtures of tests/models/sgraf_golden_test.cpp into tests/fixtures/sgraf/{sgr,saf}/.

Run from anywhere:  /usr/bin/python3 tests/reference/sgraf_reference.py   (torch 1.13, numpy)

A PyTorch implementation of the SGR and SAF networks written from docs/backbones.md
(§1 conventions, §2 image encoder, §3.3 Bi-GRU text encoder, §4.1-§4.7 similarity encoder) in the
structure of the official code: the similarity matrix is built by a Python loop over captions (§5.1), each
caption sliced to its real length, so the C++ batched (padded, masked) computation is checked against the
per-caption semantics, including SAF's per-caption BatchNorm statistics and its sequential running-stat
updates (§4.6).

Everything runs in float64 at toy sizes: 5 images x 5 captions, R = 6 regions of D_img = 12, word_dim 10,
embed 16, sim_dim 8, V = 30, caption lengths 7 3 5 7 4 (markers included; 3 and the maximum 7 occur).
Per model (folder sgr/ or saf/) the .npy files are
  images, captions (int64, <pad> = 0 after each caption), lengths (int64)
  <state-dict name>            every parameter and buffer before the calls (BatchNorm statistics random)
  sims_eval                    [5, 5] similarity matrix in eval mode (running statistics)
  sims_train                   [5, 5] the same batch in train mode, dropout p = 0 (batch statistics)
  loss_weights                 r [5, 5]; the scalar loss is sum(sims_train * r)
  grad.<parameter name>        that loss's gradient for every parameter
  after.<buffer name>          every buffer after the train-mode call (running statistics, counters)
and next to the folders {sgr,saf}_converted.safetensors: the same initial weights (float32) saved the way
the official train.py saves a checkpoint ({'model': [img_enc, txt_enc, sim_enc state dicts], 'opt', ...})
and converted by tools/convert_pth.py, so the C++ test loads a converted official checkpoint unchanged.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "sgraf")
F64 = torch.float64
DIMS = dict(img_dim=12, word_dim=10, embed=16, sim_dim=8, vocab=30, regions=6, sgr_step=3)
LENGTHS = [7, 3, 5, 7, 4]


def l2norm(x, dim, eps=1e-8):  # §1: eps added to the norm
    return x / (x.pow(2).sum(dim=dim, keepdim=True).sqrt() + eps)


def l1norm(x, dim, eps=1e-8):
    return x / (x.abs().sum(dim=dim, keepdim=True) + eps)


def xavier(linear):  # §1: Glorot-uniform weight, zero bias
    nn.init.xavier_uniform_(linear.weight)
    nn.init.zeros_(linear.bias)
    return linear


class EncoderImage(nn.Module):  # §2
    def __init__(self, img_dim, embed):
        super().__init__()
        self.fc = xavier(nn.Linear(img_dim, embed))

    def forward(self, images):
        return l2norm(self.fc(images), -1)


class EncoderText(nn.Module):  # §3.3
    def __init__(self, vocab, word_dim, embed, dropout):
        super().__init__()
        self.embed = nn.Embedding(vocab, word_dim)
        nn.init.uniform_(self.embed.weight, -0.1, 0.1)
        self.dropout = nn.Dropout(dropout)
        self.cap_rnn = nn.GRU(word_dim, embed, 1, batch_first=True, bidirectional=True)

    def forward(self, captions, lengths):
        packed = pack_padded_sequence(self.dropout(self.embed(captions)), lengths, batch_first=True,
                                      enforce_sorted=False)
        out, _ = self.cap_rnn(packed)
        out, _ = pad_packed_sequence(out, batch_first=True)
        half = out.size(2) // 2
        return l2norm((out[:, :, :half] + out[:, :, half:]) / 2, -1)  # directions averaged


class VisualSA(nn.Module):  # §4.1: BatchNorm1d(R) over region slots, BatchNorm1d(embed) over images
    def __init__(self, embed, dropout, regions):
        super().__init__()
        self.embedding_local = nn.Sequential(xavier(nn.Linear(embed, embed)), nn.BatchNorm1d(regions), nn.Tanh(),
                                             nn.Dropout(dropout))
        self.embedding_global = nn.Sequential(xavier(nn.Linear(embed, embed)), nn.BatchNorm1d(embed), nn.Tanh(),
                                              nn.Dropout(dropout))
        self.embedding_common = nn.Sequential(xavier(nn.Linear(embed, 1)))

    def forward(self, local, raw_global):
        l_emb = self.embedding_local(local)
        g_emb = self.embedding_global(raw_global).unsqueeze(1)
        weights = torch.softmax(self.embedding_common(l_emb * g_emb).squeeze(2), dim=1)
        return l2norm((weights.unsqueeze(2) * local).sum(dim=1), -1)  # weights the original regions


class TextSA(nn.Module):  # §4.2
    def __init__(self, embed, dropout):
        super().__init__()
        self.embedding_local = nn.Sequential(xavier(nn.Linear(embed, embed)), nn.Tanh(), nn.Dropout(dropout))
        self.embedding_global = nn.Sequential(xavier(nn.Linear(embed, embed)), nn.Tanh(), nn.Dropout(dropout))
        self.embedding_common = nn.Sequential(xavier(nn.Linear(embed, 1)))

    def forward(self, local, raw_global):
        l_emb = self.embedding_local(local)
        g_emb = self.embedding_global(raw_global).unsqueeze(1)
        weights = torch.softmax(self.embedding_common(l_emb * g_emb).squeeze(2), dim=1)
        return l2norm((weights.unsqueeze(2) * local).sum(dim=1), -1)


def text_to_image_attention(words, regions, smooth=9.0):  # §4.3; words [n, L, d], regions [n, R, d]
    scores = torch.bmm(regions, words.transpose(1, 2))        # s_{r,t}: [n, R, L]
    scores = nn.functional.leaky_relu(scores, 0.1)
    scores = l2norm(scores, 2)                                # per region, over the caption's words
    attn = torch.softmax(scores.transpose(1, 2) * smooth, 2)  # per word, over regions: [n, L, R]
    return l2norm(torch.bmm(attn, regions), -1)               # a_t: [n, L, d]


class GraphReasoning(nn.Module):  # §4.5: no residual, no 1/sqrt(d)
    def __init__(self, sim_dim):
        super().__init__()
        self.graph_query_w = xavier(nn.Linear(sim_dim, sim_dim))
        self.graph_key_w = xavier(nn.Linear(sim_dim, sim_dim))
        self.sim_graph_w = xavier(nn.Linear(sim_dim, sim_dim))

    def forward(self, nodes):
        edges = torch.softmax(torch.bmm(self.graph_query_w(nodes), self.graph_key_w(nodes).transpose(1, 2)), -1)
        return torch.relu(self.sim_graph_w(torch.bmm(edges, nodes)))


class AttentionFiltration(nn.Module):  # §4.6: BatchNorm1d(1) over this caption's images x nodes
    def __init__(self, sim_dim):
        super().__init__()
        self.attn_sim_w = xavier(nn.Linear(sim_dim, 1))
        self.bn = nn.BatchNorm1d(1)

    def forward(self, nodes):
        attn = l1norm(torch.sigmoid(self.bn(self.attn_sim_w(nodes).permute(0, 2, 1))), -1)
        return l2norm(torch.matmul(attn, nodes).squeeze(1), -1)


class EncoderSimilarity(nn.Module):  # §4, children in the official registration order (§4.9 names)
    def __init__(self, module_name, embed, sim_dim, regions, sgr_step, dropout):
        super().__init__()
        self.module_name = module_name
        self.v_global_w = VisualSA(embed, dropout, regions)
        self.t_global_w = TextSA(embed, dropout)
        self.sim_tranloc_w = xavier(nn.Linear(embed, sim_dim))
        self.sim_tranglo_w = xavier(nn.Linear(embed, sim_dim))
        self.sim_eval_w = xavier(nn.Linear(sim_dim, 1))
        if module_name == "SGR":
            self.SGR_module = nn.ModuleList([GraphReasoning(sim_dim) for _ in range(sgr_step)])
        else:
            self.SAF_module = AttentionFiltration(sim_dim)

    def forward(self, img_emb, cap_emb, cap_lens):  # §5.1: one column of scores per caption
        n_image = img_emb.size(0)
        img_glo = self.v_global_w(img_emb, img_emb.mean(1))
        columns = []
        for i in range(cap_emb.size(0)):
            cap_i = cap_emb[i, :cap_lens[i], :].unsqueeze(0)
            cap_i_expand = cap_i.repeat(n_image, 1, 1)
            cap_glo_i = self.t_global_w(cap_i, cap_i.mean(1))
            context = text_to_image_attention(cap_i_expand, img_emb)
            sim_loc = l2norm(self.sim_tranloc_w((context - cap_i_expand).pow(2)), -1)
            sim_glo = l2norm(self.sim_tranglo_w((img_glo - cap_glo_i).pow(2)), -1)
            nodes = torch.cat([sim_glo.unsqueeze(1), sim_loc], 1)  # global node first
            if self.module_name == "SGR":
                for step in self.SGR_module:
                    nodes = step(nodes)
                sim_vec = nodes[:, 0, :]
            else:
                sim_vec = self.SAF_module(nodes)
            columns.append(torch.sigmoid(self.sim_eval_w(sim_vec)))
        return torch.cat(columns, 1)  # [n_image, n_caption], rows = images


class Model(nn.Module):
    def __init__(self, module_name, dropout, d=DIMS):
        super().__init__()
        self.img_enc = EncoderImage(d["img_dim"], d["embed"])
        self.txt_enc = EncoderText(d["vocab"], d["word_dim"], d["embed"], dropout)
        self.sim_enc = EncoderSimilarity(module_name, d["embed"], d["sim_dim"], d["regions"], d["sgr_step"], dropout)

    def forward(self, images, captions, lengths):
        return self.sim_enc(self.img_enc(images), self.txt_enc(captions, lengths), lengths)


def randomise_batchnorms(model):
    """Non-trivial affine parameters and running statistics, so both modes test every BatchNorm term."""
    for m in model.modules():
        if isinstance(m, nn.BatchNorm1d):
            with torch.no_grad():
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.5, 0.5)
                m.running_mean.uniform_(-0.3, 0.3)
                m.running_var.uniform_(0.5, 1.5)
                m.num_batches_tracked.fill_(3)


def make_batch():
    d = DIMS
    images = torch.rand(len(LENGTHS), d["regions"], d["img_dim"], dtype=F64)  # non-negative, like pooled ReLU
    captions = torch.zeros(len(LENGTHS), max(LENGTHS), dtype=torch.int64)
    for i, n in enumerate(LENGTHS):
        captions[i, 0], captions[i, n - 1] = 1, 2  # <start> ... <end>
        captions[i, 1:n - 1] = torch.randint(4, d["vocab"], (n - 2,))
    return images, captions, torch.tensor(LENGTHS, dtype=torch.int64)


def save(folder, name, value):
    arr = value.detach().numpy() if isinstance(value, torch.Tensor) else np.asarray(value)
    np.save(os.path.join(folder, name + ".npy"), np.array(arr, order="C"), allow_pickle=False)  # keeps 0-d


def write_converted(model, module_name, path):
    """An official-layout .pth.tar of the model's current weights, converted by tools/convert_pth.py."""
    d = DIMS
    opt = argparse.Namespace(data_name="f30k_precomp", module_name=module_name, img_dim=d["img_dim"],
                             word_dim=d["word_dim"], embed_size=d["embed"], sim_dim=d["sim_dim"],
                             sgr_step=d["sgr_step"], bi_gru=True, no_imgnorm=False, no_txtnorm=False,
                             vocab_size=d["vocab"], margin=0.2, max_violation=True)
    as_float = lambda sd: {k: (v.float() if v.is_floating_point() else v) for k, v in sd.items()}
    checkpoint = {"epoch": 1, "model": [as_float(model.img_enc.state_dict()), as_float(model.txt_enc.state_dict()),
                                        as_float(model.sim_enc.state_dict())],
                  "best_rsum": 0.0, "opt": opt, "Eiters": 1}
    converter = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "convert_pth.py")
    with tempfile.TemporaryDirectory() as tmp:
        pth = os.path.join(tmp, f"{module_name}_model_best.pth.tar")
        torch.save(checkpoint, pth)
        subprocess.run([sys.executable, converter, pth, path], check=True, stdout=subprocess.DEVNULL)


def make_case(module_name, seed):
    torch.manual_seed(seed)
    model = Model(module_name, dropout=0.0).double()  # dropout off: train mode is deterministic
    randomise_batchnorms(model)
    images, captions, lengths = make_batch()
    folder = os.path.join(OUT, module_name.lower())
    os.makedirs(folder, exist_ok=True)
    save(folder, "images", images)
    save(folder, "captions", captions)
    save(folder, "lengths", lengths)
    for name, value in model.state_dict().items():
        save(folder, name, value)
    write_converted(model, module_name, os.path.join(OUT, module_name.lower() + "_converted.safetensors"))

    model.eval()
    with torch.no_grad():
        save(folder, "sims_eval", model(images, captions, lengths))

    model.train()
    sims = model(images, captions, lengths)
    r = torch.randn(sims.shape, dtype=F64)
    (sims * r).sum().backward()
    save(folder, "sims_train", sims)
    save(folder, "loss_weights", r)
    for name, p in model.named_parameters():
        save(folder, "grad." + name, p.grad)
    for name, b in model.named_buffers():
        save(folder, "after." + name, b)
    count = sum(p.numel() for p in model.parameters())
    print(f"{module_name}: {count} parameters, sims_train\n{sims.detach().numpy()}")


def full_size_counts():
    """§4.9 totals at full dims with the F30K vocabulary (SGR 18,109,175, SAF 17,517,306)."""
    full = dict(img_dim=2048, word_dim=300, embed=1024, sim_dim=256, vocab=8481, regions=36, sgr_step=3)
    for name in ("SGR", "SAF"):
        print(f"{name} at full dims, V = 8481: {sum(p.numel() for p in Model(name, 0.4, full).parameters())}")


def main():
    torch.set_num_threads(1)
    full_size_counts()
    make_case("SGR", seed=7)
    make_case("SAF", seed=8)


if __name__ == "__main__":
    main()
