"""The pieces of exact AP / NDCG inference for one query whose negatives are split into parts
(machines, files, chunks), run by ``aprank.dask``'s models (``_models.py``, ``_split.py``).

Why a split solve can be exact (Mohapatra et al. 2018, Observation 2 and section 4): the j-th
negative in rank order, with score s, gets the interleaving rank opt_j, a function of s, j and the
positives alone; and opt_j does not decrease with j. So a part needs only two things from the rest
of the query: the positives (few: they fit on one machine) and the global position j of a key,
which is the sum over parts of how many negatives each holds before it. Ranks of a few sampled
negatives then settle whole ranges of the global order at once -- every negative between two
of equal rank has that rank -- exactly as a pivot does in OptRanks (``qs``); each part keeps
its negatives in one bucket per range, unordered inside, and splits only the open ones
(``split_buckets``).

Functions here are the per-part and per-query steps; the round trips between them belong to
whoever moves the data (``aprank.dask.infer``).
"""
from __future__ import annotations

import numpy as np

import aprank.dask._split_cy as _split_cy
from aprank import validation
from aprank.losses import get_loss

__all__ = ["rank_order", "split_buckets", "optimal_ranks", "negative_coef", "split_outcome"]


def rank_order(scores, index) -> np.ndarray:
    """The permutation putting (scores, index) in rank order: descending score, equal scores by
    ascending index (the tie rule of every exact algorithm)."""
    return np.lexsort((np.asarray(index), -np.asarray(scores, dtype=np.float64)))


def split_buckets(s, x, local, bounds, buckets, right_s, right_x, cand_ptr, cand_s, cand_x):
    """Split buckets of negatives at candidate keys (one machine's step of a split solve).

    The negatives (scores s, global indices x, positions local) lie in buckets,
    ``s[bounds[k]:bounds[k+1]]`` holding those of keys in (anchor k, anchor k+1] in any order
    but the one equal to anchor k+1 last (if it is here). Bucket ``buckets[g]`` (ascending),
    whose right anchor is (right_s[g], right_x[g]), is split at the candidates
    ``cand[cand_ptr[g]:cand_ptr[g+1]]`` (in rank order, strictly inside its range).

    Returns (s, x, local, bounds, at_or_before): new arrays with the candidates as anchors,
    and per candidate the number of this machine's negatives at or before it. The inputs are
    not modified.
    """
    s, x, local = (np.ascontiguousarray(a) for a in (s, x, local))
    bounds, buckets, cand_ptr = (np.ascontiguousarray(a, dtype=np.int64)
                                 for a in (bounds, buckets, cand_ptr))
    cand_s = np.ascontiguousarray(cand_s, dtype=np.float64)
    cand_x = np.ascontiguousarray(cand_x, dtype=np.int64)
    n_buckets = bounds.shape[0] - 1
    sizes = np.diff(bounds)
    if (s.ndim != 1 or x.shape != s.shape or local.shape != s.shape or bounds[0] != 0
            or bounds[-1] != s.shape[0] or np.any(sizes < 0)):
        raise ValueError("s, x, local must be equally long and bounds must cut them into buckets")
    if buckets.size and (np.any(np.diff(buckets) <= 0) or buckets[0] < 0
                         or buckets[-1] >= n_buckets):
        raise ValueError(f"buckets must be ascending ids below {n_buckets}")
    if (cand_ptr.shape != (buckets.size + 1,) or cand_ptr[0] != 0 or np.any(np.diff(cand_ptr) < 0)
            or cand_ptr[-1] != cand_s.shape[0] or cand_x.shape != cand_s.shape):
        raise ValueError("cand_ptr must cut the candidates into one run per bucket split")
    new_s, new_x, new_local = s.copy(), x.copy(), local.copy()
    at_or_before = np.empty(cand_s.shape[0], dtype=np.int64)
    widest = int(sizes[buckets].max()) if buckets.size else 0
    most = int(np.diff(cand_ptr).max()) if buckets.size else 0
    _split_cy.split_buckets(
        s, x, local, new_s, new_x, new_local, bounds, buckets,
        np.ascontiguousarray(right_s, dtype=np.float64),
        np.ascontiguousarray(right_x, dtype=np.int64),
        cand_ptr, cand_s, cand_x, at_or_before, np.empty(max(widest, 1), dtype=np.int64),
        np.empty(2 * most + 2, dtype=np.int64))
    cuts = np.repeat(buckets + 1, np.diff(cand_ptr))
    at_or_before += bounds[cuts - 1]       # the kernel counts within the bucket
    new_bounds = np.insert(bounds, cuts, at_or_before)
    return new_s, new_x, new_local, new_bounds, at_or_before


def optimal_ranks(positives, scores, positions, n_negatives: int, *, loss="ap", lo=None,
                  hi=None) -> np.ndarray:
    """opt_j: the interleaving rank (1 ... P+1) of negatives with the given scores at the given
    1-based positions j among all ``n_negatives`` negatives of the query, computed as the
    compiled algorithms compute it (the same code, the same tie rule: the largest maximiser).

    positives : the query's P positive scores (any order).
    lo, hi : optional per-negative bounds known to hold the rank (default 1 and P+1); a solver
        that knows opt_j of neighbours passes them, as OptRanks does.
    """
    loss = get_loss(loss)
    pos = np.sort(validation.as_scores(positives, "positives"))[::-1].copy()
    s = validation.as_scores(scores) if np.size(scores) else np.zeros(0)
    j = np.ascontiguousarray(positions, dtype=np.int64)
    P, n_negatives = pos.shape[0], int(n_negatives)
    if j.shape != s.shape:
        raise ValueError(f"positions has shape {j.shape} but scores has {s.shape}")
    if j.size and (j.min() < 1 or j.max() > n_negatives):
        raise ValueError(f"positions must lie in 1 ... n_negatives = {n_negatives}")
    lo = np.ones_like(j) if lo is None else np.ascontiguousarray(lo, dtype=np.int64)
    hi = np.full_like(j, P + 1) if hi is None else np.ascontiguousarray(hi, dtype=np.int64)
    if lo.shape != j.shape or hi.shape != j.shape or (j.size and (
            lo.min() < 1 or hi.max() > P + 1 or np.any(lo > hi))):
        raise ValueError(f"lo and hi must satisfy 1 <= lo <= hi <= P+1 = {P + 1}, per negative")
    # the split kernels do not scale queries near DBL_MAX as the driver does (see _driver_cy)
    if max(np.abs(pos).max(initial=0.0), np.abs(s).max(initial=0.0)) > 2.0 ** 1020:
        raise ValueError("scores beyond 2^1020 in magnitude overflow a split solve's score "
                         "differences; rescale the scores (e.g. divide them by their largest "
                         "magnitude) first")
    spec = loss.kernel_spec(P + n_negatives)
    out = np.empty(j.shape[0], dtype=np.int64)
    _split_cy.opt_ranks(pos, spec.code, spec.discount, n_negatives, s, j, lo, hi, out)
    return out


def negative_coef(loss, ranks, n_pos: int, n_neg: int) -> np.ndarray:
    """Joint-feature coefficients of negatives at the given interleaving ranks: the loss's
    statement (``loss.coef``), which the driver's ``finish`` computes to the bit."""
    return loss.coef(ranks, False, n_pos, n_neg)


def split_outcome(loss, positives, count, pairs, n_negatives: int):
    """The positives' ranks and coefficients, the loss and the objective of a query from what
    its parts report about their negatives (the driver's ``finish``, summed over parts).

    positives : the P positive scores in rank order.
    count : (P+2,) number of negatives at each interleaving rank r (index r; 0 unused).
    pairs : sum over negatives of (P - r + 1) (s - c), c = positives[P // 2] (scores centred on
        a positive so the sum keeps its precision when all scores share a large offset).
    Returns (ranks, coef, loss, objective), ranks and coef for the positives in rank order.
    """
    loss = get_loss(loss)
    pos = np.asarray(positives, dtype=np.float64)
    P, N = pos.shape[0], int(n_negatives)
    count = np.asarray(count, dtype=np.int64)
    above = np.cumsum(count[1:P + 1])           # negatives above the r-th positive
    centre = pos[P // 2]
    suffix = np.cumsum((pos - centre)[::-1])[::-1]    # suffix[r-1] = sum_{i >= r} (pos_i - c)
    inverted = float(pairs) - float(count[1:P + 1] @ suffix)
    inv_pn = 1.0 / (float(P) * float(N))
    coef = loss.coef(1 + above, True, P, N)
    value = float(loss.from_pattern(above, P, N))
    return 1 + above, coef, value, value + 2.0 * inv_pn * inverted
