"""Test oracles written from the definitions, sharing no code with aprank's kernels or brute.

* ``best_over_permutations``: loss-augmented inference by trying every one of the n! proper
  rankings (not only the interleavings aprank's own ``brute`` enumerates), with AP / NDCG from
  their definitions (Mohapatra et al. 2018, section 2.2) and the joint feature from eq. 1.
* ``best_over_labellings``: the same for the weighted 0-1 loss over all 2^n labellings.
* ``recompute``: loss, coefficients and objective of the ranking described by returned ranks,
  by explicit pair loops.
"""
from __future__ import annotations

from functools import cache
from itertools import permutations

import numpy as np


@cache
def _all_permutations(n: int) -> np.ndarray:
    return np.array(list(permutations(range(n))), dtype=np.int64).reshape(-1, n)


def discount(m):
    return 1.0 / np.log2(1.0 + np.asarray(m, dtype=float))


def ranking_loss(kind: str, positive_positions: np.ndarray, P: int) -> np.ndarray:
    """Loss of rankings given the 1-based positions of their positives, sorted ascending
    (shape (..., P)). AP: 1 - (1/P) sum ind+(x)/ind(x); NDCG: 1 - sum D(ind x) / sum_{i<=P} D(i)."""
    if kind == "ap":
        return 1.0 - (np.arange(1, P + 1) / positive_positions).mean(axis=-1)
    return 1.0 - discount(positive_positions).sum(axis=-1) / discount(np.arange(1, P + 1)).sum()


def best_over_permutations(scores, labels, kind: str) -> float:
    """max over all n! rankings of Delta(R*, R) + w'Psi(R) - w'Psi(R*), Psi from eq. 1."""
    s = np.asarray(scores, dtype=float)
    y = np.asarray(labels, dtype=bool)
    P, N = int(y.sum()), int((~y).sum())
    if P == 0 or N == 0:
        return 0.0
    perms = _all_permutations(s.size)                     # perms[m, position] = sample
    place = np.argsort(perms, axis=1)                     # place[m, sample] = position (0-based)
    pos_idx, neg_idx = np.flatnonzero(y), np.flatnonzero(~y)
    positions = np.sort(place[:, pos_idx], axis=1) + 1
    loss = ranking_loss(kind, positions, P)
    # R_xy = +1 if x is ranked above y, -1 otherwise
    R = np.where(place[:, pos_idx][:, :, None] < place[:, neg_idx][:, None, :], 1.0, -1.0)
    diff = s[pos_idx][:, None] - s[neg_idx][None, :]
    psi = (R * diff).sum(axis=(1, 2)) / (P * N)
    psi_star = diff.sum() / (P * N)
    return float((loss + psi - psi_star).max())


def zero_one_weights(labels, J=None):
    y = np.asarray(labels, dtype=bool)
    P, N = int(y.sum()), int((~y).sum())
    J = N / P if J is None else J
    return np.where(y, J, 1.0), J * P + N


def best_over_labellings(scores, labels, J=None) -> float:
    """max over all 2^n labellings of the weighted 0-1 loss (Dokania et al. 2014, eq. 7) plus
    w'Psi(Y) - w'Psi(Y*), with Psi(Y) = sum_i v_i (2 y_i - 1) psi_i / (2 (J P + N))."""
    s = np.asarray(scores, dtype=float)
    y = np.asarray(labels, dtype=bool)
    n = s.size
    v, z = zero_one_weights(y, J)
    if z == 0:
        return 0.0
    Y = ((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1).astype(bool)
    loss = ((Y != y) * v).sum(axis=1) / z
    psi = ((2 * Y - 1) * v * s).sum(axis=1) / (2 * z)
    psi_star = ((2 * y - 1) * v * s).sum() / (2 * z)
    return float((loss + psi - psi_star).max())


def ranking_from_ranks(scores, labels, ranks):
    """Rebuild the explicit ranking (list of sample indices, best first) that the returned
    interleaving ranks describe, checking that the ranks of positives and negatives agree.

    Inside each class samples are placed by the tie rule (descending score, then index)."""
    s = np.asarray(scores, dtype=float)
    y = np.asarray(labels, dtype=bool)
    ranks = np.asarray(ranks)
    pos = sorted(np.flatnonzero(y), key=lambda k: (ranks[k], -s[k], k))
    neg = sorted(np.flatnonzero(~y), key=lambda k: (ranks[k], -s[k], k))
    order, i_neg = [], 0
    for x in pos:
        while i_neg < len(neg) and i_neg < ranks[x] - 1:
            order.append(neg[i_neg])
            i_neg += 1
        order.append(x)
    order += neg[i_neg:]
    # consistency: a negative's rank = 1 + positives above it, a positive's = 1 + negatives above
    seen_pos = seen_neg = 0
    for k in order:
        expected = 1 + (seen_neg if y[k] else seen_pos)
        assert ranks[k] == expected, (f"rank of sample {k} is {ranks[k]}, "
                                      f"the ranking says {expected}")
        seen_pos += y[k]
        seen_neg += not y[k]
    return order


def recompute(scores, labels, ranks, kind: str):
    """(loss, coef, objective) of the ranking described by ``ranks``, by explicit pair loops."""
    s = np.asarray(scores, dtype=float)
    y = np.asarray(labels, dtype=bool)
    P, N = int(y.sum()), int((~y).sum())
    order = ranking_from_ranks(s, y, ranks)
    place = {k: p for p, k in enumerate(order)}
    positions = np.array(sorted(place[k] + 1 for k in np.flatnonzero(y)), dtype=float)
    loss = float(ranking_loss(kind, positions, P))
    coef = np.zeros(s.size)
    psi = psi_star = 0.0
    for x in np.flatnonzero(y):
        for v in np.flatnonzero(~y):
            r = 1.0 if place[x] < place[v] else -1.0
            coef[x] += r / (P * N)
            coef[v] -= r / (P * N)
            psi += r * (s[x] - s[v]) / (P * N)
            psi_star += (s[x] - s[v]) / (P * N)
    return loss, coef, loss + psi - psi_star
