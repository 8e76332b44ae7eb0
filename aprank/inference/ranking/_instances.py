"""The ranking kind's seeded instances: one query of scores and binary labels, for
cross-checks (:meth:`RankingInstances.random_instance`) and benchmarks
(:meth:`RankingInstances.bench_instance`)."""
from __future__ import annotations

from fractions import Fraction

import numpy as np

import aprank.inference.ranking._driver_cy as _driver_cy
import aprank.inference.ranking._optranks_cy as _optranks_cy
import aprank.inference.ranking._select_cy as _select_cy
from aprank.inference._base import InferenceResult, Instance
from aprank.inference._deep import (
    EXACT_UP_TO,
    SPREADS,
    DeepCase,
    Relation,
    around,
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
from aprank.inference._registry import as_algorithm
from aprank.inference.ranking._problem import Call, RankingProblem
from aprank.losses import get_loss

__all__ = ["RankingInstances", "REGIMES", "TIES"]

#: Score regimes and tie densities of the cross-check instances (see random_instance).
REGIMES = {"overlapping": 1.0, "separated": 6.0, "reversed": -1.0}
TIES = ("none", "some", "heavy", "all")


class RankingInstances(Instances):
    """Instances of one query of scores and binary labels (the labelling kind uses them too)."""

    kind = "ranking"
    #: The problem type its instances are solved with (the labelling kind's is its own).
    problem_type = RankingProblem

    def random_instance(self, seed: int, trial: int, max_n: int = 2000) -> Instance:
        """The seeded random one-query instance number ``trial``.

        Half of the instances have at most 16 samples (so the oracle can join), the rest up to
        ``max_n``. Scores come from one of REGIMES (positives ~ N(1, 1) or N(6, 1) or N(-1, 1),
        negatives ~ N(0, 1)), rounded to a tie density from TIES, and scaled by 1e-4, 1 or 1e4.

        Parameters
        ----------
        seed, trial : int
            Seed of the series and number of the instance in it.
        max_n : int
            Largest number of samples.
        """
        rng = np.random.default_rng([seed, trial])
        if rng.random() < 0.5 or max_n <= 16:
            n = int(rng.integers(2, min(16, max_n) + 1))
        else:
            n = int(np.exp(rng.uniform(np.log(17), np.log(max(max_n, 18)))))
        frac = rng.choice([0.5, 0.2, 0.05])
        n_pos = int(np.clip(round(n * frac * rng.uniform(0.2, 1.8)), 1, n))
        regime = list(REGIMES)[int(rng.integers(len(REGIMES)))]
        ties = TIES[int(rng.integers(len(TIES)))]
        labels = np.zeros(n, dtype=bool)
        labels[rng.permutation(n)[:n_pos]] = True
        scores = rng.standard_normal(n) + REGIMES[regime] * labels
        if ties == "some":
            scores = np.round(scores, 1)
        elif ties == "heavy":
            scores = np.round(scores)
        elif ties == "all":
            scores = np.zeros(n)
        scores = scores * rng.choice([1e-4, 1.0, 1e4])
        return Instance(scores, labels, f"n={n} P={n_pos} regime={regime} ties={ties}",
                        seed, trial, max_n)

    def bench_instance(self, P: int, N: int, shift: float, seed: int = 0) -> Instance:
        """The benchmark's instance of a cell: P positives ~ N(shift, 1) and N negatives
        ~ N(0, 1), shuffled.

        Parameters
        ----------
        P, N : int
            Positives and negatives.
        shift : float
            Mean of the positives' scores.
        seed : int
            Random seed.
        """
        rng = np.random.default_rng(seed)
        labels = np.zeros(P + N, dtype=bool)
        labels[rng.choice(labels.size, P, replace=False)] = True
        scores = rng.standard_normal(labels.size)
        scores[labels] += shift
        return Instance(scores, labels, f"P={P} N={N} shift={shift}", seed, 0, P + N)

    def solve(self, instance: Instance, loss, algorithm) -> InferenceResult:
        """The instance's query solved for ``loss`` with ``algorithm`` (see
        :meth:`Instances.solve`)."""
        return self.problem_type(instance.labels, loss).solve_one(instance.scores, algorithm)

    def compare(self, result: InferenceResult, reference: InferenceResult,
                instance: Instance) -> str | None:
        """Exact algorithms must return the same ranks when no two scores are equal (the tie
        rule makes them agree otherwise too, but only the objective is defined there)."""
        if np.unique(instance.scores).size != instance.size:
            return None
        if np.array_equal(result.ranks, reference.ranks):
            return None
        bad = int(np.flatnonzero(result.ranks != reference.ranks)[0])
        return (f"ranks differ at sample {bad}: {int(result.ranks[bad])} != "
                f"{int(reference.ranks[bad])}")

    def reproducer(self, instance: Instance, loss: str, algorithm: str) -> str:
        """A line calling :func:`aprank.infer` on the instance: with its scores and labels
        written out when it is small, else rebuilt from its seed."""
        call = f"aprank.infer(scores, labels, loss={loss!r}, algorithm={algorithm!r})"
        if instance.size <= 16:
            return (f"scores = np.array({instance.scores.tolist()}); labels = "
                    f"np.array({instance.labels.astype(int).tolist()}); {call}")
        return (f"i = aprank.checks.random_instance({self.kind!r}, seed={instance.seed}, "
                f"trial={instance.trial}, max_n={instance.max_n}); scores, labels = i.scores, "
                f"i.labels; {call}")

    # ------------------------------------------------------------------ the deep check
    #: The losses the deep cases are solved for, and the exact algorithm of each that the
    #: others are checked against at scale (an O(PN) scan: no partition, pivot or search).
    DEEP_REFERENCES = {"ap": "yue", "ndcg": "ndcg-greedy"}
    #: The switches on the negatives' count (N), the positives' count (P) and the scores'
    #: magnitude that each algorithm's fast path crosses (the table's paths).
    _SWITCHED_BY = {"N": ("WINDOW_MIN", "SMALL_RANGE", "GUIDED_MIN"),
                    "P": ("BINARY_SEARCH_MIN", "SCAN_BISECT_MIN")}

    def switches(self) -> dict:
        """The kernels' size switches: binary search over at least BINARY_SEARCH_MIN ranks,
        bisected scans over more than SCAN_BISECT_MIN, pivots guided by a sample in ranges of
        at least GUIDED_MIN negatives, qs's ranges of at most SMALL_RANGE and select's window
        of at most WINDOW_MIN sorted and swept; queries with a score beyond SAFE_SCORE
        scaled by a power of two; ``infer``'s compiled fast path for queries of at most
        ONE_MAX samples."""
        return {**_select_cy.SWITCHES, **_optranks_cy.SWITCHES, **_driver_cy.SWITCHES,
                "ONE_MAX": _driver_cy.ONE_MAX}

    def deep_losses(self) -> tuple:
        """The losses of the deep cases."""
        return tuple(self.DEEP_REFERENCES)

    def deep_cases(self, seed: int, max_n: int) -> list:
        """One query per (P, N), P and N on both sides of every switch and up to 10^6
        negatives (while P N stays within 10^8, the reference's scan), in turn overlapping,
        separated and reversed, without ties, with some, heavy or all tied; scores on a
        dyadic grid (so that shifts are exact), a few scaled beyond SAFE_SCORE or to 2^-1000."""
        sw = self.switches()
        Ps = sorted({1, 2, 100, 1000, *around(sw["BINARY_SEARCH_MIN"], sw["SCAN_BISECT_MIN"])})
        Ns = sorted({1, 2, 100_000, 1_000_000,
                     *around(sw["WINDOW_MIN"], sw["SMALL_RANGE"], sw["GUIDED_MIN"])})
        cases = self.query_cases(Ps, Ns, seed, max_n)
        one = sw["ONE_MAX"]
        for P in (1, 7, 60):             # n = P + N on both sides of ONE_MAX
            cases += self.query_cases([P], around(one - P), seed + 7919 * P, max_n)
        for i, (P, N) in enumerate(((3, 40), (20, 5000), (200, 2000))):
            for scale in (1019, -1000):
                if P + N <= max_n:
                    cases.append(DeepCase("query", dict(P=P, N=N, regime="overlapping",
                                                        ties="none", scale=scale,
                                                        seed=seed + i), self.deep_losses()))
        # one to three scores far from the others (2^10 ... 2^996 times the rest)
        for i, e in enumerate(SPREADS):
            for j, (P, N) in enumerate(((3, 40), (20, 5000), (200, 2000))):
                if P + N <= max_n:
                    cases.append(DeepCase("query", dict(
                        P=P, N=N, regime=("overlapping", "reversed")[(i + j) % 2],
                        ties="none", scale=0, seed=seed + 50 + 3 * i + j,
                        outliers=1 + (i + j) % 3, spread=e, agree=(i + j) % 2 == 0),
                        self.deep_losses()))
        return cases

    def query_cases(self, Ps, Ns, seed: int, max_n: int) -> list:
        """A "query" case per (P, N) of at most ``max_n`` samples and P N <= 10^8 (the
        reference's scan), in turn overlapping, separated and reversed, without ties, with
        some, heavy or all tied; the relations checked up to 10^5 negatives.

        Parameters
        ----------
        Ps, Ns : iterable of int
            The numbers of positives and negatives.
        seed, max_n : int
            As for :meth:`deep_cases`.

        Returns
        -------
        list of DeepCase
        """
        regimes, ties = list(REGIMES), ("none", "some", "heavy", "none", "all")
        cases = []
        for i, (P, N) in enumerate((P, N) for P in Ps for N in Ns):
            if P + N > max_n or P * N > 10 ** 8:
                continue
            params = dict(P=P, N=N, regime=regimes[i % 3], ties=ties[i % 5], scale=0,
                          seed=seed + i)
            cases.append(DeepCase("query", params, self.deep_losses(),
                                  relations=N <= 100_000))
        return cases

    def tolerance(self, instance) -> float:
        """Objectives are a loss of at most 1 plus the inverted pairs' score differences,
        summed to a few ulps of their exact value: two exact objectives agree to
        :func:`within` of their size, above this floor at the loss's scale (no spread or
        magnitude of the scores enters it)."""
        return 1e-12

    def deep_instance(self, family: str, **params) -> Instance:
        """``"query"``: P positives and N negatives, scores of ``regime`` on a dyadic grid of
        2^-30 (``ties`` "none"), 2^-3 ("some"), 1 ("heavy") or all 0 ("all"), times
        2^``scale``; ``outliers`` of them (0 by default) at +-2^``spread``."""
        if family != "query":
            return super().deep_instance(family, **params)
        rng = np.random.default_rng([params["seed"], 4])
        P, N = int(params["P"]), int(params["N"])
        labels = np.zeros(P + N, dtype=bool)
        labels[rng.choice(P + N, P, replace=False)] = True
        bits = {"none": 30, "some": 3, "heavy": 0, "all": 0}[params["ties"]]
        scores = dyadic(rng, P + N, bits) + np.round(REGIMES[params["regime"]] * labels)
        if params["ties"] == "all":
            scores[:] = 0.0
        scores = np.ldexp(scores, int(params["scale"]))
        scores = with_outliers(rng, scores, int(params.get("outliers", 0)),
                               int(params.get("spread", 0)),
                               labels if params.get("agree") else None)
        desc = " ".join(f"{k}={v}" for k, v in params.items() if k != "seed")
        return Instance(scores, labels, desc, int(params["seed"]), 0, P + N)

    def deep_reference(self, loss, instance) -> str | None:
        """The O(PN) scan of the loss: ``yue`` for AP, ``ndcg-greedy`` for NDCG."""
        return self.DEEP_REFERENCES.get(loss.name)

    def paths(self, instance, algorithm: str, result=None) -> tuple:
        """The side of each size switch the instance's P and N are on, whether a score is
        beyond SAFE_SCORE, and whether scores tie."""
        sw = self.switches()
        P = int(instance.labels.sum())
        counts = {"P": P, "N": instance.size - P}
        tags = [f"{dim} {'<=' if counts[dim] <= sw[name] else '>'} {name} = {sw[name]}"
                for dim, names in self._SWITCHED_BY.items() for name in names]
        n = instance.size
        tags.append(f"n {'<=' if n <= sw['ONE_MAX'] else '>'} ONE_MAX = {sw['ONE_MAX']}")
        if np.abs(instance.scores).max(initial=0.0) > sw["SAFE_SCORE"]:
            tags.append("scores beyond SAFE_SCORE (scaled)")
        distinct = np.unique(instance.scores).size
        if distinct == 1:
            tags.append("every score equal")
        elif distinct < instance.size:
            tags.append("tied scores")
        return tuple(tags)

    def relations(self) -> tuple:
        """A constant added to every score (exactly: a power of two, on the deep cases' dyadic
        grid); the samples permuted; the query duplicated in one call; the query in one call
        with others; every partition path of this CPU; the reported objective against its
        output's exact value; ``infer``'s fast input path against the general one; the batch's
        grouping paths against each other."""
        return (Relation("constant added to every score", _shifted,
                         applies=lambda instance, algorithm: shiftable(instance.scores)),
                Relation("samples permuted", _permuted),
                Relation("query duplicated", _duplicated),
                Relation("query among others", _among_others),
                Relation("every partition path", _partition_paths),
                Relation("reported objective = the output's, exactly", _reported_objective,
                         applies=lambda instance, algorithm: instance.size <= EXACT_UP_TO),
                Relation("infer's fast input path", _fast_input_path),
                Relation("batch grouping paths", _grouping_paths))


def _no_ties(scores) -> bool:
    return np.unique(scores).size == scores.size


def _shifted(instances, instance, loss, algorithm, rng):
    """A power of two added to every score, chosen so that every shifted score is exact:
    the same ranks, bit for bit (every comparison and step sees the same differences), and
    the objective within the tolerance."""
    s = instance.scores
    c = exact_shift(s, rng)
    if c is None:
        return "no shift by a power of two is exact on these scores (the case is not dyadic)"
    moved = s + c
    a = instances.solve(instance, loss, algorithm)
    b = instances.solve(Instance(moved, instance.labels, "", 0, 0, 0), loss, algorithm)
    if not np.array_equal(a.ranks, b.ranks):
        i = int(np.flatnonzero(a.ranks != b.ranks)[0])
        return f"shift {c!r}: ranks differ at sample {i}: {int(b.ranks[i])} != {int(a.ranks[i])}"
    what = close_within(b.objective, a.objective,
                        within(a.objective, b.objective, instances.tolerance(instance)))
    return f"shift {c!r}: objective {what}" if what else None


def _permuted(instances, instance, loss, algorithm, rng):
    """The samples permuted: the same objective; the same ranks, permuted, without ties (the
    tie rule orders tied samples by index)."""
    perm = rng.permutation(instance.size)
    a = instances.solve(instance, loss, algorithm)
    b = instances.solve(Instance(instance.scores[perm], instance.labels[perm], "", 0, 0, 0),
                        loss, algorithm)
    what = close_within(b.objective, a.objective,
                        within(a.objective, b.objective, instances.tolerance(instance)))
    if what:
        return f"objective {what}"
    if _no_ties(instance.scores) and not np.array_equal(b.ranks, a.ranks[perm]):
        return "ranks differ from the permuted ranks"
    return None


def _riffle(rng, sizes):
    """qid of samples of len(sizes) queries interleaved at random, each query's own samples
    in their order."""
    qid = np.repeat(np.arange(len(sizes)), sizes)
    return qid[rng.permutation(qid.size)]


def _batch_against_alone(instances, parts, loss, algorithm, rng):
    """Queries ``parts`` (instances) in one call, riffled: each query's ranks (in its own
    sample order) and objective as solved alone."""
    qid = _riffle(rng, [p.size for p in parts])
    scores, labels = np.empty(qid.size), np.empty(qid.size, dtype=bool)
    for q, part in enumerate(parts):
        scores[qid == q], labels[qid == q] = part.scores, part.labels
    batch = instances.problem_type(labels, loss, qid=qid).solve(scores, algorithm)
    for q, part in enumerate(parts):
        alone = instances.solve(part, loss, algorithm)
        if not np.array_equal(batch.ranks[qid == q], alone.ranks):
            return f"query {q} of {len(parts)}: ranks differ from the query solved alone"
        what = close_within(batch.objective[q], alone.objective,
                            within(batch.objective[q], alone.objective,
                                   instances.tolerance(part)))
        if what:
            return f"query {q} of {len(parts)}: objective {what}"
    return None


def _duplicated(instances, instance, loss, algorithm, rng):
    return _batch_against_alone(instances, [instance, instance], loss, algorithm, rng)


def _among_others(instances, instance, loss, algorithm, rng):
    # no larger than the instance, which the algorithm takes (brute force's limit)
    others = [instances.random_instance(int(rng.integers(2 ** 31)), t, min(300, instance.size))
              for t in range(2)]
    others = [o for o in others if o.labels.any()]
    return _batch_against_alone(instances, [others[0], instance, *others[1:]] if others
                                else [instance], loss, algorithm, rng)


def _partition_paths(instances, instance, loss, algorithm, rng):
    """Every partition path this CPU runs (portable, AVX2, AVX-512; each also sorts the short
    ranges its own way): the same ranks and objective, bit for bit."""
    before = _driver_cy.simd_level()
    try:
        _driver_cy.set_simd("portable")
        reference = instances.solve(instance, loss, algorithm)
        for level in _driver_cy.SIMD_LEVELS[1:]:
            try:
                _driver_cy.set_simd(level)
            except ValueError:          # this CPU lacks it
                break
            r = instances.solve(instance, loss, algorithm)
            if not np.array_equal(r.ranks, reference.ranks) or r.objective != reference.objective:
                return f"the {level} path differs from the portable one"
    finally:
        _driver_cy.set_simd(before)
    return None


def _reported_objective(instances, instance, loss, algorithm, rng):
    """The reported objective within a few ulps of its output's exact value: for AP in
    rational arithmetic throughout (coefficients (N + 2 - 2 rank) / PN, the loss from the
    ranks); for other losses the loss and coefficients as floats (their rounding allowed for)
    and their sum with the scores exact."""
    r = instances.solve(instance, loss, algorithm)
    y = instance.labels.astype(bool)
    P, N = int(y.sum()), int((~y).sum())
    if P == 0 or N == 0:
        return None
    s = instance.scores
    if get_loss(loss).name == "ap":
        num = np.where(y, N + 2 - 2 * r.ranks, P + 2 - 2 * r.ranks) - np.where(y, N, -P)
        above = np.sort(r.ranks[y] - 1).tolist()
        lx = sum((Fraction(a, i + 1 + a) for i, a in enumerate(above)), Fraction(0)) / P
        exact = lx + exact_sum(num.tolist(), s) / (P * N)
        return objective_matches(r.objective, exact, r.loss)
    # the loss a sum of P rounded discount terms of at most 1 each, the coefficients rounded
    # (an ulp each of their product with the score): what the floats allow
    truth = get_loss(loss).truth_coef(y)
    d = r.coef - truth
    exact = Fraction(r.loss) + exact_sum([Fraction(float(x)) for x in d], s)
    slack = 2.0 ** -52 * (4.0 * float(np.sum(np.abs(d * s))) + 2.0 * (P + 1))
    return objective_matches(r.objective, exact, r.loss, slack)


def _fast_input_path(instances, instance, loss, algorithm, rng):
    """``infer``'s fast path for the common input (``solve_common``: float64 scores with bool
    or int8 labels, compiled for queries of at most ONE_MAX samples) against the general
    path, on the instance and on its labels as int8 {0, 1} and {-1, +1}: the same ranks,
    coefficients, loss and objective, bit for bit."""
    found = get_loss(loss)
    algo = as_algorithm(found, algorithm)
    reference = instances.solve(instance, found, algo)
    for labels in (instance.labels, instance.labels.astype(np.int8),
                   np.where(instance.labels, 1, -1).astype(np.int8)):
        # twice: the first call of a size takes the Python route while it checks the size's
        # cost, the second the compiled one
        for attempt in ("first", "second"):
            fast = instances.problem_type.solve_common(instance.scores, labels, found, algo)
            if fast is None:
                return f"the fast path refused valid {labels.dtype} labels"
            for field in ("ranks", "coef", "loss", "objective"):
                if not np.array_equal(getattr(fast, field), getattr(reference, field)):
                    return (f"with {labels.dtype} labels the fast path's {field} differs from "
                            f"the general path's ({attempt} call of its size)")
    return None


class _GatheredProblem(RankingProblem):
    """A ranking problem whose interleaved queries run on gathered copies at every size, so
    that its grouping keeps the slot (the inverse of its order) as for a large batch."""

    gather_min = 0


def _grouping_paths(instances, instance, loss, algorithm, rng):
    """The query riffled with others in one batch, grouped three ways: query ids dense
    (the counting pass), the same ids spread far apart (a stable argsort), both run on
    gathered copies with the slot the grouping wrote (``gather_min`` 0 from the start), the
    dense ids again with the slot inverted from the order (``gather_min`` 0 after the
    grouping), and, for a compiled kernel, the driver reading the samples through ``order``
    instead: the same ranks, coefficients, losses and objectives, bit for bit."""
    others = [instances.random_instance(int(rng.integers(2 ** 31)), t, min(300, instance.size))
              for t in range(2)]
    parts = [o for o in others if o.labels.any()][:1] + [instance] + others[1:]
    qid = _riffle(rng, [p.size for p in parts])
    scores, labels = np.empty(qid.size), np.empty(qid.size, dtype=bool)
    for q, part in enumerate(parts):
        scores[qid == q], labels[qid == q] = part.scores, part.labels
    dense = _GatheredProblem(labels, loss, qid=qid)
    sparse = _GatheredProblem(labels, loss, qid=qid * (2 ** 40) - 3)
    inverted = instances.problem_type(labels, loss, qid=qid)
    inverted.gather_min = 0
    a, b = dense.solve(scores, algorithm), sparse.solve(scores, algorithm)
    c = inverted.solve(scores, algorithm)
    for field in ("ranks", "coef", "truth_coef", "loss", "objective"):
        if not np.array_equal(getattr(a, field), getattr(b, field)):
            return f"{field}: the counting pass and the argsort group differently"
        if not np.array_equal(getattr(a, field), getattr(c, field)):
            return f"{field}: the grouping's slot and the inverted order differ"
    algo = as_algorithm(dense.loss, algorithm)
    if getattr(algo.run, "rank_one_route", False) is True and dense.order is not None:
        call = Call(dense, scores, want_truth=True)
        spec = dense.loss.kernel_spec(dense.max_query_size, algo.run.discount_table)
        truth = np.empty(qid.size)
        _driver_cy.rank_queries(algo.run.solve, scores, dense.is_pos.view(np.uint8), dense.order,
                                dense.offsets, spec.code, spec.discount, dense.n_pos,
                                call.ranks, call.coef, call.query_loss, call.query_objective,
                                truth)
        for field, through in (("ranks", call.ranks), ("coef", call.coef),
                               ("truth_coef", truth), ("loss", call.query_loss),
                               ("objective", call.query_objective)):
            if not np.array_equal(getattr(a, field), through):
                return f"{field}: the gathered run differs from the driver reading through order"
    return None
