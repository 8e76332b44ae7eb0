"""Loss-augmented inference algorithms, registered in aprank's one registry.

Each compiled algorithm is a ``_<name>_cy.pyx`` kernel exposing ``SOLVE`` (a C function run by
the shared driver in ``_driver_cy.pyx``); ``_brute.py`` is the exhaustive oracle.
"""
from math import comb, log2
from pkgutil import extend_path

# See aprank/__init__.py: in a source checkout, also look for the installed compiled kernels.
__path__ = extend_path(__path__, __name__)

from aprank._registry import Algorithm, _add
from aprank.inference import (
    _brute, _greedy_cy, _optranks_cy, _search_cy, _select_cy,
)
from aprank.inference._compiled import ranking_runner, run_zero_one


def _lg(x):
    return log2(max(x, 2))


BUILTIN = (
    Algorithm("yue", ("ap",), True, "O(PN + N log N)",
              "Yue et al. 2007; paper 000 Alg. 1",
              ranking_runner(_greedy_cy), cost=lambda P, N: P * N + N * _lg(N)),
    Algorithm("ndcg-greedy", ("ndcg",), True, "O(PN + N log N)",
              "Chakrabarti et al. 2008, corrected in paper 004 sec. 2.3",
              ranking_runner(_greedy_cy, discount_table=True), cost=lambda P, N: P * N + N * _lg(N)),
    Algorithm("search", ("ap",), True, "O(N log N + N log P + P^2)",
              "paper 000 Alg. 2; paper 004 sec. 5",
              ranking_runner(_search_cy), cost=lambda P, N: N * _lg(N) + P * P),
    Algorithm("select", ("ap",), True, "O(N + K log K + P^2) expected, K = negatives above rank P+1",
              "paper 000 Alg. 3 (ERRATA 4)",
              ranking_runner(_select_cy), cost=lambda P, N: N * _lg(N) + P * P),
    Algorithm("qs", ("ap", "ndcg"), True, "O(N log P + P log N) expected",
              "paper 004 Algs. 1-2 (+ sec. 5 search for AP)",
              ranking_runner(_optranks_cy), cost=lambda P, N: N * _lg(P + 1) + P * _lg(N)),
    Algorithm("zero-one", ("zero-one",), True, "O(N + P)",
              "paper 002 eq. 7 (weighted 0-1 loss)",
              run_zero_one, cost=lambda P, N: N + P),
    Algorithm("brute", ("ap", "ndcg", "zero-one"), True, "O(C(n, P) n) / O(2^n n)",
              "exhaustive (paper 004 Obs. 1)",
              _brute.run, cost=lambda P, N: comb(P + N, P) * (P + N),
              max_samples=_brute.MAX_SAMPLES),
)

for _algorithm in BUILTIN:
    _add(_algorithm)
