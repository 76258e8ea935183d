"""Tiny HDF5 files in MRL's layout (penghu-cs/MRL src/noisydataset.py) for labeled_dataset_test.cpp, written by
h5py so the C++ reader is checked against files it did not write itself.

Run from the repository root: /usr/bin/python3 tests/reference/labeled_fixture.py (Debian: python3-h5py).
"""
import h5py
import numpy as np

OUT = "tests/fixtures/labeled/"


def features(rows, dim, offset):
    return (np.arange(rows * dim, dtype=np.float64).reshape(rows, dim) + offset) / 4


def main():
    # Labels 1..3 as MATLAB exports them: float64, one as an [N, 1] column; `train_text` (singular) as in the
    # Wikipedia file; no valid_* datasets, so validation comes from the head of the test split.
    with h5py.File(OUT + "mrl_tiny.h5", "w") as f:
        f["train_imgs_deep"] = features(6, 4, 0).astype(np.float32)
        f["train_imgs_labels"] = np.array([1, 2, 3, 1, 2, 3], dtype=np.float64)
        f["train_text"] = features(6, 3, 100)  # float64, converted on reading
        f["train_texts_labels"] = np.array([[1], [2], [3], [1], [2], [3]], dtype=np.int64)
        f["test_imgs_deep"] = features(5, 4, 200).astype(np.float32)
        f["test_imgs_labels"] = np.array([3, 2, 1, 1, 2], dtype=np.int32)
        f["test_texts"] = features(5, 3, 300).astype(np.float32)
        f["test_texts_labels"] = np.array([3, 2, 1, 1, 2], dtype=np.int64)
    with h5py.File(OUT + "mrl_missing.h5", "w") as f:
        f["train_imgs_deep"] = features(2, 4, 0).astype(np.float32)
        f["train_imgs_labels"] = np.array([1, 2], dtype=np.int64)
        f["train_texts"] = features(2, 3, 0).astype(np.float32)
        f["train_texts_labels"] = np.array([1, 2], dtype=np.int64)
        f["test_imgs_deep"] = features(2, 4, 0).astype(np.float32)
        f["test_imgs_labels"] = np.array([1, 2], dtype=np.int64)
        f["test_texts"] = features(2, 3, 0).astype(np.float32)
    with h5py.File(OUT + "mrl_fractional.h5", "w") as f:
        f["train_imgs_deep"] = features(2, 4, 0).astype(np.float32)
        f["train_imgs_labels"] = np.array([1, 2.5])
        f["train_texts"] = features(2, 3, 0).astype(np.float32)
        f["train_texts_labels"] = np.array([1, 2], dtype=np.int64)


if __name__ == "__main__":
    main()
