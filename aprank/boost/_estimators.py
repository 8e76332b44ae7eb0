"""Scikit-learn estimators that boost LightGBM trees on the exact AP and NDCG hinges.

Each one validates its input as :class:`aprank.learn.APSVM` does (binary labels, the second
of the sorted two relevant; optional ``qid``; dense or CSR features, finite), builds a
:class:`~aprank.boost.HingeObjective` on the training labels and queries and runs
``lightgbm.train`` with it. They are rankers as the rank SVMs are
(:class:`aprank.learn.BaseRanker`): the hinge learns a ranking and no bias, so
``decision_function`` is the booster's raw score less ``threshold_``, the break-even point of
the training ranking, and ``predict`` marks it above 0; ``score`` is the mean AP (NDCG) over
queries.

``fit`` takes what ``lightgbm.LGBMRanker.fit`` takes to watch the fit: ``eval_set``,
``eval_names`` and ``callbacks`` (``lightgbm.early_stopping`` among them), with the eval sets'
query ids as ``eval_qid`` (an id per sample, as ``qid``). What an eval set reports is the
ranker's own metric, each query's AP (NDCG) averaged over the queries that have a relevant
sample, so early stopping watches what ``score`` reports; ``decision_function`` then uses the
trees up to ``best_iteration_``, as LightGBM's ``predict`` does. Keywords the constructor does
not name go to LightGBM's parameters.

What they do not take, they refuse with a TypeError: ``sample_weight`` (the objective has no
per-sample weights, and a query weight is not implemented), and the query ids under another
library's name (``group=``, ``groups=``, ``eval_group=``: the keywords are ``qid`` and
``eval_qid``). Queries without a relevant sample, where AP and NDCG are undefined, are left
out of the fit (said in one :class:`aprank.learn.EmptyQueryWarning`), of ``score`` and of the
eval sets' metric.
"""
from __future__ import annotations

from numbers import Integral, Real

import joblib
import lightgbm as lgb
import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from aprank.boost._objective import HESSIANS, HingeObjective
from aprank.learn import BaseRanker
from aprank.metrics import average_precision, ndcg
from aprank.sklearn_compat import Interval, StrOptions
from aprank.validation import check_qid

__all__ = ["APBoostRanker", "NDCGBoostRanker"]

#: LightGBM's names of its objective: the rankers' objective is the hinge, never a keyword's
_OBJECTIVE_WORDS = frozenset({"objective", "objective_type", "app", "application", "loss"})


def _for_lightgbm(X):
    """X as LightGBM reads it without a copy or a warning: a sparse array as a CSR matrix."""
    return sp.csr_matrix(X) if sp.issparse(X) and not isinstance(X, sp.csr_matrix) else X


class _QueryMetric:
    """The ranker's metric of each eval set, as a LightGBM ``feval``: the mean over the
    queries with a relevant sample of each query's AP (NDCG) of the raw scores.

    ``sets`` holds (LightGBM data set, relevance, query ids or None) of each eval set: LightGBM
    hands ``feval`` the data set, whose labels alone do not say the queries.
    """

    def __init__(self, name: str, metric, sets: list):
        self.name, self.metric, self.sets = name, metric, sets

    def __call__(self, preds, data):
        for dataset, relevant, qid in self.sets:
            if dataset is data:
                return self.name, float(self.metric(relevant, np.asarray(preds), qid)), True
        raise ValueError("LightGBM evaluated a data set that is not one of the eval sets")


class _BoostRanker(BaseRanker):
    """Shared fit / decision_function / score; subclasses name the loss and the metric."""

    _loss = "ap"
    #: the name of the eval sets' metric in ``evals_result_`` and ``best_score_``
    _metric_name = "average_precision"
    _refusals = {
        ("fit", "sample_weight"): "the hinge objective takes no per-sample weights",
        ("fit", "eval_group"): "use eval_qid= for the eval sets' queries (an id per sample, "
                               "as qid=)",
        ("score", "sample_weight"): "its metric weighs every query alike (as LightGBM's "
                                    "evaluation) and takes no per-sample weights",
    }

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
        "importance_type": [StrOptions({"split", "gain"})],
    }

    def __init__(self, n_estimators=100, *, learning_rate=0.1, num_leaves=31, max_depth=-1,
                 min_child_samples=20, reg_lambda=0.0, subsample=1.0, colsample_bytree=1.0,
                 hessian="rank", floor=0.01, random_state=None, n_jobs=None,
                 importance_type="split", **kwargs):
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
        self.importance_type = importance_type
        # LightGBM's other parameters, kept apart from the attributes: a name of LightGBM's
        # can never shadow a method or look like a fitted attribute
        self._lightgbm_params = dict(kwargs)

    # ------------------------------------------------------------------- parameters
    def get_params(self, deep=True):
        """The parameters, LightGBM's passed as keywords among them.

        Parameters
        ----------
        deep : bool, default True
            Ignored (no parameter is an estimator).

        Returns
        -------
        dict
            Parameter names mapped to their values.
        """
        return {**super().get_params(deep=deep), **self._lightgbm_params}

    def set_params(self, **params):
        """Set parameters; a name the constructor does not declare is one of LightGBM's.

        Parameters
        ----------
        **params
            Parameter names with their new values.

        Returns
        -------
        self
            The estimator.
        """
        declared = set(self._get_param_names())
        extra = {k: params.pop(k) for k in list(params) if k not in declared}
        super().set_params(**params)
        # a new dict: a clone's is never this one's
        self._lightgbm_params = {**self._lightgbm_params, **extra}
        return self

    def _threads(self) -> int:
        """LightGBM's threads, as ``n_jobs`` means in ``lightgbm.LGBMRanker``: None is the
        physical cores, 0 OpenMP's default, a negative count is counted back from the cores
        (-1 all of them)."""
        if self.n_jobs is None:
            return joblib.cpu_count(only_physical_cores=True)
        if self.n_jobs < 0:
            return max(joblib.cpu_count() + 1 + self.n_jobs, 1)
        return self.n_jobs

    def _lgb_params(self, objective) -> dict:
        refused = sorted(_OBJECTIVE_WORDS & set(self._lightgbm_params))
        if refused:
            raise ValueError(f"{type(self).__name__} got {refused[0]}=: its objective is the "
                             f"{self._loss.upper()} hinge (use lightgbm.LGBMRanker for "
                             "another objective)")
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
                "feature_pre_filter": False, "verbose": -1,
                # the eval sets report the ranker's metric (feval), none of LightGBM's own
                "metric": "None", **self._lightgbm_params}

    # ------------------------------------------------------------------- fit
    def fit(self, X, y, qid=None, *, eval_set=None, eval_qid=None, eval_names=None,
            callbacks=None, **unexpected):
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
        eval_set : list of (X, y) tuples, optional
            Sets whose metric (mean AP, NDCG for NDCGBoostRanker, over their queries) is
            recorded after every round in ``evals_result_``, and watched by
            ``lightgbm.early_stopping`` among ``callbacks``. Their labels are of ``classes_``.
            The training ``(X, y)`` themselves are evaluated on the training queries.
        eval_qid : list of array-like or None, optional
            The query ids of each eval set (None: one ranking), one entry per set.
        eval_names : list of str, optional
            The eval sets' names in ``evals_result_``; default "valid_0", "valid_1", ...
            ("training" for the training set).
        callbacks : list of callable, optional
            LightGBM's callbacks, run after every round (``lightgbm.early_stopping``,
            ``lightgbm.log_evaluation``, ...).
        **unexpected
            Refused with a TypeError naming the keyword: ``sample_weight`` (not supported),
            ``group=`` or ``groups=`` (use ``qid=``), ``eval_group=`` (use ``eval_qid=``).

        Returns
        -------
        self
            The fitted estimator.
        """
        self._refuse_keywords(unexpected)
        return self._fit_atomically(_BoostRanker._fit, X, y, qid, eval_set, eval_qid,
                                    eval_names, callbacks)

    def _fit(self, X, y, qid, eval_set, eval_qid, eval_names, callbacks):
        given = X, y
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64,
                             ensure_min_samples=1)
        check_classification_targets(y)
        qid = check_qid(qid, X.shape[0])
        classes = np.unique(y)
        self._take_classes(classes)
        is_pos = y == classes[1]
        evals = self._eval_sets(eval_set, eval_qid, eval_names, classes, given)
        objective = HingeObjective(is_pos.astype(np.int64), qid, loss=self._loss,
                                   hessian=self.hessian, floor=self.floor)
        used = objective._problem.used
        n_skipped = self._say_skipped(int(used.shape[0] - np.count_nonzero(used)),
                                      used.shape[0])
        params = self._lgb_params(objective)
        X = _for_lightgbm(X)
        train_set = lgb.Dataset(X, is_pos.astype(np.float64), params=params)
        sets = [(train_set, is_pos, qid) if Xv is None else
                (lgb.Dataset(Xv, relevant.astype(np.float64), reference=train_set,
                             params=params), relevant, qv) for Xv, relevant, qv, _ in evals]
        evals_result: dict = {}
        booster = lgb.train(params, train_set, num_boost_round=self.n_estimators,
                            valid_sets=[s[0] for s in sets],
                            valid_names=[name for *_, name in evals],
                            feval=_QueryMetric(self._metric_name, self._metric, sets),
                            callbacks=[*(callbacks or ()), lgb.record_evaluation(evals_result)],
                            keep_training_booster=True)
        # every round's trees kept, as lightgbm.train's own ending keeps those up to the best:
        # the rounds after it stay open to booster_.predict(num_iteration=...), and
        # decision_function stops at best_iteration_
        booster.model_from_string(booster.model_to_string(num_iteration=-1)).free_dataset()
        raw = booster.predict(X, raw_score=True, num_iteration=booster.best_iteration,
                              num_threads=params["num_threads"])
        self.__dict__.update(
            classes_=classes, booster_=booster, best_iteration_=booster.best_iteration,
            best_score_={name: dict(scores) for name, scores in booster.best_score.items()},
            evals_result_={name: dict(scores) for name, scores in evals_result.items()},
            threshold_=self._break_even(np.asarray(raw, dtype=np.float64), is_pos),
            n_skipped_queries_=n_skipped, _n_fit_queries=used.shape[0])
        return self

    def _eval_sets(self, eval_set, eval_qid, eval_names, classes, given) -> list:
        """(X or None for the training set itself, relevance, qid, name) of each eval set,
        checked before the training starts."""
        if eval_set is None:
            if eval_qid is not None or eval_names is not None:
                raise ValueError("eval_qid and eval_names describe eval sets: give eval_set")
            return []
        sets = [eval_set] if isinstance(eval_set, tuple) else list(eval_set)
        for extra, name in ((eval_qid, "eval_qid"), (eval_names, "eval_names")):
            if extra is not None and len(extra) != len(sets):
                raise ValueError(f"{name} has {len(extra)} entries for the {len(sets)} sets of "
                                 "eval_set: one per set")
        out: list[tuple] = []
        for i, pair in enumerate(sets):
            if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
                raise ValueError(f"eval_set[{i}] must be an (X, y) pair")
            Xv, yv = pair
            qv = None if eval_qid is None else eval_qid[i]
            is_training = Xv is given[0] and yv is given[1] and qv is None
            name = (eval_names[i] if eval_names is not None
                    else "training" if is_training else f"valid_{i}")
            if is_training:
                out.append((None, None, None, name))
                continue
            Xv = _for_lightgbm(validate_data(self, Xv, accept_sparse="csr", dtype=np.float64,
                                             reset=False))
            relevant = self._relevance(yv, Xv.shape[0], classes)
            qv = check_qid(qv, Xv.shape[0])
            if not relevant.any():
                raise ValueError(f"eval_set[{i}] has no relevant sample: its metric is "
                                 "undefined")
            out.append((Xv, relevant, qv, name))
        return out

    # ------------------------------------------------------------------- prediction
    def decision_function(self, X):
        """The booster's raw scores (of its trees up to ``best_iteration_`` where early
        stopping set it) less ``threshold_``: rank samples by them, highest first;
        ``predict`` marks those above 0.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples.

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = _for_lightgbm(validate_data(self, X, accept_sparse="csr", dtype=np.float64,
                                        reset=False))
        # num_iteration <= 0 is every tree, as LightGBM's best_iteration 0 means
        raw = self.booster_.predict(X, raw_score=True, num_iteration=self.best_iteration_,
                                    num_threads=self._threads())
        return np.asarray(raw, dtype=np.float64).ravel() - self.threshold_

    @property
    def feature_importances_(self) -> np.ndarray:
        """Each feature's importance in the trees up to ``best_iteration_``: how often it
        splits (``importance_type="split"``) or the gain of its splits ("gain")."""
        check_is_fitted(self)
        return self.booster_.feature_importance(importance_type=self.importance_type,
                                                iteration=self.best_iteration_)

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
        self._refuse_keywords(unexpected, "score")
        scores, relevant, qid = self._scored(X, y, qid)
        return float(self._metric(relevant, scores, qid))


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
        LightGBM's threads, as in ``lightgbm.LGBMRanker``: None is the physical cores, 0
        OpenMP's default, -1 all the cores (-2 all but one, ...).
    importance_type : {"split", "gain"}, default "split"
        What ``feature_importances_`` counts: a feature's splits, or their total gain.
    **kwargs
        LightGBM's other parameters (``min_split_gain``, ``reg_alpha``, ``max_bin``, ...),
        passed to ``lightgbm.train`` under their names after those above, so that one of
        these keywords wins over the same name above; ``get_params`` and ``set_params`` hold
        them. LightGBM ignores a name it does not know (with ``verbose=0`` it says so). An
        objective (``objective=``) is refused: the rankers' objective is the hinge.

    Attributes
    ----------
    booster_ : lightgbm.Booster
        The trees, every round's (with early stopping, the rounds after the best too: its
        ``predict`` stops at the best, as ``best_iteration_`` says).
    best_iteration_ : int
        The round ``lightgbm.early_stopping`` found best on the eval sets (1 for the first),
        whose trees and those before it make ``decision_function``; 0 without early
        stopping: every tree.
    best_score_ : dict
        The eval sets' metric at ``best_iteration_`` (at the last round without early
        stopping), ``{set name: {metric name: value}}``.
    evals_result_ : dict
        The eval sets' metric after every round, ``{set name: {metric name: list}}``: the
        mean AP (``"average_precision"``) or NDCG (``"ndcg"``) over their queries.
    feature_importances_ : ndarray of shape (n_features,)
        Each feature's splits (or gain, ``importance_type``) in the trees up to
        ``best_iteration_``.
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

    As :class:`APBoostRanker`, with the NDCG loss; ``score`` and the eval sets' metric are
    the mean NDCG.
""" + _PARAMS_DOC

    _loss = "ndcg"
    _metric_name = "ndcg"

    def _metric(self, relevant, scores, qid):
        return ndcg(relevant.astype(float), scores, qid=qid, empty="skip")
