"""The latent kind's registry entries: latent AP-SVM's exact step (Behl 2015, Propositions 2-3) and
the latent SSVM's greedy (Behl 2015, appendix A)."""
from __future__ import annotations

from math import factorial

import numpy as np

from aprank.inference._registry import Algorithm, ProblemKind
from aprank.inference.latent._greedy_cy import latent_greedy
from aprank.inference.latent._instances import LatentInstances
from aprank.inference.latent._oracle import MAX_SAMPLES, run_brute
from aprank.inference.latent._problem import LatentProblem
from aprank.inference.ranking import qs_cost
from aprank.losses import AveragePrecision

__all__ = ["run_latent_ap", "run_latent_greedy", "KINDS", "ALGORITHMS"]

_AP = AveragePrecision()


def run_latent_ap(call) -> None:
    """Behl (2015), Proposition 3: each negative bag takes its best row, each positive its row of
    H_P; then exact AP inference on the bag scores (the problem's ``ranking_algorithm``)."""
    pos = call.bags.is_pos
    rows = np.where(pos, call.impute, call.argmax)
    result = call.problem.bag_problem.solve_one(call.scores[rows], call.problem.ranking_algorithm)
    call.ranks[:] = result.ranks
    call.h[:] = rows
    call.ranking = result


def run_latent_greedy(call) -> None:
    """Behl (2015), appendix A: start from the ground-truth pattern and move the negative slots up
    one at a time (the highest first), each to the rank that maximises the loss-augmented score
    with the others fixed (ties, within a rounding tolerance at the scale of the score
    differences: the highest place, and a move that ties with staying is taken); every pattern
    is scored with its best placement of bags and latent choices, an assignment per side of
    the gains of eqs. A.6-A.9. Compiled (``_greedy_cy``): each side's assignment is a split of
    the bags between the slots of coefficient >= 0 and the others (sorted matchings within
    each), certified optimal by Bellman-Ford sweeps over a two-path flow network and carried
    from pattern to pattern; the negative side's value at every rank of a scan from one
    shortest-path pass and an upper envelope. Approximate: never above the optimum (Table A.1
    is a case below it)."""
    problem, s = call.problem, call.scores
    P, N = problem.P, problem.N
    pos_b = np.flatnonzero(call.bags.is_pos)
    neg_b = np.flatnonzero(~call.bags.is_pos)
    if N == 0:
        call.ranks[:] = 1
        call.h[:] = call.argmax
        return
    high, low = s[call.argmax], s[call.argmin]
    # The kernel compares the values of a scan's ranks as differences from staying, summed
    # from the terms that differ, at a tolerance set by those terms' magnitudes. The scores go
    # in less their median: a constant added to every score then changes nothing, and a score
    # far from the others stays far from the centre instead of moving the centre away from
    # the others (as a midrange would), so only the decisions that move past it see its size.
    both = np.r_[high, low]
    centre = float(np.partition(both, both.size // 2)[both.size // 2])
    high, low = high - centre, low - centre
    neg_ranks, pos_coef, neg_coef = latent_greedy(
        np.ascontiguousarray(high[pos_b]), np.ascontiguousarray(low[pos_b]),
        np.ascontiguousarray(high[neg_b]), np.ascontiguousarray(low[neg_b]))
    # a coefficient is (N - 2 above) / (P N) for a positive, (P + 2 - 2 rank) / (P N) for a
    # negative: its rank back from it
    call.ranks[pos_b] = 1 + np.rint((N - pos_coef * (P * N)) / 2).astype(np.int64)
    call.ranks[neg_b] = np.rint((P + 2 - neg_coef * (P * N)) / 2).astype(np.int64)
    call.h[pos_b] = np.where(pos_coef >= 0, call.argmax[pos_b], call.argmin[pos_b])
    call.h[neg_b] = np.where(neg_coef >= 0, call.argmax[neg_b], call.argmin[neg_b])


def _candidates(P, N):
    return 4 * (P + N)      # the benchmark's bags have 4 rows


def _latent_ap_cost(P, N):
    return _candidates(P, N) + qs_cost(P, N)


def _latent_greedy_cost(P, N):
    # the compiled greedy: per scanned slot (at most N) a few O(N + P) passes over each side's
    # split (Bellman-Ford sweeps, prefix sums, an upper envelope); a swap search, O(N^2) or
    # O(P^2), only where a slot's start is not certified at once
    return _candidates(P, N) + N * (N + P)


def _brute_latent_cost(P, N):
    return 4 ** (P + N) * factorial(P + N) * (P + N)


#: Microseconds per unit of the ``seconds`` models below, timed on the benchmark's bags of 4
#: rows (latent-ap per unit of its cost, the compiled latent-greedy per unit of N (N + P)) and,
#: for brute, per ranking of bags of 2 rows; rounded up (the measurements:
#: docs/benchmarks/kinds.md, Cost models). latent-greedy's is taken at 0.1, above every time
#: measured: a call estimated over a minute is then 25,000 bags or more.
_US_LATENT_AP, _US_GREEDY, _US_PERMUTATION = 0.03, 0.1, 50.0


def _latent_ap_seconds(call) -> float:
    P, N, M = call.problem.P, call.problem.N, call.problem.n_samples
    return 1e-6 * _US_LATENT_AP * (M + qs_cost(P, N))


def _latent_greedy_seconds(call) -> float:
    P, N, M = call.problem.P, call.problem.N, call.problem.n_samples
    return 1e-6 * (_US_LATENT_AP * M + _US_GREEDY * float(N) * (float(N) + float(P)))


def _brute_latent_seconds(call) -> float:
    """Every ranking of the B bags (a NumPy pass each) over every latent choice: B! (1 + K B
    / 5000), K the product of the bags' row counts (the choices, at most)."""
    B = call.bags.n_bags
    K = float(np.prod(call.bags.counts.astype(np.float64)))
    return 1e-6 * _US_PERMUTATION * float(factorial(B)) * (1.0 + K * B / 5000.0)


KINDS = (
    ProblemKind("latent", "bags of candidate rows with one binary label per bag -> the most "
                "violated ranking of bags and latent choice of rows (AP loss; latent AP-SVM, "
                "latent SSVM)", LatentProblem, LatentInstances(), oracle="brute",
                default="latent-ap", defaults=(("latent-ssvm", "latent-greedy"),)),
)

ALGORITHMS = (
    Algorithm("latent-ap", "latent", ("latent-ap",), True,
              "O(M) + the ranking algorithm's (qs: O(N log P + P log N))",
              "Behl (2015), Propositions 2-3: best row per bag, then exact AP inference",
              run_latent_ap, cost=_latent_ap_cost, seconds=_latent_ap_seconds),
    Algorithm("latent-greedy", "latent", ("latent-ssvm",), False,
              "O(M + (N + P) log(N + P) + S (N + P) B), S <= N slots scanned, B the few "
              "Bellman-Ford passes a certificate takes; a swap search O(N^2 + P^2) where one "
              "does not hold at once",
              "Behl (2015), appendix A: greedy over negative slots, compiled; each side's "
              "assignment a split between the slots >= 0 and < 0 (sorted matchings), "
              "certified by Bellman-Ford on a two-path flow network", run_latent_greedy,
              cost=_latent_greedy_cost, seconds=_latent_greedy_seconds),
    Algorithm("brute", "latent", None, True, "O(B! K^B B), K rows per bag",
              "exhaustive over rankings of bags and latent rows: the oracle", run_brute,
              cost=_brute_latent_cost, seconds=_brute_latent_seconds,
              max_samples=MAX_SAMPLES),
)
