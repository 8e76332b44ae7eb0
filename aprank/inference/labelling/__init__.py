"""The labelling kind: scores and binary labels per query -> the most violated labelling (the
weighted 0-1 loss of the binary structural SVM, Dokania et al. (2014), eq. 7).

The kind's modules: ``_problem.py`` (:class:`LabellingProblem`), ``_algorithms.py`` (the
registry entries and the compiled kernel ``_zero_one_cy.pyx``), ``_oracle.py`` (exhaustive
search) and ``_instances.py`` (seeded instances).
"""
from aprank.inference.labelling._algorithms import ALGORITHMS, KINDS
from aprank.inference.labelling._instances import LabellingInstances
from aprank.inference.labelling._problem import LabellingProblem

__all__ = ["LabellingProblem", "LabellingInstances", "KINDS", "ALGORITHMS"]
