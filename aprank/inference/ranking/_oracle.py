"""The ranking kind's oracle: exhaustive loss-augmented inference over every +/- pattern.

It enumerates every interleaving of the positives and the negatives, each kept in rank order
(Mohapatra et al. 2018, Observation 1 shows an optimum of that form exists), i.e. C(n, P)
candidates, and serves any ranking loss from the loss's own ``from_pattern``. Queries are limited to
MAX_SAMPLES samples. See ``aprank/inference/_exhaustive.py`` for the arithmetic it shares with
the labelling kind's oracle.
"""
from __future__ import annotations

from itertools import combinations

import numpy as np

from aprank.inference._exhaustive import (
    MAX_SAMPLES,
    pick,
    rank_order,
    run_queries,
    scaled_back,
    unit_of,
)

__all__ = ["MAX_SAMPLES", "run_brute"]


def _ranking_query(s, pos, loss):
    """(ranks, coef, loss, objective, None) for one query of a ranking loss; local order."""
    n = s.size
    order = rank_order(s)
    pos_sorted, neg_sorted = order[pos[order]], order[~pos[order]]
    P, N = pos_sorted.size, neg_sorted.size
    unit = unit_of(s)
    scaled = s * unit
    # diff[k, l] = s_neg - s_pos of the k-th positive and the l-th negative in rank order:
    # each rounded once, exactly 0 for tied scores
    diff = (scaled[neg_sorted][None, :] - scaled[pos_sorted][:, None]).ravel()
    # above[m, k] = number of negatives above the (k+1)-th positive in candidate m
    above = np.array(list(combinations(range(n), P)), dtype=np.int64).reshape(-1, P) - np.arange(P)
    inverted = (np.arange(N)[None, None, :] < above[:, :, None]).reshape(len(above), -1)
    losses = loss.from_pattern(above, P, N) * unit
    m = pick(losses, inverted, diff, 2.0 / (P * N), above, unit)
    objective = losses[m] + 2.0 * float(diff[inverted[m]].sum()) / (P * N)
    ranks = np.empty(n, dtype=np.int64)
    coef = np.empty(n)
    ranks[pos_sorted] = 1 + above[m]
    ranks[neg_sorted] = 1 + np.searchsorted(above[m], np.arange(1, N + 1), side="left")
    coef[:] = loss.coef(ranks, pos, P, N)
    return (ranks, coef, float(loss.from_pattern(above[m], P, N)),
            scaled_back(objective, unit), None)


def run_brute(call) -> None:
    """Fill ``call``'s outputs by exhaustive search, one query at a time."""
    run_queries(call, _ranking_query)
