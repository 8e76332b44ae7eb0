"""The ranking kind: scores and binary labels per query -> the most violated ranking (losses AP
and NDCG; Mohapatra et al. 2014 and 2018).

The kind's modules: ``_problem.py`` (:class:`RankingProblem` and its call), ``_algorithms.py``
(the registry entries, the runners of the compiled kernels ``_<name>_cy.pyx`` behind the
shared driver ``_driver_cy.pyx``), ``_oracle.py`` (exhaustive search) and ``_instances.py``
(seeded instances). What other modules of :mod:`aprank.inference` use of it is named here.
"""
import aprank.inference.ranking._driver_cy as _driver_cy
from aprank.inference.ranking._algorithms import (
    ALGORITHMS,
    KINDS,
    UserRanking,
    log2_at_least_1,
    qs_cost,
)
from aprank.inference.ranking._instances import RankingInstances
from aprank.inference.ranking._problem import RankingProblem

set_simd = _driver_cy.set_simd
simd_active = _driver_cy.simd_active
simd_level = _driver_cy.simd_level
#: The partition paths set_simd takes by name, slowest first.
SIMD_LEVELS = _driver_cy.SIMD_LEVELS

__all__ = ["RankingProblem", "RankingInstances", "UserRanking", "KINDS", "ALGORITHMS",
           "qs_cost", "log2_at_least_1", "set_simd", "simd_active", "simd_level", "SIMD_LEVELS"]
