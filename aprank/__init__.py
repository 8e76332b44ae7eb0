"""aprank: exact, fast loss-augmented inference and structured SVMs for ranking losses.

Public entry points: :func:`infer` and :func:`infer_batch`, :func:`algorithms` and
:func:`kinds` (the registry), :func:`register`, :func:`crosscheck`, the losses in
:mod:`aprank.losses`, the metrics in :mod:`aprank.metrics`, the models in :mod:`aprank.models`
and the estimators in :mod:`aprank.learn`.
"""
from aprank import losses
from aprank.checks import crosscheck
from aprank.inference import (
    BatchResult,
    InferenceResult,
    SlowAlgorithmWarning,
    algorithms,
    infer,
    infer_batch,
    kinds,
    register,
    set_simd,
    simd_active,
    simd_level,
    unregister,
)

#: The package version (as in pyproject.toml).
__version__ = "0.2.0.dev0"   # the changes since 0.1.0: CHANGELOG.md, [Unreleased]

__all__ = ["InferenceResult", "BatchResult", "infer", "infer_batch", "algorithms", "kinds",
           "register", "unregister", "crosscheck", "set_simd", "simd_active", "simd_level",
           "SlowAlgorithmWarning", "losses", "__version__"]
