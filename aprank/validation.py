"""Every input check, once, before any kernel runs (shared by inference and the metrics).

Kernels are compiled without bounds checks, so everything they rely on is established here:
1-D arrays of equal length, finite float64 scores, binary labels, query groups. Nothing here
modifies the caller's arrays; a copy is made only where a dtype must change.
"""
from __future__ import annotations

import numpy as np

__all__ = ["as_scores", "as_labels", "as_query_groups"]


def _one_dimensional(x, name: str) -> np.ndarray:
    arr = np.asarray(x)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got an array of shape {arr.shape}")
    return arr


def as_scores(scores, name: str = "scores") -> np.ndarray:
    """Return the scores as a 1-D float64 array (a view when they already are one).

    Any real dtype and any strides are accepted; NaN and infinity are refused with the first bad
    index, since no ranking is defined for them.
    """
    arr = _one_dimensional(scores, name)
    if arr.size == 0:
        raise ValueError(f"{name} is empty: there is nothing to rank")
    if arr.dtype.kind not in "iuf":
        raise ValueError(f"{name} must be real numbers, got dtype {arr.dtype}")
    arr = arr.astype(np.float64, copy=False)
    finite = np.isfinite(arr)
    if not finite.all():
        bad = int(np.argmin(finite))
        raise ValueError(f"{name}[{bad}] = {arr[bad]!r} is not finite")
    return arr


def as_labels(labels, n: int, name: str = "labels") -> np.ndarray:
    """Return a boolean 'is positive' array from labels given as bool, {0, 1} or {-1, +1}."""
    arr = _one_dimensional(labels, name)
    if arr.shape[0] != n:
        raise ValueError(f"{name} has {arr.shape[0]} entries but there are {n} scores")
    if arr.dtype == np.bool_:
        return arr
    if arr.dtype.kind not in "iuf":
        raise ValueError(f"{name} must be bool, {{0, 1}} or {{-1, +1}}, got dtype {arr.dtype}")
    positive = arr == 1
    for other in (0, -1):
        if np.all(positive | (arr == other)):
            return positive
    allowed = positive | (arr == 0) | (arr == -1)
    if not allowed.all():
        bad = int(np.argmin(allowed))
        raise ValueError(f"{name}[{bad}] = {arr[bad]!r}: labels must be bool, {{0, 1}} or {{-1, +1}}")
    raise ValueError(f"{name} mix 0 and -1 as the negative label; use {{0, 1}} or {{-1, +1}}")


def as_query_groups(qid, n: int):
    """Group samples by query id.

    Returns (order, offsets, qids): query q owns samples order[offsets[q]:offsets[q+1]], in their
    input order; order is None when every query already occupies one contiguous block (no copy
    needed). qids lists the query ids in the order of the groups.
    """
    if qid is None:
        return None, np.array([0, n], dtype=np.int64), None
    arr = _one_dimensional(qid, "qid")
    if arr.shape[0] != n:
        raise ValueError(f"qid has {arr.shape[0]} entries but there are {n} scores")
    starts = np.flatnonzero(np.r_[True, arr[1:] != arr[:-1]])
    block_ids = arr[starts]
    offsets = np.r_[starts, n].astype(np.int64)
    if np.unique(block_ids).size == block_ids.size:
        return None, offsets, block_ids
    order = np.argsort(arr, kind="stable").astype(np.int64)
    sorted_ids = arr[order]
    starts = np.flatnonzero(np.r_[True, sorted_ids[1:] != sorted_ids[:-1]])
    return order, np.r_[starts, n].astype(np.int64), sorted_ids[starts]
