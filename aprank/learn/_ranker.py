"""The base of the binary rankers: what the rank SVMs of ``aprank.learn`` and the boosted
rankers of ``aprank.boost`` share besides how they learn.

* ``threshold_``: a ranker learns a ranking and no bias, so ``decision_function`` is its raw
  score less a threshold chosen on the training scores (:func:`break_even_threshold`), and
  ``predict`` marks it above 0, as scikit-learn's classifiers do.
* Keywords: ``fit`` (and ``score``, where it takes ``**unexpected``) refuses a keyword it does
  not take with a TypeError that names the public class; the query ids under another
  library's name (``groups=``, ``group=``) are told to use ``qid=``, and a subclass adds its
  own reasons (``_refusals``).
* The state-restoring fit: parameters checked first, every attribute put back when the fit
  raises (``_checks.atomic_fit``).
* The warnings about the labels and the queries of a fit or a score (``_checks.py``,
  ``_query_warnings.py``), said once per call of the user's.
"""
from __future__ import annotations

from abc import ABCMeta, abstractmethod

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from aprank.learn._checks import atomic_fit, relevance, say_relevant_class
from aprank.learn._query_warnings import say_score_skipped, say_scored_as_one_query, say_skipped
from aprank.validation import check_qid

__all__ = ["BaseRanker", "break_even_threshold", "QUERY_WORDS"]

#: what other libraries call query ids (scikit-learn's splitters, LightGBM, XGBoost)
QUERY_WORDS = frozenset({"groups", "group", "query", "query_id", "qids"})


def break_even_threshold(scores, is_pos, sample_weight=None) -> float:
    """The rankers' ``threshold_``: the score above which as many training samples are as
    there are positives (weighted), the break-even point of the training ranking, where its
    precision equals its recall; midway between the last sample above and the first below.

    Parameters
    ----------
    scores : ndarray of shape (n,)
        The training samples' raw scores.
    is_pos : ndarray of bool, shape (n,)
        Whether each is relevant (``classes_[1]``); both classes present.
    sample_weight : ndarray of shape (n,), optional
        Positive weights, counted as copies.

    Returns
    -------
    float
        The threshold.
    """
    scores = np.asarray(scores, dtype=np.float64)
    weight = np.ones(scores.shape[0]) if sample_weight is None else np.asarray(sample_weight, float)
    order = np.argsort(-scores, kind="stable")
    mass = np.cumsum(weight[order])
    # the first rank whose samples above weigh as much as the positives (rounding allowed)
    k = int(np.searchsorted(mass, weight[is_pos].sum() * (1 - 1e-12)))
    k = min(k, scores.shape[0] - 1)
    below = scores[order[k + 1]] if k + 1 < scores.shape[0] else scores[order[k]] - 1.0
    return float(0.5 * (scores[order[k]] + below))


def refuse_keywords(estimator, unexpected: dict, method: str = "fit",
                    reasons: dict | None = None) -> None:
    """TypeError naming ``estimator``'s ``method`` for a keyword it does not take (the method
    takes ``**unexpected`` so that the message, not Python's, names the public class and says
    why: ``reasons[(method, keyword)]``, or for the query ids under another library's name,
    which keyword this one uses); nothing when ``unexpected`` is empty."""
    if not unexpected:
        return
    name = next(iter(unexpected))
    why = (reasons or {}).get((method, name))
    if why is None and name in QUERY_WORDS:
        why = "use qid= for queries"
    raise TypeError(f"{type(estimator).__name__}.{method}() got an unexpected keyword argument "
                    f"{name!r}" + ("" if why is None else f"; {why}"))


class BaseRanker(ClassifierMixin, BaseEstimator, metaclass=ABCMeta):
    """Base of the binary rankers: the rank SVMs of :mod:`aprank.learn` and the boosted
    rankers of :mod:`aprank.boost`.

    A ranker learns a ranking of samples (per query, ``qid``) of two classes, the second of
    the sorted labels relevant. A rank SVM or a boosted ranker has no bias:
    ``decision_function`` is its raw score less ``threshold_``, the break-even point of the
    training ranking (as many training samples score above it as are relevant), and
    ``predict`` is the second class where ``decision_function`` is above 0. Its ``fit`` leaves
    the estimator as it was when it raises, refuses keywords it does not take (query ids under
    another library's name are told to use ``qid=``), and says in one warning per call of the
    user's what it did with labels that do not name the relevant class
    (:class:`RelevantClassWarning`), queries without a relevant sample
    (:class:`EmptyQueryWarning`) and a ``score`` without ``qid`` after a fit on several queries
    (:class:`OneQueryWarning`).

    A subclass implements ``fit``, ``decision_function`` and ``score``; one with a learnt bias
    (:class:`BinarySVM`) predicts where its raw score is above 0.
    """

    #: whether the estimator takes ``empty`` ("skip" or "error"): without it queries without a
    #: relevant sample are always left out, and the warnings do not offer ``empty="error"``
    _takes_empty = False
    #: the reasons a keyword is refused, beyond the query ids: {(method, keyword): why}
    _refusals: dict = {}

    # what a subclass has after a fit: its labels and queries
    classes_: np.ndarray
    empty: str                # where _takes_empty
    _n_fit_queries: int

    # ------------------------------------------------------------------- fit's frame
    def _fit_atomically(self, fit, *args, **kwargs):
        """Run ``fit(self, *args, **kwargs)`` with the parameters checked first and every
        attribute put back if it raises (``_checks.atomic_fit``)."""
        return atomic_fit(fit)(self, *args, **kwargs)

    def _refuse_keywords(self, unexpected: dict, method: str = "fit") -> None:
        """TypeError for a keyword ``method`` does not take, saying why (``_refusals``)."""
        refuse_keywords(self, unexpected, method, self._refusals)

    def _check_classes(self, classes) -> None:
        """ValueError unless the training labels have exactly two classes."""
        if classes.shape[0] != 2:
            raise ValueError(f"Only binary classification is supported. {type(self).__name__} "
                             f"needs samples of exactly 2 classes (relevant and not); got "
                             f"{classes.shape[0]} class(es): {classes.tolist()}")

    def _skips_empty(self) -> bool:
        """Whether queries without a relevant sample are left out (else refused)."""
        return not self._takes_empty or self.empty == "skip"

    # ------------------------------------------------------------------- what it says
    def _take_classes(self, classes) -> None:
        """Refuse training labels of other than two classes (:meth:`_check_classes`), then
        give the RelevantClassWarning of labels that do not say which class is relevant."""
        self._check_classes(classes)
        say_relevant_class(classes, type(self).__name__)

    def _say_skipped(self, n_skipped: int, n_queries: int) -> int:
        """``n_skipped`` (training queries without a relevant sample, left out of
        ``n_queries``), said in an EmptyQueryWarning before the training starts."""
        say_skipped(n_skipped, n_queries, refusable=self._takes_empty)
        return n_skipped

    def _say_score_skipped(self, relevant, qid) -> None:
        """The EmptyQueryWarning of a score that leaves out queries without a relevant
        sample, naming them."""
        if self._skips_empty():
            say_score_skipped(type(self).__name__, relevant, qid, refusable=self._takes_empty)

    def _say_if_scored_as_one_query(self, qid, n_samples: int) -> None:
        """The OneQueryWarning of a score without qid after a fit on several queries."""
        if qid is None and getattr(self, "_n_fit_queries", 1) > 1:
            say_scored_as_one_query(type(self).__name__, n_samples, self._n_fit_queries)

    # ------------------------------------------------------------------- prediction
    #: ``threshold_`` of the training scores (for subclasses that score elsewhere)
    _break_even = staticmethod(break_even_threshold)

    def _relevance(self, y, n: int, classes=None) -> np.ndarray:
        """Labels y of n scored samples as booleans (relevant: ``classes[1]``); ValueError for
        a label outside ``classes`` (by default ``classes_``; a fit's own before it sets
        them)."""
        return relevance(y, self.classes_ if classes is None else classes, n,
                         type(self).__name__)

    def _scored(self, X, y, qid):
        """(scores, relevance, qid) of a ``score``, checked, with its warnings said."""
        check_is_fitted(self)
        scores = self.decision_function(X)
        relevant = self._relevance(y, scores.shape[0])
        qid = check_qid(qid, scores.shape[0])
        self._say_if_scored_as_one_query(qid, scores.shape[0])
        self._say_score_skipped(relevant, qid)
        return scores, relevant, qid

    @abstractmethod
    def fit(self, X, y, qid=None):
        """Learn the ranker from samples ``X``, labels ``y`` and their queries ``qid``."""

    @abstractmethod
    def decision_function(self, X):
        """The scores of ``X`` less ``threshold_``: rank samples by them, highest first."""

    @abstractmethod
    def score(self, X, y, qid=None):
        """The ranking metric the ranker optimises (AP or NDCG, mean over the queries)."""

    def predict(self, X):
        """The second class where ``decision_function`` is above 0, else the first.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples.

        Returns
        -------
        ndarray of shape (n_samples,)
            Labels of ``classes_``.
        """
        check_is_fitted(self)
        return self.classes_[(self.decision_function(X) > 0).astype(int)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.classifier_tags.multi_class = False
        return tags
