"""Arrays cross into rematch and back without a copy (checked by pointer), and solving releases the GIL."""
import threading
import time

import numpy as np
import pytest

import rematch
from rematch import _arrays, _core
from support import needs_torch, point_cost, torch


def test_a_numpy_array_is_read_in_place_and_handed_back_over_the_same_memory():
    x = np.arange(12.0).reshape(3, 4)
    buffer = _core.share(x.__dlpack__())  # the import and export every rematch function goes through
    assert buffer.data_ptr == x.ctypes.data
    y = np.asarray(buffer)  # how rematch hands NumPy its results: writable, unlike NumPy 1.x's from_dlpack
    assert y.ctypes.data == x.ctypes.data and y.shape == (3, 4) and y.dtype == x.dtype
    y[1, 2] = -1  # the same memory, so the original sees the write
    assert x[1, 2] == -1
    assert np.from_dlpack(buffer).ctypes.data == x.ctypes.data  # DLPack consumers get the same memory too


def test_a_strided_view_keeps_its_strides():
    x = np.arange(24.0).reshape(4, 6)[:, 1::2]
    y = np.asarray(_core.share(x.__dlpack__()))
    assert y.ctypes.data == x.ctypes.data and y.strides == x.strides
    np.testing.assert_array_equal(y, x)


def test_a_bool_mask_is_shared_as_its_bytes():
    mask = np.eye(4, dtype=bool)
    assert _core.share(_arrays.capsule(mask, "mask", bool_ok=True)).data_ptr == mask.ctypes.data


@needs_torch
def test_a_torch_tensor_is_read_in_place_and_handed_back_over_the_same_memory():
    x = torch.arange(12.0, dtype=torch.float32).reshape(3, 4).requires_grad_()
    buffer = _core.share(_arrays.capsule(x, "x"))
    assert buffer.data_ptr == x.data_ptr()
    y = torch.from_dlpack(buffer)
    assert y.data_ptr() == x.data_ptr() and y.dtype == torch.float32 and y.shape == (3, 4)
    mask = torch.eye(3, dtype=torch.bool)
    assert _core.share(_arrays.capsule(mask, "mask", bool_ok=True)).data_ptr == mask.data_ptr()


@pytest.mark.parametrize("kind", ["numpy", pytest.param("torch", marks=needs_torch)])
def test_the_plan_and_potentials_are_rematchs_buffers(kind):
    C = point_cost(np.random.default_rng(0), 6, 5)
    P, f, g, *_ = _core.sinkhorn(C.__dlpack__(), None, None, 0.1, 100, 1e-6, "marginal", None, "log")
    for buffer in (P, f, g):
        array = _arrays.wrap(buffer, kind)
        address = array.ctypes.data if kind == "numpy" else array.data_ptr()
        assert address == buffer.data_ptr
    # and the public function returns exactly such arrays
    plan, info = rematch.ot.sinkhorn(C if kind == "numpy" else torch.from_numpy(C), eps=0.1, max_iter=100)
    np.testing.assert_array_equal(np.asarray(plan), np.asarray(P))
    if kind == "numpy":
        assert isinstance(plan.base, _core.Buffer) and plan.flags.writeable


def test_an_unused_capsule_frees_its_buffer_and_a_consumed_one_is_refused():
    x = np.ones((2, 2))
    capsule = x.__dlpack__()
    _core.share(capsule)
    with pytest.raises(ValueError, match="already consumed"):
        _core.share(capsule)
    P, *_ = _core.sinkhorn(x.__dlpack__(), None, None, 0.1, 10, 1e-6, "marginal", None, "log")
    P.__dlpack__()  # never consumed: its destructor releases the plan
    with pytest.raises(ValueError, match="stream must be None for host memory"):
        P.__dlpack__(stream=1)


def test_solving_releases_the_gil():
    C = point_cost(np.random.default_rng(1), 1000, 1000)
    ticks, done = [], threading.Event()

    def tick():
        while not done.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    thread = threading.Thread(target=tick)
    thread.start()
    try:
        start = time.perf_counter()
        rematch.ot.sinkhorn(C, eps=0.001, tol=0, max_iter=300)
        end = time.perf_counter()
    finally:
        done.set()
        thread.join()
    during = [t for t in ticks if start < t < end]
    # Holding the GIL for the whole solve would leave the other thread no tick inside it.
    assert end - start > 0.05, "the solve was too quick to tell"
    assert len(during) >= 5, f"{len(during)} ticks in a {end - start:.3f} s solve"


def negated_view(x):
    """x's values as a view with the negative bit: storage holding -x (DLPack exports the storage as it is)."""
    v = torch.complex(torch.zeros_like(x), -x).conj().imag if x.is_floating_point() else torch._neg_view(-x)
    assert v.is_neg() and torch.equal(v, x)
    return v


@needs_torch
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_views_with_the_negative_bit_are_read_as_their_values(dtype):
    """python/rematch/_arrays.py resolves the negative (and conjugate) bit before the export: every input gives the
    result of its resolved copy, bit for bit."""
    dtype = getattr(torch, dtype)
    rng = np.random.default_rng(16)
    C = torch.tensor(point_cost(rng, 6, 5), dtype=dtype)
    a, b = torch.tensor(rng.random(6) + 0.5, dtype=dtype), torch.tensor(rng.random(5) + 0.5, dtype=dtype)
    a, b = a / a.sum(), b / b.sum()
    mask = torch.ones(6, 5, dtype=torch.uint8)
    mask[0, 0] = 0
    neg = {"C": negated_view(C), "a": negated_view(a), "b": negated_view(b), "mask": negated_view(mask)}

    def solves(C, a, b, mask):
        return [rematch.ot.sinkhorn(C, a, b, eps=0.1, mask=mask)[0],
                rematch.ot.partial_sinkhorn(C, 0.5, a, b, eps=0.1, mask=mask)[0],
                rematch.ot.sinkhorn2(C, a, b, eps=0.1, mask=mask.bool()),
                rematch.ot.partial_sinkhorn2(C, 0.5, a, b, eps=0.1, mask=mask.bool())]

    plain = solves(C, a, b, mask)
    for name, view in neg.items():
        args = dict(C=C, a=a, b=b, mask=mask)
        args[name] = view
        for got, want in zip(solves(**args), plain):
            assert torch.equal(got, want), name


@needs_torch
def test_evaluation_inputs_with_the_negative_bit_are_read_as_their_values():
    rng = np.random.default_rng(17)
    sims = torch.tensor(rng.random((4, 8)))
    q, g = torch.tensor(rng.standard_normal((6, 3))), torch.tensor(rng.standard_normal((9, 3)))
    ql, gl = torch.tensor(rng.integers(0, 3, 6)), torch.tensor(rng.integers(0, 3, 9))
    assert rematch.eval.recall(negated_view(sims), 2) == rematch.eval.recall(sims, 2)
    want = rematch.eval.mean_average_precision(q, g, ql, gl)
    assert rematch.eval.mean_average_precision(negated_view(q), negated_view(g), negated_view(ql),
                                               negated_view(gl)) == want
    assert rematch.eval.mean_average_precision(negated_view(q), g, ql, gl) == want
