"""The latent kind's seeded instances: a few small bags with known rows for cross-checks,
bags of ``candidates`` rows with one shifted witness per positive bag for benchmarks."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from aprank.inference._base import Instance, with_ties
from aprank.inference._protocol import Instances
from aprank.inference.latent._problem import LatentProblem, LatentResult

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

    bags: np.ndarray = None
    h: Optional[np.ndarray] = None


class LatentInstances(Instances):
    """Instances of bags of candidate rows (paper 003)."""

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

    def compare(self, result, reference, instance) -> Optional[str]:
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
