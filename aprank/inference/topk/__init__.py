"""The top-k kind: scores, binary labels and core interactions per query -> the most violated
subset of k items (precision@k; the c-star model of Mensink et al. 2011).

The kind's modules: ``_problem.py`` (:class:`TopKProblem`), ``_algorithms.py`` (the registry
entries and the compiled kernel ``_cstar_cy.pyx`` / ``_cstar.hpp``), ``_oracle.py`` (every
subset) and ``_instances.py`` (seeded instances).
"""
from aprank.inference.topk._algorithms import ALGORITHMS, KINDS
from aprank.inference.topk._instances import TopKInstance, TopKInstances
from aprank.inference.topk._problem import MAX_CORE, TopKProblem

__all__ = ["TopKProblem", "TopKInstance", "TopKInstances", "MAX_CORE", "KINDS", "ALGORITHMS"]
