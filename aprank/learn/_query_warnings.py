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

Each is said once per call of the user's (``_once.py``): a direct ``fit`` or ``score`` says it
with its numbers; a search or cross-validation says each kind once for all its folds and its
refit, in words that speak for all the folds (``SKIPPED_IN_SEARCH``, ``ONE_QUERY_IN_SEARCH``).
"""
from __future__ import annotations

from aprank.learn._once import say_once
from aprank.validation import queries_without_relevant

__all__ = ["EmptyQueryWarning", "OneQueryWarning", "QUERIES_DOCS", "SKIPPED_IN_SEARCH",
           "REFUSE_IN_FIT", "REFUSE_IN_SCORE",
           "ONE_QUERY_IN_SEARCH", "SCORE_SKIPPED_IN_SEARCH", "say_skipped",
           "say_scored_as_one_query", "say_scorer_drops_queries", "say_score_skipped"]


class EmptyQueryWarning(UserWarning):
    """A fit left out queries that have no relevant sample (``empty="skip"``, the estimators'
    default): AP and NDCG are undefined there, and LightGBM and XGBoost leave such queries out
    too. The fitted ``n_skipped_queries_`` counts them.

    It points at the line that started the fit, and is said once per such line's call: a
    scikit-learn search or cross-validation says it once for all its folds and its refit
    (``n_jobs`` > 1: once in each worker process too). Silence it with
    ``warnings.filterwarnings("ignore", category=aprank.learn.EmptyQueryWarning)``, or make
    such queries an error with ``empty="error"``.
    """


def say_skipped(n_skipped: int, n_queries: int, refusable: bool = True) -> None:
    """Issue the :class:`EmptyQueryWarning` of a fit that left out ``n_skipped`` of its
    ``n_queries`` training queries (nothing when it left out none); ``refusable``: the
    estimator takes ``empty``, which the warning offers."""
    if n_skipped:
        advice = REFUSE_IN_FIT if refusable else ""
        say_once(f"{n_skipped} of {n_queries} training queries have no relevant sample and were "
                 "left out of the fit, as LightGBM and XGBoost do (n_skipped_queries_ counts "
                 "them)" + advice, EmptyQueryWarning, ("skipped",),
                 in_search=SKIPPED_IN_SEARCH + advice)


def say_score_skipped(name: str, relevant, qid, refusable: bool = True) -> None:
    """Issue the :class:`EmptyQueryWarning` of a ``score`` (under ``empty="skip"``) whose
    queries include some without a relevant sample, naming them: they are left out of the
    mean, where :mod:`aprank.metrics` raises unless given ``empty="skip"``; ``refusable``: the
    estimator takes ``empty``, which the warning offers."""
    if qid is None:
        return
    empty, n_queries = queries_without_relevant(relevant, qid)
    if not empty:
        return
    shown = ", ".join(repr(q) for q in empty[:5]) + (", ..." if len(empty) > 5 else "")
    advice = REFUSE_IN_SCORE if refusable else ""
    say_once(f"{name}.score left out {len(empty)} of {n_queries} queries that have no "
             f"relevant sample ({shown}): the metric is undefined there. aprank.metrics gives "
             "the same number with empty='skip' (by default it raises)" + advice,
             EmptyQueryWarning, ("score skipped", name),
             in_search=SCORE_SKIPPED_IN_SEARCH.format(name=name) + advice)


class OneQueryWarning(UserWarning):
    """Queries the estimator was fitted on were dropped where it was scored: ``score`` without
    ``qid`` after a fit on several queries ranks all the samples as one query, as does a
    scikit-learn ``scoring`` in the folds of a cross-validation given ``qid``.

    A fit without ``qid`` is one ranking of all the samples, and says nothing. Inside a
    scikit-learn search without metadata routing, a Pipeline step's ``qid`` reaches only
    ``fit``, so the folds are fitted per query and scored as one: the message links the docs
    section that shows the routing which passes ``qid`` to ``score`` too, once for all the
    folds (``n_jobs`` > 1: once in each worker process). To score one ranking on purpose, give
    every sample one id (``qid=np.zeros(len(y))``).
    """


#: the docs section on queries and on passing qid through a scikit-learn search
QUERIES_DOCS = "docs/learning.md#queries-qid"
#: what the EmptyQueryWarning of a fit offers where the estimator takes ``empty``
REFUSE_IN_FIT = "; pass empty='error' to refuse such queries"
#: what the EmptyQueryWarning of a score offers where the estimator takes ``empty``
REFUSE_IN_SCORE = "; pass empty='error' to the estimator to refuse such queries"
#: the EmptyQueryWarning of the folds of a cross-validation (a search, ``cross_validate``):
#: one for all of them, without a fold's counts (``REFUSE_IN_FIT`` follows where it applies)
SKIPPED_IN_SEARCH = ("training queries without a relevant sample were left out of the fits of "
                     "the cross-validation's folds, as LightGBM and XGBoost do (each fit's "
                     "n_skipped_queries_ counts them)")
#: the EmptyQueryWarning of the folds' scores, ``format(name=...)``: one for all of them
#: (``REFUSE_IN_SCORE`` follows where it applies)
SCORE_SKIPPED_IN_SEARCH = ("{name}.score left out the test folds' queries that have no relevant "
                           "sample: the metric is undefined there. aprank.metrics gives the same "
                           "numbers with empty='skip' (by default it raises)")
#: the OneQueryWarning of the folds' scores, ``format(name=...)``: one for all of them
ONE_QUERY_IN_SEARCH = ("{name}.score got no qid, so it ranks each test fold as one query, but "
                       "{name} was fitted on the fold's training queries; pass qid= (in a "
                       "search: route it), see " + QUERIES_DOCS)


def say_scored_as_one_query(name: str, n_samples: int, n_fit_queries: int) -> None:
    """Issue the :class:`OneQueryWarning` of ``name.score`` called without qid on
    ``n_samples`` samples by an estimator fitted on ``n_fit_queries`` queries."""
    say_once(f"{name}.score got no qid, so it ranks all {n_samples} samples as one query, "
             f"but {name} was fitted on {n_fit_queries} queries; pass qid= (in a search: "
             f"route it), see {QUERIES_DOCS}", OneQueryWarning, ("score", name),
             in_search=ONE_QUERY_IN_SEARCH.format(name=name))


def say_scorer_drops_queries(name: str, scoring, n_queries: int) -> None:
    """Issue the :class:`OneQueryWarning` of a cross-validation given ``n_queries`` queries
    whose scikit-learn ``scoring`` ranks each test fold as one query."""
    said = f"scoring={scoring!r}" if isinstance(scoring, str) else "a callable scoring"
    say_once(f"{name} scores its folds with {said}, which ranks each test fold as one query, "
             f"though the fits use the {n_queries} queries of qid; see {QUERIES_DOCS}",
             OneQueryWarning, ("scorer", name))
