"""The latent SSVM greedy in Python, the reference of the compiled
``latent-greedy`` in the tests: the same values and rows where no scores tie; where some do,
its exact comparisons (whichever rank rounds higher, else the lowest place) break ties
otherwise than the kernel's rule, and the kernel must then reach at least its value. Every pattern's
assignments by ``scipy.optimize.linear_sum_assignment``, kept up to date along a slot's scan by
augmenting paths (Bellman-Ford longest paths, O(n^2) per pass, up to n passes)."""
from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment

from aprank.losses import AveragePrecision

__all__ = ["run_reference_greedy"]

_AP = AveragePrecision()


def _gains(coef: np.ndarray, high: np.ndarray, low: np.ndarray) -> np.ndarray:
    """gain[b, t] = max_h coef[t] s_b(h): c high_b for c >= 0, c low_b below (eq. A.6, A.8)."""
    return np.where(coef[None, :] >= 0, high[:, None] * coef[None, :], low[:, None] * coef[None, :])


def _assign(coef: np.ndarray, high: np.ndarray, low: np.ndarray):
    """Best assignment of bags to slots of coefficients ``coef`` (Behl 2015, eq. A.6, A.8): (value,
    slot of each bag)."""
    gain = _gains(coef, high, low)
    rows, slots = linear_sum_assignment(gain, maximize=True)
    return float(gain[rows, slots].sum()), slots


def _pattern_value(neg_ranks, P, N, pos_high, pos_low, neg_high, neg_low):
    """Delta + the best w'Psi over latent choices and the placement of bags in the slots of
    the +/- pattern whose k-th negative slot has interleaving rank neg_ranks[k]."""
    above = np.searchsorted(neg_ranks, np.arange(1, P + 1), side="right")   # per positive slot
    pos_coef = (N - 2.0 * above) / (P * N)
    neg_coef = (P + 2.0 - 2.0 * neg_ranks) / (P * N)
    vp, pos_slot = _assign(pos_coef, pos_high, pos_low)
    vn, neg_slot = _assign(neg_coef, neg_high, neg_low)
    return float(_AP.from_pattern(above, P, N)) + vp + vn, pos_slot, neg_slot, pos_coef, neg_coef


def _fill(gain: np.ndarray, coef: np.ndarray) -> np.ndarray:
    """The column of each row (-1: left free) in a best assignment that fills every column of
    ``gain`` (rows >= columns); columns of equal ``coef`` (contiguous) are interchangeable."""
    n_rows, n_cols = gain.shape
    col_of = np.full(n_rows, -1, dtype=np.int64)
    if n_cols == 0:
        return col_of
    starts = np.flatnonzero(np.r_[True, coef[1:] != coef[:-1]])
    sizes = np.diff(np.r_[starts, n_cols])
    g = int(np.argmax(sizes))
    if sizes[g] * 8 < n_cols:
        rows, cols = linear_sum_assignment(gain, maximize=True)
        col_of[rows] = cols
        return col_of
    # The largest group stays out of the solve (scipy is slow on many equal columns): gains
    # become changes from a row's value in the group, free rows are dummy columns of value
    # -base, and the rows the solve leaves over fill the group. Exact.
    group = np.arange(starts[g], starts[g] + sizes[g])
    explicit = np.r_[np.arange(starts[g]), np.arange(starts[g] + sizes[g], n_cols)]
    base = gain[:, starts[g]]
    reduced = np.hstack([gain[:, explicit] - base[:, None],
                         np.repeat(-base[:, None], n_rows - n_cols, axis=1)])
    rows, cols = linear_sum_assignment(reduced, maximize=True)
    real = cols < explicit.size
    col_of[rows[real]] = explicit[cols[real]]
    leftover = np.setdiff1d(np.arange(n_rows), rows, assume_unique=True)
    col_of[leftover] = group
    return col_of


def _freeing(gain: np.ndarray, col_of: np.ndarray):
    """For an optimal assignment of rows to columns (``col_of[x]``, -1 for a free row) with
    gains ``gain[x, c]``: D[x], the best change of value when row x gives up its column, which
    a chain of moves refills, ending with a free row (0 for a free row); pred[x], the row that
    takes x's column. Longest paths by Bellman-Ford: at an optimum no cycle of moves gains."""
    free = col_of < 0
    D = np.where(free, 0.0, -np.inf)
    pred = np.full(col_of.shape[0], -1, dtype=np.int64)
    matched = np.flatnonzero(~free)
    if matched.size == 0 or not free.any():
        return D, pred
    m = np.arange(matched.size)
    into = gain[:, col_of[matched]]             # into[y, i]: row y takes matched[i]'s column
    own = into[matched, m].copy()
    into[matched, m] = -np.inf                  # a row does not replace itself
    eps = 1e-13 * (1.0 + float(np.abs(own).max()))
    for _ in range(col_of.shape[0]):
        cand = D[:, None] + into
        y = np.argmax(cand, axis=0)
        value = cand[y, m] - own
        better = value > D[matched] + eps
        if not better.any():
            break
        D[matched[better]] = value[better]
        pred[matched[better]] = y[better]
    return D, pred


def _values_with_copies(fixed: np.ndarray, extra: np.ndarray, n_max: int) -> np.ndarray:
    """V[n], n = 0 ... n_max: the best assignment of the rows into the columns of ``fixed``
    (gains, every column filled) plus n copies of one column of gains ``extra``; rows left
    over score 0. One Hungarian solve, then one augmenting path per copy added (successive
    shortest paths: each V[n + 1] is optimal when V[n] is)."""
    n_rows, n_fixed = fixed.shape
    gain = np.empty((n_rows, n_fixed + n_max))
    gain[:, :n_fixed] = fixed
    gain[:, n_fixed:] = extra[:, None]
    col_of = np.full(n_rows, -1, dtype=np.int64)
    value = 0.0
    if n_fixed:
        rows, cols = linear_sum_assignment(fixed, maximize=True)
        col_of[rows] = cols
        value = float(fixed[rows, cols].sum())      # (slots above lowest: few equal ones)
    V = np.empty(n_max + 1)
    V[0] = value
    for n in range(n_max):
        D, pred = _freeing(gain, col_of)
        x = int(np.argmax(extra + D))
        value += float(extra[x] + D[x])
        V[n + 1] = value
        c = n_fixed + n                 # the new copy takes x; x's column the next row; ...
        for _ in range(n_rows + 1):
            old = int(col_of[x])
            col_of[x] = c
            if old < 0:
                break
            x, c = int(pred[x]), old
        else:
            raise RuntimeError("augmenting path did not end at a free row")
    return V


def _scan_values(neg_ranks, k, P, N, pos_high, pos_low, neg_high, neg_low):
    """Delta + best w'Psi of every pattern that puts negative slot k (0-based; slots before it
    chosen, slots after it at P + 1) at rank r = lowest ... P, lowest = the rank of slot k - 1
    (1 for the first): (ranks, values). The positive side's slots from ``lowest`` on take two
    coefficients, one above slot k and one below, so its values for every r come from one
    assignment and an augmenting path per slot moved; on the negative side only slot k's
    coefficient changes, so every r is max_b (slot k's gain of bag b + the best assignment of
    the other bags to the other slots), the latter from one assignment and its longest paths."""
    lowest = int(neg_ranks[k - 1]) if k else 1
    ranks = np.arange(lowest, P + 1)
    scale = 1.0 / (P * N)
    # positive side: slots p < lowest fixed; from lowest, c_hi above slot k and c_lo below
    above_fixed = np.searchsorted(neg_ranks[:k], np.arange(1, lowest), side="right")
    c_fixed = (N - 2.0 * above_fixed) * scale
    c_hi, c_lo = (N - 2.0 * k) * scale, (N - 2.0 * (k + 1)) * scale
    f_lo = _gains(np.array([c_lo]), pos_high, pos_low)[:, 0]
    f_hi = _gains(np.array([c_hi]), pos_high, pos_low)[:, 0]
    fixed = _gains(c_fixed, pos_high, pos_low) - f_lo[:, None]
    pos_values = f_lo.sum() + _values_with_copies(fixed, f_hi - f_lo, P - lowest)
    # negative side: the other slots fixed, slot k at rank r
    others = np.r_[neg_ranks[:k], neg_ranks[k + 1:]]
    c_others = (P + 2.0 - 2.0 * others) * scale
    G = _gains(c_others, neg_high, neg_low)
    col_of = _fill(G, c_others)
    D, _ = _freeing(G, col_of)
    slot_k = _gains((P + 2.0 - 2.0 * ranks) * scale, neg_high, neg_low)      # (N, len(ranks))
    assigned = col_of >= 0
    neg_values = (float(G[assigned, col_of[assigned]].sum())
                  + (slot_k + D[:, None]).max(axis=0))
    # the loss of each pattern
    above = np.empty((ranks.size, P), dtype=np.int64)
    above[:, :lowest - 1] = above_fixed
    p = np.arange(lowest, P + 1)
    above[:, lowest - 1:] = k + (p[None, :] >= ranks[:, None])
    delta = _AP.from_pattern(above, P, N)
    return ranks, delta + pos_values + neg_values


def run_reference_greedy(call) -> None:
    """Behl (2015), appendix A: start from the ground-truth pattern and move the negative slots up
    one at a time (the highest first), each to the rank that maximises the loss-augmented score
    with the others fixed (ties: the lowest place); every pattern is scored with its best
    placement of bags and latent choices, a Hungarian assignment per side of the gains of eqs.
    A.6-A.9 (``scipy.optimize.linear_sum_assignment``, kept up to date along a slot's moves by
    augmenting paths: see :func:`_scan_values`). Approximate: never above the optimum (Table
    A.1 is a case below it)."""
    problem, s = call.problem, call.scores
    P, N = problem.P, problem.N
    pos_b = np.flatnonzero(call.bags.is_pos)
    neg_b = np.flatnonzero(~call.bags.is_pos)
    if N == 0:
        call.ranks[:] = 1
        call.h[:] = call.argmax
        return
    high, low = s[call.argmax], s[call.argmin]
    sides = (high[pos_b], low[pos_b], high[neg_b], low[neg_b])
    neg_ranks = np.full(N, P + 1, dtype=np.int64)
    best = _pattern_value(neg_ranks, P, N, *sides)[0]
    for k in range(N):
        if k and neg_ranks[k - 1] == P + 1:
            break           # every later slot must stay below all positives
        ranks, values = _scan_values(neg_ranks, k, P, N, *sides)
        top = float(values.max())
        if top > best:
            best = top
            neg_ranks[k] = ranks[np.flatnonzero(values == top)[-1]]
        else:
            neg_ranks[k:] = P + 1
            break           # slot k stays at P + 1, and so must every later one
    _, pos_slot, neg_slot, pos_coef, neg_coef = _pattern_value(neg_ranks, P, N, *sides)
    above = np.searchsorted(neg_ranks, np.arange(1, P + 1), side="right")
    call.ranks[pos_b] = 1 + above[pos_slot]
    call.ranks[neg_b] = neg_ranks[neg_slot]
    call.h[pos_b] = np.where(pos_coef[pos_slot] >= 0, call.argmax[pos_b], call.argmin[pos_b])
    call.h[neg_b] = np.where(neg_coef[neg_slot] >= 0, call.argmax[neg_b], call.argmin[neg_b])
