"""Checkpoints in and out of the official SGRAF/NCR format, with Debian's PyTorch:

* tools/export_pth.py turns `rematch init-checkpoint` output into a .pth.tar that loads the way the official
  evaluation loads it: torch.load, the three encoders built from checkpoint['opt'] alone (36 regions
  hard-coded, as SGRAF's VisualSA does), load_state_dict strict. The modules are tests/reference/
  sgraf_reference.py's, written from docs/backbones.md (no official code is copied).
* convert_pth.py(export_pth.py(x)) holds x's tensors bit for bit, and `rematch score` gives the same bytes.
* convert_pth.py refuses, before writing, what rematch would refuse at load time, one line per problem and
  exit status 2, never a traceback; it drops DataParallel's "module." prefix and creates the output folder.
"""
import os
import struct
import subprocess
import sys

import numpy as np
import pytest

from support import needs_torch, torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
PYTHON = sys.executable
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, os.path.join(ROOT, "tests", "reference"))

needs_program = pytest.mark.skipif(not os.environ.get("REMATCH_CLI"),
                                   reason="needs the rematch program (REMATCH_CLI, set by ctest)")
pytestmark = [needs_torch, needs_program]


def rematch(*args, check=True):
    r = subprocess.run([os.environ["REMATCH_CLI"], *map(str, args)], capture_output=True, text=True)
    if check:
        assert r.returncode == 0, r.stderr
    return r


def tool(name, *args):
    return subprocess.run([PYTHON, os.path.join(ROOT, "tools", name), *map(str, args)], capture_output=True,
                          text=True)


def tensors_of(path):
    """name -> (dtype string, shape, raw bytes) of a safetensors file."""
    data = open(path, "rb").read()
    n = struct.unpack("<Q", data[:8])[0]
    import json
    header = json.loads(data[8:8 + n])
    header.pop("__metadata__", None)
    return {name: (i["dtype"], i["shape"], data[8 + n + i["data_offsets"][0]:8 + n + i["data_offsets"][1]])
            for name, i in header.items()}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A synthetic precomp data set with 36 regions (the official count) and an SGR and a SAF checkpoint."""
    d = tmp_path_factory.mktemp("official")
    rematch("synth", "--kind", "pairs", "--out", d / "synth", "--images", 6, "--dev_images", 3, "--test_images", 4,
            "--regions", 36, "--feature_dim", 8, "--seed", 2)
    for module, seed in (("SGR", 1), ("SAF", 2)):
        rematch("init-checkpoint", "--module_name", module, "--vocab_path", d / "synth" / "vocab", "--data_name",
                "synth_precomp", "--img_dim", 8, "--num_regions", 36, "--word_dim", 4, "--embed_size", 8,
                "--sim_dim", 4, "--seed", seed, "--out", d / f"{module}.safetensors")
    return d


def data_flags(world):
    return ["--data_path", world / "synth", "--data_name", "synth_precomp"]


def official_style_load(path):
    """What the official evaluation does with a checkpoint: the model built from opt alone, weights strict."""
    from sgraf_reference import EncoderImage, EncoderSimilarity, EncoderText
    checkpoint = torch.load(path, map_location="cpu")
    opt = checkpoint["opt"]
    img_enc = EncoderImage(opt.img_dim, opt.embed_size)
    txt_enc = EncoderText(opt.vocab_size, opt.word_dim, opt.embed_size, 0.0)
    sim_enc = EncoderSimilarity(opt.module_name, opt.embed_size, opt.sim_dim, 36, opt.sgr_step, 0.4)
    state = checkpoint["model"]
    assert isinstance(state, list) and len(state) == 3
    for module, sub in zip((img_enc, txt_enc, sim_enc), state):
        module.load_state_dict(sub, strict=True)  # raises on a missing, unexpected or wrongly shaped tensor
    return checkpoint, (img_enc, txt_enc, sim_enc)


@pytest.mark.parametrize("module", ["SGR", "SAF"])
def test_export_loads_officially_and_converts_back_bit_for_bit(world, module):
    src = world / f"{module}.safetensors"
    out = world / "exported" / f"{module}_model_best.pth.tar"  # the folder does not exist yet
    r = tool("export_pth.py", src, out, "--data_name", "synth_precomp")
    assert r.returncode == 0, r.stderr
    assert f"export_pth: wrote {out}: {module} model" in r.stdout
    checkpoint, (img_enc, txt_enc, sim_enc) = official_style_load(out)
    opt = checkpoint["opt"]
    assert (opt.module_name, opt.embed_size, opt.img_dim, opt.word_dim, opt.sim_dim) == (module, 8, 8, 4, 4)
    assert opt.bi_gru is True and opt.no_imgnorm is False and opt.no_txtnorm is False
    assert opt.data_name == "synth_precomp" and opt.margin == 0.2 and opt.max_violation is True
    assert (checkpoint["epoch"], checkpoint["Eiters"], checkpoint["best_rsum"]) == (0, 0, 0.0)
    assert txt_enc.cap_rnn.bidirectional and sim_enc.v_global_w.embedding_local[1].num_features == 36

    back = world / f"{module}_back.safetensors"
    r = tool("convert_pth.py", out, back)
    assert r.returncode == 0, r.stderr
    original = {name[len("model."):]: t for name, t in tensors_of(src).items() if name.startswith("model.")}
    assert tensors_of(back) == original  # names, dtypes, shapes and bytes

    for path, npy in ((src, "S_src.npy"), (back, "S_back.npy")):
        rematch("score", "--checkpoint", path, "--out", world / npy, *data_flags(world))
    assert open(world / "S_src.npy", "rb").read() == open(world / "S_back.npy", "rb").read()


def test_export_of_a_run_counts_its_completed_epochs(world):
    # Two epochs of a tiny triplet run: its latest checkpoint closes epoch 2 (0-based 1, done), which the official
    # code saves as 'epoch': 2.
    run = world / "run"
    rematch("train", "--method", "triplet", *data_flags(world), "--run_dir", run, "--batch_size", 3, "--num_epochs",
            2, "--embed_size", 8, "--word_dim", 4, "--sim_dim", 4, "--progress", "none", "--no_plots")
    out = world / "run.pth.tar"
    r = tool("export_pth.py", run / "checkpoint_latest.safetensors", out)
    assert r.returncode == 0, r.stderr
    checkpoint, _ = official_style_load(out)
    assert checkpoint["epoch"] == 2 and checkpoint["Eiters"] > 0


def test_export_refuses_what_the_official_code_cannot_load(world):
    rematch("init-checkpoint", "--module_name", "SGR", "--vocab_size", 11, "--img_dim", 8, "--num_regions", 3,
            "--word_dim", 4, "--embed_size", 8, "--sim_dim", 4, "--out", world / "R3.safetensors")
    r = tool("export_pth.py", world / "R3.safetensors", world / "R3.pth.tar")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "is a model of 3 regions per image; the official code hard-codes 36 (VisualSA)" in r.stderr
    assert not (world / "R3.pth.tar").exists()
    r = tool("export_pth.py", world / "exported" / "SGR_model_best.pth.tar", world / "x.pth.tar")
    assert r.returncode == 2 and "is already a PyTorch checkpoint" in r.stderr


def official_checkpoint(world, path, edit=None, module="SGR"):
    """An official-format checkpoint of the SGR or SAF model (via export_pth.py), edited by `edit`."""
    exported = world / f"{module}_for_edit.pth.tar"
    assert tool("export_pth.py", world / f"{module}.safetensors", exported).returncode == 0
    checkpoint = torch.load(exported, map_location="cpu")
    if edit:
        edit(checkpoint)
    torch.save(checkpoint, path)
    return path


def test_convert_checks_what_rematch_would_refuse(world):
    def bi_gru_false(c):
        c["opt"].bi_gru = False

    def wrong_module(c):
        c["opt"].module_name = "SAF"

    def missing_and_extra(c):
        del c["model"][0]["fc.bias"]
        c["model"][2]["stray.weight"] = torch.zeros(2)

    cases = [
        (bi_gru_false, ["the options say bi_gru=False, which rematch does not implement (only bi_gru=True)"]),
        (wrong_module, ["the options say module_name='SAF' but the tensors hold an SGR model"]),
        (missing_and_extra, ["the tensor img_enc.fc.bias [8] is missing",
                             "the tensor sim_enc.stray.weight [2] is not part of an SGR model"]),
    ]
    for edit, problems in cases:
        src = official_checkpoint(world, world / f"{edit.__name__}.pth.tar", edit)
        out = world / f"{edit.__name__}.safetensors"
        r = tool("convert_pth.py", src, out)
        assert r.returncode == 2, (edit.__name__, r.stderr)
        assert "Traceback" not in r.stderr
        for problem in problems:
            assert f"convert_pth: error: '{src}': {problem}" in r.stderr, r.stderr
        assert "nothing written: rematch would refuse this model" in r.stderr
        assert not out.exists()


def test_convert_strips_data_parallel_prefix(world):
    def data_parallel(c):
        c["model"] = [type(s)(("module." + k, v) for k, v in s.items()) for s in c["model"]]

    src = official_checkpoint(world, world / "dp.pth.tar", data_parallel)
    r = tool("convert_pth.py", src, world / "dp.safetensors")
    assert r.returncode == 0, r.stderr
    assert "img_enc: dropped DataParallel's 'module.' prefix from 2 names" in r.stderr
    rematch("score", "--checkpoint", world / "dp.safetensors", "--out", world / "S_dp.npy", *data_flags(world))
    rematch("score", "--checkpoint", world / "SGR.safetensors", "--out", world / "S_sgr.npy", *data_flags(world))
    assert open(world / "S_dp.npy", "rb").read() == open(world / "S_sgr.npy", "rb").read()


def test_convert_user_errors_are_one_line_and_status_2(world):
    src = official_checkpoint(world, world / "plain.pth.tar")
    (world / "a_file").write_text("x")
    r = tool("convert_pth.py", src, world / "a_file" / "sub" / "out.safetensors")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert f"convert_pth: error: cannot create the output folder '{world / 'a_file' / 'sub'}'" in r.stderr
    r = tool("convert_pth.py", world / "nope.pth.tar", world / "out.safetensors")
    assert (r.returncode, r.stderr) == (2, f"convert_pth: error: there is no file '{world / 'nope.pth.tar'}'\n")
    r = tool("convert_pth.py", world / "SGR.safetensors", world / "out.safetensors")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "with torch.load (is it a PyTorch checkpoint?)" in r.stderr
    r = tool("convert_pth.py", src, world / "new" / "folder" / "ok.safetensors")
    assert r.returncode == 0 and (world / "new" / "folder" / "ok.safetensors").exists()
