"""Writes the golden fixtures of tests/models/vse_model_test.cpp into tests/fixtures/vse/.

Run from the repository root:  /usr/bin/python3 tests/reference/vse_reference.py
A PyTorch transcription of RCSL's VSE model as docs/methods/rcsl.md §3.2 describes it (QinYang79/RCSL encoders.py:
EncoderImageAggr with its residual MLP and per-dimension attention pooling, EncoderText_gru with a Bi-GRU and
the same pooling; model.py: S = f(I) g(T)^T), in float64 at tiny sizes: 5 images with 4, 2, 3, 4 and 1
regions (padded to 4), 5 captions with 7, 3, 5, 7 and 4 tokens (padded to 7).

Saved as .npy: the inputs, the initial state dict (`state.<name>`, parameters and buffers), the loss weights
W of the scalar loss sum(S * W), and for a training-mode call (BatchNorm on batch statistics, the text
dropout off) followed by an eval-mode call (running statistics): the image and caption embeddings, S, the
gradient of the loss for every parameter (`<mode>.grad.<name>`; mlp.bns.1 is never used and gets none), and
after the training call the BatchNorm buffers (`train.state.<name>`).
"""
import os

import numpy as np
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "vse")
IMG_DIM, EMBED, VOCAB, WORD_DIM = 6, 8, 13, 5
REGIONS = [4, 2, 3, 4, 1]
CAPTION_LENGTHS = [7, 3, 5, 7, 4]


def l2norm(x, dim, eps=1e-8):
    return x / (x.pow(2).sum(dim=dim, keepdim=True).sqrt() + eps)


def attention_pool(features, logits, lengths):
    """Per-dimension softmax over the valid steps of each item, then the weighted sum of the features."""
    steps = features.size(1)
    valid = (torch.arange(steps).unsqueeze(0) < lengths.unsqueeze(1)).unsqueeze(-1)
    weights = torch.softmax(logits.masked_fill(~valid, -10000), dim=1).masked_fill(~valid, 0)
    return (weights * features).sum(1)


class ResidualMLP(nn.Module):
    """MLP(img_dim, E/2, E, 2): Linear -> BN -> ReLU -> Linear on the flattened region rows; bns[1] unused."""

    def __init__(self, d_in, hidden, d_out):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(d_in, hidden), nn.Linear(hidden, d_out)])
        self.bns = nn.ModuleList([nn.BatchNorm1d(hidden), nn.BatchNorm1d(d_out)])

    def forward(self, x):
        b, n, d = x.shape
        h = torch.relu(self.bns[0](self.layers[0](x.reshape(b * n, d))))
        return self.layers[1](h).view(b, n, -1)


class ImageEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(IMG_DIM, EMBED)
        self.mlp = ResidualMLP(IMG_DIM, EMBED // 2, EMBED)
        self.linear1 = nn.Linear(EMBED, EMBED)
        for m in (self.fc, self.linear1):  # Xavier on the direct Linear children, zero bias
            r = np.sqrt(6.0) / np.sqrt(m.in_features + m.out_features)
            m.weight.data.uniform_(-r, r)
            m.bias.data.fill_(0)

    def forward(self, images, lengths):
        h = self.fc(images) + self.mlp(images)
        return l2norm(attention_pool(h, self.linear1(h), lengths), -1)


class TextEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, WORD_DIM)
        self.rnn = nn.GRU(WORD_DIM, EMBED, 1, batch_first=True, bidirectional=True)
        self.linear1 = nn.Linear(EMBED, EMBED)
        self.embed.weight.data.uniform_(-0.1, 0.1)

    def forward(self, ids, lengths):
        lengths = lengths.clamp(min=1)
        packed = pack_padded_sequence(self.embed(ids), lengths, batch_first=True, enforce_sorted=False)
        out, _ = pad_packed_sequence(self.rnn(packed)[0], batch_first=True)
        u = (out[:, :, :EMBED] + out[:, :, EMBED:]) / 2
        return l2norm(attention_pool(u, self.linear1(u), lengths), -1)


class VSE(nn.Module):
    def __init__(self):
        super().__init__()
        self.img_enc = ImageEncoder()
        self.txt_enc = TextEncoder()


def save(name, value):
    value = np.asarray(value)  # keeps 0-d buffers (num_batches_tracked) 0-d
    np.save(os.path.join(OUT, name + ".npy"), np.ascontiguousarray(value).reshape(value.shape), allow_pickle=False)


def main():
    torch.set_num_threads(1)
    torch.manual_seed(0)
    os.makedirs(OUT, exist_ok=True)
    model = VSE().double()
    with torch.no_grad():  # non-trivial BatchNorm affine parameters
        for bn in model.img_enc.mlp.bns:
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.uniform_(-0.5, 0.5)

    images = torch.zeros(len(REGIONS), max(REGIONS), IMG_DIM, dtype=torch.float64)
    for i, n in enumerate(REGIONS):
        images[i, :n] = torch.randn(n, IMG_DIM, dtype=torch.float64)
    image_lengths = torch.tensor(REGIONS, dtype=torch.int64)
    captions = torch.zeros(len(CAPTION_LENGTHS), max(CAPTION_LENGTHS), dtype=torch.int64)
    for i, n in enumerate(CAPTION_LENGTHS):
        captions[i, :n] = torch.randint(1, VOCAB, (n,))
    caption_lengths = torch.tensor(CAPTION_LENGTHS, dtype=torch.int64)
    weights = torch.randn(len(REGIONS), len(CAPTION_LENGTHS), dtype=torch.float64)

    save("images", images.numpy())
    save("image_lengths", image_lengths.numpy())
    save("captions", captions.numpy())
    save("caption_lengths", caption_lengths.numpy())
    save("weights", weights.numpy())
    for name, value in model.state_dict().items():
        save("state." + name, value.numpy())

    for mode in ("train", "eval"):
        model.train(mode == "train")
        model.zero_grad(set_to_none=True)
        img = model.img_enc(images, image_lengths)
        cap = model.txt_enc(captions, caption_lengths)
        sims = img @ cap.t()
        (sims * weights).sum().backward()
        save(mode + ".img_emb", img.detach().numpy())
        save(mode + ".cap_emb", cap.detach().numpy())
        save(mode + ".sims", sims.detach().numpy())
        for name, p in model.named_parameters():
            if p.grad is not None:
                save(mode + ".grad." + name, p.grad.numpy())
        if mode == "train":
            for name, b in model.named_buffers():
                save("train.state." + name, b.numpy())
    print("wrote", os.path.normpath(OUT))


if __name__ == "__main__":
    main()
