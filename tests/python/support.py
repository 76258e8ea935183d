"""Shared by the tests of the Python module: random problems, the optional PyTorch and CUDA, the fixtures."""
import os

import numpy as np
import pytest

try:
    import torch
except ImportError:  # the NumPy tests still run; the PyTorch ones skip
    torch = None

import rematch

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures")

needs_torch = pytest.mark.skipif(torch is None, reason="needs PyTorch (apt-get install python3-torch)")


def cuda_unavailable_reason():
    """Why the CUDA cases cannot run here, or '' when they can."""
    if torch is None:
        return "needs PyTorch (apt-get install python3-torch)"
    if not torch.cuda.is_available():
        return "needs a CUDA device (torch.cuda.is_available() is False)"
    try:
        rematch._core.cuda_stream(0)
    except ValueError as e:
        return f"needs a CUDA build of rematch: {e}"
    return ""


needs_cuda = pytest.mark.skipif(bool(cuda_unavailable_reason()), reason=cuda_unavailable_reason() or "-")


def weights(rng, n, total=1.0):
    w = rng.random(n) + 0.3
    return w / w.sum() * total


def point_cost(rng, n, m):
    """Squared distances between random points in the plane, scaled to max 1 (POT's usual test problem)."""
    x, y = rng.random((n, 2)), rng.random((m, 2)) + 0.25
    c = ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1)
    return c / c.max()


def random_mask(rng, n, m, keep=0.7):
    """A mask that leaves every row and column something, with the leading diagonal forbidden."""
    mask = rng.random((n, m)) < keep
    k = min(n, m)
    mask[np.arange(k), np.arange(k)] = False
    mask[np.arange(k), (np.arange(k) + 1) % m] = True
    mask[(np.arange(m) + 1) % n, np.arange(m)] = True
    return mask


def fixture(case, name):
    return np.load(os.path.join(FIXTURES, "ot", case, name + ".npy"))
