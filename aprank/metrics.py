"""Ranking metrics with an explicit policy for tied scores.

Every metric is called like scikit-learn's, ``metric(y_true, y_score, ...)``, ranks samples by
decreasing score and returns a Python float. What happens to samples with equal scores is chosen
with ``ties=``:

=============== ============================== ============================== ==================
``ties``        average_precision              ndcg                           precision_at_k
=============== ============================== ============================== ==================
"sklearn"       one threshold per distinct     gains averaged within a tie    same as "expected"
                score, as                      block, as ``ndcg_score``
                ``average_precision_score``    (equals "expected")
"expected"      mean over all orders of the    mean over all orders of the    mean over all
                tied samples (exact, O(n))     tied samples                   orders of ties
"pessimistic"   less relevant samples first    lower gains first              non-relevant first
"optimistic"    more relevant samples first    higher gains first             relevant first
=============== ============================== ============================== ==================

Without ties all four policies give the same value.

``qid`` (one query id per sample; a query's samples need not be contiguous) makes the metric be
computed per query and averaged. A query with no relevant sample (for NDCG: every gain zero) has
no defined value; ``empty=`` decides: ``"error"`` raises ValueError naming the query, ``"skip"``
leaves it out of the mean, and ``0`` or ``1`` uses that value. Without ``qid`` the whole input is
one query under the same rule. ``per_query=True`` returns ``(query_ids, values)`` instead of the
mean (in ascending query id order, whatever the layout of ``qid``), skipped queries omitted;
without ``qid`` the single query is given id 0.

Labels, one rule for every metric: ``y_true`` given as bool, {0, 1} or {-1, +1} (only those
two values; -1 is not relevant) is binary relevance, read as gains 0 and 1. ``average_precision``
and ``precision_at_k`` take only binary relevance; ``ndcg`` also takes graded relevance, any
finite non-negative reals used as the gains themselves. A -1 mixed with anything but +1 is
refused with the first offending index.

Every query is evaluated in one compiled pass (``aprank/_metrics_cy.pyx``): the samples are
grouped by query (``aprank.validation.as_query_groups``, the grouping inference uses), and each
query is sorted and summed in a small buffer while it is in cache, so many small queries cost
about as much as inference on them.
"""
from __future__ import annotations

import numbers

import numpy as np

from aprank._metrics_cy import (
    METRIC_AP,
    METRIC_NDCG,
    METRIC_PRECISION,
    SIMD,
    TIES_EXPECTED,
    TIES_OPTIMISTIC,
    TIES_PESSIMISTIC,
    TIES_SKLEARN,
    query_values,
)
from aprank.losses import NDCG
from aprank.validation import as_labels, as_query_groups, as_scores

__all__ = ["average_precision", "ndcg", "precision_at_k", "TIE_POLICIES"]

#: The tie policies, the values of every metric's ``ties=``.
TIE_POLICIES = ("sklearn", "expected", "pessimistic", "optimistic")


def _check_options(ties, empty):
    """Refuse an unknown tie policy or empty-query rule before any work is done."""
    if not isinstance(ties, str) or ties not in TIE_POLICIES:
        raise ValueError(f"ties={ties!r} is not a tie policy; use one of "
                         f"{', '.join(map(repr, TIE_POLICIES))}")
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


def _binary(y_true, n: int, pos_label) -> np.ndarray:
    """Binary relevance as 0/1 float64: bool, {0, 1} or {-1, +1} labels, or any labels with
    ``pos_label`` naming the relevant one (otherwise refused, saying to pass it)."""
    if pos_label is None:
        try:
            return as_labels(y_true, n, "y_true").astype(np.float64)
        except ValueError as err:
            if "labels must be" in str(err) or "got dtype" in str(err):
                raise ValueError(f"{err}; for other labels pass pos_label= (the relevant "
                                 "one), as scikit-learn's ranking metrics ask") from None
            raise
    y = np.asarray(y_true)
    if y.ndim != 1 or y.shape[0] != n:
        raise ValueError(f"y_true must be 1-D with one label per score ({n}), got shape "
                         f"{y.shape}")
    return (y == pos_label).astype(np.float64)


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


#: The NDCG loss whose default discount D(m) = 1/log2(1 + m) the metric takes.
_DEFAULT_NDCG = NDCG()

#: The kernel's tie codes, by policy.
_TIES_CODE = {"sklearn": TIES_SKLEARN, "expected": TIES_EXPECTED,
              "pessimistic": TIES_PESSIMISTIC, "optimistic": TIES_OPTIMISTIC}
#: What the kernel gets for the NDCG tables when it computes another metric (never read).
_NO_TABLE = np.zeros(1)


class _Values:
    """Every query's value, from one compiled pass (``aprank/_metrics_cy.pyx``).

    ``ids`` are the query ids in ascending order (id 0 for the single query without ``qid``),
    ``sizes`` the queries' sample counts, ``values`` their metric values (NaN for a query with
    no non-zero gain: ``nonempty`` False, see :func:`_finish`).
    """

    def __init__(self, metric: int, score, gain, qid, ties, k=None, discount=None):
        order, offsets, ids = as_query_groups(qid, score.shape[0])
        self.ids = np.zeros(1, dtype=np.int64) if ids is None else ids
        self.sizes = np.diff(offsets)
        table = prefix = _NO_TABLE
        if metric == METRIC_NDCG:
            longest = int(self.sizes.max())
            if discount is None:
                # the loss's own discount (from C's log2, which NumPy's vectorised log2 misses
                # by an ulp at some positions), so that 1 - NDCG here is the NDCG loss's value
                table = _DEFAULT_NDCG.D(np.arange(1, longest + 1))
            else:
                # only an empty query (whose value is not computed) may be longer than the
                # discount; the zeros keep the kernel within the table for any other, whose
                # value is then refused by ndcg
                table = np.zeros(longest)
                table[:min(longest, discount.size)] = discount[:longest]
            if k is not None:
                table[k:] = 0.0
            # binary gains: the ideal DCG of R relevant samples is the sum of the first R
            # discounts
            prefix = np.r_[0.0, np.cumsum(table)]
        # the kernel reads contiguous float64 (as_scores may return a strided view: copy it)
        self.values, self.nonempty = query_values(
            np.ascontiguousarray(score), np.ascontiguousarray(gain), order, offsets, metric,
            _TIES_CODE[ties], table, prefix,
            # the cutoff within the kernel's 64-bit indices: no query is longer than n
            0 if k is None else min(int(k), score.shape[0]), 1.0 if k is None else float(k), SIMD)


def _undefined_query(r: _Values, where: int, qid) -> ValueError:
    """The error for the query at ``where`` having no relevant sample."""
    name = "the input" if qid is None else f"query {r.ids[where:where + 1].tolist()[0]!r}"
    return ValueError(f"{name} has no relevant sample, so the metric is undefined; "
                      "pass empty='skip', 0 or 1 to decide (the estimators' score leaves "
                      "such queries out: empty='skip' gives its number)")


def _finish(r: _Values, qid, empty, per_query):
    """Apply the empty-query rule to per-query values and aggregate them."""
    values = r.values
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


def average_precision(y_true, y_score, *, ties="sklearn", qid=None, empty="error", per_query=False,
                      pos_label=None):
    """Non-interpolated average precision of binary relevance ``y_true`` ranked by ``y_score``.

    AP = (1/R) * sum over relevant samples of the precision at their rank, R relevant in total.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary relevance: bool, {0, 1} or {-1, +1}; other labels (strings, other pairs)
        with ``pos_label``.
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
    pos_label : object, optional
        The label of the relevant samples, as in scikit-learn's ranking metrics: needed for
        labels other than bool, {0, 1} or {-1, +1} (which are refused without it, as
        scikit-learn refuses them); every other label is not relevant.

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
    rel = _binary(y_true, score.shape[0], pos_label)
    return _finish(_Values(METRIC_AP, score, rel, qid, ties), qid, empty, per_query)


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
    r = _Values(METRIC_NDCG, score, gain, qid, ties, k, discount)
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
    return _finish(r, qid, empty, per_query)


def precision_at_k(y_true, y_score, k, *, ties="expected", qid=None, empty="error", per_query=False,
                   pos_label=None):
    """Fraction of relevant samples among the top ``k`` by score, for binary ``y_true``.

    Always divided by k, also for a query with fewer than k samples (as trec_eval does). With
    ties="expected" (and "sklearn", which means the same here) a tie block straddling rank k
    contributes its fraction of relevant samples for each of its slots within the top k.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary relevance: bool, {0, 1} or {-1, +1}; other labels (strings, other pairs)
        with ``pos_label``.
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
    pos_label : object, optional
        The label of the relevant samples, as for :func:`average_precision`.

    Returns
    -------
    float or (ndarray, ndarray)
        The mean over the queries; with ``per_query``, the query ids and each one's value.
    """
    _check_options(ties, empty)
    _check_k(k, allow_none=False)
    score = as_scores(y_score, "y_score")
    rel = _binary(y_true, score.shape[0], pos_label)
    return _finish(_Values(METRIC_PRECISION, score, rel, qid, ties, k), qid, empty, per_query)
