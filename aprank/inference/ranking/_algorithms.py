"""The ranking kind's registry entries (losses AP and NDCG): the kernels' runners, their cost
models, the per-query "auto" choice, and user-registered ranking functions.

Every kernel module exposes ``SOLVE`` (a capsule) and runs inside the one compiled loop over
the queries of ``_driver_cy.rank_queries``, which also computes coefficients, loss and
objective from the ranks, so every algorithm's outputs are measured alike.
"""
from __future__ import annotations

from math import comb, log2
from typing import Callable

import numpy as np

from aprank.inference._registry import Algorithm, ProblemKind, per_query_seconds
from aprank.inference.ranking import (_driver_cy, _greedy_cy, _optranks_cy, _search_cy,
                                      _select_cy)
from aprank.inference.ranking._instances import RankingInstances
from aprank.inference.ranking._oracle import MAX_SAMPLES, run_brute
from aprank.inference.ranking._problem import RankingProblem
from aprank.losses import KernelLoss

__all__ = ["RankingKernel", "AutoKernel", "UserRanking", "KINDS", "ALGORITHMS", "AUTO_MODELS",
           "qs_cost", "log2_at_least_1"]


def _rank_queries(solve, call, discount_table: bool = False, choice=None) -> None:
    spec = call.loss.kernel_spec(call.max_query_size, discount_table)
    _driver_cy.rank_queries(
        solve, call.scores, call.is_pos.view("uint8"), call.order, call.offsets, spec.code,
        spec.discount, call.n_pos, call.ranks, call.coef, call.query_loss, call.query_objective,
        call.truth_out(), choice,
    )


class RankingKernel:
    """run(call) for a kernel module exposing SOLVE (see _driver_cy.rank_queries).

    discount_table: give the kernel the default NDCG discount as a table instead of computing
    logarithms on the fly; worth its O(n) memory only for algorithms that scan O(PN) ranks.
    """

    def __init__(self, kernel_module, *, discount_table: bool = False):
        self.solve = kernel_module.SOLVE
        self.discount_table = discount_table

    def __call__(self, call) -> None:
        _rank_queries(self.solve, call, self.discount_table)


class AutoKernel:
    """run(call) for the "auto" algorithm: each query runs the kernel that ``rule`` picks from
    its P and N, all queries in one compiled loop (no Python per query).

    candidates : {KernelLoss, or its label ("ap", "ndcg"): (kernel modules, rule)}, where
        ``rule(P, N)`` maps arrays of per-query positives and negatives to the index of the
        module to run on each query. Every candidate is an exact kernel, so the choice changes
        the time only: all follow the tie rule and return the same ranks, and the outputs are
        computed from the ranks by the driver alone. No candidate gets NumPy's NDCG discount
        table (``discount_table``, ``ndcg-greedy``'s): it may differ in the last bit from the
        driver's own table (``own_table``), and the results would then depend on the choice.
    """

    def __init__(self, candidates: dict):
        self.candidates = {KernelLoss.lookup(code): (tuple(m.SOLVE for m in modules), rule)
                           for code, (modules, rule) in candidates.items()}

    def choose(self, call) -> np.ndarray:
        """The index of the kernel each query of ``call`` runs (int8, one per query)."""
        rule = self.candidates[call.loss.kernel_spec(0).code][1]
        P = call.positives
        return np.asarray(rule(P, np.diff(call.offsets) - P), dtype=np.int8)

    def __call__(self, call) -> None:
        solves = self.candidates[call.loss.kernel_spec(0).code][0]
        if len(solves) == 1:        # nothing to choose: no per-query rule to evaluate
            _rank_queries(solves[0], call)
        else:
            _rank_queries(solves, call, choice=self.choose(call))


class UserRanking:
    """run(call) for ``func(pos_scores, neg_scores, loss) -> ranks of the negatives``: a user's
    Python function as a ranking algorithm (``aprank.register``); the driver then computes
    coefficients, loss and objective from the ranks it returned."""

    def __init__(self, func: Callable):
        self.func = func

    def __call__(self, call) -> None:
        for q in range(call.n_queries):
            idx = call.query_indices(q)
            pos = call.is_pos[idx]
            neg_idx = idx[~pos]
            P, N = int(pos.sum()), neg_idx.size
            if P == 0 or N == 0:
                continue  # the driver handles queries where nothing can be inverted
            ranks = np.asarray(self.func(call.scores[idx[pos]], call.scores[neg_idx], call.loss))
            if ranks.shape != (N,) or ranks.dtype.kind not in "iu":
                raise ValueError(f"a user algorithm must return {N} integer ranks, got {ranks.shape} "
                                 f"of dtype {ranks.dtype}")
            if N and (ranks.min() < 1 or ranks.max() > P + 1):
                raise ValueError(f"a user algorithm returned ranks outside 1..{P + 1}")
            call.ranks[neg_idx] = ranks
        _rank_queries(None, call)       # the outputs from the negatives' ranks alone


def log2_at_least_1(x):
    """log2(max(x, 2)) of a number, or elementwise of an array of per-query sizes."""
    if isinstance(x, (int, float)):     # the common scalar call, without NumPy's overhead
        return log2(max(x, 2))
    return np.log2(np.maximum(x, 2))


def _yue_cost(P, N):
    return P * N + N * log2_at_least_1(N)


def _search_cost(P, N):
    return N * log2_at_least_1(N) + P * P


def qs_cost(P, N):
    """The cost model of ``qs``: N log P + P log N (the latent kind ranks bags with it)."""
    return N * log2_at_least_1(P + 1) + P * log2_at_least_1(N)


def _brute_ranking_cost(P, N):
    return comb(P + N, P) * (P + N)


#: The candidates of "auto" per kernel loss: (kernel module, registry cost model, microseconds
#: per cost unit, microseconds per query), the last two fitted to per-query times measured in
#: batches of equal queries (AMD EPYC, AVX-512, 2 cores shared; P in 1-1000, N in 3-10^4,
#: positives ~ N(1, 1) or N(6, 1) against N(0, 1)). Each query runs the candidate of least
#: predicted time. Measured there: ``qs`` was fastest or within 3% of the fastest in every cell
#: (at P = 10, N = 90: qs 3.6, search 4.1, select 4.5 us overlapping; 2.1, 3.5, 2.0 us
#: separated; at P = 1, N = 10^4: qs 173, select 401 us), and ``ndcg-greedy``'s O(PN) scan
#: lost to ``qs`` once the driver tabulates the NDCG discount for both (at P = 10, N = 10: 0.73
#: against 0.69 us). ``select``'s and ``search``'s models (their P^2 worst case) do not predict
#: their times (median error 88%), so they are no candidates: today every query runs ``qs``.
#: A new candidate joins here with its two fitted constants.
AUTO_MODELS = {
    "ap": ((_optranks_cy, qs_cost, 0.0084, 0.069),),
    "ndcg": ((_optranks_cy, qs_cost, 0.0084, 0.069),),
}


def _auto_rule(models):
    def rule(P, N):
        predicted = np.stack([w * cost(P, N) + c for _, cost, w, c in models])
        return np.argmin(predicted, axis=0)
    return rule


def _auto_cost(P, N):
    # the least of the candidates' models: never predicted slower than a candidate, so "auto"
    # draws no SlowAlgorithmWarning where its candidates draw none
    return min(cost(P, N) for models in AUTO_MODELS.values() for _, cost, _, _ in models)


#: Microseconds per unit of each algorithm's cost model and per query, for its ``seconds``
#: model (the warning of a call over a minute). Measured on one query of P = 1000 (3000 for
#: search and select), N = 2e4 ... 1e6, and for brute 100 queries of P = N = 6 and 7 (Intel
#: Xeon, AVX-512, 2 cores shared): qs 0.0021, yue 0.0015, ndcg-greedy 0.0010, search and
#: select 0.0006, brute 0.045 us per unit. qs keeps "auto"'s batch fit (0.0084, and 0.069 us
#: per query), which is the larger; the others are rounded up to the next 1, 2 or 5.
_US = {"qs": (0.0084, 0.069), "yue": (0.002, 0.1), "search": (0.001, 0.1),
       "brute": (0.05, 1.0)}

_AUTO = AutoKernel({code: (tuple(m[0] for m in models), _auto_rule(models))
                    for code, models in AUTO_MODELS.items()})

KINDS = (
    ProblemKind("ranking", "scores and binary labels per query -> the most violated ranking "
                "(losses AP, NDCG)", RankingProblem, RankingInstances(), oracle="brute",
                default="qs"),
)

ALGORITHMS = (
    Algorithm("yue", "ranking", ("ap",), True, "O(PN + N log N)",
              "Yue et al. (2007); Mohapatra et al. (2014), Alg. 1", RankingKernel(_greedy_cy), cost=_yue_cost,
              seconds=per_query_seconds(_yue_cost, *_US["yue"])),
    Algorithm("ndcg-greedy", "ranking", ("ndcg",), True, "O(PN + N log N)",
              "Chakrabarti et al. (2008), corrected in Mohapatra et al. (2018), sec. 2.3",
              RankingKernel(_greedy_cy, discount_table=True), cost=_yue_cost,
              seconds=per_query_seconds(_yue_cost, *_US["yue"])),
    Algorithm("search", "ranking", ("ap",), True, "O(N log N + N log P + P^2)",
              "Mohapatra et al. (2014), Alg. 2; Mohapatra et al. (2018), sec. 5", RankingKernel(_search_cy), cost=_search_cost,
              seconds=per_query_seconds(_search_cost, *_US["search"])),
    Algorithm("select", "ranking", ("ap",), True,
              "O(N + K log K + P^2) expected, K = negatives above rank P+1",
              "Mohapatra et al. (2014), Alg. 3, its two sets as the text derives them", RankingKernel(_select_cy), cost=_search_cost,
              seconds=per_query_seconds(_search_cost, *_US["search"])),
    Algorithm("qs", "ranking", ("ap", "ndcg"), True, "O(N log P + P log N) expected",
              "Mohapatra et al. (2018), Algs. 1-2 (+ sec. 5 search for AP)", RankingKernel(_optranks_cy),
              cost=qs_cost, seconds=per_query_seconds(qs_cost, *_US["qs"])),
    Algorithm("auto", "ranking", ("ap", "ndcg"), True,
              "per query the least of its candidates' (today qs's)",
              "per query the exact kernel of least measured cost for its P and N (today qs)",
              _AUTO, cost=_auto_cost, seconds=per_query_seconds(_auto_cost, *_US["qs"])),
    Algorithm("brute", "ranking", None, True, "O(C(n, P) n)",
              "exhaustive over interleavings (Mohapatra et al. 2018, Obs. 1): the oracle", run_brute,
              cost=_brute_ranking_cost, max_samples=MAX_SAMPLES,
              seconds=per_query_seconds(_brute_ranking_cost, *_US["brute"])),
)
