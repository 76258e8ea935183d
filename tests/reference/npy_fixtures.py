"""Writes the .npy fixtures of tests/tensor/npy_test.cpp into tests/fixtures/npy/ with numpy itself, so the
reader is tested against files numpy produced (format versions 1.0, 2.0 and 3.0) and the error paths
against real big-endian and int8 files; Fortran-order and float16 files load.

Run from the repository root:  /usr/bin/python3 tests/reference/npy_fixtures.py
The values are exactly representable, so the test compares them exactly.
"""
import os

import numpy as np
from numpy.lib import format as npy_format

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "npy")


def save(name, arr):
    np.save(os.path.join(OUT, name), arr, allow_pickle=False)


def save_version(name, arr, version):
    with open(os.path.join(OUT, name), "wb") as f:
        npy_format.write_array(f, arr, version=version, allow_pickle=False)


def main():
    os.makedirs(OUT, exist_ok=True)
    # Format 1.0 (np.save's default), one file per supported dtype.
    save("v1_f4.npy", (np.arange(6, dtype="<f4").reshape(2, 3) * 0.5 - 1).astype("<f4"))
    save("v1_f8.npy", np.array([1 / 3, -2.5, 1e300], dtype="<f8"))
    save("v1_i4.npy", np.array([-(2**31), -1, 0, 7, 2**31 - 1], dtype="<i4"))
    save("v1_i8.npy", np.array([[-(2**63), 2**40], [3, -4]], dtype="<i8"))
    save("v1_b1.npy", np.array([True, False, True, True]))
    save("v1_u1.npy", np.array([0, 1, 128, 255], dtype="|u1"))
    save("v1_scalar.npy", np.array(2.5, dtype="<f4"))
    save("v1_empty.npy", np.zeros((0, 3), dtype="<f4"))
    # Formats 2.0 (4-byte header length) and 3.0 (utf8 header), forced for small arrays.
    save_version("v2_f4.npy", np.array([[0.25, -0.5], [8.0, 1024.0]], dtype="<f4"), (2, 0))
    save_version("v3_i8.npy", np.arange(5, dtype="<i8") - 2, (3, 0))
    # Files as they are found: float16 (normal, subnormal, signed zero, infinities, largest and
    # smallest values) is widened to float32; Fortran order (np.save(p, sims.T)) loads as a strided view.
    save("v1_f2.npy", np.array([[1.5, -2.0, 65504.0, 6.1035156e-05], [5.9604645e-08, -0.0, np.inf, -np.inf]],
                               dtype="<f2"))
    save("fortran_f4.npy", np.asfortranarray(np.arange(6, dtype="<f4").reshape(2, 3)))
    save("fortran_f2_3d.npy", np.asfortranarray((np.arange(24, dtype="<f2") - 7).reshape(2, 3, 4) / 4))
    # Inputs the reader must refuse with a message.
    save("big_endian_f4.npy", np.arange(3, dtype=">f4"))
    save("int8.npy", np.arange(3, dtype="|i1"))


if __name__ == "__main__":
    main()
