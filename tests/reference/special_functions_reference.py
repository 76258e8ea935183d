"""Writes the fixtures of tests/tensor/special_functions_test.cpp into tests/fixtures/special/: torch.lgamma and
torch.digamma in float64 and float32 at arguments from tiny to large, negative non-integers, the poles and the
special values, computed by PyTorch itself, with torch.polygamma(1, x) (trigamma: the gradient of torch.digamma,
which rematch's digamma gradient reproduces; PyTorch's calc_trigamma is accurate to about 1e-8 relative only) and
torch.polygamma(2 and 3, x) (the derivatives of trigamma); and the exact values (mpmath at 50 digits, rounded to
float64) of log|Γ|, ψ, ψ', ψ'' and ψ‴. Near the negative poles torch's own results are off by up to 1e-12
relative in float64 and 2e-4 in float32 (the rounding of π·x in the reflection): the test asks rematch to be as
close to the exact value as torch everywhere, and close to torch wherever torch is itself close to exact.

Run from anywhere:  /usr/bin/python3 tests/reference/special_functions_reference.py   (torch 1.13, numpy, mpmath)

Files: x64.npy / x32.npy (the arguments); lgamma64, digamma64, trigamma64, polygamma2_64, polygamma3_64 (torch,
float64), lgamma32, digamma32 (torch, float32); exact_lgamma64, exact_digamma64, exact_trigamma64,
exact_polygamma2_64, exact_polygamma3_64 and exact_lgamma32, exact_digamma32 (mpmath at the float64 and at the
float32 arguments, as float64).
"""
import os

import numpy as np
import mpmath
import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "special")


def arguments():
    tiny = [1e-300, 1e-30, 1e-12, 1e-8, 1e-4, 0.001, 0.01, 0.1]
    small = [0.25, 0.5, 0.75, 0.9999, 1.0, 1.0001, 1.2, 1.4616321449683623, 1.5, 1.9999, 2.0, 2.0001, 2.5, 3.0,
             3.7, 5.0, 7.25, 9.5, 9.9999, 10.0, 10.0001, 11.0, 12.5, 20.0]
    large = [50.0, 100.0, 127.5, 1e3, 1e4, 12345.678, 1e6, 1e10, 1e15, 1e17, 3e17, 1e30, 1e100, 1e300]
    negative = [-1e-8, -0.1, -0.5, -0.9999, -1.0001, -1.5, -2.5, -2.2637, -3.3, -7.75, -10.5, -100.25, -1e5 - 0.5]
    poles_and_specials = [0.0, -0.0, -1.0, -2.0, -50.0, float("inf"), float("-inf"), float("nan")]
    rng = np.random.default_rng(1962)
    spread = list(np.exp(rng.uniform(np.log(1e-3), np.log(1e3), 40)))  # log-uniform, the evidences' range
    return np.array(tiny + small + large + negative + poles_and_specials + spread, dtype=np.float64)


def exact(fn, xs):
    """fn at each argument with mpmath at 50 digits, as float64; the poles and specials as torch has them."""
    mpmath.mp.dps = 50
    out = []
    for x in xs.tolist():
        if x != x:
            out.append(float("nan"))
            continue
        if fn == "trigamma" and (x == float("-inf") or (x <= 0 and x == int(x))):
            out.append(float("inf"))
            continue
        if fn == "trigamma" and x == float("inf"):
            out.append(0.0)
            continue
        if x in (float("inf"), float("-inf")) or (x <= 0 and x == int(x)):
            out.append(float("nan"))  # not compared: the test takes torch's value there
            continue
        v = mpmath.mpf(x)
        if fn == "lgamma":
            out.append(float(mpmath.log(abs(mpmath.gamma(v)))))
        elif fn == "digamma":
            out.append(float(mpmath.digamma(v)))
        elif fn == "trigamma":
            out.append(float(mpmath.psi(1, v)))
        else:  # "polygamma<n>"
            out.append(float(mpmath.psi(int(fn[len("polygamma"):]), v)))
    return torch.tensor(out, dtype=torch.float64)


def main():
    os.makedirs(OUT, exist_ok=True)
    x64 = torch.from_numpy(arguments())
    x32 = x64.to(torch.float32)
    # float32 rounds 1e-300 to 0 and 1e100 to inf: the poles and the overflow, as torch computes them.
    files = {
        "x64": x64, "lgamma64": torch.lgamma(x64), "digamma64": torch.digamma(x64),
        "trigamma64": torch.polygamma(1, x64),
        "x32": x32, "lgamma32": torch.lgamma(x32), "digamma32": torch.digamma(x32),
        "exact_lgamma64": exact("lgamma", x64), "exact_digamma64": exact("digamma", x64),
        "exact_trigamma64": exact("trigamma", x64),
        "polygamma2_64": torch.polygamma(2, x64), "polygamma3_64": torch.polygamma(3, x64),
        "exact_polygamma2_64": exact("polygamma2", x64), "exact_polygamma3_64": exact("polygamma3", x64),
        "exact_lgamma32": exact("lgamma", x32.to(torch.float64)),
        "exact_digamma32": exact("digamma", x32.to(torch.float64)),
    }
    for name, t in files.items():
        np.save(os.path.join(OUT, name + ".npy"), t.numpy(), allow_pickle=False)
    print(f"special: {x64.numel()} arguments written to {os.path.normpath(OUT)}")


if __name__ == "__main__":
    main()
