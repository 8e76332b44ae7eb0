"""Loss-augmented inference: the registry of problem kinds and algorithms, and the entry points.

Layout: ``_registry.py`` (the one table of kinds and algorithms), ``_protocol.py`` (the shape
every kind has: the abstract :class:`Problem` and :class:`Instances`), ``_base.py`` (what the
kinds share: result types, :class:`QueryProblem`, :class:`Instance`), ``_infer.py``
(:func:`infer`, :func:`infer_batch`), ``_user.py`` (user algorithms), ``_builtin.py`` (the
kinds put in the registry), ``_exhaustive.py`` (what the query kinds' oracles share),
``_estimate.py`` (what a solve is estimated to cost before it runs: :func:`solve_seconds`),
``_kernel.pxd`` (the compiled kernels' shared declarations; the sort they share with the
metrics is ``aprank/_order.hpp``), ``_interrupt.pxd`` (Ctrl-C in the compiled loops), and one
folder per
problem kind with the same modules: ``ranking/``, ``labelling/``, ``topk/``, ``pairwise/``,
``latent/``.
"""
try:     # the ranking kind loads the compiled driver first
    from aprank.inference import ranking  # noqa: F401
except ImportError as err:   # a source tree whose kernels were never compiled
    raise ImportError(
        f"aprank's compiled kernels are not built in {__path__[0]}: build them in place with "
        "`pip install -e .` from the repository root, or install aprank (`pip install .`) and "
        f"import it from outside its source tree ({err})") from err

from aprank.inference import _builtin  # noqa: F401  (fills the registry)
from aprank.inference._base import BatchResult, InferenceResult, Instance, QueryProblem
from aprank.inference._deep import DeepCase, Relation
from aprank.inference._estimate import slow_call_seconds, solve_seconds
from aprank.inference._infer import infer, infer_batch
from aprank.inference._protocol import Instances, Problem
from aprank.inference._registry import (
    Algorithm,
    AlgorithmTable,
    ProblemKind,
    SlowAlgorithmWarning,
    algorithms,
    get_kind,
    kinds,
    resolve,
)
from aprank.inference._registry import (
    get as get_algorithm,
)
from aprank.inference._user import register, unregister
from aprank.inference.labelling import LabellingProblem
from aprank.inference.latent import LatentBags, LatentInstance, LatentProblem, LatentResult
from aprank.inference.pairwise import (
    PairwiseGraph,
    PairwiseInstance,
    PairwiseProblem,
    PairwiseResult,
    group_pairs,
    max_marginals,
)
from aprank.inference.ranking import SIMD_LEVELS, RankingProblem, set_simd, simd_active, simd_level
from aprank.inference.topk import TopKInstance, TopKProblem

__all__ = ["infer", "infer_batch", "InferenceResult", "BatchResult", "Problem", "Instances",
           "QueryProblem", "DeepCase", "Relation", "RankingProblem", "LabellingProblem", "Instance",
           "TopKProblem", "TopKInstance", "PairwiseProblem", "PairwiseInstance", "PairwiseGraph",
           "PairwiseResult", "max_marginals", "group_pairs",
           "LatentProblem", "LatentInstance", "LatentBags", "LatentResult",
           "Algorithm", "AlgorithmTable", "ProblemKind", "algorithms", "get_algorithm", "kinds",
           "get_kind", "resolve", "SlowAlgorithmWarning", "register", "unregister", "set_simd",
           "simd_active", "simd_level", "SIMD_LEVELS", "solve_seconds", "slow_call_seconds"]
