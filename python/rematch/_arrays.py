"""How arrays cross into rematch and back.

In: an array's DLPack capsule (``x.__dlpack__()``) is read in place by rematch. Four cases need a step first:
a PyTorch tensor that requires grad is detached (rematch's results are constants); a PyTorch view with the
negative or conjugate bit set (``Z.conj().imag``) is resolved into a copy (DLPack exports its storage without
the negation); a bool array is viewed as uint8 (neither NumPy 1.x nor PyTorch 1.x exports bool through DLPack;
the bytes are the same); a read-only NumPy array (which NumPy < 2 refuses to export) or one with negative strides
is copied once. A CUDA tensor is exported for rematch's stream, so that PyTorch orders the work its current
stream has queued on it first.

Out: rematch returns Buffers (its own memory), which ``torch.from_dlpack`` wraps without a copy (PyTorch passes
its current stream, which is made to wait for rematch's work), and NumPy through __array_interface__ — also
without a copy, and writable: NumPy < 2 makes every array it takes through DLPack read-only.
"""
import sys

import numpy as np

from . import _core


def _torch():
    # PyTorch is only ever used when the caller already imported it (its tensors exist only then).
    return sys.modules.get("torch")


def kind(x, name):
    """'torch' or 'numpy'; TypeError naming the argument for anything else."""
    torch = _torch()
    if torch is not None and isinstance(x, torch.Tensor):
        return "torch"
    if isinstance(x, np.ndarray):
        return "numpy"
    raise TypeError(f"{name}: expected a NumPy array or a PyTorch tensor, got {type(x).__module__}."
                    f"{type(x).__qualname__}")


def _not_bool(x, name, bool_ok):
    # Only a mask may be bool: anything else would reach rematch as the uint8 view below, and its error would say
    # uint8.
    if not bool_ok:
        raise TypeError(f"{name}: got bool{list(x.shape)}, but rematch reads bool only as a mask; convert {name} "
                        f"to the dtype it needs first (float32 or float64 values, int32 or int64 labels)")


def capsule(x, name, bool_ok=False):
    """x's DLPack capsule for rematch to read in place (see the module docstring for the exceptions); bool_ok: x
    may be bool (a mask)."""
    if kind(x, name) == "torch":
        torch = _torch()
        # A view with the negative or conjugate bit (Z.conj().imag, torch._neg_view) is exported by DLPack as its
        # raw storage, without the negation: materialise it. Both are no-ops (no copy) when the bit is not set.
        x = x.detach().resolve_conj().resolve_neg()
        if x.dtype == torch.bool:
            _not_bool(x, name, bool_ok)
            x = x.view(torch.uint8)
        try:
            if x.is_cuda:
                with torch.cuda.device(x.device):  # PyTorch wraps the stream number for its current device
                    return x.__dlpack__(stream=_core.cuda_stream(x.device.index))
            return x.__dlpack__()
        except (RuntimeError, BufferError) as e:
            raise TypeError(f"{name}: {x.dtype} tensor on {x.device} cannot be shared through DLPack: {e}") from e
    if x.dtype == np.bool_:
        _not_bool(x, name, bool_ok)
        x = x.view(np.uint8)
    if not x.flags.writeable or any(s < 0 for s in x.strides):
        x = np.array(x, order="C")
    try:
        return x.__dlpack__()
    except BufferError as e:
        raise TypeError(f"{name}: NumPy {x.dtype} array cannot be shared through DLPack: {e}") from e


def optional_capsule(x, name, bool_ok=False):
    return None if x is None else capsule(x, name, bool_ok)


def wrap(buffer, like):
    """The Buffer as an array of `like` kind ('torch' or 'numpy'), over rematch's memory."""
    if like == "torch":
        return _torch().from_dlpack(buffer)
    return np.asarray(buffer)
