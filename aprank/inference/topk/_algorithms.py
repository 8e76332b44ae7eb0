"""The top-k kind's registry entries: the compiled c-star kernel and the oracle."""
from __future__ import annotations

from math import comb

from aprank.inference._registry import Algorithm, ProblemKind
from aprank.inference.topk import _cstar_cy
from aprank.inference.topk._instances import TopKInstances
from aprank.inference.topk._oracle import MAX_SAMPLES, run_brute
from aprank.inference.topk._problem import TopKProblem

__all__ = ["run_cstar", "KINDS", "ALGORITHMS"]


def run_cstar(call) -> None:
    """The compiled c-star kernel (``_cstar.hpp``), every query in one call without the GIL."""
    p = call.problem
    _cstar_cy.cstar_queries(call.unary, call.clamp, call.k, call.offsets, p.core, p.W, p.Fcc,
                            p.in_core, call.t, call.value)



def _cstar_cost(P, N):
    return P + N      # per core state; the benchmark's instances have a core of 2


def _brute_subset_cost(P, N):
    return comb(P + N, P) * P


KINDS = (
    ProblemKind("topk", "scores, binary labels and core interactions per query -> the most "
                "violated subset of k items (precision@k)", TopKProblem, TopKInstances(),
                oracle="brute", default="cstar"),
)

ALGORITHMS = (
    Algorithm("cstar", "topk", ("precision@k",), True, "O(2^C N), C = core size",
              "paper 001 sec. 4 (Gray-code core states, linear-time selection)",
              run_cstar, cost=_cstar_cost),
    Algorithm("brute", "topk", None, True, "O(C(n, k) k)",
              "exhaustive over k-subsets: the oracle", run_brute, cost=_brute_subset_cost,
              max_samples=MAX_SAMPLES),
)
