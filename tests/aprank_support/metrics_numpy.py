"""The reference for the compiled metrics: aprank.metrics's metrics as one vectorised NumPy pass.

The samples are sorted once by (query, decreasing score), and every per-query sum is a segment
sum over that order (the compiled pass sorts and sums each query in a buffer of its own); the two
share only aprank.validation's input checks and query grouping. tests/test_metrics_compiled.py
holds the compiled pass to it, value for value (1e-12), error for error.
"""
from __future__ import annotations

import numbers

import numpy as np

from aprank.validation import as_labels, as_query_groups, as_scores

__all__ = ["average_precision", "ndcg", "precision_at_k", "TIE_POLICIES"]

#: The tie policies, the values of every metric's ``ties=``.
TIE_POLICIES = ("sklearn", "expected", "pessimistic", "optimistic")

#: Sort key breaking score ties by gain, for the policies that resolve ties that way (the sort is
#: ascending: "optimistic" puts higher gains first, "pessimistic" lower ones).
_GAIN_TIE_KEY = {"optimistic": np.negative, "pessimistic": np.positive}


def _check_options(ties, empty):
    """Refuse an unknown tie policy or empty-query rule before any work is done."""
    if not isinstance(ties, str) or ties not in TIE_POLICIES:
        raise ValueError(f"ties={ties!r} is not a tie policy; "
                         f"use one of {', '.join(map(repr, TIE_POLICIES))}")
    if isinstance(empty, str):
        if empty in ("error", "skip"):
            return
    elif isinstance(empty, numbers.Real) and not isinstance(empty, bool) and empty in (0, 1):
        return
    raise ValueError(f"empty={empty!r} must be 'error', 'skip', 0 or 1")


def _check_k(k, allow_none: bool):
    """Refuse a cutoff that is not an int >= 1 (bools excluded: True would silently mean 1)."""
    if k is None and allow_none:
        return
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
        raise ValueError(f"k={k!r} must be an int >= 1" + (" or None" if allow_none else ""))


def _as_gains(y_true, n: int) -> np.ndarray:
    """NDCG's gains as float64 under the module's label rule: bool and {-1, +1} labels become
    0/1, any other input must be finite and non-negative."""
    if np.asarray(y_true).dtype == np.bool_:
        return as_labels(y_true, n, "y_true").astype(np.float64)
    # the checks of scores are those of gains too (1-D, real, finite, no masked entries)
    gain = as_scores(y_true, "y_true")
    if gain.shape[0] != n:
        raise ValueError(f"y_true has {gain.shape[0]} entries but there are {n} scores")
    bad = (gain < 0) & (gain != -1)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"y_true[{i}] = {gain[i].item()!r}: relevance must be non-negative, "
                         "or binary labels in {-1, +1}")
    if not (gain == -1).any():
        return gain
    binary = (gain == 1) | (gain == -1)
    if not binary.all():
        i = int(np.argmin(binary))
        raise ValueError(f"y_true[{i}] = {gain[i].item()!r}, but y_true holds -1, which is only "
                         "allowed in binary labels {-1, +1}; use {0, 1} or non-negative gains")
    return (gain == 1).astype(np.float64)


def _stable_order(keys, bound: int):
    """Stable argsort of non-negative integers below ``bound``.

    LSD radix passes over 16-bit digits: NumPy sorts uint16 stably by counting, O(n) a pass,
    about 3 x faster than its stable (merge) sort of int64 at n = 1e6, and query indices rarely
    need more than two passes.
    """
    order, shift = None, 0
    while True:
        digits = ((keys if order is None else keys[order]) >> shift) & 0xFFFF
        step = np.argsort(digits.astype(np.uint16), kind="stable")
        order = step if order is None else order[step]
        shift += 16
        if bound <= 1 << shift:
            return order


def _by_query(order, query, n_queries: int):
    """``order`` stably regrouped by query (``query``: each position's query index), a radix
    pass; one query needs none."""
    return order if n_queries <= 1 else order[_stable_order(query[order], n_queries)]


class _Ranking:
    """Every query ranked at once.

    Positions are grouped by query (query q holds positions ``offsets[q]:offsets[q + 1]``) and
    ordered by decreasing score within a query. ``gain`` is the gain at each position,
    ``query`` its query's index and ``qpos`` its 0-based rank within the query. Tie blocks
    (equal scores within a query) start at ``bstart`` with ``bsize`` positions and gain sum
    ``bsum``; ``block`` is each position's block and ``qblock`` each query's first block. For
    "pessimistic"/"optimistic" the ties are resolved by the gain in the sort, so every position is
    its own block and the tie-aware formulas reduce to the tie-free ones.
    """

    def __init__(self, score, gain, qid, ties):
        n = score.shape[0]
        grouping, offsets, ids = as_query_groups(qid, n)
        self.ids = np.zeros(1, dtype=np.int64) if ids is None else ids
        self.offsets = offsets
        self.starts = offsets[:-1]
        self.sizes = np.diff(offsets)
        n_queries = self.sizes.shape[0]
        # each position's query, in the grouped order and in the input order
        self.query = np.repeat(np.arange(n_queries), self.sizes)
        query = self.query if grouping is None else np.empty(n, dtype=np.intp)
        if grouping is not None:
            query[grouping] = self.query

        # Stable passes from the least significant key (the gain, for the policies that break
        # ties by it; the score; the query) instead of one np.lexsort: the score pass may use
        # the unstable (SIMD) sort when nothing precedes it, since the metrics do not depend on
        # the order within a tie block, the query pass is a radix sort, and it is skipped for a
        # single query; together faster than one np.lexsort of (score, query) at n = 1e6.
        tie_key = _GAIN_TIE_KEY.get(ties)
        if tie_key is None:
            order = np.argsort(-score)
        else:
            order = np.argsort(tie_key(gain), kind="stable")
            order = order[np.argsort(-score[order], kind="stable")]
        order = _by_query(order, query, n_queries)

        self.gain = gain[order]
        self.qpos = np.arange(n) - self.starts[self.query]
        if tie_key is None:
            ranked_score = score[order]
            new = np.empty(n, dtype=bool)
            new[0] = True
            np.not_equal(ranked_score[1:], ranked_score[:-1], out=new[1:])
            new[self.starts] = True
            self.bstart = np.flatnonzero(new)
            self.block = np.cumsum(new) - 1
        else:
            self.bstart = np.arange(n)
            self.block = self.bstart
        self.bsize = np.diff(np.r_[self.bstart, n])
        self.bsum = np.add.reduceat(self.gain, self.bstart)
        self.qblock = self.block[self.starts]
        self.total = np.add.reduceat(self.gain, self.starts)
        self.nonempty = np.logical_or.reduceat(self.gain != 0, self.starts)

    def per_query(self, x):
        """Sum of a per-position array over each query."""
        return np.add.reduceat(x, self.starts)

    def per_query_blocks(self, x):
        """Sum of a per-block array over each query."""
        return np.add.reduceat(x, self.qblock)

    def cumulative_blocks(self, x):
        """Running sum of a per-block array within each query (through the block itself).

        One running sum over all queries minus its value before each query: exact for the
        integer counts AP uses; real values would carry the rounding of earlier queries."""
        running = np.cumsum(x)
        before = (running - x)[self.qblock]
        return running - np.repeat(before, np.diff(np.r_[self.qblock, x.shape[0]]))

    def expected_gain(self):
        """Expected gain at each position when every tie block is in uniformly random order."""
        # Under a uniformly random order of a tie block, every position in it holds the block's
        # mean gain in expectation; that is all a metric linear in the per-position gains needs.
        return (self.bsum / self.bsize)[self.block]

    def divide(self, x, denominator):
        """x / denominator per query; empty queries (denominator 0) get NaN until
        :func:`_finish` decides their value."""
        out = np.full(x.shape[0], np.nan)
        np.divide(x, denominator, out=out, where=self.nonempty)
        return out


def _ap_values(r: _Ranking, ties) -> np.ndarray:
    """AP of each query from its binary (0/1) gains."""
    cum = r.cumulative_blocks(r.bsum)
    if ties != "expected":
        # One threshold per block; with singleton blocks this is plain AP.
        return r.divide(r.per_query_blocks(r.bsum * cum / (r.qpos[r.bstart] + r.bsize)), r.total)
    # See expected_ap_derivation in average_precision's docstring.
    rb, mb = r.bsum[r.block], r.bsize[r.block]
    j = np.arange(r.gain.shape[0]) - r.bstart[r.block]
    before = (cum - r.bsum)[r.block]
    others = j * (rb - 1) / np.maximum(mb - 1, 1)
    return r.divide(r.per_query(rb / mb * (before + 1 + others) / (r.qpos + 1)), r.total)


def _ndcg_values(r: _Ranking, k, discount) -> np.ndarray:
    """NDCG (cut at k unless None) of each query."""
    longest = int(r.sizes.max())
    if discount is None:
        table = 1.0 / np.log2(np.arange(longest) + 2.0)
    else:
        # only an empty query (whose value is not computed) may be longer than the discount
        table = np.zeros(longest)
        table[:min(longest, discount.size)] = discount[:longest]
    if k is not None:
        table[k:] = 0.0
    at = table[r.qpos]
    dcg = r.per_query(r.expected_gain() * at)
    if np.all((r.gain == 0) | (r.gain == 1)):
        # binary gains: the ideal ranking puts a query's R relevant samples first, so its DCG is
        # the sum of the first R discounts; no second sort
        return r.divide(dcg, np.r_[0.0, np.cumsum(table)][r.total.astype(np.intp)])
    # the ideal ranking: each query's gains in decreasing order, positions (and so discounts)
    # unchanged since the query blocks keep their offsets
    order = _by_query(np.argsort(-r.gain), r.query, r.sizes.shape[0])
    ideal = r.per_query(r.gain[order] * at)
    # "sklearn" equals "expected" for NDCG: the DCG is linear in the gain at each position.
    return r.divide(dcg, ideal)


def _precision_values(r: _Ranking, k) -> np.ndarray:
    """Precision at k of each query from its binary (0/1) gains."""
    return r.divide(r.per_query(np.where(r.qpos < k, r.expected_gain(), 0.0)),
                    np.full(r.sizes.shape[0], float(k)))


def _undefined_query(r: _Ranking, where: int, qid) -> ValueError:
    """The error for the query at ``where`` having no relevant sample."""
    name = "the input" if qid is None else f"query {r.ids[where:where + 1].tolist()[0]!r}"
    return ValueError(f"{name} has no relevant sample, so the metric is undefined; "
                      "pass empty='skip', 0 or 1 to decide (the estimators' score leaves "
                      "such queries out: empty='skip' gives its number)")


def _finish(r: _Ranking, values, qid, empty, per_query):
    """Apply the empty-query rule to per-query values and aggregate them."""
    keep = np.ones(values.shape[0], dtype=bool)
    if not r.nonempty.all():
        if empty == "error":
            raise _undefined_query(r, int(np.argmin(r.nonempty)), qid)
        if empty == "skip":
            keep = r.nonempty
        else:
            values[~r.nonempty] = float(empty)
    if not keep.any():
        raise ValueError("every query has no relevant sample and was skipped; nothing to average")
    if per_query:
        return r.ids[keep], values[keep]
    return float(np.mean(values[keep]))


def average_precision(y_true, y_score, *, ties="sklearn", qid=None, empty="error", per_query=False):
    """Non-interpolated average precision of binary relevance ``y_true`` ranked by ``y_score``.

    AP = (1/R) * sum over relevant samples of the precision at their rank, R relevant in total.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary relevance: bool, {0, 1} or {-1, +1}.
    y_score : array-like of shape (n,)
        The scores; samples are ranked by decreasing score.
    ties : {"sklearn", "expected", "pessimistic", "optimistic"}, default "sklearn"
        What happens to samples with equal scores (see the module docstring).
    qid : array-like of shape (n,), optional
        One query id per sample: the metric is computed per query and averaged. Without it the
        whole input is one query.
    empty : {"error", "skip", 0, 1}, default "error"
        What a query without a defined value (no relevant sample) does: raise ValueError
        naming it, be left out of the mean, or count as that value.
    per_query : bool, default False
        Return ``(query_ids, values)`` instead of the mean, skipped queries omitted (without
        ``qid`` the single query is given id 0).

    Returns
    -------
    float or (ndarray, ndarray)
        The mean over the queries; with ``per_query``, the query ids and each one's value.

    Notes
    -----
    The expected AP under ties (``ties="expected"``): take a tie block of m samples, r of them
    relevant, with N samples and R_b relevant ranked before it. In a uniformly random order of
    the block, position j (0-based in the block, rank N + j + 1) is relevant with probability
    r/m; given that, each of the other r - 1 relevant samples is in one of the j earlier slots
    with probability j/(m - 1). The precision at that rank has a fixed denominator N + j + 1, so
    by linearity of expectation the block contributes

        sum_j (r/m) * (R_b + 1 + j (r - 1)/(m - 1)) / (N + j + 1)

    to R * AP (McSherry & Najork, ECIR 2008). This is exact and O(n) after the sort.
    """
    _check_options(ties, empty)
    score = as_scores(y_score, "y_score")
    rel = as_labels(y_true, score.shape[0], "y_true").astype(np.float64)
    r = _Ranking(score, rel, qid, ties)
    return _finish(r, _ap_values(r, ties), qid, empty, per_query)


def ndcg(y_true, y_score, *, k=None, ties="sklearn", qid=None, empty="error", per_query=False,
         discount=None):
    """Normalised discounted cumulative gain, as ``sklearn.metrics.ndcg_score`` computes it.

    A query whose gains are all zero is empty.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        The gains: the non-negative relevances themselves (graded relevance allowed; binary
        labels in {-1, +1} give gains 0 and 1, see the module's label rule).
    y_score : array-like of shape (n,)
        The scores; samples are ranked by decreasing score.
    k : int, optional
        Only the top k ranks count, for both the DCG and the ideal DCG.
    ties : {"sklearn", "expected", "pessimistic", "optimistic"}, default "sklearn"
        What happens to samples with equal scores (see the module docstring).
    qid : array-like of shape (n,), optional
        One query id per sample: the metric is computed per query and averaged. Without it the
        whole input is one query.
    empty : {"error", "skip", 0, 1}, default "error"
        What a query without a defined value (every gain zero) does: raise ValueError
        naming it, be left out of the mean, or count as that value.
    per_query : bool, default False
        Return ``(query_ids, values)`` instead of the mean, skipped queries omitted (without
        ``qid`` the single query is given id 0).
    discount : array-like, optional
        The discount at rank i is ``discount[i-1]`` (finite and non-negative, covering every
        position of a query); default 1/log2(1 + i).

    Returns
    -------
    float or (ndarray, ndarray)
        The mean over the queries; with ``per_query``, the query ids and each one's value.
    """
    _check_options(ties, empty)
    _check_k(k, allow_none=True)
    if discount is not None:
        discount = np.asarray(discount, dtype=np.float64)
        if discount.ndim != 1 or not np.isfinite(discount).all() or (discount < 0).any():
            raise ValueError("discount must be a 1-D array of finite, non-negative values")
    score = as_scores(y_score, "y_score")
    gain = _as_gains(y_true, score.shape[0])
    r = _Ranking(score, gain, qid, ties)
    if discount is not None:
        # the first query, in query order, that is either undefined or longer than the
        # discount decides which error is raised
        short = r.nonempty & (r.sizes > discount.size)
        if short.any():
            q = int(np.argmax(short))
            if empty == "error" and not r.nonempty[:q].all():
                raise _undefined_query(r, int(np.argmin(r.nonempty)), qid)
            raise ValueError(f"discount has {discount.size} values but a query has "
                             f"{int(r.sizes[q])} samples")
    return _finish(r, _ndcg_values(r, k, discount), qid, empty, per_query)


def precision_at_k(y_true, y_score, k, *, ties="expected", qid=None, empty="error",
                   per_query=False):
    """Fraction of relevant samples among the top ``k`` by score, for binary ``y_true``.

    Always divided by k, also for a query with fewer than k samples (as trec_eval does). With
    ties="expected" (and "sklearn", which means the same here) a tie block straddling rank k
    contributes its fraction of relevant samples for each of its slots within the top k.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary relevance: bool, {0, 1} or {-1, +1}.
    y_score : array-like of shape (n,)
        The scores; samples are ranked by decreasing score.
    k : int
        The number of top ranks counted (>= 1).
    ties : {"sklearn", "expected", "pessimistic", "optimistic"}, default "expected"
        What happens to samples with equal scores (see the module docstring).
    qid : array-like of shape (n,), optional
        One query id per sample: the metric is computed per query and averaged. Without it the
        whole input is one query.
    empty : {"error", "skip", 0, 1}, default "error"
        What a query without a defined value (no relevant sample) does: raise ValueError
        naming it, be left out of the mean, or count as that value.
    per_query : bool, default False
        Return ``(query_ids, values)`` instead of the mean, skipped queries omitted (without
        ``qid`` the single query is given id 0).

    Returns
    -------
    float or (ndarray, ndarray)
        The mean over the queries; with ``per_query``, the query ids and each one's value.
    """
    _check_options(ties, empty)
    _check_k(k, allow_none=False)
    score = as_scores(y_score, "y_score")
    rel = as_labels(y_true, score.shape[0], "y_true").astype(np.float64)
    r = _Ranking(score, rel, qid, ties)
    return _finish(r, _precision_values(r, k), qid, empty, per_query)
