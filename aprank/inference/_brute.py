"""Exhaustive loss-augmented inference: the oracle that ``crosscheck`` holds every algorithm to.

For a ranking loss it enumerates every +/- pattern (interleaving of the positives and the
negatives, each kept in rank order: paper 004 Observation 1 shows an optimum of that form
exists), i.e. C(n, P) candidates. For the 0-1 loss it enumerates all 2^n labellings. Loss and
objective are computed straight from the definitions with NumPy, sharing no code with the
compiled kernels; it serves any loss of its kind from the loss's own methods (``from_pattern``
for rankings, ``weights`` for labellings). Queries are limited to MAX_SAMPLES samples.

Scores up to DBL_MAX: the candidates' objectives are computed in units of a power of two
(``_unit``) small enough that no sum overflows, with the loss scaled alike, and scaled back;
an objective beyond DBL_MAX is refused with ValueError, as the compiled driver refuses it.
"""
from __future__ import annotations

from itertools import combinations
from math import frexp, ldexp

import numpy as np

MAX_SAMPLES = 16
_EPS = np.finfo(np.float64).eps
_DBL_MAX = np.finfo(np.float64).max


def _unit(s: np.ndarray, weight: float = 1.0) -> float:
    """1.0, or the power of two that keeps n^2 weight (1 + max |s|) below 2^1000 (every sum
    below is bounded by that), so the objectives of extreme scores are computed without
    overflow. weight: the largest per-sample weight (the 0-1 loss's J)."""
    # exponents (frexp: x < 2^e) rather than the product, which may itself overflow
    exponent = sum(frexp(x)[1] for x in (float(s.size) ** 2, max(1.0, weight),
                                          1.0 + float(np.max(np.abs(s)))))
    return 1.0 if exponent <= 1000 else ldexp(1.0, 1000 - exponent)


def _scaled_back(objective: float, unit: float) -> float:
    value = float(objective) / unit     # a Python float: inf, no warning, on overflow
    if not np.isfinite(value):
        raise ValueError(f"the objective overflows float64 ({value!r}): the most violated "
                         "solution's score differences add up beyond 1.8e308; rescale the scores")
    return float(value)


def _rank_order(s: np.ndarray) -> np.ndarray:
    """Local indices in rank order: descending score, ties by ascending index."""
    return np.lexsort((np.arange(s.size), -s))


def _pick(loss: np.ndarray, chosen: np.ndarray, values: np.ndarray, weight: float,
          preference: np.ndarray, unit: float) -> int:
    """Index of the best candidate, ties going to the lexicographically smallest row of
    ``preference`` (matching the kernels' choice of the largest optimal rank).

    A candidate m's objective is loss[m] + weight * sum(values[chosen[m]]). Candidates are
    compared by their difference to the incumbent, summed over the terms where they differ
    only: a large term both share cancels exactly instead of hiding a small loss difference
    under its rounding (scores of 1e306 beside a loss step of 0.5). Two tie when that
    difference is within its rounding bound (from the magnitudes of the differing terms) plus
    1e-12 of the loss (``unit``: the objectives are in units of it, see _unit)."""
    objective = loss + weight * (chosen * values).sum(axis=1)
    top = int(np.argmax(objective))
    for _ in range(8):      # the incumbent from the plain sums is right unless rounding misled it
        only_m, only_top = chosen & ~chosen[top], ~chosen & chosen[top]
        gain = (loss - loss[top]) + weight * ((only_m * values).sum(axis=1)
                                              - (only_top * values).sum(axis=1))
        error = 1e-12 * unit + 4 * (values.size + 2) * _EPS * weight * (
            ((only_m | only_top) * np.abs(values)).sum(axis=1))
        better = int(np.argmax(gain - error))
        if gain[better] - error[better] <= 0:
            break
        top = better
    near = np.flatnonzero(gain >= -error)
    rows = preference[near]
    return int(near[np.lexsort(rows.T[::-1])[0]])


def _ranking_query(s, pos, loss):
    """(ranks, coef, loss, objective, None) for one query of a ranking loss; local order."""
    n = s.size
    order = _rank_order(s)
    pos_sorted, neg_sorted = order[pos[order]], order[~pos[order]]
    P, N = pos_sorted.size, neg_sorted.size
    unit = _unit(s)
    scaled = s * unit
    # diff[k, l] = s_neg - s_pos of the k-th positive and the l-th negative in rank order:
    # each rounded once, exactly 0 for tied scores
    diff = (scaled[neg_sorted][None, :] - scaled[pos_sorted][:, None]).ravel()
    # above[m, k] = number of negatives above the (k+1)-th positive in candidate m
    above = np.array(list(combinations(range(n), P)), dtype=np.int64).reshape(-1, P) - np.arange(P)
    inverted = (np.arange(N)[None, None, :] < above[:, :, None]).reshape(len(above), -1)
    losses = loss.from_pattern(above, P, N) * unit
    m = _pick(losses, inverted, diff, 2.0 / (P * N), above, unit)
    objective = losses[m] + 2.0 * float(diff[inverted[m]].sum()) / (P * N)
    ranks = np.empty(n, dtype=np.int64)
    coef = np.empty(n)
    ranks[pos_sorted] = 1 + above[m]
    ranks[neg_sorted] = 1 + np.searchsorted(above[m], np.arange(1, N + 1), side="left")
    coef[pos_sorted] = (N + 2 - 2 * ranks[pos_sorted]) / (P * N)   # ERRATA item 1
    coef[neg_sorted] = (P + 2 - 2 * ranks[neg_sorted]) / (P * N)
    return (ranks, coef, float(loss.from_pattern(above[m], P, N)),
            _scaled_back(objective, unit), None)


def _zero_one_query(s, pos, loss):
    n = s.size
    v, z = loss.weights(pos)
    truth = np.where(pos, 1.0, -1.0)
    flips = ((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1).astype(bool)
    labels = np.where(flips, -truth, truth)
    unit = _unit(s, float(np.max(v)))
    preference = np.c_[flips.sum(axis=1), flips]        # fewest flips first
    if z == 0:
        m = 0
        delta = objective = np.zeros(len(flips))
    else:
        delta = (flips * v).sum(axis=1) / z
        # flipping sample i adds v_i (-2 y*_i) s_i / (2 z) to the score part
        gains = -v * truth * (s * unit)
        m = _pick(delta * unit, flips, gains, 1.0 / z, preference, unit)
        objective = delta * unit + (flips * gains).sum(axis=1) / z
    y = labels[m]
    tp, fp = int(np.sum(pos & (y > 0))), int(np.sum(~pos & (y > 0)))
    ranks = np.where(pos, np.where(y > 0, 1, 1 + fp), np.where(y > 0, 1 + tp, pos.sum() + 1))
    coef = v * y / (2 * z) if z > 0 else np.zeros(n)
    return ranks.astype(np.int64), coef, float(delta[m]), _scaled_back(objective[m], unit), y > 0


def run(call):
    """Fill ``call``'s outputs by exhaustive search, one query at a time."""
    solve = _zero_one_query if call.loss.labelling else _ranking_query
    for q in range(call.n_queries):
        idx = call.query_indices(q)
        s, pos = call.scores[idx], call.is_pos[idx]
        if not call.loss.labelling and (pos.all() or not pos.any()):
            call.ranks[idx], call.coef[idx] = 1, 0.0
            call.query_loss[q] = call.query_objective[q] = 0.0
            continue
        ranks, coef, loss, objective, labelling = solve(s, pos, call.loss)
        call.ranks[idx], call.coef[idx] = ranks, coef
        if labelling is not None:
            call.labelling[idx] = labelling
        call.query_loss[q], call.query_objective[q] = loss, objective
