"""What the estimators say about the queries of a fit or a score.

Queries without a relevant sample, in a fit: left out by default (``empty="skip"``).

AP and NDCG are undefined on a query with no relevant sample, and real learning-to-rank data
has such queries (27 of the 201 training queries of the Yahoo sample with relevance >= 2 as
relevant). LightGBM and XGBoost leave them out; so do the estimators by default, counting
them in ``n_skipped_queries_`` and saying so in one :class:`EmptyQueryWarning` per fit.
``empty="error"`` refuses them instead.

No qid in a fit: one ranking of all the samples, the plain way to say it, quietly. No qid in a
score after a fit on several queries, or a scikit-learn scorer ranking the folds of a
cross-validation over queries: the queries are dropped, which a :class:`OneQueryWarning` says
in one sentence that links the docs section on queries (``QUERIES_DOCS``). A scikit-learn
search without metadata routing gives ``groups=`` to its splitter only and a Pipeline step's
``qid`` to ``fit`` only: the estimator then sees calls without ``qid``, and the score after
the step's per-query fit is the one it can tell apart.
"""
from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

import numpy as np
import sklearn

__all__ = ["EmptyQueryWarning", "OneQueryWarning", "QUERIES_DOCS", "say_skipped",
           "say_scored_as_one_query", "say_scorer_drops_queries", "say_score_skipped"]


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


def say_score_skipped(name: str, relevant, qid) -> None:
    """Issue the :class:`EmptyQueryWarning` of a ``score`` (under ``empty="skip"``) whose
    queries include some without a relevant sample, naming them: they are left out of the
    mean, where :mod:`aprank.metrics` raises unless given ``empty="skip"``."""
    if qid is None:
        return
    ids, inverse = np.unique(np.asarray(qid), return_inverse=True)
    has = np.bincount(inverse.ravel(), weights=np.asarray(relevant, dtype=np.float64),
                      minlength=ids.size) > 0
    if has.all():
        return
    empty = ids[~has].tolist()
    shown = ", ".join(repr(q) for q in empty[:5]) + (", ..." if len(empty) > 5 else "")
    warnings.warn(f"{name}.score left out {len(empty)} of {ids.size} queries that have no "
                  f"relevant sample ({shown}): the metric is undefined there. "
                  "aprank.metrics gives the same number with empty='skip' (by default it "
                  "raises); pass empty='error' to the estimator to refuse such queries",
                  EmptyQueryWarning, stacklevel=_callers_level())


class OneQueryWarning(UserWarning):
    """Queries the estimator was fitted on were dropped where it was scored: ``score`` without
    ``qid`` after a fit on several queries ranks all the samples as one query, as does a
    scikit-learn ``scoring`` in the folds of a cross-validation given ``qid``.

    A fit without ``qid`` is one ranking of all the samples, and says nothing. Inside a
    scikit-learn search without metadata routing, a Pipeline step's ``qid`` reaches only
    ``fit``, so the folds are fitted per query and scored as one: the message links the docs
    section that shows the routing which passes ``qid`` to ``score`` too. To score one ranking
    on purpose, give every sample one id (``qid=np.zeros(len(y))``).
    """


#: the docs section on queries and on passing qid through a scikit-learn search
QUERIES_DOCS = "docs/learning.md#queries-qid"


def say_scored_as_one_query(name: str, n_samples: int, n_fit_queries: int) -> None:
    """Issue the :class:`OneQueryWarning` of ``name.score`` called without qid on
    ``n_samples`` samples by an estimator fitted on ``n_fit_queries`` queries."""
    warnings.warn(f"{name}.score got no qid, so it ranks all {n_samples} samples as one query, "
                  f"but {name} was fitted on {n_fit_queries} queries; pass qid= (in a search: "
                  f"route it), see {QUERIES_DOCS}", OneQueryWarning,
                  stacklevel=_callers_level())


def say_scorer_drops_queries(name: str, scoring, n_queries: int) -> None:
    """Issue the :class:`OneQueryWarning` of a cross-validation given ``n_queries`` queries
    whose scikit-learn ``scoring`` ranks each test fold as one query."""
    said = f"scoring={scoring!r}" if isinstance(scoring, str) else "a callable scoring"
    warnings.warn(f"{name} scores its folds with {said}, which ranks each test fold as one "
                  f"query, though the fits use the {n_queries} queries of qid; see "
                  f"{QUERIES_DOCS}", OneQueryWarning, stacklevel=_callers_level())


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
