"""The labelling kind's seeded instances: the ranking kind's queries, solved for the 0-1 loss."""
from __future__ import annotations

import numpy as np

from aprank.inference.labelling._problem import LabellingProblem
from aprank.inference.ranking import RankingInstances

__all__ = ["LabellingInstances"]


class LabellingInstances(RankingInstances):
    """One query of scores and binary labels, as :class:`RankingInstances` makes them."""

    kind = "labelling"
    problem_type = LabellingProblem

    def switches(self) -> dict:
        """None: the 0-1 kernel flips each sample on its own, in one pass."""
        return {}

    def deep_cases(self, seed: int, max_n: int) -> list:
        """Queries of 1 to 10^6 samples of each sign, every regime and tie level."""
        sizes = (1, 2, 17, 1000, 100_000, 1_000_000)
        return self.query_cases(sizes, sizes, seed, max_n)

    def deep_losses(self) -> tuple:
        """The weighted 0-1 loss."""
        return ("zero-one",)

    def deep_reference(self, loss, instance):
        """None: ``zero-one`` is the kind's one algorithm beside brute force, so at scale its
        relations are what is checked."""
        return None

    def paths(self, instance, algorithm: str, result=None) -> tuple:
        """The kernel has no switch: every instance takes its one path."""
        return ("every instance",)

    def tolerance(self, instance) -> float:
        """The objective is a sum over the flipped samples of their scores and loss weights:
        rounding at the scale of that sum (no constant leaves it unchanged)."""
        return 1e-12 * (instance.size + float(np.abs(instance.scores).sum()))

    def relations(self) -> tuple:
        """Permutations, a duplicated query, a query among others (a constant added to every
        score changes the 0-1 problem, and the kernel has no partition paths)."""
        return tuple(r for r in super().relations()
                     if r.name not in ("constant added to every score", "every partition path"))
