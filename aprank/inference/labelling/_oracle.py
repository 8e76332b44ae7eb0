"""The labelling kind's oracle: exhaustive loss-augmented inference over all 2^n labellings.

It serves any loss of the kind from the loss's own ``weights``. Queries are limited to
MAX_SAMPLES samples. See ``aprank/inference/_exhaustive.py`` for the arithmetic it shares with
the ranking kind's oracle.
"""
from __future__ import annotations

import numpy as np

from aprank.inference._exhaustive import MAX_SAMPLES, pick, run_queries, scaled_back, unit_of

__all__ = ["MAX_SAMPLES", "run_brute"]


def _zero_one_query(s, pos, loss):
    n = s.size
    v, z = loss.weights(pos)
    truth = np.where(pos, 1.0, -1.0)
    flips = ((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1).astype(bool)
    labels = np.where(flips, -truth, truth)
    unit = unit_of(s, float(np.max(v)))
    preference = np.c_[flips.sum(axis=1), flips]        # fewest flips first
    if z == 0:
        m = 0
        delta = objective = np.zeros(len(flips))
    else:
        delta = (flips * v).sum(axis=1) / z
        # flipping sample i adds v_i (-2 y*_i) s_i / (2 z) to the score part
        gains = -v * truth * (s * unit)
        m = pick(delta * unit, flips, gains, 1.0 / z, preference, unit)
        objective = delta * unit + (flips * gains).sum(axis=1) / z
    y = labels[m]
    tp, fp = int(np.sum(pos & (y > 0))), int(np.sum(~pos & (y > 0)))
    ranks = np.where(pos, np.where(y > 0, 1, 1 + fp), np.where(y > 0, 1 + tp, pos.sum() + 1))
    coef = v * y / (2 * z) if z > 0 else np.zeros(n)
    return ranks.astype(np.int64), coef, float(delta[m]), scaled_back(objective[m], unit), y > 0


def run_brute(call) -> None:
    """Fill ``call``'s outputs by exhaustive search, one query at a time."""
    run_queries(call, _zero_one_query)
