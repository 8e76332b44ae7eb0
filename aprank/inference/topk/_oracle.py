"""The top-k kind's oracle: every subset of k items enumerated, f(t) = t'u + t'Ft straight
from F."""
from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import scipy.sparse as sp

__all__ = ["MAX_SAMPLES", "run_brute"]

#: The largest query the oracle takes.
MAX_SAMPLES = 16


def run_brute(call) -> None:
    """Enumerate every subset of k items (the oracle): f(t) = t'u + t'Ft straight from F, two
    subsets compared by the exact sum (``math.fsum``) of one's terms less the other's, so an
    item in both cancels exactly however far its score."""
    F = call.problem.interactions
    F = F.toarray() if sp.issparse(F) else F
    for q in range(call.n_queries):
        a, b = call.offsets[q], call.offsets[q + 1]
        u, clamp, k = call.unary[a:b], call.clamp[a:b], int(call.k[q])
        best, best_t, best_terms = -np.inf, np.zeros(b - a, dtype=np.uint8), None
        for subset in combinations(range(b - a), k):
            t = np.zeros(b - a)
            t[list(subset)] = 1.0
            if np.any((clamp > 0) & (t == 0)) or np.any((clamp < 0) & (t == 1)):
                continue
            idx = np.flatnonzero(t)
            terms = np.r_[u[idx], np.zeros(0) if F is None else F[np.ix_(idx, idx)].ravel()]
            if best_terms is None or math.fsum(np.r_[terms, -best_terms].tolist()) > 0:
                best_terms, best_t = terms, t.astype(np.uint8)
                best = t @ u + (0.0 if F is None else t @ F @ t)
        call.t[a:b], call.value[q] = best_t, best
