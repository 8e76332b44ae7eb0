"""The latent kind's seeded instances: a few small bags with known rows for cross-checks,
bags of ``candidates`` rows with one shifted witness per positive bag for benchmarks."""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from aprank.inference._base import Instance, with_ties
from aprank.inference._deep import (
    EXACT_UP_TO,
    SPREADS,
    DeepCase,
    Relation,
    close_within,
    dyadic,
    exact_shift,
    exact_sum,
    objective_matches,
    shiftable,
    with_outliers,
    within,
)
from aprank.inference._protocol import Instances
from aprank.inference._registry import algorithms
from aprank.inference.latent._oracle import MAX_BAGS
from aprank.inference.latent._problem import LatentProblem, LatentResult
from aprank.inference.ranking import RankingProblem

__all__ = ["LatentInstance", "LatentInstances"]


@dataclass(frozen=True)
class LatentInstance(Instance):
    """Seeded inputs of one cross-check of the latent kind: an :class:`Instance` (scores and
    labels per row) with each row's bag and the mask of known rows.

    Parameters
    ----------
    scores, labels, description, seed, trial, max_n
        As for :class:`~aprank.inference.Instance`.
    bags : ndarray (M,)
        The bag of each row.
    h : ndarray of bool (M,) or None
        The known rows.
    """

    bags: np.ndarray
    h: np.ndarray | None = None


class LatentInstances(Instances):
    """Instances of bags of candidate rows (Behl 2015)."""

    kind = "latent"

    def random_instance(self, seed: int, trial: int, max_n: int = 2000) -> LatentInstance:
        """Seeded instance number ``trial``: 2 to 6 bags of 1 to 3 rows (small enough for the
        oracle whatever ``max_n``), at least one positive, a known row in some bags, scores with
        and without ties."""
        rng = np.random.default_rng([seed, trial, 2003])
        B = int(rng.integers(2, 7))
        counts = rng.integers(1, 4, B)
        bag_pos = rng.random(B) < rng.choice([0.3, 0.5])
        bag_pos[int(rng.integers(B))] = True
        bags = np.repeat(np.arange(B), counts)
        labels = bag_pos[bags]
        ties, (scores,) = with_ties(rng, rng.standard_normal(bags.size) * rng.choice([1.0, 3.0]))
        h = None
        if rng.random() < 0.4:
            h = np.zeros(bags.size, dtype=bool)
            for b in np.flatnonzero(rng.random(B) < 0.5):
                h[int(rng.choice(np.flatnonzero(bags == b)))] = True
        desc = (f"bags={B} rows={bags.size} P={int(bag_pos.sum())} ties={ties} "
                f"known={0 if h is None else int(h.sum())}")
        return LatentInstance(scores, labels, desc, seed, trial, max_n, bags=bags, h=h)

    def bench_instance(self, P: int, N: int, shift: float, seed: int = 0,
                       candidates: int = 4) -> LatentInstance:
        """The benchmark's instance of a cell: P positive and N negative bags of ``candidates``
        rows ~ N(0, 1); one row of each positive bag is shifted by ``shift``."""
        rng = np.random.default_rng(seed)
        B = P + N
        bag_pos = np.zeros(B, dtype=bool)
        bag_pos[rng.choice(B, P, replace=False)] = True
        bags = np.repeat(np.arange(B), candidates)
        scores = rng.standard_normal(bags.size)
        witness = np.arange(B) * candidates + rng.integers(0, candidates, B)
        scores[witness[bag_pos]] += shift
        return LatentInstance(scores, bag_pos[bags], f"P={P} N={N} bags of {candidates}", seed,
                              0, bags.size, bags=bags, h=None)

    def solve(self, instance: LatentInstance, loss, algorithm) -> LatentResult:
        """The instance solved for ``loss`` with ``algorithm``."""
        return LatentProblem(instance.labels, loss, bags=instance.bags, h=instance.h).solve_one(
            instance.scores, algorithm)

    def compare(self, result, reference, instance) -> str | None:
        """Exact algorithms must report the same rows and value: where the objective leaves a
        bag's row free the kind defines a canonical one (:class:`LatentResult`). The ranks
        are not compared (equal bag scores make several rankings optimal)."""
        if not np.array_equal(result.h, reference.h):
            b = int(np.flatnonzero(result.h != reference.h)[0])
            return (f"h differs at bag {reference.bag_ids[b].item()!r}: row {int(result.h[b])} "
                    f"!= {int(reference.h[b])}")
        scale = max(1.0, abs(reference.value))
        if abs(result.value - reference.value) > 1e-9 * scale:
            return f"value {result.value!r} != {reference.value!r}"
        return None

    # ------------------------------------------------------------------ the deep check
    def switches(self) -> dict:
        """The brute-force oracle's limit (MAX_BAGS): the deep cases are larger. The greedy's
        switches depend on the data, not on a size: the positive side past half the
        negatives moved (coefficients of both signs), a split not certified at once (a swap
        search), bags of one row; its cases are built to take each."""
        return {"MAX_BAGS": MAX_BAGS}

    def deep_cases(self, seed: int, max_n: int) -> list:
        """Bags of 1-4 rows (or one row each) up to 10^4 bags, positives above the negatives,
        among them or below them (most negatives then move above positives: the positive
        side's coefficients of both signs), scores untied, on a coarse grid or all equal, a
        known row in some bags; spread cases: one to three scores at +-2^10 ... 2^996 (half on
        their bags' side), up to 500 + 5,000 bags, one negative or one positive among them."""
        cases = []
        sizes = [(1, 1), (1, 5), (5, 1), (3, 4), (3, 9), (30, 100), (100, 30), (200, 800),
                 (1000, 3000), (2000, 8000)]
        regimes = (("above", 2.0), ("among", 0.0), ("below", -2.0))
        for i, (P, N) in enumerate(sizes):
            for j, (where, shift) in enumerate(regimes):
                for rows in (1, 4):
                    ties = ("none", "coarse", "none", "equal")[(i + j + rows) % 4]
                    params = dict(P=P, N=N, rows=rows, shift=shift, ties=ties,
                                  known=0.3 if (i + j) % 2 else 0.0, seed=seed + 7 * i + j)
                    if (P + N) * rows <= max_n:
                        cases.append(DeepCase("bags", params, ("latent-ap", "latent-ssvm"),
                                              relations=(P + N) * rows <= 30_000))
        # one to three scores far from the others (2^10 ... 2^996): where a tolerance on the
        # scores' spread or magnitude makes every rank a tie
        # (one negative: every positive slot's coefficient of both signs from the first)
        spread = [(3, 9), (30, 100), (200, 800), (200, 1), (1, 200), (500, 5000)]
        for i, e in enumerate(SPREADS):
            for j, (P, N) in enumerate(spread):
                for rows in (1, 4):
                    if (P + N) * rows > max_n or (j == 5 and (rows == 4 or i % 2)):
                        continue
                    params = dict(P=P, N=N, rows=rows, shift=(2.0, 0.0, -2.0)[(i + j) % 3],
                                  ties="none", known=0.0, seed=seed + 101 * i + j,
                                  outliers=1 + (i + j + rows) % 3, spread=e,
                                  agree=(i + j + rows) % 2 == 0)
                    cases.append(DeepCase("bags", params, ("latent-ap", "latent-ssvm")))
        return cases

    def deep_instance(self, family: str, **params) -> LatentInstance:
        """``"bags"``: P positive and N negative bags of 1 to ``rows`` rows (exactly one when
        ``rows`` is 1), scores ~ N(0, 1) on a dyadic grid plus ``shift`` on each positive
        bag's witness row; ``ties`` "coarse" (a grid of 1/2) or "equal" (every score 0);
        ``known``: the fraction of bags with a known row; ``outliers`` scores (0 by default)
        at +-2^``spread``."""
        if family != "bags":
            return super().deep_instance(family, **params)
        rng = np.random.default_rng([params["seed"], 3])
        P, N, rows = int(params["P"]), int(params["N"]), int(params["rows"])
        B = P + N
        counts = np.ones(B, dtype=np.int64) if rows == 1 else rng.integers(1, rows + 1, B)
        bag_pos = np.zeros(B, dtype=bool)
        bag_pos[rng.choice(B, P, replace=False)] = True
        bags = np.repeat(np.arange(B), counts)
        first = np.r_[0, np.cumsum(counts)[:-1]]
        witness = first + rng.integers(0, counts)
        scores = dyadic(rng, bags.size, 1 if params["ties"] == "coarse" else 20)
        scores[witness[bag_pos]] += params["shift"]
        if params["ties"] == "equal":
            scores[:] = 0.0
        scores = with_outliers(rng, scores, int(params.get("outliers", 0)),
                               int(params.get("spread", 0)),
                               bag_pos[bags] if params.get("agree") else None)
        h = None
        if params["known"] > 0:
            h = np.zeros(bags.size, dtype=bool)
            h[witness[rng.random(B) < params["known"]]] = True
        desc = " ".join(f"{k}={v}" for k, v in params.items() if k != "seed")
        return LatentInstance(scores, bag_pos[bags], desc, int(params["seed"]), 0, bags.size,
                              bags=bags, h=h)

    def deep_reference(self, loss, instance) -> str | None:
        """The oracle (``brute``) on cases of at most MAX_BAGS bags; None beyond: no other
        exact latent algorithm reaches those sizes. There ``latent-ap``'s answer, Proposition
        3's closed form plus exact AP inference, is checked by its relations (among them its
        second step by every exact AP algorithm); ``latent-greedy``, approximate, against AP
        inference on bags of one row, for what it promises (never below the ground truth)
        and by its relations."""
        return "brute" if np.unique(instance.bags).size <= MAX_BAGS else None

    def paths(self, instance, algorithm: str, result=None) -> tuple:
        """Bags of one row or of several, known rows, tied scores, and (from the result) a
        positive side with slot coefficients of both signs (the greedy's split search)."""
        tags = ["bags of one row" if np.unique(instance.bags).size == instance.size
                else "bags of several rows"]
        if instance.h is not None and instance.h.any():
            tags.append("known rows")
        if np.unique(instance.scores).size < instance.size:
            tags.append("tied scores")
        if result is not None and np.any(result.coef[instance.labels] < 0):
            tags.append("positive slots of both signs")
        return tuple(tags)

    def accepts(self, instance, algorithm) -> bool:
        """Within ``max_samples`` rows and, for the oracle, MAX_BAGS bags."""
        if algorithm.max_samples is None:
            return True
        return (instance.size <= algorithm.max_samples
                and np.unique(instance.bags).size <= MAX_BAGS)

    def tolerance(self, instance) -> float:
        """An objective is a loss of at most 1 plus sums of score terms in which a row of equal
        coefficients in both terms cancels exactly (summed without rounding, then rounded
        once): two exact objectives differ by a few ulps of their own size, set by
        :func:`within`, above this floor at the loss's scale. No spread or magnitude of the
        scores enters it (one far score changes nothing)."""
        return 1e-12

    def relations(self) -> tuple:
        """A constant added to every score; bags and rows permuted (the greedy where no scores
        tie: it orders tied bags by index); ``latent-ap``'s second step by every exact AP
        algorithm; the greedy on bags of one row against AP inference; every objective at
        least the ground truth's (0)."""
        return (Relation("constant added to every score", _shifted, exact_only=False,
                         applies=lambda instance, algorithm: shiftable(instance.scores)),
                Relation("bags and rows permuted", _permuted),
                Relation("bags and rows permuted (untied scores)", _permuted,
                         exact_only=False, applies=_untied_approximate),
                Relation("second step by every exact AP algorithm", _second_step,
                         applies=lambda instance, algorithm: algorithm == "latent-ap"),
                Relation("bags of one row: AP inference's optimum", _one_row,
                         exact_only=False, applies=_one_row_bags),
                Relation("objective at least the ground truth's", _at_least_truth,
                         exact_only=False),
                Relation("reported objective = the output's, exactly", _reported_objective,
                         exact_only=False,
                         applies=lambda instance, algorithm: instance.size <= EXACT_UP_TO))


def _untied_approximate(instance, algorithm) -> bool:
    return algorithm == "latent-greedy" and np.unique(instance.scores).size == instance.size


def _one_row_bags(instance, algorithm) -> bool:
    return algorithm == "latent-greedy" and np.unique(instance.bags).size == instance.size


def _with(instance, scores=None, order=None, bag_names=None) -> LatentInstance:
    """The instance with new scores, or its rows in ``order`` and its bags renamed."""
    if order is None:
        return LatentInstance(scores, instance.labels, instance.description, instance.seed,
                              instance.trial, instance.max_n, bags=instance.bags, h=instance.h)
    return LatentInstance(instance.scores[order], instance.labels[order], instance.description,
                          instance.seed, instance.trial, instance.max_n,
                          bags=bag_names[instance.bags[order]],
                          h=None if instance.h is None else instance.h[order])


def _shifted(instances, instance, loss, algorithm, rng):
    """A power of two added to every score (exact on the dyadic grid): the same objective
    and rows."""
    s = instance.scores
    c = exact_shift(s, rng)
    if c is None:
        return "no shift by a power of two is exact on these scores (the case is not dyadic)"
    a = instances.solve(instance, loss, algorithm)
    b = instances.solve(_with(instance, s + c), loss, algorithm)
    return _same_answer(instances, instance, a, b, f"shift {c!r}")


def _same_answer(instances, instance, a, b, what) -> str | None:
    """Where two results of the same problem differ (objective, then rows), or None."""
    differs = close_within(b.objective, a.objective,
                           within(a.objective, b.objective, instances.tolerance(instance)))
    if differs:
        return f"{what}: objective {differs}"
    if not np.array_equal(a.h, b.h):
        return f"{what}: rows differ"
    return None


def _permuted(instances, instance, loss, algorithm, rng):
    """Rows in a random order and bags renamed (their sorted order changes too): the same
    objective, and in each bag a row of the same score (rows of equal score are
    interchangeable)."""
    order = rng.permutation(instance.size)
    names = rng.permutation(np.unique(instance.bags).size) * 3 + 1
    moved = _with(instance, order=order, bag_names=names)
    a = instances.solve(instance, loss, algorithm)
    b = instances.solve(moved, loss, algorithm)
    what = close_within(b.objective, a.objective,
                        within(a.objective, b.objective, instances.tolerance(instance)))
    if what:
        return f"objective {what}"
    chosen = dict(zip(b.bag_ids.tolist(), moved.scores[b.h].tolist()))
    for bag, score in zip(a.bag_ids.tolist(), instance.scores[a.h].tolist()):
        if chosen[int(names[bag])] != score:
            return (f"bag {bag}: the row chosen scores {chosen[int(names[bag])]!r} once "
                    f"permuted, {score!r} before")
    return None


def _second_step(instances, instance, loss, algorithm, rng):
    """latent-ap with each exact AP algorithm of the registry as its second step (qs by
    default): the same objective and rows."""
    base = instances.solve(instance, loss, algorithm)
    for algo in algorithms(loss="ap", exact=True):
        if algo.max_samples is not None:
            continue
        r = LatentProblem(instance.labels, loss, bags=instance.bags, h=instance.h,
                          ranking_algorithm=algo.name).solve_one(instance.scores, algorithm)
        what = _same_answer(instances, instance, base, r, f"second step {algo.name}")
        if what:
            return what
    return None


def _one_row(instances, instance, loss, algorithm, rng):
    """Bags of one row: the greedy reaches AP inference's optimum of the bags' scores, within
    1e-12 of it (relative; the rounding of two objectives, not a tie tolerance: the greedy's
    ties are at the scale of the terms a step compares), and never above it."""
    r = instances.solve(instance, loss, algorithm)
    exact = RankingProblem(instance.labels, "ap").solve_one(instance.scores).objective
    tol = max(instances.tolerance(instance), 1e-12 * max(abs(r.objective), abs(exact)))
    if r.objective > exact + tol:
        return f"objective {r.objective!r} above AP inference's {exact!r}"
    if r.objective < exact - tol:
        return (f"objective {r.objective!r} below AP inference's {exact!r} by more than "
                f"{tol:.3g} (1e-12 of the objective)")
    return None


def _at_least_truth(instances, instance, loss, algorithm, rng):
    """Every algorithm starts from or beats the ground truth, whose objective is 0."""
    r = instances.solve(instance, loss, algorithm)
    if r.objective < -instances.tolerance(instance):
        return f"objective {r.objective!r} below the ground truth's 0"
    return None


def exact_objective(instance, result) -> Fraction:
    """The objective of ``result``'s output (ranks, rows) in rational arithmetic: the AP loss
    of the ranking of bags plus w'Psi(Y, H) - w'Psi(Y*, H*), each coefficient an integer over
    P N, each score the float it is."""
    inv = np.searchsorted(result.bag_ids, instance.bags)
    pos = np.zeros(result.bag_ids.size, dtype=bool)
    pos[inv] = instance.labels.astype(bool)
    P, N = int(pos.sum()), int((~pos).sum())
    if N == 0:
        return Fraction(0)
    ranks = result.ranks.tolist()
    num = [N + 2 - 2 * r if p else P + 2 - 2 * r for r, p in zip(ranks, pos.tolist())]
    truth = [N if p else -P for p in pos.tolist()]
    s = instance.scores
    terms = exact_sum(num, s[result.h]) - exact_sum(truth, s[result.truth_h])
    above = np.sort(result.ranks[pos] - 1).tolist()
    loss = sum((Fraction(a, i + 1 + a) for i, a in enumerate(above)), Fraction(0)) / P
    return loss + terms / (P * N)


def _reported_objective(instances, instance, loss, algorithm, rng):
    """The reported objective within a few ulps of its output's exact value."""
    r = instances.solve(instance, loss, algorithm)
    return objective_matches(r.objective, exact_objective(instance, r), r.loss)
