"""The pairwise kind's oracle: all 2^n labellings enumerated, any sign of the pair scores."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["MAX_SAMPLES", "run_brute"]

#: The largest graph the oracle takes.
MAX_SAMPLES = 16


def run_brute(call) -> None:
    """Enumerate all 2^n labellings (the oracle; any sign of the pair scores). Labellings are
    ranked by their scores less that of the best by value, summed over the samples and pairs
    in which the two differ (one alike in both adds exactly nothing, however far its score),
    so a unary score far from the others decides nothing it does not change."""
    n = call.graph.n
    Y = ((np.arange(2 ** n)[:, None] >> np.arange(n)[None, :]) & 1).astype(bool)
    e = call.graph.edges
    cut = Y[:, e[:, 0]] != Y[:, e[:, 1]]
    score = Y @ call.unary + cut @ call.pair
    top = int(np.argmax(score))
    # the differences from the best so far: products with -1, 0 and 1 are exact, the zeros add
    # nothing. Taken again from each better labelling found, since differences from a far one
    # still hold its far scores, at whose rounding the small ones are lost; a difference
    # computed from the other side is the exact negative (the same sums, negated), so the
    # walk cannot return, and it ends within the labellings' count
    for _ in range(2 ** n):
        score_d = ((Y.astype(np.int8) - Y[top]) @ call.unary
                   + (cut.astype(np.int8) - cut[top]) @ call.pair)
        better = int(np.argmax(score_d))
        if not score_d[better] > 0:
            break
        top = better
    call.labelling[:] = Y[top]
    call.value = float(score[top])
    call.m_plus = np.array([score[Y[:, i]].max() for i in range(n)])
    call.m_minus = np.array([score[~Y[:, i]].max() for i in range(n)])
    if call.want_flips:
        rows, cols = [], []
        for i in range(n):
            side = ~Y[top, i]
            rows_i = np.flatnonzero(Y[:, i] == side)
            other = rows_i[int(np.argmax(score_d[rows_i]))]
            changed = np.flatnonzero(Y[other] != Y[top])
            rows.append(np.full(changed.size, i))
            cols.append(changed)
        call.flips = sp.csr_matrix((np.ones(sum(map(len, rows)), np.int8),
                                    (np.concatenate(rows), np.concatenate(cols))), shape=(n, n))
