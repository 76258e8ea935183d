"""bench/run_score.sh and its baseline bench/baselines/sgraf_score.py, at a tiny size on the CPU:

* the baseline (the official encode_data + shard_attn_scores on the .pth that tools/export_pth.py makes from a
  rematch checkpoint) gives `rematch score`'s matrix to the runner's float32 tolerance, for SGR and SAF, and a
  checkpoint of another seed does not: so the GPU timing compares the same function;
* the runner works end to end with DEVICE=cpu (its table and JSON checks), and with DEVICE=cuda either skips
  with its reason (no usable device) or runs and agrees.
Needs the rematch program (REMATCH_CLI, set by ctest) and PyTorch; nothing else of the build.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
BASELINE = os.path.join(ROOT, "bench", "baselines", "sgraf_score.py")
RUNNER = os.path.join(ROOT, "bench", "run_score.sh")
TOLERANCE = 1e-3  # bench/run_score.sh: max |difference| <= 1e-3 of the score range (agreement_digits >= 3)
TINY = dict(images=20, img_dim=16, word_dim=8, embed=16, sim_dim=8, vocab=200)

try:
    import torch  # noqa: F401
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False
pytestmark = [
    pytest.mark.skipif(not os.environ.get("REMATCH_CLI"),
                       reason="needs the rematch program (REMATCH_CLI, set by ctest)"),
    pytest.mark.skipif(not HAVE_TORCH, reason="needs PyTorch (apt-get install python3-torch)"),
]


def run(*args, env=None):
    r = subprocess.run([str(a) for a in args], capture_output=True, text=True, env=env)
    assert r.returncode == 0, f"{args[:3]}: {r.stderr}"
    return r


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("score_bench")
    run(sys.executable, BASELINE, "make-data", "--out", d, "--images", TINY["images"], "--img_dim", TINY["img_dim"],
        "--vocab", TINY["vocab"])
    return d


def checkpoint(d, module, seed):
    """A randomly initialised rematch checkpoint and its official-format export; (safetensors, pth)."""
    ours, theirs = d / f"{module}_{seed}.safetensors", d / f"{module}_{seed}.pth.tar"
    run(os.environ["REMATCH_CLI"], "init-checkpoint", "--module_name", module, "--vocab_path", d / "vocab",
        "--data_name", "bench_precomp", "--img_dim", TINY["img_dim"], "--num_regions", 36, "--word_dim",
        TINY["word_dim"], "--embed_size", TINY["embed"], "--sim_dim", TINY["sim_dim"], "--seed", seed, "--out", ours)
    run(sys.executable, os.path.join(ROOT, "tools", "export_pth.py"), ours, theirs, "--data_name", "bench_precomp",
        "--data_path", d, "--vocab_path", d / "vocab")
    return ours, theirs


def official(d, pth, name):
    r = run(sys.executable, BASELINE, "run", "--checkpoint", pth, "--device", "cpu", "--threads", 2, "--out",
            d / name)
    return np.load(d / name), json.loads(r.stdout)


@pytest.mark.parametrize("module", ["SGR", "SAF"])
def test_baseline_computes_what_rematch_score_computes(data, module):
    ours_ckpt, theirs_ckpt = checkpoint(data, module, 1)
    run(os.environ["REMATCH_CLI"], "score", "--checkpoint", ours_ckpt, "--data_path", data, "--data_name",
        "bench_precomp", "--out", data / f"rematch_{module}.npy")
    ours = np.load(data / f"rematch_{module}.npy").astype(np.float64)
    theirs, report = official(data, theirs_ckpt, f"official_{module}.npy")

    n = TINY["images"]
    assert ours.shape == theirs.shape == (n, 5 * n)
    assert (report["images"], report["captions"], report["module"]) == (n, 5 * n, module)
    assert report["encode_s"] > 0 and report["score_s"] > 0
    spread = theirs.max() - theirs.min()
    assert spread > 1e-3, "the scores hardly vary, so the comparison would say little"
    assert np.abs(ours - theirs).max() <= TOLERANCE * spread

    # Another model's matrix is far outside the tolerance: the comparison can fail.
    _, other_ckpt = checkpoint(data, module, 2)
    other, _ = official(data, other_ckpt, f"other_{module}.npy")
    assert np.abs(ours - other).max() > 10 * TOLERANCE * spread


def runner(tmp_path, device):
    env = dict(os.environ, DEVICE=device, SIZE=",".join(str(v) for v in TINY.values()),
               BUILD=os.path.dirname(os.path.abspath(os.environ["REMATCH_CLI"])), CACHE=str(tmp_path / "cache"),
               JSON=str(tmp_path / "score.json"), PYTHON=sys.executable, THREADS="2")
    return subprocess.run(["bash", RUNNER], capture_output=True, text=True, env=env)


def test_runner_on_the_cpu(tmp_path):
    r = runner(tmp_path, "cpu")
    assert r.returncode == 0, r.stderr
    assert "| official | encode + shard_attn_scores |" in r.stdout
    report = json.load(open(tmp_path / "score.json"))
    checks = {c["case"]: c for c in report["checks"]}
    assert set(checks) == {"official_over_rematch", "agreement_digits"}  # the 10 s target is for full size on a GPU
    assert checks["agreement_digits"]["verdict"] == "met" and checks["agreement_digits"]["target"] == 3
    assert report["agreement"]["relative"] <= TOLERANCE
    assert report["context"]["images"] == TINY["images"] and report["context"]["captions"] == 5 * TINY["images"]
    assert report["rematch"]["wall_median_s"] > 0 and report["official"]["total_s"] > 0
    # The data set was made once and is reused.
    assert "making the data set" in r.stderr
    again = runner(tmp_path, "cpu")
    assert again.returncode == 0 and "making the data set" not in again.stderr


def test_runner_with_cuda_skips_or_agrees(tmp_path):
    r = runner(tmp_path, "cuda")
    assert r.returncode == 0, r.stderr
    if "CUDA benchmarks skipped" in r.stdout:
        assert "--device cuda" in r.stdout  # rematch's reason
        assert not (tmp_path / "cache").exists() and not (tmp_path / "score.json").exists()
    else:
        checks = {c["case"]: c for c in json.load(open(tmp_path / "score.json"))["checks"]}
        assert checks["agreement_digits"]["verdict"] == "met"
