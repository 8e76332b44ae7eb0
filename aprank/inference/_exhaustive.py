"""What the exhaustive oracles of the query kinds (ranking, labelling) share: objectives of
extreme scores computed in units that cannot overflow, the choice among candidates that is
robust to rounding and follows the kernels' tie rule, and the loop over queries.

The oracles compute loss and objective straight from the definitions with NumPy, sharing no
code with the compiled kernels. Scores up to DBL_MAX: the candidates' objectives are computed
in units of a power of two (``unit_of``) small enough that no sum overflows, with the loss
scaled alike, and scaled back; an objective beyond DBL_MAX is refused with ValueError, as the
compiled driver refuses it.
"""
from __future__ import annotations

from math import frexp, ldexp

import numpy as np

__all__ = ["MAX_SAMPLES", "unit_of", "scaled_back", "rank_order", "pick", "run_queries"]

#: The largest query an exhaustive oracle takes.
MAX_SAMPLES = 16
_EPS = np.finfo(np.float64).eps


def unit_of(s: np.ndarray, weight: float = 1.0) -> float:
    """1.0, or the power of two that keeps n^2 weight (1 + max |s|) below 2^1000 (every sum
    below is bounded by that), so the objectives of extreme scores are computed without
    overflow. weight: the largest per-sample weight (the 0-1 loss's J)."""
    # exponents (frexp: x < 2^e) rather than the product, which may itself overflow
    exponent = sum(frexp(x)[1] for x in (float(s.size) ** 2, max(1.0, weight),
                                          1.0 + float(np.max(np.abs(s)))))
    return 1.0 if exponent <= 1000 else ldexp(1.0, 1000 - exponent)


def scaled_back(objective: float, unit: float) -> float:
    value = float(objective) / unit     # a Python float: inf, no warning, on overflow
    if not np.isfinite(value):
        raise ValueError(f"the objective overflows float64 ({value!r}): the most violated "
                         "solution's score differences add up beyond 1.8e308; rescale the scores")
    return float(value)


def rank_order(s: np.ndarray) -> np.ndarray:
    """Local indices in rank order: descending score, ties by ascending index."""
    return np.lexsort((np.arange(s.size), -s))


def pick(loss: np.ndarray, chosen: np.ndarray, values: np.ndarray, weight: float,
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


def run_queries(call, solve_query) -> None:
    """Fill ``call``'s outputs one query at a time: ``solve_query(s, pos, loss)`` returns
    (ranks, coef, loss, objective, labelling or None) of one query in its local order. A query
    of a ranking loss with nothing to invert (all positive or all negative) is the ground
    truth, as in the kernels."""
    for q in range(call.n_queries):
        idx = call.query_indices(q)
        s, pos = call.scores[idx], call.is_pos[idx]
        if not call.loss.labelling and (pos.all() or not pos.any()):
            call.ranks[idx], call.coef[idx] = 1, 0.0
            call.query_loss[q] = call.query_objective[q] = 0.0
            continue
        ranks, coef, loss, objective, labelling = solve_query(s, pos, call.loss)
        call.ranks[idx], call.coef[idx] = ranks, coef
        if labelling is not None:
            call.labelling[idx] = labelling
        call.query_loss[q], call.query_objective[q] = loss, objective
