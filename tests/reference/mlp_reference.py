"""Writes the golden fixtures of tests/models/mlp_prototype_test.cpp into tests/fixtures/mlp/.

Run from the repository root:  /usr/bin/python3 tests/reference/mlp_reference.py
A PyTorch transcription of the UOT-RCL networks as docs/methods/uotrcl.md §4.2 describes them (MRL nets/ImageNet.py,
nets/TextNet.py and the prototype matrix C of main_noisy.py), in float64 at tiny sizes: image input 7,
text input 5, hidden 9, L = 6, K = 4 prototypes, 5 samples per modality.

The output is y / (||y|| + 1e-8) (MRL divides by the bare norm; rematch adds the guard, see
models/mlp_prototype.h). C is orthogonal(L x L)[:, :K] with unit columns, as MRL draws it.
Saved as .npy: the inputs, every parameter under its state-dict name (`state.<name>`), the weights of the
scalar loss sum(p_v * W1) + sum(p_t * W2) + sum(z_v * W3) + sum(z_t * W4) with p = softmax(z C / tau),
tau = 0.5, the embeddings z_v, z_t, the logits z C / tau and probabilities p for both modalities, and the
loss's gradient for every parameter (`grad.<name>`).
"""
import os

import numpy as np
import torch
import torch.nn as nn

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "mlp")
IMG_DIM, TXT_DIM, HIDDEN, L, K, N, TAU = 7, 5, 9, 6, 4, 5, 0.5


class ModalityNet(nn.Module):
    """MRL ImageNet / TextNet with a configurable hidden width: fc3(relu(fc2(relu(fc1(x))))) / (‖·‖ + 1e-8)."""

    def __init__(self, d_in, hidden=HIDDEN, out=L):
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, out)

    def forward(self, x):
        y = self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x)))))
        return y / (torch.norm(y, dim=1, keepdim=True) + 1e-8)


class Model(nn.Module):
    """Both modality nets and the K unit prototypes C [L, K] (docs/methods/uotrcl.md §4.2); also used by
    uotrcl_step_reference.py with its own sizes."""

    def __init__(self, img_dim=IMG_DIM, txt_dim=TXT_DIM, hidden=HIDDEN, out=L, classes=K):
        super().__init__()
        c = torch.nn.init.orthogonal_(torch.empty(out, out))[:, :classes]
        self.C = nn.Parameter(c / c.norm(dim=0, keepdim=True))
        self.img_net = ModalityNet(img_dim, hidden, out)
        self.txt_net = ModalityNet(txt_dim, hidden, out)


def save(name, value):
    np.save(os.path.join(OUT, name + ".npy"), np.ascontiguousarray(value), allow_pickle=False)


def main():
    torch.set_num_threads(1)
    torch.manual_seed(0)
    os.makedirs(OUT, exist_ok=True)
    model = Model().double()
    x_img = torch.randn(N, IMG_DIM, dtype=torch.float64)
    x_txt = torch.randn(N, TXT_DIM, dtype=torch.float64)
    w = [torch.randn(N, K, dtype=torch.float64), torch.randn(N, K, dtype=torch.float64),
         torch.randn(N, L, dtype=torch.float64), torch.randn(N, L, dtype=torch.float64)]

    z_img, z_txt = model.img_net(x_img), model.txt_net(x_txt)
    logits_img, logits_txt = z_img @ model.C / TAU, z_txt @ model.C / TAU
    p_img, p_txt = torch.softmax(logits_img, 1), torch.softmax(logits_txt, 1)
    loss = (p_img * w[0]).sum() + (p_txt * w[1]).sum() + (z_img * w[2]).sum() + (z_txt * w[3]).sum()
    loss.backward()

    save("x_img", x_img.numpy())
    save("x_txt", x_txt.numpy())
    for k, wk in enumerate(w):
        save("w%d" % (k + 1), wk.numpy())
    for name, p in model.named_parameters():
        save("state." + name, p.detach().numpy())
        save("grad." + name, p.grad.numpy())
    for name, t in (("z_img", z_img), ("z_txt", z_txt), ("logits_img", logits_img), ("logits_txt", logits_txt),
                    ("p_img", p_img), ("p_txt", p_txt)):
        save(name, t.detach().numpy())
    print("wrote", os.path.normpath(OUT))


if __name__ == "__main__":
    main()
