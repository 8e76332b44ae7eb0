"""Cross-validated structured SVMs: :class:`APSVMCV`, :class:`NDCGSVMCV`, :class:`BinarySVMCV`.

Each chooses C from a grid by k-fold cross-validation, as scikit-learn's
``LogisticRegressionCV`` does for its C: within a fold one estimator walks the grid from the
smallest C to the largest. By default every C is fitted from nothing, so the fits, the scores,
the ranking of the grid and the chosen C are those of a ``GridSearchCV`` over the same grid and
splitter with ``qid`` routed to ``fit`` and ``score`` (tests/learn/test_cv_estimators.py checks it);
with ``warm_path=True`` each fit starts from the previous fit's working set (``warm_start``:
the same training data, so its constraints still hold). The folds run in parallel with
``n_jobs``.
"""
from __future__ import annotations

import warnings
from numbers import Integral

import numpy as np
from scipy.stats import rankdata
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.metrics import check_scoring, get_scorer_names
from sklearn.model_selection import GroupKFold, check_cv
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import check_is_fitted, validate_data

from aprank.learn._checks import POSITIVE_INT, StrOptions, atomic_fit, say_relevant_class
from aprank.learn._estimators import APSVM, NDCGSVM, BinarySVM, _StructuredSVM
from aprank.learn._once import say_once
from aprank.learn._query_warnings import EmptyQueryWarning, say_scorer_drops_queries
from aprank.learn._ranker import refuse_keywords
from aprank.sklearn_compat import check_sample_weight
from aprank.validation import as_query_groups, check_frame_columns, check_qid

__all__ = ["APSVMCV", "NDCGSVMCV", "BinarySVMCV", "GridEdgeWarning"]

#: the decades an int ``Cs`` spans: scikit-learn's ``LogisticRegressionCV``'s, so that an int
#: means the same grid in both (a fit's cost grows with C: a list keeps a search to cheap C)
C_RANGE = (-4.0, 4.0)


class GridEdgeWarning(UserWarning):
    """The C a cross-validated estimator chose (``C_``) lies at an edge of its grid ``Cs``,
    where the mean test score still rises toward the edge: a C beyond the grid may score
    higher, so widen ``Cs`` on that side (``cv_results_`` has the scores of every C).

    It is said for the highest C of a grid of several, which the choice (the first of the
    best means) takes only when it scores above every smaller C; and for the lowest C when it
    scores above the next one up, not when the two tie (a flat curve, where the smallest C is
    the rule's choice among equals). It points at the line that started the fit, once per
    such line's call (a search over the estimator says it once for all its folds). Silence it
    with ``warnings.filterwarnings("ignore", category=aprank.learn.GridEdgeWarning)``.
    """


def _grid_edge(Cs, means, best: int) -> str | None:
    """The edge of the grid ``Cs`` the choice ``best`` lies at, as :class:`GridEdgeWarning`
    says it ("highest", "lowest"), or None: inside the grid, a grid of one C, or the lowest C
    tied with the next (the tie rule's choice on a flat curve)."""
    if Cs.shape[0] < 2:
        return None
    if best == Cs.shape[0] - 1:
        return "highest"
    if best == 0 and means[0] > means[1]:
        return "lowest"
    return None


def _say_grid_edge(name: str, Cs, best: int, edge: str) -> None:
    """Issue the :class:`GridEdgeWarning` of ``name``'s choice ``Cs[best]``, at ``edge``."""
    beyond = "above" if edge == "highest" else "below"
    say_once(f"{name} chose C_ = {Cs[best]:g}, the {edge} C of its grid Cs ({Cs[0]:g} to "
             f"{Cs[-1]:g}), and the mean test score rises toward it: the best C may lie "
             f"{beyond} the grid, so widen Cs {beyond} {Cs[best]:g} (cv_results_ has every C's "
             "scores)", GridEdgeWarning, ("grid edge", name, edge))


def _check_groups(groups, n):
    groups = np.asarray(groups)
    if groups.ndim != 1 or groups.shape[0] != n:
        raise ValueError(f"groups must be 1-D with one entry per sample ({n}), got shape "
                         f"{groups.shape}")
    return groups


def _rows(values, rows):
    return None if values is None else values[rows]


def _fold_path(estimator, Cs, X, y, qid, sample_weight, train, test, scorer):
    """Fit ``estimator`` on the training rows for every C of ``Cs`` in turn (warm-started or
    not, as its ``warm_start`` says) and score each fit on the test rows: (scores, iterations,
    primal objectives), one per C."""
    scores, n_iter, primal = [], [], []
    Xtr, ytr, qtr, wtr = X[train], y[train], _rows(qid, train), _rows(sample_weight, train)
    Xte, yte, qte, wte = X[test], y[test], _rows(qid, test), _rows(sample_weight, test)
    with warnings.catch_warnings():
        # the refit on all the data says which queries have no relevant sample, once; a fold's
        # fits would say a part of it again for every C
        warnings.simplefilter("ignore", EmptyQueryWarning)
        for C in Cs:
            estimator.set_params(C=C).fit(Xtr, ytr, qid=qtr, sample_weight=wtr)
            if scorer is None:
                scores.append(estimator.score(Xte, yte, qid=qte, sample_weight=wte))
            elif wte is None:
                scores.append(scorer(estimator, Xte, yte))
            else:
                scores.append(scorer(estimator, Xte, yte, sample_weight=wte))
            n_iter.append(estimator.n_iter_)
            primal.append(estimator.primal_)
    return np.asarray(scores, dtype=float), np.asarray(n_iter), np.asarray(primal)


def _refits(self) -> bool:
    """Whether a fit leaves a model fitted on all the data (``refit=True``), as GridSearchCV's
    methods are there by its parameters, before a fit as after."""
    return bool(self.refit)


class _SVMCV(ClassifierMixin, BaseEstimator):
    """The cross-validation shared by the three: subclasses name the estimator and which of its
    parameters they pass through (``_base_params``)."""

    #: the estimator cross-validated, which every subclass names
    _estimator: type[_StructuredSVM]
    _base_params: tuple = ()
    # routed metadata called groups is the outer splitter's by default, as a search's groups
    # (a nested cross-validation keeps working); set_fit_request(groups=True) passes it on
    __metadata_request__fit = {"groups": False}

    _cv_constraints: dict = {
        "Cs": [POSITIVE_INT, "array-like"],
        "cv": ["cv_object"],
        "scoring": [StrOptions(set(get_scorer_names())), callable, None],
        "refit": ["boolean"],
        "n_jobs": [Integral, None],
        "warm_path": ["boolean"],
    }

    def _base(self, C):
        """The estimator of one fit at C, with this one's parameters."""
        return self._estimator(C=C, **{p: getattr(self, p) for p in self._base_params})

    def _grid(self) -> np.ndarray:
        """``Cs`` as a sorted grid of distinct C (ValueError naming Cs for anything else)."""
        if isinstance(self.Cs, Integral):
            return np.logspace(*C_RANGE, int(self.Cs))
        Cs = np.asarray(self.Cs, dtype=float)
        if Cs.ndim != 1 or Cs.shape[0] == 0 or not np.all(np.isfinite(Cs)) or np.any(Cs <= 0):
            raise ValueError(f"Cs must be an int or a non-empty 1-D list of finite C > 0, got "
                             f"{self.Cs!r}")
        return np.unique(Cs)

    def _splitter(self, y, groups):
        """The splitter: with groups (``groups=``, else qid), an int (or None: 5) is GroupKFold
        over them, which keeps every group whole in one fold; without, scikit-learn's
        (StratifiedKFold)."""
        if groups is not None and (self.cv is None or isinstance(self.cv, Integral)):
            return GroupKFold(5 if self.cv is None else int(self.cv))
        return check_cv(self.cv, y, classifier=True)

    @atomic_fit
    def fit(self, X, y, qid=None, sample_weight=None, *, groups=None, **unexpected):
        """Cross-validate C over the grid, then (``refit``) fit on all the data at the best C.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples (dense or CSR).
        y : array-like of shape (n_samples,)
            Binary labels.
        qid : array-like of shape (n_samples,), optional
            Query ids: the fits and scores are per query; without, all the samples form one
            ranking. Without ``groups``, the folds keep queries whole (an int ``cv``), and a
            splitter gets qid as its ``groups``.
        sample_weight : array-like of shape (n_samples,), optional
            Weights as the estimator's ``fit`` takes them; they weigh the fold fits and the
            fold scores (and the refit).
        groups : array-like of shape (n_samples,), optional
            Group labels for the splitter only, as scikit-learn's ``groups``: an int ``cv`` is
            then ``GroupKFold`` over them, and a splitter gets them as its ``groups``, so no
            group is split between training and test (e.g. the bags of one ranking). They do
            not change the loss, which ``qid`` alone groups.
        **unexpected
            Refused with a TypeError naming the keyword (``group=``: use qid= for queries).

        Returns
        -------
        self
            The fitted estimator.

        Warns
        -----
        GridEdgeWarning
            When ``C_`` is the highest C of ``Cs``, or the lowest scoring above the next:
            the best C may lie beyond the grid.
        """
        refuse_keywords(self, unexpected)
        Cs = self._grid()
        template = self._base(Cs[0])
        template._check_params()
        check_frame_columns(X)
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64,
                             ensure_all_finite=True, ensure_min_samples=1)
        check_classification_targets(y)
        classes = np.unique(y)
        template._check_classes(classes)
        say_relevant_class(classes, type(self).__name__)
        qid = check_qid(qid, X.shape[0])
        groups = qid if groups is None else _check_groups(groups, X.shape[0])
        if sample_weight is not None:   # an array to take the folds' rows from; a copy
            sample_weight = check_sample_weight(sample_weight, X, dtype=np.float64, copy=True)
        splits = list(self._splitter(y, groups).split(X, y, groups=groups))
        scorer = None if self.scoring is None else check_scoring(template, self.scoring)
        n_queries = 1 if qid is None else as_query_groups(qid, X.shape[0])[1].shape[0] - 1
        if scorer is not None and n_queries > 1:
            # said once here rather than by every fold's score
            say_scorer_drops_queries(type(self).__name__, self.scoring, n_queries)
        paths = Parallel(n_jobs=self.n_jobs)(
            delayed(_fold_path)(clone(template).set_params(warm_start=self.warm_path), Cs, X, y,
                                qid, sample_weight, train, test, scorer)
            for train, test in splits)
        scores = np.stack([path[0] for path in paths])         # (n_folds, n_Cs)
        results = self._results(Cs, scores)
        # GridSearchCV's rule: the lowest rank, the first of the best in grid order, which
        # ascends: on a flat curve the smallest C, the strongest regularisation
        best = int(np.argmin(results["rank_test_score"]))
        edge = _grid_edge(Cs, results["mean_test_score"], best)
        if edge is not None:
            _say_grid_edge(type(self).__name__, Cs, best, edge)
        fitted = {"classes_": classes, "Cs_": Cs, "scores_": scores, "cv_results_": results,
                  "best_index_": best, "C_": float(Cs[best]),
                  "best_score_": float(results["mean_test_score"][best]),
                  "n_iter_": np.stack([path[1] for path in paths]),
                  "primal_path_": np.stack([path[2] for path in paths]),
                  "n_splits_": len(splits)}
        if self.refit:
            best_estimator = self._base(Cs[best]).fit(X, y, qid=qid,
                                                      sample_weight=sample_weight)
            fitted.update(best_estimator_=best_estimator, coef_=best_estimator.coef_,
                          n_skipped_queries_=best_estimator.n_skipped_queries_)
            if template._has_intercept:
                fitted["intercept_"] = best_estimator.intercept_
        self.__dict__.update(fitted)
        return self

    @staticmethod
    def _results(Cs, scores) -> dict:
        """``cv_results_`` as GridSearchCV writes it (its mean, std and rank, computed alike)."""
        means = np.average(scores, axis=0)
        results = {"params": [{"C": float(C)} for C in Cs], "param_C": Cs.copy()}
        for k in range(scores.shape[0]):
            results[f"split{k}_test_score"] = scores[k].copy()
        results["mean_test_score"] = means
        results["std_test_score"] = np.sqrt(np.average((scores - means) ** 2, axis=0))
        results["rank_test_score"] = rankdata(-means, method="min").astype(np.int32)
        return results

    # ------------------------------------------------------------------ the refitted model
    def _check_refitted(self) -> None:
        """NotFittedError unless a fit left a model on all the data (``best_estimator_``)."""
        check_is_fitted(self)
        check_is_fitted(self, "best_estimator_",
                        msg="This %(name)s was fitted with refit=False, so it has no "
                            "best_estimator_ to use; fit it again with refit=True")

    @available_if(_refits)
    def decision_function(self, X):
        """Scores of the model refitted at ``C_``: rank samples by them, highest first."""
        self._check_refitted()
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        return self.best_estimator_.decision_function(X)

    @available_if(_refits)
    def predict(self, X):
        """The refitted model's ``predict``: the second class where the score is above 0."""
        self._check_refitted()
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        return self.best_estimator_.predict(X)

    @available_if(_refits)
    def score(self, X, y, qid=None, sample_weight=None):
        """The refitted model's ``score`` (its own metric, per query with ``qid``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples.
        y : array-like of shape (n_samples,)
            Their labels (of ``classes_``).
        qid : array-like of shape (n_samples,), optional
            Query ids: the mean over queries.
        sample_weight : array-like of shape (n_samples,), optional
            Weights, as the estimator's ``score`` takes them.

        Returns
        -------
        float
            Mean AP (``APSVMCV``, ``BinarySVMCV``) or mean NDCG (``NDCGSVMCV``).
        """
        self._check_refitted()
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        return self.best_estimator_.score(X, y, qid=qid, sample_weight=sample_weight)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.classifier_tags.multi_class = False
        return tags


def _constraints(estimator, names):
    return {**_SVMCV._cv_constraints,
            **{p: estimator._parameter_constraints[p] for p in names}}


_CV_DOC = """
    Cs : int or array-like of float, default 5
        The grid of C: an int is that many values log-spaced over [1e-4, 1e4], as
        scikit-learn's ``LogisticRegressionCV`` (the default: 1e-4, 1e-2, 1, 1e2 and 1e4; a
        fit's cost grows with C, so a list can keep a search to cheaper C); a list is used as
        given, sorted ascending and without repeats (``Cs_``).
    cv : int, cross-validation splitter or iterable, default None
        As scikit-learn's ``cv``; None is 5 folds. With ``groups`` (else ``qid``), an int
        (or None) is ``GroupKFold`` over them, so no group (query) is split between training
        and test; without either, ``StratifiedKFold``. A splitter gets ``groups`` (else
        ``qid``) as its ``groups``, which grouped splitters (``GroupKFold``,
        ``GroupShuffleSplit``, ...) use.
    scoring : str, callable or None, default None
        None: the estimator's own ``score``, given the test fold's ``qid`` and
        ``sample_weight``. A scikit-learn scorer name or callable ``scorer(estimator, X, y)``
        sees no queries: it scores the test fold's samples as one set (after fits on
        several queries, one :class:`OneQueryWarning` per ``fit`` says so).
    refit : bool, default True
        Fit the estimator on all the data at ``C_`` (``best_estimator_``), which
        ``decision_function``, ``predict`` and ``score`` then use; with False they are absent
        and only the cross-validation's attributes are set.
    n_jobs : int, default None
        Folds run in parallel (joblib; None: one at a time, -1: all processors).
    warm_path : bool, default False
        Walk each fold's grid warm-started: every fit after the first starts from the working
        set of the fit at the C before. False fits every C from nothing, as ``GridSearchCV``.
"""

_CV_RULE = """
    Within a fold, one estimator fits the grid from the smallest C to the largest. With
    ``warm_path=True`` every fit after the first starts from the working set of the one before
    (the same training data) and stops by the same rule (``tol``) as a fit from nothing, so its
    primal objective is the cold fit's within ``tol`` (tested). Its w is not the cold fit's,
    though (both lie within sqrt(2 tol) of the optimum, which is far in direction when C is
    small and w short), so test scores, and on a flat curve the chosen C, can differ from
    ``GridSearchCV``'s: on the 1797 digits in queries of 60, five folds and C from 0.01 to
    100, the warm path ran 10 % fewer cutting-plane iterations and chose C = 10 where the
    cold fits chose 100 (mean AP 0.96902 against 0.96896). Hence the default, ``False``: the
    same fits as ``GridSearchCV``. The score of a C is the mean of its fold scores
    (unweighted, as ``GridSearchCV``).

    **Choosing C on a flat curve.** ``C_`` is the C of the highest mean score; among C of equal
    mean score (a flat curve, often where every C ranks the test queries alike) the
    *smallest*, the most regularised. That is ``GridSearchCV``'s choice over the same
    ascending grid (its first best, ``rank_test_score`` ranked with ``method="min"``), so the
    two agree in ``C_``, ``best_score_`` and ``cv_results_``. There is no tolerance: a mean
    higher by any amount wins. For a one-standard-error rule, read ``cv_results_``
    (``mean_test_score``, ``std_test_score``) and refit at the C it picks.

    Without ``qid`` every fit and score ranks all its samples as one ranking, quietly (as
    with one id for every sample). ``groups`` only splits: the bags of one ranking, say, kept
    whole in the folds while the loss stays one ranking's. Queries without a relevant
    sample are left out of the folds' fits quietly; the refit's :class:`EmptyQueryWarning`
    says how many of the whole data's.
"""

_CV_ATTRIBUTES = """
    Attributes
    ----------
    C_ : float
        The chosen C: that of the highest mean test score, the smallest among equals. At an
        edge of the grid (the highest C, or the lowest scoring above the next) a
        :class:`GridEdgeWarning` says that a C beyond it may score higher.
    Cs_ : ndarray of shape (n_Cs,)
        The grid, ascending.
    scores_ : ndarray of shape (n_folds, n_Cs)
        The test score of every fold and C.
    cv_results_ : dict of ndarray
        As ``GridSearchCV``'s: ``params``, ``param_C``, ``split{k}_test_score``,
        ``mean_test_score``, ``std_test_score`` and ``rank_test_score`` (1: the best).
    best_index_ : int
        Index of ``C_`` in ``Cs_`` and ``cv_results_``.
    best_score_ : float
        Mean test score at ``C_``.
    n_iter_ : ndarray of shape (n_folds, n_Cs)
        Cutting-plane iterations of every fold's fit at every C.
    primal_path_ : ndarray of shape (n_folds, n_Cs)
        The primal objective each of those fits reached.
    n_splits_ : int
        The number of folds.
    classes_ : ndarray of shape (2,)
        The labels; the second is the relevant one.
    best_estimator_ : estimator
        The estimator fitted on all the data at ``C_`` (``refit=True`` only).
    coef_ : ndarray of shape (n_features,)
        Its weights (``refit=True`` only).
    n_skipped_queries_ : int
        Its training queries left out for want of a relevant sample (``refit=True`` only).
    n_features_in_ : int
        Features seen in ``fit``.
    feature_names_in_ : ndarray of str
        Their names, when X had string column names.
"""

_CV_WARNS = """
    Warns
    -----
    GridEdgeWarning
        From ``fit``, when ``C_`` is the highest C of ``Cs``, or the lowest scoring above the
        next: the best C may lie beyond the grid, which ``Cs`` then should widen.
"""

_PASSED_DOC = """
    tol, max_iter, prune_after, solver, empty
        As the estimator's, for every fit (its defaults: ``solver`` is "dual-cd" for
        ``BinarySVMCV``, "multi-cut" for the others).
"""


class APSVMCV(_SVMCV):
    __doc__ = """:class:`APSVM` with C chosen by cross-validation of mean AP.
""" + _CV_RULE + """
    Parameters
    ----------""" + _CV_DOC + """    algorithm : str, default "auto"
        As :class:`APSVM`'s.""" + _PASSED_DOC + _CV_ATTRIBUTES + _CV_WARNS

    _estimator = APSVM
    _base_params = ("algorithm", "tol", "max_iter", "prune_after", "solver", "empty")
    _parameter_constraints = _constraints(APSVM, _base_params)

    def __init__(self, Cs=5, *, cv=None, scoring=None, refit=True, n_jobs=None,
                 warm_path=False, algorithm="auto", tol=1e-3, max_iter=1000, prune_after=50,
                 solver="multi-cut", empty="skip"):
        self.Cs = Cs
        self.cv = cv
        self.scoring = scoring
        self.refit = refit
        self.n_jobs = n_jobs
        self.warm_path = warm_path
        self.algorithm = algorithm
        self.tol = tol
        self.max_iter = max_iter
        self.prune_after = prune_after
        self.solver = solver
        self.empty = empty


class NDCGSVMCV(_SVMCV):
    __doc__ = """:class:`NDCGSVM` with C chosen by cross-validation of mean NDCG (its own
    discount).
""" + _CV_RULE + """
    Parameters
    ----------""" + _CV_DOC + """    algorithm : str, default "auto"
        As :class:`NDCGSVM`'s.
    discount : array-like, optional
        As :class:`NDCGSVM`'s (the fits' loss and the scores' metric).""" + _PASSED_DOC \
        + _CV_ATTRIBUTES + _CV_WARNS

    _estimator = NDCGSVM
    _base_params = ("algorithm", "discount", "tol", "max_iter", "prune_after", "solver", "empty")
    _parameter_constraints = _constraints(NDCGSVM, _base_params)

    def __init__(self, Cs=5, *, cv=None, scoring=None, refit=True, n_jobs=None,
                 warm_path=False, algorithm="auto", discount=None, tol=1e-3, max_iter=1000,
                 prune_after=50, solver="multi-cut", empty="skip"):
        self.Cs = Cs
        self.cv = cv
        self.scoring = scoring
        self.refit = refit
        self.n_jobs = n_jobs
        self.warm_path = warm_path
        self.algorithm = algorithm
        self.discount = discount
        self.tol = tol
        self.max_iter = max_iter
        self.prune_after = prune_after
        self.solver = solver
        self.empty = empty


class BinarySVMCV(_SVMCV):
    __doc__ = """:class:`BinarySVM` with C chosen by cross-validation of mean AP (its
    ``score``).
""" + _CV_RULE + """
    Parameters
    ----------""" + _CV_DOC + """    J : float, optional
        As :class:`BinarySVM`'s (default N/P per query).
    intercept_scaling : float, default 1.0
        As :class:`BinarySVM`'s.""" + _PASSED_DOC + _CV_ATTRIBUTES + """    intercept_ : float
        The refitted bias (``refit=True`` only).
""" + _CV_WARNS

    _estimator = BinarySVM
    _base_params = ("J", "intercept_scaling", "tol", "max_iter", "prune_after", "solver", "empty")
    _parameter_constraints = _constraints(BinarySVM, _base_params)

    def __init__(self, Cs=5, *, cv=None, scoring=None, refit=True, n_jobs=None,
                 warm_path=False, J=None, intercept_scaling=1.0, tol=1e-3, max_iter=1000,
                 prune_after=50, solver="dual-cd", empty="skip"):
        self.Cs = Cs
        self.cv = cv
        self.scoring = scoring
        self.refit = refit
        self.n_jobs = n_jobs
        self.warm_path = warm_path
        self.J = J
        self.intercept_scaling = intercept_scaling
        self.tol = tol
        self.max_iter = max_iter
        self.prune_after = prune_after
        self.solver = solver
        self.empty = empty
