"""Writes the golden fixtures of tests/nn/gru_test.cpp into tests/fixtures/gru/<case>/ with torch.nn.GRU.

Run from the repository root:  /usr/bin/python3 tests/reference/gru_reference.py
Each case runs torch.nn.GRU(batch_first=True) in float64 on a packed batch (pack_padded_sequence with
enforce_sorted=False, lengths mixed, including 1 and the full length) and saves, as .npy: the padded input x,
lengths (int64), every parameter under its state-dict name, the padded output (pad_packed_sequence), h_n, the
weights r1 and r2 of the scalar loss (output * r1).sum() + (h_n * r2).sum(), and that loss's gradient with
respect to x (grad_x) and to every parameter (grad_<name>).
"""
import os

import numpy as np
import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "gru")

# name: (batch, steps, input size, hidden size, bidirectional, lengths)
CASES = {
    "uni": (5, 6, 4, 3, False, [6, 1, 4, 6, 2]),
    "bi": (5, 6, 4, 3, True, [3, 6, 1, 5, 6]),
    "bi_wide": (6, 9, 20, 24, True, [9, 1, 5, 9, 7, 2]),
}


def save(folder, name, value):
    np.save(os.path.join(folder, name + ".npy"), np.ascontiguousarray(value), allow_pickle=False)


def make_case(name, batch, steps, input_size, hidden, bidirectional, lengths, seed):
    torch.manual_seed(seed)
    gru = torch.nn.GRU(input_size, hidden, batch_first=True, bidirectional=bidirectional).double()
    x = torch.randn(batch, steps, input_size, dtype=torch.float64, requires_grad=True)
    lens = torch.tensor(lengths, dtype=torch.int64)
    packed = pack_padded_sequence(x, lens, batch_first=True, enforce_sorted=False)
    out_packed, h_n = gru(packed)
    output, _ = pad_packed_sequence(out_packed, batch_first=True, total_length=steps)
    r1 = torch.randn(output.shape, dtype=torch.float64)
    r2 = torch.randn(h_n.shape, dtype=torch.float64)
    loss = (output * r1).sum() + (h_n * r2).sum()
    loss.backward()

    folder = os.path.join(OUT, name)
    os.makedirs(folder, exist_ok=True)
    save(folder, "x", x.detach().numpy())
    save(folder, "lengths", lens.numpy())
    for pname, p in gru.named_parameters():
        save(folder, pname, p.detach().numpy())
        save(folder, "grad_" + pname, p.grad.numpy())
    save(folder, "output", output.detach().numpy())
    save(folder, "h_n", h_n.detach().numpy())
    save(folder, "r1", r1.numpy())
    save(folder, "r2", r2.numpy())
    save(folder, "grad_x", x.grad.numpy())


def main():
    torch.set_num_threads(1)
    for seed, (name, spec) in enumerate(CASES.items()):
        make_case(name, *spec, seed=seed)
        print("wrote", os.path.normpath(os.path.join(OUT, name)))


if __name__ == "__main__":
    main()
