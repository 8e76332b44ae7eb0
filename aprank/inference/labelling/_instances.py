"""The labelling kind's seeded instances: the ranking kind's queries, solved for the 0-1 loss."""
from __future__ import annotations

from aprank.inference._base import InferenceResult, Instance
from aprank.inference.labelling._problem import LabellingProblem
from aprank.inference.ranking import RankingInstances

__all__ = ["LabellingInstances"]


class LabellingInstances(RankingInstances):
    """One query of scores and binary labels, as :class:`RankingInstances` makes them."""

    kind = "labelling"

    def solve(self, instance: Instance, loss, algorithm) -> InferenceResult:
        """The instance's query solved for ``loss`` with ``algorithm`` (see
        :meth:`Instances.solve`)."""
        return LabellingProblem(instance.labels, loss).solve_one(instance.scores, algorithm)
