"""The examples of python/examples/ run as a user runs them (a fresh interpreter, the module on PYTHONPATH) and
reach what they print they reach."""
import os
import subprocess
import sys

import pytest

from support import torch

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python", "examples")


@pytest.mark.skipif(torch is None, reason="needs PyTorch (apt-get install python3-torch)")
def test_ot_loss_example():
    out = subprocess.run([sys.executable, os.path.join(EXAMPLES, "ot_loss.py")], capture_output=True, text=True,
                         timeout=300, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    assert lines[-1] == "ok" and len(lines) == 4, out.stdout
    assert lines[0].startswith("1. linear map: |A - A*|") and "partial OT" in lines[1]
    assert lines[2].endswith("gradient zero on the masked diagonal: True")
