"""PyTorch CUDA tensors: solved on their device by rematch's fused kernels, against the CPU solve; read in place
and handed back over rematch's memory (by pointer); ordered after the work PyTorch's current stream has pending
on the input. Skipped (with the reason) without PyTorch, a CUDA device, or a CUDA build of rematch."""
import numpy as np
import pytest

import rematch
from rematch import _arrays, _core
from support import needs_cuda, point_cost, random_mask, torch, weights

pytestmark = needs_cuda


def l2rm_batch(rng, B, n=128):
    """L2RM-like costs [B, n, n] in float32 with the diagonal masked."""
    C = np.stack([point_cost(rng, n, n) for _ in range(B)]).astype(np.float32)
    return C, ~np.eye(n, dtype=bool)


@pytest.mark.parametrize("B", [1, 16])
def test_partial_sinkhorn_on_cuda_matches_the_cpu(B):
    C, mask = l2rm_batch(np.random.default_rng(B), B)
    cpu, cpu_info = rematch.ot.partial_sinkhorn(C, 0.1, eps=0.05, mask=mask, tol=1e-3)
    P, info = rematch.ot.partial_sinkhorn(torch.from_numpy(C).cuda(), 0.1, eps=0.05,
                                          mask=torch.from_numpy(mask).cuda(), tol=1e-3)
    assert P.is_cuda and P.dtype == torch.float32 and P.shape == C.shape and info["f"].is_cuda
    result = P.cpu().numpy()
    assert (result[:, np.arange(128), np.arange(128)] == 0).all()
    np.testing.assert_allclose(result, cpu, rtol=1e-3, atol=1e-7)
    assert np.abs(np.array(info["iterations"]) - np.array(cpu_info["iterations"])).max() <= 2


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sinkhorn_on_cuda_matches_the_cpu(dtype):
    rng = np.random.default_rng(1)
    C = point_cost(rng, 300, 200).astype(dtype)
    a, b, mask = weights(rng, 300).astype(dtype), weights(rng, 200).astype(dtype), random_mask(rng, 300, 200)
    cpu, _ = rematch.ot.sinkhorn(C, a, b, eps=0.02, mask=mask, tol=1e-7)
    P, info = rematch.ot.sinkhorn(*(torch.from_numpy(x).cuda() for x in (C, a, b)), eps=0.02,
                                  mask=torch.from_numpy(mask).cuda(), tol=1e-7)
    assert P.device == torch.device("cuda", 0) and P.dtype == getattr(torch, dtype) and info["converged"]
    result = P.cpu().numpy()
    assert (result[~mask] == 0).all()
    np.testing.assert_allclose(result, cpu, rtol=1e-3 if dtype == "float32" else 1e-9, atol=1e-9)


def test_a_cuda_tensor_is_read_in_place_and_the_plan_is_rematchs_buffer():
    x = torch.rand(3, 4, device="cuda")
    buffer = _core.share(_arrays.capsule(x, "x"))
    assert buffer.data_ptr == x.data_ptr() and buffer.__dlpack_device__() == (2, 0)
    y = torch.from_dlpack(buffer)
    assert y.data_ptr() == x.data_ptr() and y.device == x.device
    C = torch.rand(5, 6, device="cuda", dtype=torch.float64)
    P, f, g, *_ = _core.sinkhorn(_arrays.capsule(C, "C"), None, None, 0.1, 100, 1e-6, "marginal", None, "log")
    for out in (P, f, g):
        assert torch.from_dlpack(out).data_ptr() == out.data_ptr
    with pytest.raises(TypeError, match="NumPy cannot read"):
        P.__array_interface__


def test_ordered_after_pytorchs_pending_work_on_its_current_stream():
    rng = np.random.default_rng(2)
    reference = point_cost(rng, 256, 256).astype(np.float32)
    expected, _ = rematch.ot.sinkhorn(reference, eps=0.05, tol=0, max_iter=50)
    source = torch.from_numpy(reference).cuda()
    stream = torch.cuda.Stream()
    torch.cuda.synchronize()
    with torch.cuda.stream(stream):
        C = torch.zeros_like(source)
        torch.cuda._sleep(100_000_000)  # keeps `stream` busy, so the copy below is still pending at the call
        C.copy_(source)
        P, _ = rematch.ot.sinkhorn(C, eps=0.05, tol=0, max_iter=50)
        doubled = P * 2  # queued on `stream`: must wait for rematch's plan
    torch.cuda.synchronize()
    np.testing.assert_allclose(doubled.cpu().numpy(), 2 * expected, rtol=1e-4, atol=1e-9)


def test_a_cpu_weight_with_a_cuda_cost_is_an_error_naming_the_devices():
    C = torch.rand(4, 4, device="cuda")
    with pytest.raises(ValueError, match="every input must be on the cost's device cuda:0"):
        rematch.ot.sinkhorn(C, torch.full((4,), 0.25), eps=0.1)
