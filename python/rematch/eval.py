"""Retrieval evaluation with rematch's evaluator: the bidirectional Recall@K of the image-caption benchmarks
(exactly what ``rematch eval --json`` prints) and the mAP of the class-labelled cross-modal benchmarks. Inputs
are NumPy arrays or PyTorch tensors (a CUDA tensor is copied to the host once).
"""
import json

from . import _arrays, _core


def recall(sims, captions_per_image=5):
    """Image-to-text and text-to-image Recall@1/5/10, median and mean rank, and rSum of a similarity matrix.

    Parameters
    ----------
    sims : array [N_img, N_img * captions_per_image], float32 or float64
        Rows are images, columns captions; captions c*i .. c*i + c - 1 belong to image i (c = captions_per_image).
    captions_per_image : int
        5 for COCO and Flickr30K, 1 for CC152K.

    Returns
    -------
    dict with the keys of ``rematch eval --json``: i2t_r1, i2t_r5, i2t_r10, t2i_r1, t2i_r5, t2i_r10, rsum,
    i2t_medr, i2t_meanr, t2i_medr, t2i_meanr. R@K in percent; ranks 1-based as in the reference ``i2t``/``t2i``
    (ties ranked as NumPy's ``argsort(row)[::-1]`` ranks them).

    Raises
    ------
    TypeError for a non-float matrix; ValueError for a shape that does not match captions_per_image or a NaN or
    infinite score.
    """
    return json.loads(_core.recall_json(_arrays.capsule(sims, "sims"), captions_per_image))


def mean_average_precision(query, gallery, query_labels, gallery_labels):
    """mAP@all of cross-modal retrieval by class labels, as MRL and UOT-RCL compute it.

    Each query ranks the whole gallery by cosine distance (ties: lower gallery index first); an item is relevant
    when its label equals the query's; AP is averaged over the queries.

    Parameters
    ----------
    query : array [Q, d], float32 or float64
    gallery : array [N, d], float32 or float64 (features in the same common space as the queries)
    query_labels : integer array [Q] (int32 or int64)
    gallery_labels : integer array [N]

    Returns
    -------
    float, the mean average precision in [0, 1].

    Raises
    ------
    TypeError for non-float features or non-integer labels; ValueError for mismatched shapes or a zero feature
    vector (it has no cosine).
    """
    return _core.mean_average_precision(
        _arrays.capsule(query, "query"), _arrays.capsule(gallery, "gallery"),
        _arrays.capsule(query_labels, "query_labels"), _arrays.capsule(gallery_labels, "gallery_labels"))
