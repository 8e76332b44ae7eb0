"""What the estimators say about the queries of a fit or a score.

Queries without a relevant sample, in a fit: left out by default (``empty="skip"``).

AP and NDCG are undefined on a query with no relevant sample, and real learning-to-rank data
has such queries (27 of the 201 training queries of the Yahoo sample with relevance >= 2 as
relevant). LightGBM and XGBoost leave them out; so do the estimators by default, counting
them in ``n_skipped_queries_`` and saying so in one :class:`EmptyQueryWarning` per fit.
``empty="error"`` refuses them instead.

No queries at all, in a rank SVM's fit or in a score after a fit on several: a
:class:`OneQueryWarning`. A scikit-learn search without metadata routing gives ``groups=`` to
its splitter only and a Pipeline step's ``qid`` to ``fit`` only, so the estimator sees exactly
a call without ``qid``; it cannot tell that from one query meant on purpose, so it asks for the
query ids to be said (all one id, for one query).
"""
from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

import sklearn

__all__ = ["EmptyQueryWarning", "OneQueryWarning", "say_skipped", "say_one_query"]


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


class OneQueryWarning(UserWarning):
    """A rank SVM got no ``qid``, so all its samples formed one query: in ``fit`` (of the
    estimators whose loss is per query), or in ``score`` after a fit on several queries.

    Inside a scikit-learn search or cross-validation without metadata routing, ``groups=``
    reaches only the splitter and a Pipeline step's ``qid`` only ``fit``: each fold is then
    trained or scored as one query. The message names the routing that passes ``qid``. To mean
    one query, say so with one id for every sample (``qid=np.zeros(len(y))``), and nothing is
    said.
    """


#: how a scikit-learn search or cross-validation passes qid to fit and score (with routing
#: disabled, ``groups=`` reaches only the splitter, and a Pipeline step's fit parameter only fit)
ROUTE_QID = ("in a scikit-learn search or cross-validation, route it: "
             "sklearn.set_config(enable_metadata_routing=True); "
             "est.set_fit_request(qid=True).set_score_request(qid=True); "
             "search.fit(X, y, groups=qid, qid=qid)")


def say_one_query(name: str, method: str, n_samples: int, n_fit_queries: int = 1) -> None:
    """Issue the :class:`OneQueryWarning` of ``name.method`` called without qid on
    ``n_samples`` samples (``score``: by an estimator fitted on ``n_fit_queries``)."""
    fitted = f", but {name} was fitted on {n_fit_queries} queries" if n_fit_queries > 1 else ""
    warnings.warn(f"{name}.{method} got no qid, so it ranks all {n_samples} samples as one "
                  f"query{fitted}: pass qid= (the samples' query ids) to {method} per query; "
                  f"{ROUTE_QID}. For one query on purpose, give all samples one id "
                  f"(qid=np.zeros(len(y))).", OneQueryWarning, stacklevel=_callers_level())


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
