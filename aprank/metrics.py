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
mean, skipped queries omitted; without ``qid`` the single query is given id 0.
"""
from __future__ import annotations

import numbers

import numpy as np

from aprank.validation import as_labels, as_query_groups, as_scores

__all__ = ["average_precision", "ndcg", "precision_at_k", "TIE_POLICIES"]

TIE_POLICIES = ("sklearn", "expected", "pessimistic", "optimistic")


def _check_options(ties, empty):
    """Refuse an unknown tie policy or empty-query rule before any work is done."""
    if not isinstance(ties, str) or ties not in TIE_POLICIES:
        raise ValueError(f"ties={ties!r} is not a tie policy; use one of {', '.join(map(repr, TIE_POLICIES))}")
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


def _ranked(score, gain, ties):
    """Rank one query: return the gains in rank order and the tie blocks (start, size, block of
    each position).

    For "pessimistic"/"optimistic" the ties are resolved by the gain here, so every position is
    its own block and the tie-aware formulas below reduce to the tie-free ones.
    """
    n = score.shape[0]
    if ties == "optimistic":
        order = np.lexsort((-gain, -score))
    elif ties == "pessimistic":
        order = np.lexsort((gain, -score))
    else:
        order = np.argsort(-score, kind="stable")
    ranked = gain[order]
    if ties in ("optimistic", "pessimistic"):
        starts = np.arange(n)
    else:
        s = score[order]
        starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
    sizes = np.diff(np.r_[starts, n])
    return ranked, starts, sizes, np.repeat(np.arange(starts.size), sizes)


def _expected_at_position(ranked, starts, sizes, block):
    """Expected gain at each rank when every tie block is in uniformly random order."""
    # Under a uniformly random order of a tie block, every position in it holds the block's mean
    # gain in expectation; that is all a metric linear in the per-position gains needs.
    return (np.add.reduceat(ranked, starts) / sizes)[block]


def _ap_query(score, rel, ties):
    """AP of one query with at least one relevant sample; ``rel`` is 0/1 as float."""
    ranked, starts, sizes, block = _ranked(score, rel, ties)
    r = np.add.reduceat(ranked, starts)
    cum_r = np.cumsum(r)
    if ties != "expected":
        # One threshold per block; with singleton blocks this is plain AP.
        return float(np.sum(r * cum_r / (starts + sizes)) / cum_r[-1])
    # See expected_ap_derivation in average_precision's docstring.
    rb, mb = r[block], sizes[block]
    pos = np.arange(ranked.shape[0])
    j = pos - starts[block]
    before = (cum_r - r)[block]
    others = j * (rb - 1) / np.maximum(mb - 1, 1)
    return float(np.sum(rb / mb * (before + 1 + others) / (pos + 1)) / cum_r[-1])


def _ndcg_query(score, gain, ties, k, discount=None):
    """NDCG (cut at k unless None) of one query with at least one positive gain."""
    n = score.shape[0]
    if discount is None:
        discount = 1.0 / np.log2(np.arange(n) + 2.0)
    else:
        if discount.size < n:
            raise ValueError(f"discount has {discount.size} values but a query has {n} samples")
        discount = discount[:n].copy()
    if k is not None:
        discount[k:] = 0.0
    ideal = np.sum(np.sort(gain)[::-1] * discount)
    # "sklearn" equals "expected" for NDCG: the DCG is linear in the gain at each position.
    dcg = np.sum(_expected_at_position(*_ranked(score, gain, ties)) * discount)
    return float(dcg / ideal)


def _precision_query(score, rel, ties, k):
    """Precision at k of one query; ``rel`` is 0/1 as float."""
    return float(np.sum(_expected_at_position(*_ranked(score, rel, ties))[:k]) / k)


def _evaluate(score, gain, qid, empty, per_query, metric):
    """Apply ``metric(score, gain)`` to each query, handle empty queries, and aggregate."""
    order, offsets, ids = as_query_groups(qid, score.shape[0])
    if order is not None:
        score, gain = score[order], gain[order]
    if ids is None:
        ids = np.zeros(1, dtype=np.int64)
    values = np.empty(ids.shape[0])
    keep = np.ones(ids.shape[0], dtype=bool)
    for q in range(ids.shape[0]):
        s, g = score[offsets[q]:offsets[q + 1]], gain[offsets[q]:offsets[q + 1]]
        if g.any():
            values[q] = metric(s, g)
        elif empty == "error":
            where = "the input" if qid is None else f"query {ids[q:q + 1].tolist()[0]!r}"
            raise ValueError(f"{where} has no relevant sample, so the metric is undefined; "
                             "pass empty='skip', 0 or 1 to decide")
        elif empty == "skip":
            keep[q] = False
        else:
            values[q] = float(empty)
    if not keep.any():
        raise ValueError("every query has no relevant sample and was skipped; nothing to average")
    if per_query:
        return ids[keep], values[keep]
    return float(np.mean(values[keep]))


def average_precision(y_true, y_score, *, ties="sklearn", qid=None, empty="error", per_query=False):
    """Non-interpolated average precision of binary relevance ``y_true`` ranked by ``y_score``.

    AP = (1/R) * sum over relevant samples of the precision at their rank, R relevant in total.
    ``y_true`` is bool, {0, 1} or {-1, +1}. See the module docstring for ``ties``, ``qid``,
    ``empty`` and ``per_query``.

    expected_ap_derivation: for ties="expected", take a tie block of m samples, r of them
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
    return _evaluate(score, rel, qid, empty, per_query, lambda s, g: _ap_query(s, g, ties))


def ndcg(y_true, y_score, *, k=None, ties="sklearn", qid=None, empty="error", per_query=False,
         discount=None):
    """Normalised discounted cumulative gain, as ``sklearn.metrics.ndcg_score`` computes it.

    Gains are the non-negative relevances ``y_true`` themselves (graded relevance allowed), the
    discount at rank i is 1/log2(1 + i) unless ``discount`` gives it (``discount[i-1]``, finite
    and non-negative, covering every position of a query), and with ``k`` only the top k ranks
    count, for both the DCG and the ideal DCG. A query whose gains are all zero is empty. See
    the module docstring for ``ties``, ``qid``, ``empty`` and ``per_query``.
    """
    _check_options(ties, empty)
    _check_k(k, allow_none=True)
    if discount is not None:
        discount = np.asarray(discount, dtype=np.float64)
        if discount.ndim != 1 or not np.isfinite(discount).all() or (discount < 0).any():
            raise ValueError("discount must be a 1-D array of finite, non-negative values")
    score = as_scores(y_score, "y_score")
    gain = np.asarray(y_true)
    if gain.ndim != 1 or gain.shape[0] != score.shape[0]:
        raise ValueError(f"y_true must be 1-D with {score.shape[0]} entries like y_score, "
                         f"got shape {gain.shape}")
    if gain.dtype.kind not in "biuf":
        raise ValueError(f"y_true must be real numbers, got dtype {gain.dtype}")
    gain = gain.astype(np.float64, copy=False)
    bad = ~np.isfinite(gain) | (gain < 0)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"y_true[{i}] = {gain[i]!r}: relevance must be finite and non-negative")
    return _evaluate(score, gain, qid, empty, per_query,
                     lambda s, g: _ndcg_query(s, g, ties, k, discount))


def precision_at_k(y_true, y_score, k, *, ties="expected", qid=None, empty="error", per_query=False):
    """Fraction of relevant samples among the top ``k`` by score, for binary ``y_true``.

    Always divided by k, also for a query with fewer than k samples (as trec_eval does). With
    ties="expected" (and "sklearn", which means the same here) a tie block straddling rank k
    contributes its fraction of relevant samples for each of its slots within the top k. See the
    module docstring for ``ties``, ``qid``, ``empty`` and ``per_query``.
    """
    _check_options(ties, empty)
    _check_k(k, allow_none=False)
    score = as_scores(y_score, "y_score")
    rel = as_labels(y_true, score.shape[0], "y_true").astype(np.float64)
    return _evaluate(score, rel, qid, empty, per_query, lambda s, g: _precision_query(s, g, ties, k))
