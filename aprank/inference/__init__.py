"""Loss-augmented inference: the registry of problem kinds and algorithms, and the entry points.

Layout: ``_registry.py`` (the one table), ``_problem.py`` (the validated problem type of the
ranking and labelling kinds), ``_topk.py`` (that of the top-k kind, with the c-star kernel
``_cstar_cy.pyx`` / ``_cstar.hpp``), ``_pairwise.py`` (that of the pairwise kind: labellings of
linked samples and their max-marginals by graph cuts with PyMaxflow, small components by the
enumeration kernel ``_enumerate_cy.pyx``), ``_latent.py`` (that of the latent kind: rankings of bags whose scoring rows are hidden, latent
AP-SVM and latent SSVM), ``_infer.py`` (``infer``, ``infer_batch``),
``_builtin.py`` (the built-in entries), ``_user.py`` (user algorithms), ``_brute.py`` (the oracles), ``_split.py`` (the steps of one query split into parts, with
its kernel ``_split_cy.pyx``; ``aprank.dask`` runs them) and one compiled
kernel per algorithm (``_<name>_cy.pyx``) behind the shared driver ``_driver_cy.pyx``.
"""
try:
    from aprank.inference import _driver_cy
except ImportError as err:   # a source tree whose kernels were never compiled
    raise ImportError(
        f"aprank's compiled kernels are not built in {__path__[0]}: build them in place with "
        "`pip install -e .` from the repository root, or install aprank (`pip install .`) and "
        f"import it from outside its source tree ({err})") from err

from aprank.inference import _builtin  # noqa: F401  (fills the registry)
from aprank.inference._infer import infer, infer_batch
from aprank.inference._problem import BatchResult, InferenceResult, Instance, RankingProblem
from aprank.inference._pairwise import (PairwiseGraph, PairwiseInstance, PairwiseProblem,
                                       PairwiseResult, group_pairs, max_marginals)
from aprank.inference._latent import LatentBags, LatentInstance, LatentProblem, LatentResult
from aprank.inference._split import (negative_coef, optimal_ranks, rank_order, split_buckets,
                                    split_outcome)
from aprank.inference._topk import TopKInstance, TopKProblem
from aprank.inference._registry import (
    Algorithm, AlgorithmTable, ProblemKind, SlowAlgorithmWarning, algorithms, get as get_algorithm,
    get_kind, kinds, resolve,
)
from aprank.inference._user import register, unregister

set_simd = _driver_cy.set_simd
simd_active = _driver_cy.simd_active
simd_level = _driver_cy.simd_level
#: The partition paths set_simd takes by name, slowest first.
SIMD_LEVELS = _driver_cy.SIMD_LEVELS

__all__ = ["infer", "infer_batch", "InferenceResult", "BatchResult", "RankingProblem", "Instance",
           "TopKProblem", "TopKInstance", "PairwiseProblem", "PairwiseInstance", "PairwiseGraph",
           "PairwiseResult", "max_marginals", "group_pairs",
           "LatentProblem", "LatentInstance", "LatentBags", "LatentResult",
           "Algorithm", "AlgorithmTable", "ProblemKind", "algorithms", "get_algorithm", "kinds",
           "get_kind", "resolve", "SlowAlgorithmWarning", "register", "unregister", "set_simd", "simd_active",
           "simd_level", "SIMD_LEVELS",
           "rank_order", "split_buckets", "optimal_ranks", "negative_coef", "split_outcome"]
