"""The ranking kind's registry entries (losses AP and NDCG): the kernels' runners, their cost
models, "auto" (the rank SVMs' default name, which runs qs), and user-registered ranking
functions.

Every kernel module exposes ``SOLVE`` (a capsule) and runs inside the one compiled loop over
the queries of ``_driver_cy.rank_queries``, which also computes coefficients, loss and
objective from the ranks, so every algorithm's outputs are measured alike.
"""
from __future__ import annotations

from collections.abc import Callable
from math import comb, log2

import numpy as np

import aprank.inference.ranking._driver_cy as _driver_cy
import aprank.inference.ranking._greedy_cy as _greedy_cy
import aprank.inference.ranking._optranks_cy as _optranks_cy
import aprank.inference.ranking._search_cy as _search_cy
import aprank.inference.ranking._select_cy as _select_cy
from aprank.inference._registry import Algorithm, ProblemKind, per_query_seconds
from aprank.inference.ranking._instances import RankingInstances
from aprank.inference.ranking._oracle import MAX_SAMPLES, run_brute
from aprank.inference.ranking._problem import RankingProblem

__all__ = ["RankingKernel", "UserRanking", "KINDS", "ALGORITHMS", "qs_cost", "log2_at_least_1"]


def _rank_queries(solve, call, discount_table: bool = False) -> None:
    spec = call.loss.kernel_spec(call.max_query_size, discount_table)
    if call.order is not None and call.scores.shape[0] >= call.problem.gather_min:
        _rank_grouped(solve, call, spec)
        return
    _driver_cy.rank_queries(
        solve, call.scores, call.is_pos.view("uint8"), call.order, call.offsets, spec.code,
        spec.discount, call.n_pos, call.ranks, call.coef, call.query_loss, call.query_objective,
        call.truth_out(),
    )


def _rank_grouped(solve, call, spec) -> None:
    """rank_queries on samples whose queries interleave: the scores (and labels, once per
    problem) gathered into query order, the driver run on them as on contiguous queries, its
    outputs put back in input order. The driver reading through ``order`` instead makes
    several random accesses per sample (scores, labels, ranks, coefficients), each a cache
    miss once the samples outgrow the cache; here each array is moved once, by compiled
    passes. The results are the same bit for bit: a query's samples keep their input order
    in the gathered arrays, so every index the driver compares (the tie rule) compares
    alike. The outputs go back through the inverse permutation (``slot``), written in input
    order: scattered through ``order`` instead, each store would touch a page of its own.
    """
    order = call.order
    grouped_pos = call.problem.grouped_is_pos
    truth = call.truth_out()
    scores = _driver_cy.gather(call.scores, order)
    ranks = np.empty_like(call.ranks) if solve is not None else _driver_cy.gather_i64(
        call.ranks, order)
    coef = np.empty_like(call.coef)
    grouped_truth = None if truth is None else np.empty_like(truth)
    _driver_cy.rank_queries(
        solve, scores, grouped_pos, None, call.offsets, spec.code, spec.discount, call.n_pos,
        ranks, coef, call.query_loss, call.query_objective, grouped_truth)
    _driver_cy.put_back(call.problem.slot, ranks, coef, grouped_truth, call.ranks, call.coef,
                        truth)


class RankingKernel:
    """run(call) for a kernel module exposing SOLVE (see _driver_cy.rank_queries).

    discount_table: give the kernel the default NDCG discount as a table instead of computing
    logarithms on the fly; worth its O(n) memory only for algorithms that scan O(PN) ranks.
    """

    #: ``infer``'s fast path may run ``solve`` through ``_driver_cy.rank_one`` (the same
    #: driver steps for one query), which it looks for by this flag: this module imports
    #: the problem's, not the other way round
    rank_one_route = True

    def __init__(self, kernel_module, *, discount_table: bool = False):
        self.solve = kernel_module.SOLVE
        self.discount_table = discount_table

    def __call__(self, call) -> None:
        _rank_queries(self.solve, call, self.discount_table)


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
                raise ValueError(f"a user algorithm must return {N} integer ranks, got "
                                 f"{ranks.shape} of dtype {ranks.dtype}")
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


#: Microseconds per unit of each algorithm's cost model and per query, for its ``seconds``
#: model (the warning of a call over a minute): fitted to measured times per call and rounded
#: up; re-measure with ``python -m benchmarks`` (docs/benchmarks/inference.md).
_US = {"qs": (0.0084, 0.069), "yue": (0.002, 0.1), "search": (0.001, 0.1),
       "brute": (0.05, 1.0)}

KINDS = (
    ProblemKind("ranking", "scores and binary labels per query -> the most violated ranking "
                "(losses AP, NDCG)", RankingProblem, RankingInstances(), oracle="brute",
                default="qs"),
)

ALGORITHMS = (
    Algorithm("yue", "ranking", ("ap",), True, "O(PN + N log N)",
              "Yue et al. (2007); Mohapatra et al. (2014), Alg. 1", RankingKernel(_greedy_cy),
              cost=_yue_cost,
              seconds=per_query_seconds(_yue_cost, *_US["yue"])),
    Algorithm("ndcg-greedy", "ranking", ("ndcg",), True, "O(PN + N log N)",
              "Chakrabarti et al. (2008), corrected in Mohapatra et al. (2018), sec. 2.3",
              RankingKernel(_greedy_cy, discount_table=True), cost=_yue_cost,
              seconds=per_query_seconds(_yue_cost, *_US["yue"])),
    Algorithm("search", "ranking", ("ap",), True, "O(N log N + N log P + P^2)",
              "Mohapatra et al. (2014), Alg. 2; Mohapatra et al. (2018), sec. 5",
              RankingKernel(_search_cy), cost=_search_cost,
              seconds=per_query_seconds(_search_cost, *_US["search"])),
    Algorithm("select", "ranking", ("ap",), True,
              "O(N + K log K + P^2) expected, K = negatives above rank P+1",
              "Mohapatra et al. (2014), Alg. 3, its two sets as the text derives them",
              RankingKernel(_select_cy), cost=_search_cost,
              seconds=per_query_seconds(_search_cost, *_US["search"])),
    Algorithm("qs", "ranking", ("ap", "ndcg"), True, "O(N log P + P log N) expected",
              "Mohapatra et al. (2018), Algs. 1-2 (+ sec. 5 search for AP)",
              RankingKernel(_optranks_cy), cost=qs_cost,
              seconds=per_query_seconds(qs_cost, *_US["qs"])),
    # the rank SVMs' default name for the fastest exact kernel: a name that stays the default
    # when a faster kernel comes
    Algorithm("auto", "ranking", ("ap", "ndcg"), True, "O(N log P + P log N) expected",
              "runs qs, the exact kernel the benchmarks find fastest",
              RankingKernel(_optranks_cy), cost=qs_cost,
              seconds=per_query_seconds(qs_cost, *_US["qs"])),
    Algorithm("brute", "ranking", None, True, "O(C(n, P) n)",
              "exhaustive over interleavings (Mohapatra et al. 2018, Obs. 1): the oracle",
              run_brute,
              cost=_brute_ranking_cost, max_samples=MAX_SAMPLES,
              seconds=per_query_seconds(_brute_ranking_cost, *_US["brute"])),
)
