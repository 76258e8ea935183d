"""Ctrl-C stops a long solve: the CPU solver asks the binding's interrupt check (SinkhornOptions::interrupted in
ot/sinkhorn.h, set by python/src/ot_bindings.cpp), which runs Python's signal handlers, and KeyboardInterrupt comes
out of the call. Each case is a child process that solves for ever (tol=0, max_iter=10**12) and gets SIGINT."""
import os
import signal
import subprocess
import sys
import time

import pytest

import rematch

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGINT") or os.name == "nt", reason="needs POSIX signals")

CHILD = """
import signal, sys, time
# A parent started in the background may have left SIGINT ignored, and Python then keeps it ignored.
signal.signal(signal.SIGINT, signal.default_int_handler)
import numpy as np, rematch.ot
C = np.random.default_rng(0).random({shape})
print("solving", flush=True)
start = time.monotonic()
try:
    {call}
except KeyboardInterrupt:
    print(f"interrupted after {{time.monotonic() - start:.2f}} s", flush=True)
    raise
print("returned", flush=True)
"""


@pytest.mark.parametrize("shape,call", [
    ((60, 50), "rematch.ot.sinkhorn(C, eps=0.1, tol=0, max_iter=10**12)"),
    ((3, 3), "rematch.ot.sinkhorn(C, eps=0.1, tol=0, max_iter=10**12)"),  # few entries: asked every ~7000 sweeps
    ((4, 40, 30), "rematch.ot.sinkhorn(C, eps=0.1, tol=0, max_iter=10**12)"),  # a batch, on OpenMP's threads
    ((60, 50), "rematch.ot.partial_sinkhorn(C, 0.5, eps=0.1, tol=0, max_iter=10**12)"),
    ((60, 50), "rematch.ot.sinkhorn(C, eps=0.1, tol=0, max_iter=10**12, domain='scaling')"),
])
def test_sigint_stops_a_long_solve_with_keyboard_interrupt(shape, call):
    package = os.path.dirname(os.path.dirname(os.path.abspath(rematch.__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([package, os.environ.get("PYTHONPATH", "")]))
    child = subprocess.Popen([sys.executable, "-c", CHILD.format(shape=shape, call=call)], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline() == "solving\n"
        time.sleep(1.0)
        assert child.poll() is None, "the solve ended by itself"
        child.send_signal(signal.SIGINT)
        sent = time.monotonic()
        try:
            out, err = child.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            pytest.fail(f"still solving 10 s after SIGINT: {call}")
        took = time.monotonic() - sent
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    assert "KeyboardInterrupt" in err and "interrupted after" in out and "returned" not in out, (out, err)
    assert child.returncode != 0
    assert took < 3, f"{took:.1f} s from SIGINT to exit"
