"""The top-k kind's seeded instances: one query of items, its k, a core and its
interactions."""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
import scipy.sparse as sp

from aprank.inference._base import InferenceResult, Instance, random_size, with_ties
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
from aprank.inference._registry import get
from aprank.inference.topk._problem import MAX_CORE, TopKProblem
from aprank.losses import PrecisionAtK, get_loss

__all__ = ["TopKInstance", "TopKInstances"]


@dataclass(frozen=True)
class TopKInstance(Instance):
    """Seeded inputs of one cross-check of the top-k kind (one query): an :class:`Instance`
    with its subset size, core and interactions.

    Parameters
    ----------
    scores, labels, description, seed, trial, max_n
        As for :class:`~aprank.inference.Instance`.
    k : int
        The subset size.
    core : ndarray of int64 (C,)
        The core items.
    interactions : ndarray or sparse matrix (n, n), or None
        F, None without a core.
    """

    k: int = 1
    core: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    interactions: np.ndarray | None = None


class TopKInstances(Instances):
    """Instances of one query of items with a core of interactions (Mensink et al. 2011)."""

    kind = "topk"

    def random_instance(self, seed: int, trial: int, max_n: int = 2000) -> TopKInstance:
        """Seeded instance number ``trial``: half with at most 12 items (for the oracle), core
        of 0-3 items, k anywhere in 1..n, scores and interactions with and without ties."""
        rng = np.random.default_rng([seed, trial, 1001])
        n = random_size(rng, max_n)
        labels = rng.random(n) < rng.choice([0.2, 0.5, 0.8])
        labels[int(rng.integers(n))] = True
        k = int(rng.integers(1, n + 1))
        C = int(rng.integers(0, min(3, n) + 1))
        core = np.sort(rng.choice(n, C, replace=False)).astype(np.int64)
        F = np.zeros((n, n))
        F[core, :] = rng.standard_normal((C, n))
        F[:, core] = rng.standard_normal((n, C))
        ties, (scores, F) = with_ties(rng, rng.standard_normal(n), F)
        desc = f"n={n} k={k} C={C} R={int(labels.sum())} ties={ties}"
        return TopKInstance(scores, labels, desc, seed, trial, max_n, k=k, core=core,
                            interactions=F if C else None)

    def bench_instance(self, P: int, N: int, shift: float, seed: int = 0,
                       n_core: int = 2) -> TopKInstance:
        """The benchmark's instance of a cell: P relevant items ~ N(shift, 1) among P + N,
        k = P, a core of ``n_core`` items with standard normal interactions."""
        rng = np.random.default_rng(seed)
        n = P + N
        labels = np.zeros(n, dtype=bool)
        labels[rng.choice(n, P, replace=False)] = True
        scores = rng.standard_normal(n) + shift * labels
        # Interactions as sparse core rows; past 2e6 items the benchmark drops them (C = 0:
        # plain top-k selection) to keep its memory small.
        C = n_core if n <= 2_000_000 else 0
        core = np.sort(rng.choice(n, C, replace=False)).astype(np.int64)
        F = None
        if C:
            F = sp.csr_matrix((rng.standard_normal(C * n),
                               (np.repeat(core, n), np.tile(np.arange(n), C))), shape=(n, n))
        return TopKInstance(scores, labels, f"P={P} N={N} C={C}", seed, 0, n, k=P, core=core,
                            interactions=F)

    def solve(self, instance: TopKInstance, loss, algorithm) -> InferenceResult:
        """The instance fixes k: the break-even loss of the registry becomes PrecisionAtK(k)."""
        loss = get_loss(loss)
        if getattr(loss, "k", None) is None:
            loss = PrecisionAtK(instance.k)
        core = instance.core if instance.interactions is not None else None
        return TopKProblem(instance.labels, loss, interactions=instance.interactions,
                   core=core).solve_one(instance.scores, algorithm)

    def compare(self, result, reference, instance) -> str | None:
        """None: only the objective is compared."""
        # ties make several subsets optimal; the objective is what exact algorithms share
        return None

    # ------------------------------------------------------------------ the deep check
    #: The most core states, and states times items, that the reference (``cstar-plain``,
    #: NumPy, tens of microseconds a state) is run on; beyond, the relations alone check
    #: ``cstar``.
    PLAIN_WORK = 2 ** 22
    PLAIN_STATES = 2 ** 12

    def switches(self) -> dict:
        """The largest core (MAX_CORE). The kernel's other switches depend on the instance,
        not on a size: a subset that the core and the clamps fill alone (no selection), one
        that takes every free item (no partial selection), a selection among the rest."""
        return {"MAX_CORE": MAX_CORE}

    def deep_cases(self, seed: int, max_n: int) -> list:
        """One query of n items, a core of C (up to MAX_CORE), k from 1 to n, scores and
        interactions untied or on a coarse grid."""
        grid = [(16, C, k) for C in (0, 1, 4) for k in (1, 8, 16)]
        grid += [(200, C, k) for C in (0, 1, 2, 8, 12) for k in (1, 5, 100, 199, 200)]
        grid += [(5000, C, k) for C in (2, 6) for k in (1, 50, 4999)]
        grid += [(30, C, 3) for C in (16, MAX_CORE)]
        grid += [(100_000, 2, 10), (100_000, 2, 50_000), (1_000_000, 1, 1000)]
        cases = []
        for i, (n, C, k) in enumerate(grid):
            if n <= max_n:
                cases.append(DeepCase("query", dict(n=n, C=C, k=k, ties=("none", "coarse")[i % 2],
                                                    seed=seed + i), ("precision@k",),
                                      relations=n <= 100_000))
        # one to three scores far from the others (2^10 ... 2^996 times the rest)
        for i, e in enumerate(SPREADS):
            for j, (n, C, k) in enumerate(((16, 0, 3), (200, 2, 5), (200, 8, 100),
                                           (5000, 2, 50))):
                if n <= max_n:
                    cases.append(DeepCase("query", dict(n=n, C=C, k=k, ties="none",
                                                        seed=seed + 60 + 4 * i + j,
                                                        outliers=1 + (i + j) % 3, spread=e,
                                                        agree=(i + j) % 2 == 0),
                                          ("precision@k",)))
        return cases

    def deep_instance(self, family: str, **params) -> TopKInstance:
        """``"query"``: n items, a fifth relevant, scores ~ N(0, 1) on a dyadic grid (of 1/2
        for ``ties`` "coarse"), a core of C items with interactions in its rows and columns
        on the same grid, subsets of k items; ``outliers`` scores (0 by default) at
        +-2^``spread``."""
        if family != "query":
            return super().deep_instance(family, **params)
        rng = np.random.default_rng([params["seed"], 1])
        n, C, k = int(params["n"]), int(params["C"]), int(params["k"])
        bits = 1 if params["ties"] == "coarse" else 20
        labels = rng.random(n) < 0.2
        labels[int(rng.integers(n))] = True
        scores = dyadic(rng, n, bits)
        scores = with_outliers(np.random.default_rng([params["seed"], 2]), scores,
                               int(params.get("outliers", 0)), int(params.get("spread", 0)),
                               labels if params.get("agree") else None)
        core = np.sort(rng.choice(n, C, replace=False)).astype(np.int64)
        F = None
        if C:
            rows = np.r_[np.repeat(core, n), np.tile(np.arange(n), C)]
            cols = np.r_[np.tile(np.arange(n), C), np.repeat(core, n)]
            F = sp.csr_matrix((dyadic(rng, rows.size, bits) / 4, (rows, cols)), shape=(n, n))
        desc = " ".join(f"{key}={v}" for key, v in params.items() if key != "seed")
        return TopKInstance(scores, labels, desc, int(params["seed"]), 0, n, k=k, core=core,
                            interactions=F)

    def accepts(self, instance, algorithm) -> bool:
        """Within ``max_samples``; ``cstar-plain`` within PLAIN_STATES core states and
        PLAIN_WORK states times items (the deep check's reach, not a limit of its own)."""
        if algorithm.name == "cstar-plain":
            states = 2 ** instance.core.size
            return states <= self.PLAIN_STATES and states * instance.size <= self.PLAIN_WORK
        return super().accepts(instance, algorithm)

    def deep_reference(self, loss, instance) -> str | None:
        """``cstar-plain`` where it reaches (:meth:`accepts`)."""
        return "cstar-plain" if self.accepts(instance, get("cstar-plain", "topk")) else None

    def paths(self, instance, algorithm: str, result=None) -> tuple:
        """The core's size, whether the core can fill the subset alone, whether the subset
        takes every item, and ties."""
        C, n, k = instance.core.size, instance.size, instance.k
        size = "1" if C == 1 else "2-10" if C <= 10 else "11+"
        tags = ["no core" if C == 0 else f"core of {size}"]
        if 0 < C and k <= C:
            tags.append("k <= C (the core can fill the subset)")
        if k == n:
            tags.append("k = n (every item)")
        if np.unique(instance.scores).size < n:
            tags.append("tied scores")
        return tuple(tags)

    def tolerance(self, instance) -> float:
        """The objective sums the scores of the items in one subset only, correctly rounded,
        and the interactions' difference (NumPy sums, at the scale of F): two exact
        objectives agree to :func:`within` of their size, above this floor at the scale of
        the loss and of F (no spread or magnitude of the scores enters it)."""
        F = instance.interactions
        f = 0.0 if F is None else float(np.abs(F.data if sp.issparse(F) else F).sum())
        return 1e-12 * (1.0 + f)

    def relations(self) -> tuple:
        """A constant added to every score (exact); the items permuted; the interactions
        transposed; the query duplicated in one call."""
        return (Relation("constant added to every score", _shifted,
                         applies=lambda instance, algorithm: shiftable(instance.scores)),
                Relation("items permuted", _permuted),
                Relation("interactions transposed", _transposed),
                Relation("query duplicated", _duplicated),
                Relation("reported objective = the output's, exactly", _reported_objective,
                         applies=lambda instance, algorithm: instance.size <= EXACT_UP_TO))


def _with(instance, scores=None, labels=None, core=None, interactions=None) -> TopKInstance:
    return TopKInstance(instance.scores if scores is None else scores,
                        instance.labels if labels is None else labels, instance.description,
                        instance.seed, instance.trial, instance.max_n, k=instance.k,
                        core=instance.core if core is None else core,
                        interactions=instance.interactions if interactions is None
                        else interactions)


def _objective_differs(instances, instance, a, b, what):
    differs = close_within(b.objective, a.objective,
                           within(a.objective, b.objective, instances.tolerance(instance)))
    return f"{what}: objective {differs}" if differs else None


def _shifted(instances, instance, loss, algorithm, rng):
    c = exact_shift(instance.scores, rng, most=12)
    if c is None:
        return "no shift by a power of two is exact on these scores"
    a = instances.solve(instance, loss, algorithm)
    b = instances.solve(_with(instance, scores=instance.scores + c), loss, algorithm)
    return _objective_differs(instances, instance, a, b, f"shift {c!r}")


def _permuted(instances, instance, loss, algorithm, rng):
    perm = rng.permutation(instance.size)           # new item j is old item perm[j]
    where = np.argsort(perm)
    F = instance.interactions
    moved = _with(instance, scores=instance.scores[perm], labels=instance.labels[perm],
                  core=np.sort(where[instance.core]),
                  interactions=None if F is None else sp.csr_matrix(F)[perm][:, perm])
    a = instances.solve(instance, loss, algorithm)
    b = instances.solve(moved, loss, algorithm)
    return _objective_differs(instances, instance, a, b, "items permuted")


def _transposed(instances, instance, loss, algorithm, rng):
    """t'Ft = t'F't: the same values."""
    if instance.interactions is None:
        return None
    a = instances.solve(instance, loss, algorithm)
    b = instances.solve(_with(instance, interactions=sp.csr_matrix(instance.interactions.T)),
                        loss, algorithm)
    return _objective_differs(instances, instance, a, b, "F transposed")


def _duplicated(instances, instance, loss, algorithm, rng):
    """The query twice in one call (interleaved rows, the same items in the same order in
    each): each query's objective as alone."""
    n = instance.size
    qid = np.repeat([0, 1], n)
    order = np.argsort(rng.random(2 * n), kind="stable")
    # rows interleaved, each query's items kept in their order
    qid = qid[order]
    rows = np.empty(2 * n, dtype=np.int64)
    for q in (0, 1):
        rows[qid == q] = np.arange(n)
    core = instance.core if instance.interactions is not None else None
    if getattr(get_loss(loss), "k", None) is None:
        loss = PrecisionAtK(instance.k)          # as solve() fixes k to the instance's
    batch = TopKProblem(instance.labels[rows], loss, qid=qid,
                        interactions=instance.interactions, core=core).solve(
        instance.scores[rows], algorithm)
    alone = instances.solve(instance, loss, algorithm)
    for q in (0, 1):
        what = close_within(batch.objective[q], alone.objective,
                            within(batch.objective[q], alone.objective,
                                   instances.tolerance(instance)))
        if what:
            return f"copy {q}: objective {what}"
    return None


def _reported_objective(instances, instance, loss, algorithm, rng):
    """The reported objective within a few ulps of the exact value of its output (the subset
    t and the reference r): |t minus relevant| / k + f(t) - f(r), in rational arithmetic."""
    loss = get_loss(loss)
    if getattr(loss, "k", None) is None:
        loss = PrecisionAtK(instance.k)
    core = instance.core if instance.interactions is not None else None
    b = TopKProblem(instance.labels, loss, interactions=instance.interactions,
                    core=core).solve(instance.scores, algorithm)
    t, r = b.coef > 0, b.truth_coef > 0
    z = instance.labels.astype(bool)
    exact = Fraction(int(np.sum(t & ~z)), int(instance.k))
    exact += exact_sum((t.astype(int) - r.astype(int)).tolist(), instance.scores)
    F = instance.interactions
    if F is not None:
        G = sp.coo_matrix(F)
        w = (t[G.row] & t[G.col]).astype(int) - (r[G.row] & r[G.col]).astype(int)
        exact += exact_sum(w.tolist(), G.data)
    return objective_matches(float(b.objective[0]), exact, float(b.loss[0]))
