"""The latent kind's oracle: every ranking of the bags and every latent choice enumerated."""
from __future__ import annotations

from itertools import permutations, product

import numpy as np

__all__ = ["MAX_SAMPLES", "MAX_BAGS", "MAX_WORK", "run_brute"]

MAX_SAMPLES = 18      # rows
MAX_BAGS = 7
MAX_WORK = 4_000_000  # rankings x latent choices enumerated


def _best_first(rows: np.ndarray, s: np.ndarray) -> np.ndarray:
    """``rows`` by decreasing score, equal scores by increasing index."""
    return rows[np.lexsort((rows, -s[rows]))]


def run_brute(call) -> None:
    """The oracle: every ranking of the bags and every latent choice left free, each scored
    from the definitions (AP by precision at each positive, Psi by its pairs). "latent-ap":
    positives at their H_P, each negative's row shared by both terms; "latent-ssvm": every
    bag free (its ground-truth term does not depend on the output, so it takes no part in the
    choice).
    Of equal optima over the rows, the canonical one (see :class:`LatentResult`)."""
    problem, s, bags = call.problem, call.scores, call.bags
    P, N, B = problem.P, problem.N, bags.n_bags
    pos = bags.is_pos
    joint = problem.loss.name == "latent-ssvm"
    # each bag's rows best first (highest score, lowest index among equal scores): the first
    # optimum enumerated is then the canonical one of every latent algorithm -- a bag whose
    # row leaves the objective unchanged at its best row, one whose term wants its lowest
    # score at the lowest index of those
    choices = [_best_first(bags.candidates(b), s) if (joint or not pos[b])
               else call.impute[b:b + 1] for b in range(B)]
    n_choices = int(np.prod([c.size for c in choices]))
    n_rankings = int(np.prod(np.arange(1, B + 1)))
    if B > MAX_BAGS or n_choices * n_rankings > MAX_WORK:
        raise ValueError(f"brute enumerates {n_rankings} rankings x {n_choices} latent choices "
                         f"of {B} bags: too many (at most {MAX_BAGS} bags and "
                         f"{MAX_WORK} in all)")
    H = np.array(list(product(*choices)), dtype=np.int64)          # (K, B) rows
    S = s[H]
    # Values relative to the first choice's rows at the ground truth's coefficients, each
    # coefficient an integer over P N: a bag whose row and coefficient are those of the
    # reference adds exactly nothing, however far its score, so candidates are compared at
    # the scale of the terms in which they differ
    ref = S[0]
    D = S - ref                                                      # (K, B)
    truth = np.zeros(B, dtype=np.int64)
    if N:
        truth = np.where(pos, N, -P)
    best, best_perm, best_k = -np.inf, None, 0
    for perm in permutations(range(B)):
        place = np.empty(B, dtype=np.int64)
        place[list(perm)] = np.arange(B)
        if N:
            Y = np.where(place[pos][:, None] < place[~pos][None, :], 1, -1)    # (P, N)
            c = np.zeros(B, dtype=np.int64)
            c[pos] = Y.sum(axis=1)
            c[~pos] = -Y.sum(axis=0)
            positions = np.sort(place[pos]) + 1
            delta = 1.0 - float(np.mean(np.arange(1, P + 1) / positions))
        else:
            c, delta = np.zeros(B, dtype=np.int64), 0.0
        # latent-ap: one coefficient per row, so that a negative below every positive (c =
        # truth = -1/N) contributes exactly 0 whatever its row, as the canonical tie-break needs
        row_c = c if joint else c - truth
        values = delta + (float((c - truth) @ ref) + D @ row_c) / (P * N if N else 1)
        k = int(np.argmax(values))
        if values[k] > best:
            best, best_perm, best_k = float(values[k]), perm, k
    # the objectives are finite (the scores' sums cannot overflow), so the first ranking
    # enumerated set best_perm
    assert best_perm is not None
    place = np.empty(B, dtype=np.int64)
    place[list(best_perm)] = np.arange(B)
    if N:
        above_pos = (place[~pos][None, :] < place[pos][:, None]).sum(axis=1)
        above_neg = (place[pos][None, :] < place[~pos][:, None]).sum(axis=1)
        call.ranks[pos] = 1 + above_pos
        call.ranks[~pos] = 1 + above_neg
    else:
        call.ranks[:] = 1
    call.h[:] = H[best_k]
