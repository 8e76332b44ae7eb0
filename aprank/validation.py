"""Every input check, once, before any kernel runs (shared by inference and the metrics).

Kernels are compiled without bounds checks, so everything they rely on is established here:
1-D arrays of equal length, finite float64 scores, binary labels, query groups. Nothing here
modifies the caller's arrays; a copy is made only where a dtype must change.

Refused with ValueError: masked arrays with masked entries (a mask would otherwise be dropped
silently: remove the masked samples, or fill them, first), query ids holding NaN (NaN equals
nothing, so each such sample would be a query of its own), complex query ids, or ids mixing
types that do not order (e.g. str and int). Integer scores beyond 2^53 in magnitude that
float64 rounds (distinct values may become ties) raise a :class:`PrecisionWarning`. Boolean
labels are read by truth value, whatever bytes they hold.
"""
from __future__ import annotations

import warnings
from math import isfinite

import numpy as np

from aprank._validation_cy import count_groups

__all__ = ["as_scores", "as_labels", "as_query_groups", "check_qid", "check_summable",
           "check_frame_columns", "names_relevant_class", "queries_without_relevant",
           "PrecisionWarning", "SUM_LIMIT"]


class PrecisionWarning(UserWarning):
    """Integer scores that float64 cannot hold exactly (beyond 2^53): they are rounded, so
    distinct scores may become ties. Shown once per calling location (Python's default
    warning filter); divide the scores by a common factor, or cast them yourself, to avoid it."""


def _one_dimensional(x, name: str) -> np.ndarray:
    if isinstance(x, np.ma.MaskedArray):
        mask = np.ma.getmaskarray(x)
        if mask.any():
            raise ValueError(
                f"{name} is a masked array with {int(mask.sum())} masked entries (the first at "
                f"index {int(np.argmax(mask.ravel()))}); aprank does not guess what a masked "
                "sample means: drop those samples (from every array) or fill them first")
        x = np.ma.getdata(x)
    arr = np.asarray(x)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got an array of shape {arr.shape}")
    return arr


def as_scores(scores, name: str = "scores") -> np.ndarray:
    """Return the scores as a 1-D float64 array (a view when they already are one).

    Any real dtype and any strides are accepted; NaN and infinity are refused with the first bad
    index, since no ranking is defined for them. Integers that float64 rounds (beyond 2^53)
    raise a :class:`PrecisionWarning`. Any finite magnitude is accepted: inference scales
    scores near the float64 limit itself (see ``aprank.infer``).

    Parameters
    ----------
    scores : array-like of shape (n,)
        Real numbers, n >= 1.
    name : str, default "scores"
        The argument's name in error messages.

    Returns
    -------
    ndarray of float64, shape (n,)
        The scores.
    """
    if (type(scores) is np.ndarray and scores.dtype == np.float64 and scores.ndim == 1
            and scores.shape[0] and isfinite(np.minimum.reduce(scores))
            and isfinite(np.maximum.reduce(scores))):
        # the common case: NaN propagates through both reductions and an infinity is an
        # extreme, so finite extremes mean every score is finite, without isfinite's array (on
        # small queries validation would otherwise cost more than a kernel); neither reduction
        # can overflow or warn
        return scores
    arr = _one_dimensional(scores, name)
    if arr.size == 0:
        raise ValueError(f"{name} is empty: there is nothing to rank")
    if arr.dtype.kind not in "iuf":
        raise ValueError(f"{name} must be real numbers, got dtype {arr.dtype}")
    original = arr
    arr = arr.astype(np.float64, copy=False)
    if original.dtype.kind in "iu" and original.dtype.itemsize > 4:
        bad = _rounded_index(original, arr)
        if bad is not None:
            warnings.warn(
                f"{name}[{bad}] = {int(original[bad])} is an integer beyond 2^53 that float64 "
                f"rounds to {float(arr[bad])!r}: distinct integer scores may become ties; divide "
                "the scores by a common factor (or cast them to float64 yourself) to silence this",
                PrecisionWarning, stacklevel=2)
    finite = np.isfinite(arr)
    if not finite.all():
        bad = int(np.argmin(finite))
        raise ValueError(f"{name}[{bad}] = {arr[bad].item()!r} is not finite")
    return arr


def _rounded_index(original: np.ndarray, converted: np.ndarray):
    """Index of the first 64-bit integer that float64 does not hold exactly, or None."""
    big = np.flatnonzero(np.abs(converted) > 2.0 ** 53)
    if big.size == 0:
        return None
    values, floats = original[big], converted[big]
    # a float at or past the dtype's bound (2^63 or 2^64) is a value rounded up beyond it
    beyond = floats >= 2.0 ** (8 * original.dtype.itemsize - (original.dtype.kind == "i"))
    safe = np.where(beyond, 0.0, floats).astype(original.dtype)
    rounded = beyond | (safe != values)
    return int(big[np.argmax(rounded)]) if rounded.any() else None


def as_labels(labels, n: int, name: str = "labels") -> np.ndarray:
    """Return a boolean 'is positive' array from labels given as bool, {0, 1} or {-1, +1}.

    The result always holds the bytes 0 and 1 (kernels read it as uint8): a bool array made
    from other bytes (``np.uint8`` data viewed as bool) is read by truth value, any non-zero
    byte being True, as NumPy's own logic does.

    Parameters
    ----------
    labels : array-like of shape (n,)
        Bool, {0, 1} or {-1, +1}.
    n : int
        The number of scores (the labels must have as many entries).
    name : str, default "labels"
        The argument's name in error messages.

    Returns
    -------
    ndarray of bool, shape (n,)
        True for a positive.
    """
    if (type(labels) is np.ndarray and labels.dtype == np.bool_ and labels.ndim == 1
            and labels.shape[0] == n):
        return labels.view(np.uint8) != 0        # the common case, without the checks below
    arr = _one_dimensional(labels, name)
    if arr.shape[0] != n:
        raise ValueError(f"{name} has {arr.shape[0]} entries but there are {n} scores")
    if arr.dtype == np.bool_:
        return arr.view(np.uint8) != 0
    if arr.dtype.kind not in "iuf":
        raise ValueError(f"{name} must be bool, {{0, 1}} or {{-1, +1}}, got dtype {arr.dtype}")
    positive = arr == 1
    for other in (0, -1):
        if np.all(positive | (arr == other)):
            return positive
    allowed = positive | (arr == 0) | (arr == -1)
    if not allowed.all():
        bad = int(np.argmin(allowed))
        raise ValueError(f"{name}[{bad}] = {arr[bad].item()!r}: labels must be bool, {{0, 1}} "
                         "or {-1, +1}")
    raise ValueError(f"{name} mix 0 and -1 as the negative label; use {{0, 1}} or {{-1, +1}}")


def as_query_groups(qid, n: int, *, return_slot: bool = False):
    """Group samples by query id.

    Query ids must be comparable with each other (real numbers, or strings, not both) and not
    NaN; complex ids are refused.

    Parameters
    ----------
    qid : array-like of shape (n,) or None
        One query id per sample; None: every sample in one query.
    n : int
        The number of samples.
    return_slot : bool, default False
        Also return ``slot``, the inverse of ``order``.

    Returns
    -------
    order : ndarray of int64 or None
        Query q owns samples ``order[offsets[q]:offsets[q+1]]``, in their input order; None
        when the queries already occupy contiguous blocks in ascending id order (no copy
        needed).
    offsets : ndarray of int64
        The groups' boundaries, n_queries + 1 of them.
    qids : ndarray or None
        The query ids in the order of the groups (None without ``qid``): ascending, as
        ``np.unique(qid)`` gives them, whatever the layout (contiguous or interleaved), so
        every per-query output of the package has one order.
    slot : ndarray of int64 or None
        Only with ``return_slot``: each sample's position in ``order`` (its inverse,
        ``order[slot[k]] == k``), None when ``order`` is. The counting pass writes it as it
        places the samples, in input order, which costs far less than inverting ``order``
        afterwards (a write to a random position per sample).
    """
    if qid is None:
        groups = None, np.array([0, n], dtype=np.int64), None
        return groups + (None,) if return_slot else groups
    arr = _one_dimensional(qid, "qid")
    if arr.shape[0] != n:
        raise ValueError(f"qid has {arr.shape[0]} entries but there are {n} scores")
    if arr.dtype.kind == "c":
        # complex numbers have no order of their own (NumPy's is lexicographic, a convention)
        raise ValueError("qid must hold real numbers or strings, got complex ids (dtype "
                         f"{arr.dtype})")
    if arr.dtype.kind in "fcO":
        # x != x holds for NaN only (also inside an object array), in one vectorised pass
        nan = np.asarray(arr != arr, dtype=bool)
        if nan.any():
            raise ValueError(f"qid[{int(np.argmax(nan))}] is NaN: NaN equals no id, not even "
                             "itself, so it names no query")
    try:
        order, offsets, ids, slot = _grouped(arr, n, return_slot)
    except TypeError:       # sorting ids that do not order together (an object array)
        kinds = sorted({type(v).__name__ for v in arr})
        raise ValueError(f"qid mixes ids of types {kinds} that cannot be ordered together; use "
                         "one type (all numbers or all strings)") from None
    if not return_slot:
        return order, offsets, ids
    if order is not None and slot is None:
        slot = np.empty(n, dtype=np.int64)
        slot[order] = np.arange(n, dtype=np.int64)
    return order, offsets, ids, slot


#: Integer ids spanning at most this many values beyond n are grouped by a counting sort
#: (memory 8 bytes per value of the range); wider ones by a stable argsort.
COUNTING_SLACK = 1 << 16


def _grouped(arr: np.ndarray, n: int, with_slot: bool):
    """as_query_groups' (order, offsets, qids) for valid ids, and the slot where the counting
    pass wrote it (``with_slot``; else None)."""
    if arr.dtype.kind in "iu" and n > 0:
        lo, hi = int(arr.min()), int(arr.max())
        if hi - lo < 2 * n + COUNTING_SLACK:
            # signed: widen before shifting (int8 - min could wrap); unsigned: shift first
            # (values past 2^63 do not fit int64, their offsets from the minimum do)
            shifted = (np.subtract(arr, lo, dtype=np.int64) if arr.dtype.kind == "i" else
                       (arr - arr.dtype.type(lo)).astype(np.int64))
            order, offsets, slot = count_groups(shifted, hi - lo + 1, with_slot)
            if order is not None:
                return order, offsets, arr[order[offsets[:-1]]], slot
            return _ascending_blocks(offsets, arr[offsets[:-1]]) + (None,)
    starts = np.flatnonzero(np.r_[True, arr[1:] != arr[:-1]])
    block_ids = arr[starts]
    offsets = np.r_[starts, n].astype(np.int64)
    if np.unique(block_ids).size == block_ids.size:
        return _ascending_blocks(offsets, block_ids) + (None,)
    order = np.argsort(arr, kind="stable").astype(np.int64)
    sorted_ids = arr[order]
    starts = np.flatnonzero(np.r_[True, sorted_ids[1:] != sorted_ids[:-1]])
    return order, np.r_[starts, n].astype(np.int64), sorted_ids[starts], None


def _ascending_blocks(offsets: np.ndarray, block_ids: np.ndarray):
    """as_query_groups' result for queries in contiguous blocks (one per query): no order
    when the blocks come in ascending id order, else the blocks gathered in that order (what a
    stable argsort would give, in O(n))."""
    if np.all(block_ids[1:] > block_ids[:-1]):
        return None, offsets, block_ids
    perm = np.argsort(block_ids, kind="stable")
    sizes = np.diff(offsets)[perm]
    new_offsets = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    shift = np.repeat(offsets[:-1][perm] - new_offsets[:-1], sizes)
    order = np.arange(offsets[-1], dtype=np.int64) + shift
    return order, new_offsets, block_ids[perm]


#: Sums of values bounded in total by this stay finite with room for the few further
#: additions the problem types without their own scaling make (top-k, pairwise, latent).
SUM_LIMIT = 2.0 ** 1016


def check_summable(what: str, *terms) -> None:
    """Refuse values whose sums could overflow float64.

    The sum over the terms of max(abs(values)) times count must stay within :data:`SUM_LIMIT`,
    which bounds every sum of at most ``count`` of those values.

    Parameters
    ----------
    what : str
        What the values are, named by the ValueError.
    *terms : tuple
        ``(values, count)`` pairs.

    Raises
    ------
    ValueError
        When the bound exceeds :data:`SUM_LIMIT`.
    """
    bound = 0.0
    for values, count in terms:
        values = np.asarray(values)
        if values.size:
            # Python floats: inf, no warning
            bound += float(np.max(np.abs(values))) * float(count)
    if not bound <= SUM_LIMIT:
        reach = f"{bound:.3g}" if bound < float("inf") else "more than 1.8e308"
        raise ValueError(
            f"{what} are too large for float64 arithmetic: sums of them may reach {reach}, "
            f"beyond 2^1016 (~{SUM_LIMIT:.3g}) where they overflow; rescale them (e.g. divide "
            "by their largest magnitude) before inference")


def check_qid(qid, n: int):
    """An estimator's ``qid`` argument as an array, checked for shape (None stays None).

    Parameters
    ----------
    qid : array-like of shape (n,) or None
        Query ids, one per sample.
    n : int
        The number of samples.

    Returns
    -------
    ndarray of shape (n,) or None

    Raises
    ------
    ValueError
        If ``qid`` is not 1-D with one entry per sample.
    """
    if qid is None:
        return None
    qid = np.asarray(qid)
    if qid.ndim != 1 or qid.shape[0] != n:
        raise ValueError(f"qid must be 1-D with one entry per sample ({n}), got shape {qid.shape}")
    return qid


def check_frame_columns(X, name: str = "X") -> None:
    """A data frame's columns that are not numbers, refused by name: scikit-learn's
    conversion says only "could not convert string to float: 'a'", not which column.

    Parameters
    ----------
    X : object
        Anything; only a frame (``columns`` and ``dtypes``, as pandas' and polars' have) is
        looked at, column by column where a column's dtype is not numeric or bool.
    name : str, default "X"
        The argument's name in the message.

    Raises
    ------
    ValueError
        Naming the first column that does not convert to float64, its dtype and why.
    """
    columns, dtypes = getattr(X, "columns", None), getattr(X, "dtypes", None)
    if columns is None or dtypes is None or not hasattr(X, "__getitem__"):
        return
    try:
        pairs = list(zip(list(columns), list(dtypes)))
    except TypeError:
        return
    for col, dtype in pairs:
        if getattr(dtype, "kind", "O") in "biuf":
            continue
        try:
            np.asarray(X[col], dtype=np.float64)
        except (TypeError, ValueError) as err:
            raise ValueError(f"{name}'s column {col!r} (dtype {dtype}) is not numeric: "
                             f"{err}; encode it as numbers (e.g. one-hot) or drop it") from None


def names_relevant_class(classes) -> bool:
    """Whether two sorted labels say by themselves which one is relevant: bool, {0, 1} or
    {-1, +1} (the larger is). Any other pair (strings, {1, 2}, ...) does not; an estimator
    fitted on it ranks the second as relevant and says so.

    Parameters
    ----------
    classes : array-like of shape (2,)
        The distinct labels, sorted.

    Returns
    -------
    bool
    """
    classes = np.asarray(classes)
    if classes.dtype == np.bool_:
        return True
    values = set(classes.tolist()) if classes.dtype.kind in "iuf" else set()
    return bool(values) and (values <= {0, 1} or values <= {-1, 1})


def queries_without_relevant(relevant, qid) -> tuple:
    """The queries that hold no relevant sample, where a metric is undefined.

    Parameters
    ----------
    relevant : array-like of shape (n,)
        Whether each sample is relevant (bool, or numbers where > 0 is relevant).
    qid : array-like of shape (n,)
        One query id per sample.

    Returns
    -------
    empty : list
        The ids of the queries without a relevant sample, ascending.
    n_queries : int
        The number of queries.
    """
    ids, inverse = np.unique(np.asarray(qid), return_inverse=True)
    has = np.bincount(inverse.ravel(), weights=np.asarray(relevant, dtype=np.float64),
                      minlength=ids.size) > 0
    return ids[~has].tolist(), int(ids.size)
