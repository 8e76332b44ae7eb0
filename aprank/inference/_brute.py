"""Exhaustive loss-augmented inference: the oracle that ``crosscheck`` holds every algorithm to.

For a ranking loss it enumerates every +/- pattern (interleaving of the positives and the
negatives, each kept in rank order: paper 004 Observation 1 shows an optimum of that form
exists), i.e. C(n, P) candidates. For the 0-1 loss it enumerates all 2^n labellings. Loss and
objective are computed straight from the definitions with NumPy, sharing no code with the
compiled kernels; it serves any loss of its kind from the loss's own methods (``from_pattern``
for rankings, ``weights`` for labellings). Queries are limited to MAX_SAMPLES samples.
"""
from __future__ import annotations

from itertools import combinations

import numpy as np

MAX_SAMPLES = 16


def _rank_order(s: np.ndarray) -> np.ndarray:
    """Local indices in rank order: descending score, ties by ascending index."""
    return np.lexsort((np.arange(s.size), -s))


def _pick(objective: np.ndarray, preference: np.ndarray) -> int:
    """Index of the best candidate; exact ties (up to rounding) go to the lexicographically
    smallest row of ``preference``, matching the kernels' choice of the largest optimal rank."""
    best = objective.max()
    near = np.flatnonzero(objective >= best - 1e-12 * max(1.0, abs(best)))
    rows = preference[near]
    return int(near[np.lexsort(rows.T[::-1])[0]])


def _ranking_query(s, pos, loss):
    """(ranks, coef, loss, objective, None) for one query of a ranking loss; local order."""
    n = s.size
    order = _rank_order(s)
    pos_sorted, neg_sorted = order[pos[order]], order[~pos[order]]
    P, N = pos_sorted.size, neg_sorted.size
    centred = s - s.mean()
    sp, sn = centred[pos_sorted], centred[neg_sorted]
    # above[m, k] = number of negatives above the (k+1)-th positive in candidate m
    above = np.array(list(combinations(range(n), P)), dtype=np.int64).reshape(-1, P) - np.arange(P)
    cum_neg = np.r_[0.0, np.cumsum(sn)]
    inverted = (cum_neg[above] - above * sp).sum(axis=1)   # sum of (s_neg - s_pos) over inversions
    objective = loss.from_pattern(above, P, N) + 2.0 * inverted / (P * N)
    m = _pick(objective, above)
    ranks = np.empty(n, dtype=np.int64)
    coef = np.empty(n)
    ranks[pos_sorted] = 1 + above[m]
    ranks[neg_sorted] = 1 + np.searchsorted(above[m], np.arange(1, N + 1), side="left")
    coef[pos_sorted] = (N + 2 - 2 * ranks[pos_sorted]) / (P * N)   # ERRATA item 1
    coef[neg_sorted] = (P + 2 - 2 * ranks[neg_sorted]) / (P * N)
    return ranks, coef, float(loss.from_pattern(above[m], P, N)), float(objective[m]), None


def _zero_one_query(s, pos, loss):
    n = s.size
    v, z = loss.weights(pos)
    truth = np.where(pos, 1.0, -1.0)
    flips = ((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1).astype(bool)
    labels = np.where(flips, -truth, truth)
    delta = (flips * v).sum(axis=1) / z if z > 0 else np.zeros(len(flips))
    score_gap = (v * (labels - truth) * s).sum(axis=1) / (2 * z) if z > 0 else np.zeros(len(flips))
    objective = delta + score_gap
    preference = np.c_[flips.sum(axis=1), flips]        # fewest flips first
    m = _pick(objective, preference)
    y = labels[m]
    tp, fp = int(np.sum(pos & (y > 0))), int(np.sum(~pos & (y > 0)))
    ranks = np.where(pos, np.where(y > 0, 1, 1 + fp), np.where(y > 0, 1 + tp, pos.sum() + 1))
    coef = v * y / (2 * z) if z > 0 else np.zeros(n)
    return ranks.astype(np.int64), coef, float(delta[m]), float(objective[m]), y > 0


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
