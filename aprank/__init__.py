"""aprank: exact, fast loss-augmented inference and structured SVMs for ranking losses.

Public entry points: :func:`infer` and :func:`infer_batch`, :func:`algorithms`,
:func:`register`, :func:`crosscheck`, the losses in :mod:`aprank.losses`, the metrics in
:mod:`aprank.metrics` and the estimators in :mod:`aprank.learn`.
"""
from pkgutil import extend_path

# A source checkout imported after a regular `pip install .` lacks the compiled kernels; this
# (and the same line in aprank/inference) lets Python find the installed ones.
__path__ = extend_path(__path__, __name__)

from aprank import inference as _inference  # noqa: E402,F401  (registers the algorithms)
from aprank._infer import BatchResult, InferenceResult, infer, infer_batch
from aprank._registry import algorithms, register, unregister
from aprank import losses
from aprank.checks import crosscheck

__version__ = "0.1.0"

__all__ = ["InferenceResult", "BatchResult", "infer", "infer_batch", "algorithms", "register",
           "unregister", "crosscheck", "losses", "__version__"]
