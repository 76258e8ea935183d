"""rematch from Python: the fused optimal-transport solvers and the retrieval evaluator of the rematch engine
for NumPy arrays and PyTorch tensors (CPU or CUDA), shared with rematch through DLPack without a copy.

    rematch.ot.sinkhorn(C, a=None, b=None, *, eps, ...)          -> (P, info)
    rematch.ot.partial_sinkhorn(C, mass, a=None, b=None, *, eps, ...) -> (P, info)
    rematch.ot.sinkhorn2(C, a=None, b=None, *, eps, ...)         -> loss (PyTorch; .backward() gives dC, da, db)
    rematch.ot.partial_sinkhorn2(C, mass, a=None, b=None, *, eps, ...) -> loss (and d/dmass)
    rematch.eval.recall(sims, captions_per_image=5)              -> dict, as `rematch eval --json`
    rematch.eval.mean_average_precision(query, gallery, query_labels, gallery_labels) -> float

Results come back as the same kind of array as the input, with its dtype and on its device. Bad input raises
ValueError or TypeError with rematch's own message.
"""
from . import eval, ot

__all__ = ["eval", "ot"]
