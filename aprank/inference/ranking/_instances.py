"""The ranking kind's seeded instances: one query of scores and binary labels, for
cross-checks (:meth:`RankingInstances.random_instance`) and benchmarks
(:meth:`RankingInstances.bench_instance`)."""
from __future__ import annotations

from typing import Optional

import numpy as np

from aprank.inference._base import InferenceResult, Instance
from aprank.inference._protocol import Instances
from aprank.inference.ranking._problem import RankingProblem

__all__ = ["RankingInstances", "REGIMES", "TIES"]

#: Score regimes and tie densities of the cross-check instances (see random_instance).
REGIMES = {"overlapping": 1.0, "separated": 6.0, "reversed": -1.0}
TIES = ("none", "some", "heavy", "all")


class RankingInstances(Instances):
    """Instances of one query of scores and binary labels (the labelling kind uses them too)."""

    kind = "ranking"

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
        return RankingProblem(instance.labels, loss).solve_one(instance.scores, algorithm)

    def compare(self, result: InferenceResult, reference: InferenceResult,
                instance: Instance) -> Optional[str]:
        """Exact algorithms must return the same ranks when no two scores are equal (the tie
        rule makes them agree otherwise too, but only the objective is defined there)."""
        if np.unique(instance.scores).size != instance.size:
            return None
        if np.array_equal(result.ranks, reference.ranks):
            return None
        bad = int(np.flatnonzero(result.ranks != reference.ranks)[0])
        return f"ranks differ at sample {bad}: {int(result.ranks[bad])} != {int(reference.ranks[bad])}"

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
