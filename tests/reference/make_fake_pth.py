"""Writes tiny fake SGRAF- and NCR-style checkpoints (.pth.tar, saved by torch as the official code saves them)
for testing tools/convert_pth.py. tests/nn/checkpoint_test.cpp runs this and the converter when
/usr/bin/python3 has torch; the converted files are committed so the test also runs without Python:

  /usr/bin/python3 tests/reference/make_fake_pth.py /tmp/fake_pth
  /usr/bin/python3 tools/convert_pth.py --no_checks /tmp/fake_pth/fake_sgraf.pth.tar tests/fixtures/checkpoint/fake_sgraf.safetensors
  /usr/bin/python3 tools/convert_pth.py --no_checks /tmp/fake_pth/fake_ncr.pth.tar tests/fixtures/checkpoint/fake_ncr_B.safetensors --model B

(--no_checks: these are a few real tensor names at toy sizes, not whole SGR models, which the converter
would otherwise refuse as rematch would.)

Tensor k of a model (counting through img_enc, txt_enc, sim_enc in order) holds
((arange(numel) % 7) - 3) * 0.25 + k + offset as float32 (offset 0, and 100 for NCR's model_B), so the
test can recompute every value exactly.
"""
import argparse
import os
import sys
from collections import OrderedDict

import torch

# (sub-model, [(name, shape)]) with the real SGRAF parameter names, at toy sizes.
LAYOUT = [
    ("img_enc", [("fc.weight", (8, 6)), ("fc.bias", (8,))]),
    ("txt_enc", [("embed.weight", (10, 4)), ("cap_rnn.weight_ih_l0", (24, 4)), ("cap_rnn.weight_hh_l0", (24, 8)),
                 ("cap_rnn.bias_ih_l0", (24,)), ("cap_rnn.bias_hh_l0", (24,)),
                 ("cap_rnn.weight_ih_l0_reverse", (24, 4))]),
    ("sim_enc", [("SGR_module.0.graph_query_w.weight", (6, 6)), ("SGR_module.0.graph_query_w.bias", (6,)),
                 ("sim_eval_w.weight", (1, 6)), ("sim_eval_w.bias", (1,))]),
]


def model(offset):
    k, dicts = 0, []
    for _, params in LAYOUT:
        state = OrderedDict()
        for name, shape in params:
            numel = 1
            for d in shape:
                numel *= d
            state[name] = (((torch.arange(numel) % 7) - 3) * 0.25 + k + offset).to(torch.float32).reshape(shape)
            k += 1
        dicts.append(state)
    return dicts


def options():
    return argparse.Namespace(data_name="f30k_precomp", embed_size=8, learning_rate=0.0002, lr_update=10,
                              margin=0.2, module_name="SGR", num_epochs=20, sgr_step=3, bi_gru=True)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    torch.save({"epoch": 7, "model": model(0), "best_rsum": 512.25, "opt": options(), "Eiters": 1234},
               os.path.join(out, "fake_sgraf.pth.tar"))
    torch.save({"epoch": 3, "model_A": model(0), "model_B": model(100), "best_rsum": 400.5, "opt": options()},
               os.path.join(out, "fake_ncr.pth.tar"))
    print("wrote fake_sgraf.pth.tar and fake_ncr.pth.tar to", out)


if __name__ == "__main__":
    main()
