"""NCR's two-net checkpoints in and out of the official format (docs/methods/ncr.md §6):

* tools/export_pth.py writes a `rematch train --method ncr` checkpoint as NCR's `co_train.py: main` saves one,
  {'epoch', 'model_A', 'model_B', 'best_rsum', 'opt'}, which loads the way NCR's `evaluation.py: evalrank` loads it
  (two models built from checkpoint['opt'], load_state_dict strict; the modules are tests/reference/
  sgraf_reference.py's, written from docs/backbones.md);
* convert_pth.py --model A and --model B give back nets A ("model.") and B ("model_B.") bit for bit, and
  `rematch eval --checkpoint A B` scores their average, as NCR reports; so does `rematch eval` of the run's own
  checkpoint, which holds both nets.
"""
import os

import pytest

from support import needs_torch, torch
from test_official_checkpoints import needs_program, rematch, tensors_of, tool

pytestmark = [needs_torch, needs_program]


@pytest.fixture(scope="module")
def ncr_run(tmp_path_factory):
    d = tmp_path_factory.mktemp("ncr")
    rematch("synth", "--kind", "pairs", "--out", d / "synth", "--images", 8, "--dev_images", 3, "--test_images", 4,
            "--regions", 36, "--feature_dim", 8, "--seed", 3)
    rematch("train", "--method", "ncr", "--data_path", d / "synth", "--data_name", "synth_precomp", "--run_dir",
            d / "run", "--batch_size", 4, "--warmup_epoch", 1, "--num_epochs", 1, "--noise_ratio", 0.4,
            "--embed_size", 8, "--word_dim", 4, "--sim_dim", 4, "--progress", "none", "--no_plots")
    return d


def official_ncr_load(path):
    """NCR's evalrank: checkpoint['opt'] builds SGRAF twice; model_A and model_B load strictly."""
    from sgraf_reference import EncoderImage, EncoderSimilarity, EncoderText
    checkpoint = torch.load(path, map_location="cpu")
    opt = checkpoint["opt"]
    for key in ("model_A", "model_B"):
        modules = (EncoderImage(opt.img_dim, opt.embed_size), EncoderText(opt.vocab_size, opt.word_dim,
                                                                          opt.embed_size, 0.0),
                   EncoderSimilarity(opt.module_name, opt.embed_size, opt.sim_dim, 36, opt.sgr_step, 0.4))
        state = checkpoint[key]
        assert isinstance(state, list) and len(state) == 3
        for module, sub in zip(modules, state):
            module.load_state_dict(sub, strict=True)
    return checkpoint


def test_ncr_exports_both_nets_and_converts_back_bit_for_bit(ncr_run):
    src = ncr_run / "run" / "checkpoint_latest.safetensors"
    out = ncr_run / "ncr_model_best.pth.tar"
    r = tool("export_pth.py", src, out, "--data_name", "synth_precomp")
    assert r.returncode == 0, r.stderr
    assert "NCR nets A and B" in r.stdout
    checkpoint = official_ncr_load(out)
    assert "model" not in checkpoint and checkpoint["epoch"] == 2
    opt = checkpoint["opt"]
    assert (opt.embed_size, opt.sim_dim, opt.soft_margin, opt.p_threshold, opt.data_name) == (
        8, 4, "exponential", 0.5, "synth_precomp")

    tensors = tensors_of(src)
    backs = []
    for which, prefix in (("A", "model."), ("B", "model_B.")):
        back = ncr_run / f"net_{which}.safetensors"
        r = tool("convert_pth.py", "--model", which, out, back)
        assert r.returncode == 0, r.stderr
        original = {name[len(prefix):]: t for name, t in tensors.items() if name.startswith(prefix)}
        assert original and tensors_of(back) == original  # names, dtypes, shapes and bytes
        backs.append(back)
    assert tensors_of(backs[0]) != tensors_of(backs[1])  # two nets, not one written twice

    flags = ["--data_path", ncr_run / "synth", "--data_name", "synth_precomp", "--split", "test"]
    converted = rematch("eval", "--checkpoint", *backs, *flags)
    assert "NCR (SGR models A and B averaged)" in converted.stdout
    # The run's own checkpoint holds both nets (metadata model_prefixes): rematch eval averages them too, to the
    # same numbers.
    own = rematch("eval", "--checkpoint", src, *flags)
    assert "nets A and B of" in own.stdout and "averaged (a two-net run: NCR, BiCro, CREAM)" in own.stdout
    table = lambda out: out[out.index("direction"):]
    assert table(own.stdout) == table(converted.stdout)
    r = rematch("eval", "--checkpoint", src, backs[0], *flags, check=False)
    assert r.returncode != 0 and "holds two nets A and B already" in r.stderr
