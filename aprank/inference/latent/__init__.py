"""The latent kind: bags of candidate rows with one binary label per bag -> the most violated
ranking of bags and latent choice of rows (latent AP-SVM and latent SSVM, Behl 2015).

The kind's modules: ``_problem.py`` (:class:`LatentProblem`, :class:`LatentBags`),
``_algorithms.py`` (latent AP-SVM's step and the latent SSVM's greedy), ``_oracle.py`` (every
ranking and latent choice) and ``_instances.py`` (seeded instances).
"""
from aprank.inference.latent._algorithms import ALGORITHMS, KINDS
from aprank.inference.latent._instances import LatentInstance, LatentInstances
from aprank.inference.latent._problem import LatentBags, LatentProblem, LatentResult

__all__ = ["LatentProblem", "LatentBags", "LatentResult", "LatentInstance", "LatentInstances",
           "KINDS", "ALGORITHMS"]
