"""aprank: exact, fast loss-augmented inference and structured SVMs for ranking losses.

Public entry points: :func:`infer`, :func:`algorithms`, :func:`register`, :func:`crosscheck`,
and the losses in :mod:`aprank.losses`.
"""
from aprank import inference as _inference  # noqa: F401  (registers the built-in algorithms)
from aprank._infer import InferenceResult, infer
from aprank._registry import algorithms, register, unregister
from aprank import losses
from aprank.checks import crosscheck

__version__ = "0.1.0"

__all__ = ["InferenceResult", "infer", "algorithms", "register", "unregister", "crosscheck", "losses",
           "__version__"]
