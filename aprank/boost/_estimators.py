"""Scikit-learn estimators that boost LightGBM trees on the exact AP and NDCG hinges.

Each one validates its input as :class:`aprank.learn.APSVM` does (binary labels, the second
of the sorted two relevant; optional ``qid``; dense or CSR features, finite), builds a
:class:`~aprank.boost.HingeObjective` on the training labels and queries and runs
``lightgbm.train`` with it. The hinge learns a ranking and no bias, so ``decision_function`` is
the booster's raw score less ``threshold_``, the break-even point of the training ranking, and
``predict`` marks it above 0; ``score`` is the mean AP (NDCG) over queries.

What they do not take, they refuse with a TypeError: ``sample_weight`` (the objective has no
per-sample weights, and a query weight is not implemented), and the query ids under another
library's name (``group=``, ``groups=``: the keyword is ``qid``). Queries without a relevant
sample, where AP and NDCG are undefined, are left out of the fit (said in one
:class:`aprank.learn.EmptyQueryWarning`) and of ``score``.
"""
from __future__ import annotations

import os
import warnings
from numbers import Integral, Real

import lightgbm as lgb
import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from aprank.boost._objective import HESSIANS, HingeObjective
from aprank.learn import EmptyQueryWarning, OneQueryWarning, RelevantClassWarning
from aprank.metrics import average_precision, ndcg
from aprank.sklearn_compat import Interval, StrOptions
from aprank.validation import check_qid, names_relevant_class, queries_without_relevant

__all__ = ["APBoostRanker", "NDCGBoostRanker"]

#: what other libraries call query ids (scikit-learn's splitters, LightGBM, XGBoost)
_QUERY_WORDS = frozenset({"groups", "group", "query", "query_id", "qids"})


def _for_lightgbm(X):
    """X as LightGBM reads it without a copy or a warning: a sparse array as a CSR matrix."""
    return sp.csr_matrix(X) if sp.issparse(X) and not isinstance(X, sp.csr_matrix) else X


def _break_even(scores: np.ndarray, is_pos: np.ndarray) -> float:
    """The score above which as many training samples lie as there are positives, midway
    between the last sample above and the first below (the training ranking's break-even
    point, where its precision equals its recall)."""
    order = np.argsort(-scores, kind="stable")
    k = min(int(is_pos.sum()) - 1, scores.shape[0] - 1)
    below = scores[order[k + 1]] if k + 1 < scores.shape[0] else scores[order[k]] - 1.0
    return float(0.5 * (scores[order[k]] + below))


def _say_relevant_class(classes, name: str) -> None:
    """The RelevantClassWarning of a fit on labels other than bool, {0, 1} or {-1, +1}."""
    if names_relevant_class(classes):
        return
    warnings.warn(f"{name} ranks {classes.tolist()[1]!r}, the second of the sorted labels "
                  f"{classes.tolist()!r}, as the relevant class: labels other than bool, "
                  "{0, 1} or {-1, +1} do not say which is relevant. Fit on y == <relevant "
                  "label> (a bool mask) to choose (aprank.metrics takes pos_label=)",
                  RelevantClassWarning, stacklevel=4)


def _say_score_skipped(name: str, relevant, qid) -> None:
    """The EmptyQueryWarning of a score whose queries include some without a relevant
    sample (left out of the mean), naming them."""
    if qid is None:
        return
    empty, n_queries = queries_without_relevant(relevant, qid)
    if not empty:
        return
    shown = ", ".join(repr(q) for q in empty[:5]) + (", ..." if len(empty) > 5 else "")
    warnings.warn(f"{name}.score left out {len(empty)} of {n_queries} queries that have no "
                  f"relevant sample ({shown}): the metric is undefined there. aprank.metrics "
                  "gives the same number with empty='skip' (by default it raises)",
                  EmptyQueryWarning, stacklevel=3)


class _BoostRanker(ClassifierMixin, BaseEstimator):
    """Shared fit / decision_function / predict / score; subclasses name the loss."""

    _loss = "ap"

    _parameter_constraints: dict = {
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "num_leaves": [Interval(Integral, 2, None, closed="left")],
        "max_depth": [Interval(Integral, -1, None, closed="left")],
        "min_child_samples": [Interval(Integral, 0, None, closed="left")],
        "reg_lambda": [Interval(Real, 0, None, closed="left")],
        "subsample": [Interval(Real, 0, 1, closed="right")],
        "colsample_bytree": [Interval(Real, 0, 1, closed="right")],
        "hessian": [StrOptions(set(HESSIANS))],
        "floor": [Interval(Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
        "n_jobs": [Integral, None],
    }

    def __init__(self, n_estimators=100, *, learning_rate=0.1, num_leaves=31, max_depth=-1,
                 min_child_samples=20, reg_lambda=0.0, subsample=1.0, colsample_bytree=1.0,
                 hessian="rank", floor=0.01, random_state=None, n_jobs=None):
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.num_leaves = num_leaves
        self.max_depth = max_depth
        self.min_child_samples = min_child_samples
        self.reg_lambda = reg_lambda
        self.subsample = subsample
        self.colsample_bytree = colsample_bytree
        self.hessian = hessian
        self.floor = floor
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _threads(self) -> int:
        """LightGBM's threads: None is one, a negative count is counted back from the cores
        (-1 all of them), as in scikit-learn."""
        if self.n_jobs is None:
            return 1
        if self.n_jobs == 0:
            raise ValueError("n_jobs == 0 has no meaning: a positive count, -1 or None")
        return self.n_jobs if self.n_jobs > 0 else max((os.cpu_count() or 1) + 1 + self.n_jobs, 1)

    def _lgb_params(self, objective) -> dict:
        seed = int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))
        return {"objective": objective, "learning_rate": self.learning_rate,
                "num_leaves": self.num_leaves, "max_depth": self.max_depth,
                "min_data_in_leaf": self.min_child_samples, "lambda_l2": self.reg_lambda,
                "bagging_fraction": self.subsample, "bagging_freq": int(self.subsample < 1),
                "feature_fraction": self.colsample_bytree, "seed": seed,
                "num_threads": self._threads(), "deterministic": True, "force_row_wise": True,
                # every feature kept in the data set: where none could be split (few samples)
                # LightGBM would refuse a custom objective's data set instead of growing
                # constant trees
                "feature_pre_filter": False, "verbose": -1}

    def fit(self, X, y, qid=None, **unexpected):
        """Boost ``n_estimators`` trees on the hinge of the training labels and queries.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples (dense or CSR), finite.
        y : array-like of shape (n_samples,)
            Binary labels; the second of the sorted two is the relevant class.
        qid : array-like of shape (n_samples,), optional
            Query ids (any order): the objective is the mean over queries of each query's
            hinge. Without, all the samples form one ranking.
        **unexpected
            Refused with a TypeError naming the keyword: ``sample_weight`` (not supported),
            ``group=`` or ``groups=`` (use ``qid=``).

        Returns
        -------
        self
            The fitted estimator.
        """
        if unexpected:
            name = next(iter(unexpected))
            why = ("; the hinge objective takes no per-sample weights" if name == "sample_weight"
                   else "; use qid= for queries" if name in _QUERY_WORDS else "")
            raise TypeError(f"{type(self).__name__}.fit() got an unexpected keyword argument "
                            f"{name!r}{why}")
        self._validate_params()
        state = dict(self.__dict__)
        try:
            self._fit(X, y, qid)
        except BaseException:     # a failed fit leaves the estimator as it was
            self.__dict__.clear()
            self.__dict__.update(state)
            raise
        return self

    def _fit(self, X, y, qid):
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64,
                             ensure_min_samples=1)
        check_classification_targets(y)
        qid = check_qid(qid, X.shape[0])
        classes = np.unique(y)
        if classes.shape[0] != 2:
            raise ValueError(f"Only binary classification is supported. {type(self).__name__} "
                             f"needs samples of exactly 2 classes (relevant and not); got "
                             f"{classes.shape[0]} class(es): {classes.tolist()}")
        _say_relevant_class(classes, type(self).__name__)
        is_pos = y == classes[1]
        objective = HingeObjective(is_pos.astype(np.int64), qid, loss=self._loss,
                                   hessian=self.hessian, floor=self.floor)
        used = objective._problem.used
        n_skipped = int(used.shape[0] - np.count_nonzero(used))
        if n_skipped:
            warnings.warn(f"{n_skipped} of {used.shape[0]} training queries have no relevant "
                          "sample and were left out of the fit, as LightGBM and XGBoost do "
                          "(n_skipped_queries_ counts them)", EmptyQueryWarning, stacklevel=3)
        params = self._lgb_params(objective)
        X = _for_lightgbm(X)
        booster = lgb.train(params, lgb.Dataset(X, is_pos.astype(np.float64), params=params),
                            num_boost_round=self.n_estimators)
        raw = booster.predict(X, raw_score=True, num_threads=params["num_threads"])
        self.classes_ = classes
        self.booster_ = booster
        self.threshold_ = _break_even(np.asarray(raw, dtype=np.float64), is_pos)
        self.n_skipped_queries_ = n_skipped
        self._n_fit_queries = used.shape[0]

    def decision_function(self, X):
        """The booster's raw scores less ``threshold_``: rank samples by them, highest first;
        ``predict`` marks those above 0.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = _for_lightgbm(validate_data(self, X, accept_sparse="csr", dtype=np.float64,
                                        reset=False))
        raw = self.booster_.predict(X, raw_score=True, num_threads=self._threads())
        return np.asarray(raw, dtype=np.float64).ravel() - self.threshold_

    def predict(self, X):
        """The second class where ``decision_function`` is above 0 (the training ranking's
        break-even point), else the first.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        return self.classes_[(self.decision_function(X) > 0).astype(int)]

    def _metric(self, relevant, scores, qid):
        return average_precision(relevant, scores, qid=qid, empty="skip")

    def score(self, X, y, qid=None, **unexpected):
        """Mean average precision (NDCGBoostRanker: mean NDCG) over queries; ties as
        scikit-learn.

        Queries without a relevant sample are left out of the mean, as in LightGBM's and
        XGBoost's evaluation; an :class:`~aprank.learn.EmptyQueryWarning` names them
        (:mod:`aprank.metrics` gives the same number with ``empty="skip"``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples.
        y : array-like of shape (n_samples,)
            Their labels (of ``classes_``).
        qid : array-like of shape (n_samples,), optional
            Query ids: the mean over queries. Without, the samples form one ranking; after a
            fit on several queries that drops them, which a
            :class:`~aprank.learn.OneQueryWarning` says (in a scikit-learn search, route
            ``qid`` to ``score`` with ``set_score_request(qid=True)``).
        **unexpected
            Refused (TypeError) saying why: ``sample_weight`` (the metric weighs every query
            alike, as LightGBM's evaluation does; the learners of :mod:`aprank.learn` take
            sample weights) or any other keyword.

        Returns
        -------
        float
            The mean metric.
        """
        if unexpected:
            name = next(iter(unexpected))
            why = ("; its metric weighs every query alike (as LightGBM's evaluation) and takes "
                   "no per-sample weights" if name == "sample_weight"
                   else "; use qid= for queries" if name in _QUERY_WORDS else "")
            raise TypeError(f"{type(self).__name__}.score() got an unexpected keyword argument "
                            f"{name!r}{why}")
        check_is_fitted(self)
        scores = self.decision_function(X)
        y = column_or_1d(y)
        if y.shape[0] != scores.shape[0]:
            raise ValueError(f"y has {y.shape[0]} labels but X has {scores.shape[0]} samples")
        unknown = ~np.isin(y, self.classes_)
        if unknown.any():
            raise ValueError(f"{type(self).__name__}.score got labels outside classes_ "
                             f"{self.classes_.tolist()}: {np.unique(y[unknown]).tolist()[:5]}")
        qid = check_qid(qid, scores.shape[0])
        if qid is None and self._n_fit_queries > 1:
            name = type(self).__name__
            warnings.warn(f"{name}.score got no qid, so it ranks all {scores.shape[0]} samples "
                          f"as one query, but {name} was fitted on {self._n_fit_queries} "
                          "queries; pass qid= (in a search: route it)", OneQueryWarning,
                          stacklevel=2)
        _say_score_skipped(type(self).__name__, y == self.classes_[1], qid)
        return float(self._metric(y == self.classes_[1], scores, qid))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.classifier_tags.multi_class = False
        return tags


_PARAMS_DOC = """
    Parameters
    ----------
    n_estimators : int, default 100
        Boosting rounds (trees).
    learning_rate : float, default 0.1
        Shrinkage of each tree.
    num_leaves : int, default 31
        Leaves per tree at most.
    max_depth : int, default -1
        Depth of a tree at most (-1: no limit).
    min_child_samples : int, default 20
        Samples in a leaf at least.
    reg_lambda : float, default 0.0
        L2 penalty on the leaf values.
    subsample : float, default 1.0
        Fraction of the samples each tree is grown on (drawn every round when below 1).
    colsample_bytree : float, default 1.0
        Fraction of the features each tree may split on.
    hessian : {"rank", "balanced"}, default "rank"
        The objective's second-order term (see :class:`~aprank.boost.HingeObjective`).
    floor : float, default 0.01
        The share of the balanced term every sample keeps in the rank hessian.
    random_state : int, RandomState instance or None, default None
        Seeds LightGBM (its bagging and feature sampling; without them the fit is
        deterministic whatever the seed).
    n_jobs : int, optional
        LightGBM's threads: None is 1, -1 all the cores (-2 all but one, ...).

    Attributes
    ----------
    booster_ : lightgbm.Booster
        The trees.
    classes_ : ndarray of shape (2,)
        The labels; the second is relevant.
    threshold_ : float
        ``predict``'s threshold on the raw score: the break-even point of the training
        ranking (as many training samples score above it as are relevant), midway between
        the scores on either side. The hinge learns no bias, so ``decision_function`` is the
        raw score less ``threshold_``.
    n_skipped_queries_ : int
        Training queries left out for want of a relevant sample.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (n_features,)
        Their names, where X had string column names.
"""


class APBoostRanker(_BoostRanker):
    __doc__ = """Gradient-boosted trees (LightGBM) minimising the structural hinge of AP.

    Each round fits a tree to the subgradient of the AP hinge, the mean over queries of
    ``coef - truth_coef`` of each query's most violated ranking (exact, ties included), with
    the second-order term ``hessian``; see :class:`~aprank.boost.HingeObjective` and
    ``docs/boost.md``. ``fit`` takes ``qid``; ``sample_weight`` is refused. In a scikit-learn
    search, route ``qid`` with ``set_fit_request(qid=True)`` and ``set_score_request(qid=True)``
    under ``sklearn.set_config(enable_metadata_routing=True)``.
""" + _PARAMS_DOC


class NDCGBoostRanker(_BoostRanker):
    __doc__ = """Gradient-boosted trees (LightGBM) minimising the structural hinge of NDCG
    (binary relevance, discount 1/log2(1+m)).

    As :class:`APBoostRanker`, with the NDCG loss; ``score`` is the mean NDCG.
""" + _PARAMS_DOC

    _loss = "ndcg"

    def _metric(self, relevant, scores, qid):
        return ndcg(relevant.astype(float), scores, qid=qid, empty="skip")
