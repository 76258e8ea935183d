"""Bad input raises ValueError or TypeError with rematch's message, naming what is wrong — never a crash."""
import re

import numpy as np
import pytest

import rematch
from support import needs_torch, torch

C = np.random.default_rng(0).random((5, 4))
u5, u4 = np.full(5, 0.2), np.full(4, 0.25)


def sinkhorn(**kw):
    args = dict(C=C, eps=0.1)
    args.update(kw)
    return rematch.ot.sinkhorn(**args)


@pytest.mark.parametrize("call,error,message", [
    # kind, dtype and shape
    (lambda: sinkhorn(C=C.tolist()), TypeError, "C: expected a NumPy array or a PyTorch tensor, got builtins.list"),
    (lambda: sinkhorn(C=C.astype(np.int64)), TypeError, r"C must be float32 or float64, got int64\[5, 4\] cpu"),
    (lambda: sinkhorn(C=C.astype(np.float16)), TypeError, "C: float16 is not a dtype rematch reads"),
    (lambda: sinkhorn(C=C.astype(np.complex128)), TypeError, "C: complex128 is not a dtype rematch reads"),
    (lambda: sinkhorn(a=u5.astype(np.float32)), TypeError, r"a is float32\[5\] cpu but C is float64\[5, 4\] cpu; "
                                                            "pass the weights in C's dtype"),
    (lambda: sinkhorn(mask=np.ones((5, 4))), TypeError, "mask must be bool"),
    (lambda: sinkhorn(C=C[0]), ValueError, r"C must be one cost matrix \[n, m\] or a batch \[B, n, m\], got float64\[4\]"),
    (lambda: sinkhorn(C=C[None, None]), ValueError, "C must be one cost matrix"),
    (lambda: sinkhorn(C=np.zeros((0, 3))), ValueError, "empty problem"),
    (lambda: sinkhorn(a=u4), ValueError, r"a has shape \[4\] but the cost is \[5, 4\]: expected \[5\]"),
    (lambda: sinkhorn(mask=np.ones((4, 5), bool)), ValueError, r"the mask has shape \[4, 5\] but the cost is \[5, 4\]"),
    # options
    (lambda: sinkhorn(eps=0), ValueError, r"rematch.ot.sinkhorn: eps = 0 must be finite and > 0 \(the entropic"),
    (lambda: sinkhorn(eps="big"), TypeError, "rematch.ot.sinkhorn: eps must be a number, got 'big'"),
    (lambda: sinkhorn(eps=np.array([0.1, 0.2])), TypeError, r"eps must be a number, got array\(\[0.1, 0.2\]\)"),
    (lambda: sinkhorn(max_iter="many"), TypeError, "rematch.ot.sinkhorn: max_iter must be an integer, got 'many'"),
    (lambda: sinkhorn(tol=[1e-6]), TypeError, r"rematch.ot.sinkhorn: tol must be a number, got \[1e-06\]"),
    (lambda: sinkhorn(stop=1), TypeError, "rematch.ot.sinkhorn: stop must be a string, got 1"),
    (lambda: rematch.ot.partial_sinkhorn(C, 0.5, eps=None), TypeError,
     "rematch.ot.partial_sinkhorn: eps must be a number, got None"),
    (lambda: rematch.ot.partial_sinkhorn(C, 0.5, eps=-1), ValueError, "rematch.ot.partial_sinkhorn: eps = -1 must"),
    (lambda: rematch.ot.partial_sinkhorn(C, 0.5, eps=0.1, dummy=None), TypeError, "dummy must be a string, got None"),
    # the Python argument, not the C++ name (python/src/ot_bindings.cpp)
    (lambda: sinkhorn(C=C * 1000, domain="scaling"), ValueError, r"underflows or overflows .*; use domain=\"log\"$"),
    (lambda: sinkhorn(C=C > 0.5), TypeError, r"^C: got bool\[5, 4\], but rematch reads bool only as a mask"),
    (lambda: sinkhorn(a=np.ones(5, bool)), TypeError, r"^a: got bool\[5\]"),
    (lambda: rematch.eval.recall(np.ones((3, 15), bool)), TypeError, r"^sims: got bool\[3, 15\]"),
    (lambda: sinkhorn(max_iter=0), ValueError, "max_iter = 0 must be >= 1"),
    (lambda: sinkhorn(tol=-1), ValueError, "tol = -1 must be >= 0"),
    (lambda: sinkhorn(stop="never"), ValueError, "stop = 'never' is not a stopping rule"),
    (lambda: sinkhorn(domain="linear"), ValueError, "domain = 'linear' is not a domain"),
    # values
    (lambda: sinkhorn(a=u5, b=np.full(4, 0.3)), ValueError, "the marginals have different sums: sum.a. = 1 but sum.b. = 1.2"),
    (lambda: sinkhorn(a=np.array([0.4, -0.2, 0.2, 0.3, 0.3]), b=u4), ValueError, r"weight a\[1\] = -0.2 must be finite"),
    (lambda: sinkhorn(C=np.where(np.eye(5, 4) > 0, np.nan, C)), ValueError, r"cost C\[0, 0\] = nan is not finite"),
    (lambda: sinkhorn(mask=np.arange(20).reshape(5, 4) // 4 != 2), ValueError,
     r"row 2 is all-masked but has weight a\[2\] = 0.2 > 0"),
    (lambda: sinkhorn(C=np.stack([C, C]), mask=np.stack([np.ones((5, 4), bool), np.eye(5, 4) < 0])), ValueError,
     "problem 1 of 2: row 0 is all-masked"),
    # |C|/eps beyond the dtype's resolution: a plan that moved 5 of 1 came back, its "error" 0.7
    (lambda: sinkhorn(C=C.astype(np.float32), eps=1e-10), ValueError,
     r"the plan's column sums miss the weights b by .* beyond what float32 resolves .* or solve in float64$"),
    (lambda: rematch.ot.partial_sinkhorn(C.astype(np.float32), 0.5, eps=1e-10), ValueError, "column sums miss"),
    # partial
    (lambda: rematch.ot.partial_sinkhorn(C, 1.5, eps=0.1), ValueError,
     r"mass = 1.5 is larger than the smaller marginal min\(sum\(a\) = 1, sum\(b\) = 1\) = 1 \(by more than 1e-06 "
     r"relative\)"),
    (lambda: rematch.ot.partial_sinkhorn(C, 0, eps=0.1), ValueError, "mass = 0 must be finite and > 0"),
    (lambda: rematch.ot.partial_sinkhorn(C, [0.1, 0.2], eps=0.1), ValueError, "mass holds 2 values; give one number"),
    (lambda: rematch.ot.partial_sinkhorn(np.stack([C] * 3), [0.1, 0.2], eps=0.1), ValueError,
     "2 masses for a batch of 3 problems"),
    (lambda: rematch.ot.partial_sinkhorn(C, "half", eps=0.1), TypeError, "mass: expected a number"),
    (lambda: rematch.ot.partial_sinkhorn(C - 0.5, 0.5, eps=0.1), ValueError, "is negative"),
    (lambda: rematch.ot.partial_sinkhorn(C, 0.5, eps=0.1, dummy="xi"), ValueError, "dummy = 'xi' is not a dummy cost"),
    # evaluation
    (lambda: rematch.eval.recall(np.zeros((3, 10))), ValueError, r"\[3, 10\]"),
    (lambda: rematch.eval.recall(np.zeros((3, 15), np.int32)), TypeError, "sims must be float32 or float64"),
    (lambda: rematch.eval.recall(np.full((2, 10), np.nan)), ValueError, "NaN or infinite"),
    (lambda: rematch.eval.mean_average_precision(np.zeros((2, 3)), np.ones((4, 3)), np.zeros(2, np.int64),
                                                 np.zeros(4, np.int64)), ValueError, "queries row 0 has norm 0"),
    (lambda: rematch.eval.mean_average_precision(np.ones((2, 3)), np.ones((4, 3)), np.zeros(2),
                                                 np.zeros(4, np.int64)), TypeError, "query_labels must hold integer"),
    (lambda: rematch.eval.mean_average_precision(np.ones((2, 3)), np.ones((4, 3)), np.zeros(3, np.int64),
                                                 np.zeros(4, np.int64)), ValueError, "query labels must be 1-D with 2 entries"),
])
def test_bad_input_is_an_error_that_says_what_is_wrong(call, error, message):
    with pytest.raises(error, match=message):
        call()


@needs_torch
def test_torch_bool_inputs_are_named_as_bool():
    for call in (lambda: rematch.ot.sinkhorn(torch.ones(5, 4, dtype=torch.bool), eps=0.1),
                 lambda: rematch.ot.partial_sinkhorn(torch.ones(5, 4, dtype=torch.bool), 0.5, eps=0.1)):
        with pytest.raises(TypeError, match=r"^C: got bool\[5, 4\]") as e:
            call()
        assert "uint8" not in str(e.value)


# ---- the mass of partial transport up to rounding (ot/partial.cpp) --------------------------------------------

@pytest.mark.parametrize("n,m", [(10, 10), (5, 7), (7, 5), (6, 6), (3, 3)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_mass_equal_to_the_default_weights_sum_is_accepted(n, m, dtype):
    """mass = 1 with the default weights 1/n, 1/m, whose sums round to 1 - 1 ulp for some n: the whole mass moves,
    the plan is the balanced one."""
    Cnm = np.random.default_rng(n * m).random((n, m)).astype(dtype)
    opts = dict(eps=0.1, tol=1e-12 if dtype == np.float64 else 1e-6, max_iter=100000, stop="marginal")
    P, info = rematch.ot.partial_sinkhorn(Cnm, 1.0, **opts)
    balanced, _ = rematch.ot.sinkhorn(Cnm, **opts)
    assert info["converged"]
    np.testing.assert_allclose(P, balanced, rtol=0, atol=1e-12 if dtype == np.float64 else 1e-6)


def test_a_mass_above_the_marginals_is_refused_with_both_numbers_in_full():
    """1e-5 above: too much for rounding (1e-6 relative), and the message tells the two numbers apart."""
    mass = 1.00001
    with pytest.raises(ValueError) as e:
        rematch.ot.partial_sinkhorn(np.random.default_rng(1).random((10, 10)), mass, eps=0.1)
    found = re.search(r"mass = (\S+) is larger than the smaller marginal min\(sum\(a\) = (\S+), sum\(b\) = (\S+)\) = "
                      r"(\S+) \(by more than 1e-06 relative\)", str(e.value))
    assert found, str(e.value)
    given, sum_a, sum_b, smaller = (float(x) for x in found.groups())
    assert given == mass and smaller == min(sum_a, sum_b) and abs(sum_a - 1) < 1e-15 and smaller < given


@needs_torch
def test_partial_sinkhorn2_at_the_full_default_mass_is_the_balanced_loss():
    C10 = torch.tensor(np.random.default_rng(2).random((10, 10)), requires_grad=True)
    L = rematch.ot.partial_sinkhorn2(C10, 1.0, eps=0.1)
    (g,) = torch.autograd.grad(L, C10)
    L2 = rematch.ot.sinkhorn2(C10, eps=0.1)
    (g2,) = torch.autograd.grad(L2, C10)
    torch.testing.assert_close(L, L2, rtol=0, atol=1e-9)
    torch.testing.assert_close(g, g2, rtol=0, atol=1e-7)


@needs_torch
def test_torch_errors():
    with pytest.raises(TypeError, match="a is torch.float32 tensor|a is float32"):
        rematch.ot.sinkhorn(torch.zeros(5, 4, dtype=torch.float64), torch.full((5,), 0.2), eps=0.1)
    with pytest.raises(TypeError, match="C: .* on meta cannot be shared through DLPack"):
        rematch.ot.sinkhorn(torch.zeros(5, 4, device="meta"), eps=0.1)
    with pytest.raises(TypeError, match="bfloat16 is not a dtype rematch reads"):
        rematch.ot.sinkhorn(torch.zeros(5, 4, dtype=torch.bfloat16), eps=0.1)
