"""The top-k kind's registry entries: the compiled c-star kernel and the oracle."""
from __future__ import annotations

import math
from math import comb

import numpy as np

import aprank.inference.topk._cstar_cy as _cstar_cy
from aprank.inference._registry import Algorithm, ProblemKind
from aprank.inference.topk._instances import TopKInstances
from aprank.inference.topk._oracle import MAX_SAMPLES, run_brute
from aprank.inference.topk._problem import TopKProblem

__all__ = ["run_cstar", "run_cstar_plain", "KINDS", "ALGORITHMS"]


def run_cstar(call) -> None:
    """The compiled c-star kernel (``_cstar.hpp``), every query in one call without the GIL."""
    p = call.problem
    _cstar_cy.cstar_queries(call.unary, call.clamp, call.k, call.offsets, p.core, p.W, p.Fcc,
                            p.in_core, call.t, call.value)



def run_cstar_plain(call) -> None:
    """The c-star enumeration without its speed-ups, in NumPy: every core state's gains from
    scratch (no Gray-code updates), the free items fully sorted (no selection), the first
    best state in binary order, two states compared by the exact sum (``math.fsum``) of the
    terms of one less the other's (an item in both cancels exactly, however far its score);
    the chosen subset's value summed from its terms. The reference of ``cstar`` at sizes
    beyond brute force."""
    p = call.problem
    core, W, Fcc = p.core, p.W, p.Fcc
    in_core = p.in_core.astype(bool)
    C = core.size
    states = (np.arange(2 ** C)[:, None] >> np.arange(C)[None, :]) & 1 if C else \
        np.zeros((1, 0), dtype=np.int64)
    for q in range(call.n_queries):
        a, b = int(call.offsets[q]), int(call.offsets[q + 1])
        u, clamp, k = call.unary[a:b], call.clamp[a:b], int(call.k[q])
        forced = ~in_core[:b - a] & (clamp > 0)
        free = np.flatnonzero(~in_core[:b - a] & (clamp == 0))
        best_terms, chosen = None, None
        for state in states.astype(bool):
            cl = clamp[core]
            if np.any(state & (cl < 0)) or np.any(~state & (cl > 0)):
                continue
            r = k - int(state.sum()) - int(forced.sum())
            if r < 0 or r > free.size:
                continue
            gw = state.astype(np.float64) @ W[:, :b - a] if C else np.zeros(b - a)
            g = u + gw
            top = free[np.argsort(-g[free], kind="stable")[:r]]
            terms = np.concatenate([u[core[state]], Fcc[np.ix_(state, state)].ravel(),
                                    u[forced], gw[forced], u[top], gw[top]])
            if best_terms is None or math.fsum(np.r_[terms, -best_terms].tolist()) > 0:
                best_terms, chosen = terms, (state, top)
        t = np.zeros(b - a, dtype=np.uint8)
        if chosen is None:
            call.t[a:b], call.value[q] = t, -np.inf
            continue
        state, top = chosen
        t[core[state]] = 1
        t[forced] = 1
        t[top] = 1
        tf = t.astype(np.float64)
        value = float(tf @ u)
        if C:
            value += float(Fcc[np.ix_(state, state)].sum())
            value += float((W[:, :b - a] @ (tf * ~in_core[:b - a]))[state].sum())
        call.t[a:b], call.value[q] = t, value


def _cstar_cost(P, N):
    return P + N      # per core state; the benchmark's instances have a core of 2


def _plain_cost(P, N):
    return (P + N) * np.log2(max(P + N, 2))     # per core state


def _brute_subset_cost(P, N):
    return comb(P + N, P) * P


#: Microseconds per unit of the ``seconds`` models below: c-star per core state and item on
#: large cores (C = 8-20), and per item besides on a small one (C = 4 at n = 1e6, where the
#: states do not dominate); brute per unit of C(n, k) k (n = 12-16, a NumPy product per
#: subset). The measurements: docs/benchmarks/kinds.md, Cost models.
_US_STATE, _US_ITEM, _US_SUBSET = 0.0012, 0.05, 2.5
#: cstar-plain, per item and sort level of a state, and per state of a query (C = 10 at
#: n = 1e3 and 1e4; C = 14 at n = 100).
_US_PLAIN_ITEM, _US_PLAIN_STATE = 0.01, 40.0


def _plain_seconds(call) -> float:
    """2^C states, each a NumPy pass and a full sort of every item of every query (a few
    microseconds of overhead a state besides)."""
    C = call.problem.core.shape[0]
    n, Q = float(call.offsets[-1]), call.n_queries
    return 1e-6 * 2.0 ** C * (_US_PLAIN_ITEM * n * max(1.0, np.log2(max(n / Q, 2.0)))
                              + _US_PLAIN_STATE * Q)


def _cstar_seconds(call) -> float:
    """2^C states, each updating and selecting among every item of every query (and scoring
    the C x C core): 2^C (n + Q C^2), the growth of the kernel's loop."""
    C = call.problem.core.shape[0]
    n, Q = float(call.offsets[-1]), call.n_queries
    return 1e-6 * (_US_STATE * 2.0 ** C * (n + Q * C * C) + _US_ITEM * n)


def _brute_subset_seconds(call) -> float:
    """Every k-subset of every query: the sum over the call's queries of C(n_q, k_q) k_q."""
    sizes = np.diff(call.offsets)
    pairs, counts = np.unique(np.stack([sizes, call.k], 1), axis=0, return_counts=True)
    units = sum(count * comb(n, k) * max(k, 1)
                for (n, k), count in zip(pairs.tolist(), counts.tolist()))
    return 1e-6 * _US_SUBSET * units


KINDS = (
    ProblemKind("topk", "scores, binary labels and core interactions per query -> the most "
                "violated subset of k items (precision@k)", TopKProblem, TopKInstances(),
                oracle="brute", default="cstar"),
)

ALGORITHMS = (
    Algorithm("cstar", "topk", ("precision@k",), True, "O(2^C N), C = core size",
              "Mensink et al. (2011), sec. 4 (Gray-code core states, linear-time selection)",
              run_cstar, cost=_cstar_cost, seconds=_cstar_seconds),
    Algorithm("cstar-plain", "topk", ("precision@k",), True, "O(2^C (C N + N log N))",
              "the c-star enumeration without Gray-code updates or selection (NumPy): "
              "cstar's reference at scale", run_cstar_plain, cost=_plain_cost,
              seconds=_plain_seconds),
    Algorithm("brute", "topk", None, True, "O(C(n, k) k)",
              "exhaustive over k-subsets: the oracle", run_brute, cost=_brute_subset_cost,
              seconds=_brute_subset_seconds, max_samples=MAX_SAMPLES),
)
