"""Weakly supervised rankers of Behl (2015): latent AP-SVM, latent SSVM and the latent binary SVM.

Each sample is a bag of candidate rows: ``fit(X, y, bags=..., h=None)`` takes the rows X
(M x d), one label per row (the rows of a bag share it) and the bag id of each row (passed like
scikit-learn's ``groups``; under metadata routing ``GridSearchCV`` with ``GroupKFold`` over the
bags hands each fold its rows' bags). ``h`` optionally marks, per row, the known row of its
bag (supervision): at most one per bag. A bag is scored by its best row; ``score`` is the AP of
the ranking of bags.

All three are trained by CCCP (``aprank.learn.cccp``) on a latent model of ``aprank.models``,
whose inner convex problems go to the 1-slack cutting plane. The first start is the
non-latent model on bag means (every bag scored by the mean of its rows); further starts
(``n_init``) begin at random directions of the same norm; the start of least objective is
kept.
"""
from __future__ import annotations

import warnings
from numbers import Real

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from aprank.learn._cccp import CCCPResult, cccp
from aprank.learn._checks import (
    NON_NEGATIVE,
    POSITIVE,
    POSITIVE_INT,
    NoBoolInterval,
    atomic_fit,
    relevance,
)
from aprank.learn._cutting_plane import cutting_plane
from aprank.learn._estimators import _COMMON_DOC_NO_QUERIES, _StructuredSVM
from aprank.learn._once import say_once
from aprank.losses import AveragePrecision, ZeroOne
from aprank.metrics import average_precision
from aprank.models import LatentBinaryModel, LatentRankingModel, RankingModel, bag_max, bag_means

__all__ = ["LatentAPSVM", "LatentSSVM", "LatentSVM"]


class _Latent(_StructuredSVM):
    """Shared by the latent estimators: bags, starts, CCCP, bag scores. No ``sample_weight``
    (the latent models have no weighting): passing one is a TypeError."""

    #: scores are bags' best rows and predict thresholds them at 0 (no ``threshold_``)
    _learns_threshold = False
    _parameter_constraints = {
        **{k: v for k, v in _StructuredSVM._parameter_constraints.items()
           if k not in ("empty", "warm_start")},
        "n_init": [POSITIVE_INT], "random_state": ["random_state"], "max_outer": [POSITIVE_INT],
        "carry_working_set": ["boolean"],
    }

    def __init__(self, C=1.0, *, n_init=1, random_state=None, tol=1e-3, max_iter=1000,
                 max_outer=50, prune_after=50, solver="ocas", verbose=False,
                 callback=None, carry_working_set=False):
        self.carry_working_set = carry_working_set
        self.n_init = n_init
        self.random_state = random_state
        self.max_outer = max_outer
        super().__init__(C, tol=tol, max_iter=max_iter, prune_after=prune_after, solver=solver,
                         empty="error",
                         verbose=verbose, warm_start=False, callback=callback)

    def _rows(self, n: int, bags, h):
        """(bags, h) checked against the n rows of the validated X (or of its scores)."""
        bags = np.arange(n) if bags is None else np.asarray(bags)
        if bags.shape != (n,):
            raise ValueError(f"bags must hold one bag id per row ({n}), got shape {bags.shape}")
        if bags.dtype.kind == "f":
            # as the latent kind's problem refuses them at fit, so prediction groups alike
            raise ValueError(f"bags[0] = {bags[0].item()!r} is not a bag id: bag ids are integers "
                             "or strings, not floats (pass bags.astype(int) for whole numbers)")
        if h is not None:
            h = np.asarray(h)
            if h.dtype != np.bool_ or h.shape != (n,):
                raise ValueError(f"h must be a bool mask with one entry per row ({n}) marking "
                                 f"the known row of its bag, got {h.dtype} of shape {h.shape}")
        return bags, h

    def _model(self, design, is_pos, bags, h):
        raise NotImplementedError

    def _init_model(self, design, is_pos, bags) -> RankingModel:
        """The non-latent model on bag means (same loss): its solution is the first start."""
        means, labels = bag_means(design, bags, is_pos)
        return RankingModel(means, labels, self._loss(), algorithm=self._algorithm())

    def _starts(self, design, is_pos, bags):
        """Start points of CCCP: the bag-means solution, then random directions."""
        init = cutting_plane(self._init_model(design, is_pos, bags), float(self.C), tol=self.tol,
                             max_iter=self.max_iter, prune_after=self.prune_after,
                             solver=self.solver).w
        rng = check_random_state(self.random_state)
        norm = max(float(np.linalg.norm(init)), 1e-3)
        starts = [init]
        for _ in range(self.n_init - 1):
            d = rng.standard_normal(design.shape[1])
            starts.append(d * norm / np.linalg.norm(d))
        return starts

    @atomic_fit
    def fit(self, X, y, bags=None, h=None):
        """Learn w from rows X, per-row labels y (one label per bag), the bag of each row
        (``bags``, default: every row its own bag) and optionally the known rows ``h`` (an
        (M,) bool mask, at most one True per bag)."""
        self._check_params()
        data = self._validate_fit(X, y, None)
        X, is_pos = data.X, data.is_pos
        bags, h = self._rows(X.shape[0], bags, h)
        design = self._design(X)
        model = self._model(design, is_pos, bags, h)
        if not model.has_choice:
            # nothing is latent: one convex problem, solved as the non-latent estimator does
            best = self._convex(model.latent(np.zeros(design.shape[1])))
            objectives = [best.objective]
        else:
            best, objectives = self._cccp(model, design, is_pos, bags)
        n = X.shape[1]
        if best.inner is not None:
            fitted = self._fitted(best.inner, n, data.classes)
        else:       # the best w is a start itself: no inner run produced it
            fitted = {"classes_": data.classes, "n_iter_": 0, "primal_": best.objective,
                      "dual_": np.nan, "gap_": np.nan, "history_": []}
        fitted["coef_"] = best.w[:n].copy()
        if self._has_intercept:
            fitted["intercept_"] = float(best.w[n] * self.intercept_scaling)
        self.__dict__.update(fitted, converged_=best.converged, n_outer_=best.n_outer,
                             objective_=best.objective, cccp_history_=best.history,
                             start_objectives_=objectives, train_h_=model.impute(best.w),
                             _fit_on_bags=bool(np.unique(bags).shape[0] < X.shape[0]))
        return self

    def _convex(self, completed) -> CCCPResult:
        res = cutting_plane(completed, float(self.C), tol=self.tol, max_iter=self.max_iter,
                            prune_after=self.prune_after, solver=self.solver)
        if not res.converged:
            warnings.warn(res.unconverged(type(self).__name__, self.tol), ConvergenceWarning)
        return CCCPResult(res.w, res.primal, res.converged, 1,
                          [{"outer": 1, "objective": res.primal, "inner_iterations": res.n_iter,
                            "inner_converged": res.converged}], res)

    def _cccp(self, model, design, is_pos, bags):
        """Every start's CCCP run: (the run of least objective, the objectives)."""
        options = {"tol": self.tol, "max_iter": self.max_iter, "prune_after": self.prune_after,
                   "solver": self.solver}
        best, objectives = None, []
        for w0 in self._starts(design, is_pos, bags):
            res = cccp(model, float(self.C), tol=self.tol, max_outer=self.max_outer, w0=w0,
                       inner=cutting_plane, inner_options=options, callback=self.callback,
                       carry_working_set=self.carry_working_set)
            objectives.append(res.objective)
            if best is None or res.objective < best.objective:
                best = res
        if not best.converged:
            warnings.warn(f"{type(self).__name__}: CCCP did not converge in {self.max_outer} outer "
                          "iterations", ConvergenceWarning)
        return best, objectives

    # --------------------------------------------------------------------------- prediction
    def bag_scores(self, X, bags=None):
        """(bag ids, sorted; scores): each bag scored by its best row."""
        scores = super().decision_function(X)    # X validated there: any array-like
        return bag_max(scores, self._rows(scores.shape[0], bags, None)[0])

    def decision_function(self, X, bags=None):
        """Per row, the score of its bag (its best row's w'x); without ``bags``, w'x of the row."""
        scores = super().decision_function(X)
        if bags is None:
            return scores
        bags = self._rows(scores.shape[0], bags, None)[0]
        _, best = bag_max(scores, bags)
        return best[np.unique(bags, return_inverse=True)[1].ravel()]

    def predict(self, X, bags=None):
        """Per row, the second class where its bag's score is above 0."""
        check_is_fitted(self)
        return self.classes_[(self.decision_function(X, bags) > 0).astype(int)]

    def score(self, X, y, bags=None):
        """AP of the ranking of bags by their scores (one label per bag; a label outside
        ``classes_`` is a ValueError). Without ``bags`` every row is its own bag; after a fit
        on bags of several rows a UserWarning says to pass them."""
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        if bags is None and getattr(self, "_fit_on_bags", False):
            # a scikit-learn search without metadata routing scores so: say it, as the rank
            # SVMs' score does for qid
            name = type(self).__name__
            route = ("pass bags= (each row's bag id); in a scikit-learn search, route it: "
                     "sklearn.set_config(enable_metadata_routing=True); "
                     "est.set_fit_request(bags=True).set_score_request(bags=True)")
            say_once(f"{name}.score got no bags, so every one of its {X.shape[0]} rows is a bag "
                     f"of its own, but {name} was fitted on bags of several rows: {route}",
                     UserWarning, ("score without bags", name),
                     in_search=f"{name}.score got no bags, so every row of a test fold is a bag "
                               f"of its own, but {name} was fitted on bags of several rows: "
                               + route)
        bags = self._rows(X.shape[0], bags, None)[0]
        y = np.asarray(y)
        if y.shape != (X.shape[0],):
            raise ValueError(f"y must hold one label per row ({X.shape[0]}), got shape {y.shape}")
        is_pos = relevance(y, self.classes_, X.shape[0], type(self).__name__)
        ids, scores = bag_max(np.asarray(self.decision_function(X)), bags)
        inverse = np.unique(bags, return_inverse=True)[1].ravel()
        relevant = np.zeros(ids.shape[0])
        np.maximum.at(relevant, inverse, is_pos.astype(float))
        return average_precision(relevant > 0, scores)


_LATENT_DOC = """
    n_init : int, default 1
        CCCP starts: the first from the non-latent model on bag means, the others from random
        directions of the same norm (``random_state``); the start of least objective is kept.
    random_state : int, RandomState or None
        Seeds the random starts.
    max_outer : int, default 50
        CCCP iterations per start (a ConvergenceWarning is raised when reached).
    carry_working_set : bool, default False
        Start each inner cutting plane (after a start's first) from the previous one's
        working set, its cuts re-evaluated at the new imputation (``aprank.learn.cccp``):
        fewer inner iterations, the same objectives and stopping rule.
"""

_LATENT_ATTRS = """    n_outer_ : int
        CCCP iterations of the kept start (``converged_``: whether its objective stopped
        decreasing).
    objective_ : float
        The objective at the returned w.
    start_objectives_ : list of float
        The objective of each start.
    cccp_history_ : list of dict
        Per outer iteration of the kept start, the objective at its w_t.
    train_h_ : ndarray of int
        Per training bag (sorted ids), the row chosen at the returned w.
"""

_COMMON_LATENT = _COMMON_DOC_NO_QUERIES.replace("""    warm_start : bool
        Reuse the previous fit: its working set when the data, queries, loss and constraints
        are the same (e.g. a path over C), else its weights as the starting point.
""", "").replace("""    callback : callable, optional
        Called in every cutting-plane iteration with a dict: the iteration's ``history_``
        entry plus ``w`` and ``result`` (the inference result, e.g. its ``ranks``). For
        diagnostics and figures; it must not modify what it receives.
""", """    callback : callable, optional
        Called after each CCCP iteration with its ``cccp_history_`` entry plus ``w``.
""")


class LatentAPSVM(_Latent):
    __doc__ = """Latent AP-SVM (Behl 2015, ch. 3, Algorithm 5): AP over bags with hidden rows.

    CCCP: impute each positive bag's row by its best score at w_t (Proposition 2), then solve
    the convex AP-SVM that results with the 1-slack cutting plane, whose most violated
    constraint is exact (``latent-ap``: every negative bag at its best row, Proposition 3, then
    exact AP inference on the bag scores). The objective never increases by more than ``tol``;
    stops when it decreases by less than ``tol``. With every bag's row known it is APSVM on
    those rows.

    Parameters
    ----------
    algorithm : str, default "qs"
        Exact AP inference algorithm for the ranking of bags.
""" + _LATENT_DOC + _COMMON_LATENT + _LATENT_ATTRS

    _parameter_constraints = {**_Latent._parameter_constraints, "algorithm": [str]}

    def __init__(self, C=1.0, *, algorithm="qs", n_init=1, random_state=None, tol=1e-3,
                 max_iter=1000, max_outer=50, prune_after=50, solver="ocas",
                 verbose=False, callback=None, carry_working_set=False):
        self.algorithm = algorithm
        super().__init__(C, n_init=n_init, random_state=random_state, tol=tol,
                         max_iter=max_iter, max_outer=max_outer, prune_after=prune_after,
                         solver=solver,
                         verbose=verbose, callback=callback,
                         carry_working_set=carry_working_set)

    def _loss(self):
        return AveragePrecision()

    def _model(self, design, is_pos, bags, h):
        return LatentRankingModel(design, is_pos, bags, h, "latent-ap",
                                  ranking_algorithm=self.algorithm)


class LatentSSVM(LatentAPSVM):
    __doc__ = """Latent SSVM with the AP loss (Behl 2015, sec. 2.7, appendix A).

    CCCP as :class:`LatentAPSVM`, but the constraint lets every bag's row vary in the wrong
    ranking and holds the ground truth at the negatives' rows least favourable to it (eq. A.1),
    a looser bound than latent AP-SVM's (Proposition 1). Its most violated constraint has no
    known exact algorithm: ``latent-greedy`` (appendix A) approximates it, scoring each
    candidate pattern by an assignment of bags to slots per side (kept from pattern to pattern
    by the dynamic Hungarian algorithm), so each cutting-plane step costs far more than latent
    AP-SVM's, and the inner cutting plane stops on an approximate slack.

    Parameters
    ----------
    algorithm : str, default "latent-greedy"
        Algorithm of the "latent-ssvm" loss ("latent-greedy", or "brute" for tiny data).
""" + _LATENT_DOC + _COMMON_LATENT + _LATENT_ATTRS

    def __init__(self, C=1.0, *, algorithm="latent-greedy", n_init=1, random_state=None,
                 tol=1e-3, max_iter=1000, max_outer=50, prune_after=50, solver="ocas",
                 verbose=False,
                 callback=None, carry_working_set=False):
        super().__init__(C, algorithm=algorithm, n_init=n_init, random_state=random_state,
                         tol=tol, max_iter=max_iter, max_outer=max_outer,
                         prune_after=prune_after, solver=solver, verbose=verbose,
                         callback=callback, carry_working_set=carry_working_set)

    def _algorithm(self):
        return "qs"     # the bag-means start is an AP-SVM; the latent kind's algorithm is ours

    def _model(self, design, is_pos, bags, h):
        return LatentRankingModel(design, is_pos, bags, h, "latent-ssvm",
                                  algorithm=self.algorithm)


class LatentSVM(_Latent):
    __doc__ = """Latent binary SVM (Felzenszwalb et al. 2010), the baseline of Behl (2015), sec. 4.

    CCCP: impute each positive bag's row by its best score at w_t, then train the
    class-weighted hinge-loss SVM (the 1-slack structural SVM with the weighted 0-1 loss, as
    :class:`BinarySVM`) on those rows against every row of the negative bags.

    Parameters
    ----------
    J : float, optional
        Weight of a positive; default N / P (N negative rows, P positive bags).
    c : float in [0, 1), default 0.0
        Robustness: in each CCCP iteration ignore the fraction c of the negative rows that score
        highest at w_t (the most confusing), keeping at least one row per negative bag; 0 is
        the standard latent SVM. With c > 0 the problem changes between iterations, so the
        objective need not decrease monotonically (the best start is still kept).
    intercept_scaling : float, default 1.0
        Value of the constant feature carrying the (regularised) bias.
""" + _LATENT_DOC + _COMMON_LATENT + _LATENT_ATTRS + """    intercept_ : float
        The bias.
"""

    _has_intercept = True
    _parameter_constraints = {**_Latent._parameter_constraints, "J": [NON_NEGATIVE, None],
                              "c": [NoBoolInterval(Real, 0, 1, closed="left")],
                              "intercept_scaling": [POSITIVE]}

    def __init__(self, C=1.0, *, J=None, c=0.0, intercept_scaling=1.0, n_init=1,
                 random_state=None, tol=1e-3, max_iter=1000, max_outer=50, prune_after=50,
                 solver="ocas",
                 verbose=False, callback=None, carry_working_set=False):
        self.J = J
        self.c = c
        self.intercept_scaling = intercept_scaling
        super().__init__(C, n_init=n_init, random_state=random_state, tol=tol,
                         max_iter=max_iter, max_outer=max_outer, prune_after=prune_after,
                         solver=solver,
                         verbose=verbose, callback=callback,
                         carry_working_set=carry_working_set)

    def _loss(self):
        return ZeroOne(self.J)

    def _algorithm(self):
        return "zero-one"

    def _model(self, design, is_pos, bags, h):
        return LatentBinaryModel(design, is_pos, bags, h, J=self.J, robust=float(self.c))
