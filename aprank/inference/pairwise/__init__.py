"""The pairwise kind: unary scores, linked pairs and binary labels -> the most violated labelling
and every max-marginal (HOB/HOAP-SVM, Dokania et al. 2014).

The kind's modules: ``_problem.py`` (:class:`PairwiseProblem`, :class:`PairwiseGraph`,
:func:`max_marginals`), ``_algorithms.py`` (graph cuts and the compiled enumeration of small
components ``_enumerate_cy.pyx``), ``_oracle.py`` (every labelling) and ``_instances.py``
(seeded instances).
"""
from aprank.inference.pairwise._algorithms import ALGORITHMS, KINDS
from aprank.inference.pairwise._instances import PairwiseInstance, PairwiseInstances
from aprank.inference.pairwise._problem import (
    PairwiseGraph,
    PairwiseProblem,
    PairwiseResult,
    group_pairs,
    max_marginals,
)

__all__ = ["PairwiseProblem", "PairwiseGraph", "PairwiseResult", "PairwiseInstance",
           "PairwiseInstances", "max_marginals", "group_pairs", "KINDS", "ALGORITHMS"]
