"""aprank: exact, fast loss-augmented inference and structured SVMs for ranking losses.

Public entry points: :func:`infer` and :func:`infer_batch`, :func:`algorithms`,
:func:`register`, :func:`crosscheck`, the losses in :mod:`aprank.losses`, the metrics in
:mod:`aprank.metrics` and the estimators in :mod:`aprank.learn`.
"""
from aprank import inference as _inference  # noqa: F401  (registers the built-in algorithms)
from aprank._infer import BatchResult, InferenceResult, infer, infer_batch
from aprank._registry import algorithms, register, unregister
from aprank import losses
from aprank.checks import crosscheck

__version__ = "0.1.0"

__all__ = ["InferenceResult", "BatchResult", "infer", "infer_batch", "algorithms", "register",
           "unregister", "crosscheck", "losses", "__version__"]
