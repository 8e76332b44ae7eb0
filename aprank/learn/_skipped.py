"""Queries without a relevant sample, in a fit: left out by default (``empty="skip"``).

AP and NDCG are undefined on a query with no relevant sample, and real learning-to-rank data
has such queries (27 of the 201 training queries of the Yahoo sample with relevance >= 2 as
relevant). LightGBM and XGBoost leave them out; so do the estimators by default, counting
them in ``n_skipped_queries_`` and saying so in one :class:`EmptyQueryWarning` per fit.
``empty="error"`` refuses them instead.
"""
from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

import sklearn

__all__ = ["EmptyQueryWarning", "say_skipped"]


class EmptyQueryWarning(UserWarning):
    """A fit left out queries that have no relevant sample (``empty="skip"``, the estimators'
    default): AP and NDCG are undefined there, and LightGBM and XGBoost leave such queries out
    too. The fitted ``n_skipped_queries_`` counts them.

    It points at the line that started the fit. Silence it with
    ``warnings.filterwarnings("ignore", category=aprank.learn.EmptyQueryWarning)``, or make
    such queries an error with ``empty="error"``.
    """


def say_skipped(n_skipped: int, n_queries: int) -> None:
    """Issue the :class:`EmptyQueryWarning` of a fit that left out ``n_skipped`` of its
    ``n_queries`` training queries (nothing when it left out none)."""
    if n_skipped:
        warnings.warn(f"{n_skipped} of {n_queries} training queries have no relevant sample "
                      "and were left out of the fit, as LightGBM and XGBoost do "
                      "(n_skipped_queries_ counts them); pass empty='error' to refuse such "
                      "queries", EmptyQueryWarning, stacklevel=_callers_level())


#: the folders whose frames a warning skips: this package's and scikit-learn's
_INSIDE = tuple(os.path.join(str(folder), "") for folder in (
    Path(__file__).resolve().parents[1], Path(sklearn.__file__).resolve().parent))


def _callers_level() -> int:
    """The stacklevel, seen from :func:`say_skipped`, of the first frame outside aprank and
    scikit-learn: the line that started the fit (a direct call, a grid search's, a Dask
    estimator's), whatever wrappers lie between."""
    frame, level = sys._getframe(2), 2
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_INSIDE):
        frame, level = frame.f_back, level + 1
    return level
