"""Adapter that lets a user-registered Python function act as a registry algorithm."""
from __future__ import annotations

import numpy as np

from aprank.inference._compiled import finish_given_ranks


def user_runner(func):
    def run(problem):
        for q in range(problem.n_queries):
            idx = problem.query_indices(q)
            pos = problem.is_pos[idx]
            neg_idx = idx[~pos]
            P, N = int(pos.sum()), neg_idx.size
            if P == 0 or N == 0:
                continue  # the driver handles queries where nothing can be inverted
            ranks = np.asarray(func(problem.scores[idx[pos]], problem.scores[neg_idx], problem.loss))
            if ranks.shape != (N,) or ranks.dtype.kind not in "iu":
                raise ValueError(f"a user algorithm must return {N} integer ranks, got {ranks.shape} "
                                 f"of dtype {ranks.dtype}")
            if N and (ranks.min() < 1 or ranks.max() > P + 1):
                raise ValueError(f"a user algorithm returned ranks outside 1..{P + 1}")
            problem.ranks[neg_idx] = ranks
        finish_given_ranks(problem)

    return run
