"""rematch.eval: recall equals `rematch eval --json` on the same matrix; mAP equals a NumPy transcription of
MRL's fx_calc_map_label."""
import json
import os
import shutil
import subprocess

import numpy as np
import pytest

import rematch
from support import needs_torch, torch

KEYS = ["i2t_r1", "i2t_r5", "i2t_r10", "t2i_r1", "t2i_r5", "t2i_r10", "rsum", "i2t_medr", "i2t_meanr",
        "t2i_medr", "t2i_meanr"]


def rematch_program():
    """The `rematch` program ctest hands over in REMATCH_CLI, or one on PATH."""
    return os.environ.get("REMATCH_CLI") or shutil.which("rematch")


def planted_sims(rng, n_img, per_image, dtype=np.float32):
    """Scores with each image's own captions raised, and ties (rounding), so the ranks are not trivial."""
    sims = rng.random((n_img, n_img * per_image))
    for i in range(n_img):
        sims[i, i * per_image:(i + 1) * per_image] += rng.random(per_image) * 0.8
    return np.round(sims, 2).astype(dtype)


@pytest.mark.skipif(not rematch_program(), reason="needs the rematch program (REMATCH_CLI, set by ctest)")
@pytest.mark.parametrize("per_image,dtype", [(5, np.float32), (1, np.float64)])
def test_recall_equals_rematch_eval_json(tmp_path, per_image, dtype):
    sims = planted_sims(np.random.default_rng(per_image), 40, per_image, dtype)
    path = tmp_path / "sims.npy"
    np.save(path, sims)
    out = subprocess.run([rematch_program(), "eval", "--sims", str(path), "--json", "--captions_per_image",
                          str(per_image)], check=True, capture_output=True, text=True).stdout
    expected = json.loads(out)
    got = rematch.eval.recall(sims, captions_per_image=per_image)
    assert list(got) == KEYS == list(expected)
    assert got == expected


def test_recall_of_a_perfect_matrix():
    sims = np.kron(np.eye(4), np.ones((1, 5))) + 0.01 * np.arange(20)[None, :] / 20
    got = rematch.eval.recall(sims)
    assert got["rsum"] == 600 and got["i2t_medr"] == 1 and got["t2i_meanr"] == 1


@needs_torch
def test_recall_of_a_torch_tensor_equals_numpys():
    sims = planted_sims(np.random.default_rng(3), 20, 5)
    assert rematch.eval.recall(torch.from_numpy(sims)) == rematch.eval.recall(sims)


def map_reference(query, gallery, query_labels, gallery_labels):
    """MRL's fx_calc_map_label(k=0, 'cosine'): stable argsort of the cosine distances, AP over the whole list."""
    q = query / np.linalg.norm(query, axis=1, keepdims=True)
    g = gallery / np.linalg.norm(gallery, axis=1, keepdims=True)
    order = np.argsort(1 - q @ g.T, axis=1, kind="stable")
    aps = []
    for i in range(len(q)):
        relevant = gallery_labels[order[i]] == query_labels[i]
        hits = np.cumsum(relevant)
        precision = hits / np.arange(1, len(relevant) + 1)
        aps.append((precision * relevant).sum() / relevant.sum() if relevant.any() else 0.0)
    return float(np.mean(aps))


def test_mean_average_precision_matches_the_reference():
    rng = np.random.default_rng(4)
    centres = rng.normal(size=(6, 16))
    query_labels, gallery_labels = rng.integers(0, 6, 50), rng.integers(0, 6, 80)
    query = centres[query_labels] + rng.normal(size=(50, 16))
    gallery = centres[gallery_labels] + rng.normal(size=(80, 16))
    got = rematch.eval.mean_average_precision(query, gallery, query_labels, gallery_labels)
    assert 0.3 < got < 1
    assert got == pytest.approx(map_reference(query, gallery, query_labels, gallery_labels), rel=1e-12)
    assert rematch.eval.mean_average_precision(query.astype(np.float32), gallery.astype(np.float32),
                                               query_labels.astype(np.int32), gallery_labels) == \
        pytest.approx(got, rel=1e-5)
