"""The built-in problem kinds and algorithms, put in the registry when aprank.inference loads."""
from math import comb, factorial, log2

import numpy as np

from aprank.inference import (_brute, _greedy_cy, _latent, _optranks_cy, _pairwise, _search_cy,
                              _select_cy, _topk)
from aprank.inference._compiled import AutoKernel, RankingKernel, run_zero_one
from aprank.inference._problem import RankingProblem
from aprank.inference._latent import LatentProblem
from aprank.inference._pairwise import PairwiseProblem
from aprank.inference._topk import TopKProblem
from aprank.inference._registry import Algorithm, ProblemKind, add, add_kind


def _lg(x):
    if isinstance(x, (int, float)):     # the common scalar call, without NumPy's overhead
        return log2(max(x, 2))
    # arrays of per-query sizes (auto's rule)
    return np.log2(np.maximum(x, 2))


def _yue_cost(P, N):
    return P * N + N * _lg(N)


def _search_cost(P, N):
    return N * _lg(N) + P * P


def _qs_cost(P, N):
    return N * _lg(P + 1) + P * _lg(N)


def _linear_cost(P, N):
    return N + P


def _brute_ranking_cost(P, N):
    return comb(P + N, P) * (P + N)


def _brute_labelling_cost(P, N):
    return 2 ** (P + N) * (P + N)


def _cstar_cost(P, N):
    return P + N      # per core state; the benchmark's instances have a core of 2


def _brute_subset_cost(P, N):
    return comb(P + N, P) * P


def _latent_ap_cost(P, N):
    return _candidates(P, N) + _qs_cost(P, N)


def _candidates(P, N):
    return 4 * (P + N)      # the benchmark's bags have 4 rows


def _latent_greedy_cost(P, N):
    return _candidates(P, N) + N * (N ** 3 + P ** 3)     # per slot moved: two assignments


def _brute_latent_cost(P, N):
    return 4 ** (P + N) * factorial(P + N) * (P + N)


def _graphcut_cost(P, N):
    return P + N      # linear: a bounded number of cuts per sample of bounded components


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
    "ap": ((_optranks_cy, _qs_cost, 0.0084, 0.069),),
    "ndcg": ((_optranks_cy, _qs_cost, 0.0084, 0.069),),
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


_AUTO = AutoKernel({code: (tuple(m[0] for m in models), _auto_rule(models))
                    for code, models in AUTO_MODELS.items()})


KINDS = (
    ProblemKind("ranking", "scores and binary labels per query -> the most violated ranking "
                "(losses AP, NDCG)", RankingProblem, oracle="brute", default="qs"),
    ProblemKind("labelling", "scores and binary labels per query -> the most violated "
                "labelling (the weighted 0-1 loss)", RankingProblem, oracle="brute",
                default="zero-one"),
    ProblemKind("topk", "scores, binary labels and core interactions per query -> the most "
                "violated subset of k items (precision@k)", TopKProblem, oracle="brute",
                default="cstar"),
    ProblemKind("pairwise", "unary scores, linked pairs and binary labels -> the most violated "
                "labelling and every max-marginal (weighted 0-1 loss, HOB-SVM)", PairwiseProblem,
                oracle="brute", default="graphcut"),
    ProblemKind("latent", "bags of candidate rows with one binary label per bag -> the most "
                "violated ranking of bags and latent choice of rows (AP loss; latent AP-SVM, "
                "latent SSVM)", LatentProblem, oracle="brute", default="latent-ap",
                defaults=(("latent-ssvm", "latent-greedy"),)),
)

ALGORITHMS = (
    Algorithm("yue", "ranking", ("ap",), True, "O(PN + N log N)",
              "Yue et al. 2007; paper 000 Alg. 1", RankingKernel(_greedy_cy), cost=_yue_cost),
    Algorithm("ndcg-greedy", "ranking", ("ndcg",), True, "O(PN + N log N)",
              "Chakrabarti et al. 2008, corrected in paper 004 sec. 2.3",
              RankingKernel(_greedy_cy, discount_table=True), cost=_yue_cost),
    Algorithm("search", "ranking", ("ap",), True, "O(N log N + N log P + P^2)",
              "paper 000 Alg. 2; paper 004 sec. 5", RankingKernel(_search_cy), cost=_search_cost),
    Algorithm("select", "ranking", ("ap",), True,
              "O(N + K log K + P^2) expected, K = negatives above rank P+1",
              "paper 000 Alg. 3 (ERRATA 4)", RankingKernel(_select_cy), cost=_search_cost),
    Algorithm("qs", "ranking", ("ap", "ndcg"), True, "O(N log P + P log N) expected",
              "paper 004 Algs. 1-2 (+ sec. 5 search for AP)", RankingKernel(_optranks_cy),
              cost=_qs_cost),
    Algorithm("auto", "ranking", ("ap", "ndcg"), True,
              "per query the least of its candidates' (today qs's)",
              "per query the exact kernel of least measured cost for its P and N (today qs)",
              _AUTO, cost=_auto_cost),
    Algorithm("brute", "ranking", None, True, "O(C(n, P) n)",
              "exhaustive over interleavings (paper 004 Obs. 1): the oracle", _brute.run,
              cost=_brute_ranking_cost, max_samples=_brute.MAX_SAMPLES),
    Algorithm("zero-one", "labelling", ("zero-one",), True, "O(N + P)",
              "paper 002 eq. 7 (weighted 0-1 loss)", run_zero_one, cost=_linear_cost),
    Algorithm("brute", "labelling", None, True, "O(2^n n)",
              "exhaustive over labellings: the oracle", _brute.run, cost=_brute_labelling_cost,
              max_samples=_brute.MAX_SAMPLES),
    Algorithm("cstar", "topk", ("precision@k",), True, "O(2^C N), C = core size",
              "paper 001 sec. 4 (Gray-code core states, linear-time selection)",
              _topk.run_cstar, cost=_cstar_cost),
    Algorithm("brute", "topk", None, True, "O(C(n, k) k)",
              "exhaustive over k-subsets: the oracle", _topk.run_brute, cost=_brute_subset_cost,
              max_samples=_topk.BRUTE_MAX_SAMPLES),
    Algorithm("graphcut", "pairwise", ("pairwise-zero-one",), True,
              f"O(2^k k) per component of k <= {_pairwise.ENUMERATE_UP_TO}; larger: as "
              "graphcut-dynamic",
              "compiled enumeration of small components, else graphcut-dynamic; pair scores <= 0",
              _pairwise.run_graphcut, cost=_graphcut_cost),
    Algorithm("graphcut-dynamic", "pairwise", ("pairwise-zero-one",), True,
              "one s-t min cut per component + one dynamic re-cut per sample",
              "paper 002 sec. 3; Boykov-Kolmogorov (PyMaxflow), dynamic cuts of Kohli-Torr 2005; "
              "pair scores <= 0", _pairwise.run_graphcut_dynamic, cost=_graphcut_cost),
    Algorithm("graphcut-static", "pairwise", ("pairwise-zero-one",), True,
              "2 s-t min cuts from scratch per sample",
              "the baseline of dynamic cuts; pair scores <= 0", _pairwise.run_graphcut_static,
              cost=_graphcut_cost),
    Algorithm("brute", "pairwise", None, True, "O(2^n (n + m))",
              "exhaustive over labellings: the oracle", _pairwise.run_brute,
              cost=_brute_labelling_cost, max_samples=_pairwise.BRUTE_MAX_SAMPLES),
    Algorithm("latent-ap", "latent", ("latent-ap",), True,
              "O(M) + the ranking algorithm's (qs: O(N log P + P log N))",
              "paper 003 Propositions 2-3: best row per bag, then exact AP inference",
              _latent.run_latent_ap, cost=_latent_ap_cost),
    Algorithm("latent-greedy", "latent", ("latent-ssvm",), False,
              "O(M log M + N (N^3 + P^3 L)) worst case, L <= P Bellman-Ford passes",
              "paper 003 appendix A: greedy over negative slots; per slot one Hungarian "
              "assignment per side (scipy) and augmenting paths", _latent.run_latent_greedy,
              cost=_latent_greedy_cost),
    Algorithm("brute", "latent", None, True, "O(B! K^B B), K rows per bag",
              "exhaustive over rankings of bags and latent rows: the oracle", _latent.run_brute,
              cost=_brute_latent_cost, max_samples=_latent.BRUTE_MAX_SAMPLES),
)

for _kind in KINDS:
    add_kind(_kind)
for _algorithm in ALGORITHMS:
    add(_algorithm)
