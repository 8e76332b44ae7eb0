"""Structured SVM estimators with the scikit-learn API.

Each one validates its input once, builds an ``aprank.models.RankingModel`` with its loss and
hands it to the same 1-slack cutting-plane learner (``_cutting_plane.py``), so iteration counts
and inference times are comparable across them:

* :class:`BinarySVM` -- weighted 0-1 loss (Dokania et al. 2014, eq. 7), with a bias: a
  class-weighted hinge-loss SVM.
* :class:`APSVM` -- AP loss (Yue et al. 2007; Mohapatra et al. 2014 and 2018).
* :class:`NDCGSVM` -- NDCG loss (Mohapatra et al. 2018).
* :class:`APSVMAppx` -- Mohapatra et al. (2014), section 3.3: a BinarySVM picks easy samples, the AP
  loss is optimised over the rest while the easiest are kept correctly classified.

The rank SVMs score samples by w'x: the ranking is what they learn (a bias would cancel in
their joint feature), so their ``decision_function`` is w'x less ``threshold_``, a threshold
chosen on the training scores (``_ranker.break_even_threshold``), and ``predict`` marks it
above 0; ``score`` is the mean AP (the mean NDCG for NDCGSVM). The threshold, the refused
keywords, the state-restoring fit and the warnings are those of every ranker
(:class:`~aprank.learn.BaseRanker`, ``_ranker.py``).

Parameters are declared (``_parameter_constraints``) and checked before ``fit`` reads data; a
fit that fails or is interrupted leaves the estimator as it was (``_checks.atomic_fit``).
``sample_weight`` is a query weight for the rank SVMs and a sample weight for BinarySVM
(``aprank.models.RankingModel``); ``score`` refuses labels outside ``classes_``. Queries
without a relevant sample are left out of ``fit`` and ``score`` by default (``empty``); a fit
without ``qid`` is one ranking, and a score without ``qid`` after a fit on several queries
says that it drops them (both in ``_query_warnings.py``).
"""
from __future__ import annotations

import copy
import hashlib
import warnings
from numbers import Real
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import average_precision_score
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data
from tqdm.auto import tqdm

from aprank.inference import resolve
from aprank.learn._checks import (
    NON_NEGATIVE,
    NON_NEGATIVE_INT,
    POSITIVE,
    POSITIVE_INT,
    NoBoolInterval,
    StrOptions,
    atomic_fit,
    positive_weights,
)
from aprank.learn._cutting_plane import cutting_plane
from aprank.learn._ranker import BaseRanker, break_even_threshold
from aprank.learn._solvers import SOLVER_NAMES
from aprank.losses import NDCG, AveragePrecision, ZeroOne
from aprank.metrics import average_precision, ndcg
from aprank.models import Constraint, RankingModel, StructuredModel, digest, query_weights
from aprank.validation import as_query_groups, check_frame_columns, check_qid

__all__ = ["BinarySVM", "APSVM", "NDCGSVM", "APSVMAppx"]


def _check_scale(X) -> None:
    """ValueError for finite features too large to learn from.

    The cutting plane's QP holds inner products of joint features, sums of up to n * d
    products of two features: past the float64 range they overflow to inf and NaN, and a fit
    would end in a NaN gap or fail far from the cause."""
    values = X.data if sp.issparse(X) else X
    largest = float(np.abs(values).max(initial=0.0))
    with np.errstate(over="ignore"):
        bound = np.float64(largest) ** 2 * max(X.shape[0] * X.shape[1], 1)
    if not np.isfinite(bound):
        raise ValueError(f"X is too large to learn from: its largest magnitude is {largest:.3g}, "
                         "and inner products of the joint features would overflow float64; "
                         "rescale X (e.g. with sklearn.preprocessing.MaxAbsScaler or "
                         "StandardScaler)")


def _n_with_positives(is_pos, qid, sample_weight) -> float:
    """The samples of the queries with a relevant sample, weighted: BinarySVM's n (the other
    queries are left out, or refused under ``empty="error"``)."""
    order, offsets, _ = as_query_groups(qid, is_pos.shape[0])
    grouped = is_pos if order is None else is_pos[order]
    has = np.logical_or.reduceat(grouped, offsets[:-1]) if grouped.shape[0] else grouped
    keep = np.repeat(has, np.diff(offsets))
    if order is not None:
        keep = keep[np.argsort(order)]
    return float(keep.sum() if sample_weight is None else sample_weight[keep].sum())


class _HardOnly(StructuredModel):
    """A model with no loss term left (APSVMAppx when every difficult sample is of one class):
    only the hard constraints shape w."""

    def __init__(self, dim: int):
        self.dim = dim

    @property
    def size_joint_feature(self) -> int:
        return self.dim

    def most_violated(self, w) -> Constraint:
        return Constraint(np.zeros(self.dim), 0.0, 0.0)

    def fingerprint(self) -> str:
        return hashlib.sha1(f"hard-only|{self.dim}".encode()).hexdigest()


class _FitData(NamedTuple):
    """The validated training data (samples of weight 0 dropped)."""

    X: object                     # (n, d) float64 array or CSR matrix
    is_pos: np.ndarray            # (n,) bool: the second class
    qid: np.ndarray | None
    sample_weight: np.ndarray | None   # None: unweighted (or every weight equal)
    classes: np.ndarray
    kept: np.ndarray | None    # mask of the samples kept among those given (None: all)


class _StructuredSVM(BaseRanker):
    """Shared fit / decision_function / score. Subclasses define the loss and the algorithm.

    ``fit`` and ``score`` take ``sample_weight``: for the ranking losses a query weight (one
    value per query; the samples of a query must agree), for the 0-1 loss a sample weight; see
    ``aprank.models.RankingModel``. Zero weights drop samples."""

    _has_intercept = False
    #: the rank SVMs learn no bias: ``decision_function`` subtracts ``threshold_``, learnt
    #: on the training scores, so that ``predict`` (above 0) means something (BinarySVM's
    #: bias makes its threshold 0)
    _learns_threshold = True
    _takes_empty = True

    _parameter_constraints: dict = {
        "C": [POSITIVE],
        "tol": [POSITIVE],
        "max_iter": [POSITIVE_INT],
        "prune_after": [NON_NEGATIVE_INT],
        "solver": [StrOptions(SOLVER_NAMES)],
        "empty": [StrOptions({"error", "skip"})],
        "verbose": ["verbose"],
        "warm_start": ["boolean"],
        "callback": [callable, None],
    }

    def __init__(self, C=1.0, *, tol=1e-3, max_iter=1000, prune_after=50, solver="ocas",
                 empty="skip",
                 verbose=False, warm_start=False, callback=None):
        self.C = C
        self.tol = tol
        self.max_iter = max_iter
        self.prune_after = prune_after
        self.solver = solver
        self.empty = empty
        self.verbose = verbose
        self.warm_start = warm_start
        self.callback = callback

    def _loss(self):
        raise NotImplementedError

    def _algorithm(self) -> str:
        return self.algorithm

    # --------------------------------------------------------------------------- validation
    def _check_params(self):
        """What ``_parameter_constraints`` cannot say: the loss's own parameters, and whether
        the algorithm exists (ValueError) and serves the loss (NotImplementedError). Returns
        the resolved registry entry, which the fit's model then holds (resolved once)."""
        return resolve(self._loss(), self._algorithm())

    def _validate_fit(self, X, y, qid, sample_weight=None) -> _FitData:
        """Validate the training data; only ``validate_data``'s ``n_features_in_`` (and feature
        names) are set on self, and ``atomic_fit`` takes them back if the fit fails."""
        check_frame_columns(X)
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64,
                             ensure_all_finite=True, ensure_min_samples=1)
        check_classification_targets(y)
        _check_scale(X)
        qid = check_qid(qid, X.shape[0])
        sample_weight, kept = positive_weights(sample_weight, X)
        if kept is not None:
            X, y = X[kept], y[kept]
            qid = None if qid is None else qid[kept]
        classes = np.unique(y)
        self._take_classes(classes)
        return _FitData(X, y == classes[1], qid, sample_weight, classes, kept)

    def _design(self, X):
        """X with the constant bias column appended (when the model has a bias)."""
        if not self._has_intercept:
            return X
        ones = np.full((X.shape[0], 1), self.intercept_scaling)
        return sp.hstack([X, ones], format="csr") if sp.issparse(X) else np.hstack([X, ones])

    # --------------------------------------------------------------------------- training
    def _model(self, X, is_pos, qid, empty=None, sample_weight=None,
               algorithm=None) -> RankingModel:
        """The model of design matrix X (labels and queries validated here, once per fit);
        ``algorithm``: the entry ``_check_params`` resolved (else the parameter's name)."""
        return RankingModel(X, is_pos, self._loss(), qid=qid,
                            algorithm=self._algorithm() if algorithm is None else algorithm,
                            empty=self.empty if empty is None else empty,
                            sample_weight=sample_weight)

    def _slack_C(self, model) -> float:
        """The weight of the model's slack xi in the learner's 1/2 ||w||^2 + C xi: ``C``,
        which for the rank SVMs weighs the mean loss over queries."""
        return float(self.C)

    def _train(self, model: StructuredModel, hard=None, upper=None):
        """Run the cutting plane on ``model``: (CuttingPlaneResult, the warm-start state to
        store with the fitted attributes). Nothing of self changes here."""
        working_set, w0, fingerprint = None, None, None
        if self.warm_start:
            # the working set's constraints hold only for the same data, structure, loss and
            # hard constraints, which the fingerprint covers (computed only when needed)
            fingerprint = digest(model.fingerprint(), hard, upper)
            if getattr(self, "_fingerprint", None) == fingerprint:
                # a copy: the learner grows it, and an interrupted fit must not change ours
                working_set = copy.deepcopy(self._working_set)
            elif (getattr(self, "_w", None) is not None
                  and self._w.shape[0] == model.size_joint_feature):
                w0 = self._w
        bar = (tqdm(total=self.max_iter, desc=type(self).__name__, leave=False) if self.verbose
               else None)
        user_callback = self.callback

        def callback(info):
            if bar is not None:
                bar.update(1)
                bar.set_postfix(gap=f"{info['gap']:.2e}", violation=f"{info['violation']:.3g}")
            if user_callback is not None:
                user_callback(info)

        try:
            res = cutting_plane(model, self._slack_C(model), tol=self.tol, max_iter=self.max_iter,
                                prune_after=self.prune_after, solver=self.solver, hard=hard, w0=w0,
                                working_set=working_set, upper=upper, callback=callback)
        finally:
            if bar is not None:
                bar.close()
        if not res.converged:
            warnings.warn(res.unconverged(type(self).__name__, self.tol), ConvergenceWarning)
        return res, {"_working_set": res.working_set, "_fingerprint": fingerprint, "_w": res.w}

    def _fitted(self, res, n_features, classes, X=None, is_pos=None, sample_weight=None) -> dict:
        """The fitted attributes of a cutting-plane result (assigned by the caller, at the end
        of its fit); the training samples X (without bias column), is_pos and sample_weight
        give the rank SVMs' ``threshold_`` (``break_even_threshold``)."""
        fitted = {"classes_": classes, "coef_": res.w[:n_features].copy(),
                  "n_iter_": res.n_iter, "converged_": res.converged, "primal_": res.primal,
                  "dual_": res.dual, "gap_": res.gap, "history_": res.history}
        if self._has_intercept:
            fitted["intercept_"] = float(res.w[n_features] * self.intercept_scaling)
        if self._learns_threshold and X is not None:
            scores = np.asarray(X @ fitted["coef_"]).ravel() + fitted.get("intercept_", 0.0)
            fitted["threshold_"] = break_even_threshold(scores, is_pos, sample_weight)
        return fitted

    @atomic_fit
    def fit(self, X, y, qid=None, sample_weight=None, **unexpected):
        """Learn w from the samples, their binary labels and, optionally, their queries.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples (dense or CSR).
        y : array-like of shape (n_samples,)
            Binary labels; the second of the sorted two is the relevant class.
        qid : array-like of shape (n_samples,), optional
            Query ids: the loss is the mean over queries of each query's loss. Without,
            all the samples form one ranking (the same fit as one id for all).
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights, as the class docstring says (a query weight for the rank
            SVMs); zero drops a sample.
        **unexpected
            Refused with a TypeError naming the keyword (``groups=``: use qid=).

        Returns
        -------
        self
            The fitted estimator.
        """
        self._refuse_keywords(unexpected)
        algorithm = self._check_params()
        data = self._validate_fit(X, y, qid, sample_weight)
        model = self._model(self._design(data.X), data.is_pos, data.qid,
                            sample_weight=data.sample_weight, algorithm=algorithm)
        used = model.problem.used
        n_skipped = self._say_skipped(int(used.shape[0] - np.count_nonzero(used)), used.shape[0])
        res, warm = self._train(model)
        self.__dict__.update(warm, **self._fitted(res, data.X.shape[1], data.classes, data.X,
                                                  data.is_pos, data.sample_weight),
                             n_skipped_queries_=n_skipped,
                             _n_fit_queries=used.shape[0])   # the model grouped them
        return self

    # --------------------------------------------------------------------------- prediction
    def decision_function(self, X):
        """Scores w'x (+ bias), less ``threshold_`` for the rank SVMs: rank samples by them,
        highest first; ``predict`` marks those above 0."""
        check_is_fitted(self)
        check_frame_columns(X)
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        scores = np.asarray(X @ self.coef_).ravel()
        if self._has_intercept:
            scores = scores + self.intercept_
        # a constant shift: the ranking (and every metric of it) is w'x's
        return scores - self.threshold_ if self._learns_threshold else scores

    def _metric(self, relevant, scores, qid, per_query=False):
        """The metric ``score`` reports (per query with ``per_query``: (ids, values))."""
        return average_precision(relevant, scores, qid=qid, empty=self.empty,
                                 per_query=per_query)

    def _weighted_metric(self, relevant, scores, qid, sample_weight):
        """The metric under query weights: their weighted mean of the per-query values."""
        order, offsets, ids = as_query_groups(qid, scores.shape[0])
        weights = query_weights(sample_weight, order, offsets, ids)
        got, values = self._metric(relevant, scores, qid, per_query=True)
        position = {q: k for k, q in enumerate([0] if ids is None else ids.tolist())}
        return float(np.average(values, weights=weights[[position[q] for q in got.tolist()]]))

    def score(self, X, y, qid=None, sample_weight=None):
        """Mean average precision (NDCGSVM: mean NDCG), per query; ties as scikit-learn.

        Queries without a relevant sample are left out of the mean (``empty="skip"``, the
        default; with "error" they raise): AP is undefined there, as in LightGBM's and
        XGBoost's evaluation. An :class:`~aprank.learn.EmptyQueryWarning` names them;
        :mod:`aprank.metrics` gives the same number with ``empty="skip"`` (by default it
        raises, as this estimator does with ``empty="error"``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples.
        y : array-like of shape (n_samples,)
            Their labels (of ``classes_``).
        qid : array-like of shape (n_samples,), optional
            Query ids: the mean over queries. Without, the samples form one ranking; after
            a fit on several queries that drops them (a scikit-learn search without metadata
            routing scores so), which a :class:`~aprank.learn.OneQueryWarning` says.
        sample_weight : array-like of shape (n_samples,), optional
            Weights as in ``fit``: the mean weighted likewise; zero drops a sample.

        Returns
        -------
        float
            The mean metric.
        """
        scores, relevant, qid = self._scored(X, y, qid)
        sample_weight, kept = positive_weights(sample_weight, scores)
        if kept is not None:
            relevant, scores = relevant[kept], scores[kept]
            qid = None if qid is None else qid[kept]
        if sample_weight is None:
            return self._metric(relevant, scores, qid)
        return self._weighted_metric(relevant, scores, qid, sample_weight)


#: the ``empty`` parameter of the estimators that take qid (the others remove it)
_EMPTY_DOC = """    empty : {"skip", "error"}, default "skip"
        A query without a relevant sample, where AP and NDCG are undefined: left out of
        training (counted in ``n_skipped_queries_`` and said in one
        :class:`aprank.learn.EmptyQueryWarning` per fit) and of ``score`` (a mean over the
        queries that have one), as LightGBM and XGBoost do; or, with "error", a ValueError
        naming it.
"""
#: the fitted attribute that goes with ``empty``
_SKIPPED_DOC = """    n_skipped_queries_ : int
        Training queries left out for want of a relevant sample (``empty="skip"``).
"""

#: the first line of the primal objective's entry in _COMMON_DOC, which BinarySVM words its own
_PRIMAL_DOC = ("        Final primal objective 1/2||w||^2 + C xi (xi from exact inference at the "
               "final w),")
_COMMON_DOC: str = """
    C : float, default 1.0
        Weight of the slack against 1/2 ||w||^2.
    tol : float, default 1e-3
        Stop when the most violated constraint exceeds the working-set slack by at most tol
        and the primal-dual gap is at most tol (with OCAS: when its best point's gap is at
        most min(1, C) tol, which is the same pair of tests at a working-set optimum).
    max_iter : int, default 1000
        Cutting-plane iterations (a ConvergenceWarning is raised when reached).
    prune_after : int, default 50
        Drop working-set constraints inactive for this many iterations in a row.
    solver : {"ocas", "cutting-plane", "multi-cut", "dual-cd"}, default "ocas"
        The learner: the plain 1-slack cutting plane, OCAS (each cut sought between the
        best point so far and the working set's optimum; the same objective, tol and gap,
        fewer iterations at large C), OCAS with the cut split over blocks of queries (AP,
        NDCG) or samples (0-1 loss), each with its own slack (far fewer iterations where the
        risk splits; as OCAS on one query), or, for the 0-1 loss, dual coordinate descent
        over one multiplier per sample (liblinear's algorithm, the same objective, tol and
        gap), handing over to OCAS where it converges slowly (large C); for the other losses
        "dual-cd" is OCAS. Or a solver of yours, registered with
        :func:`aprank.learn.register_solver`. See :func:`aprank.learn.cutting_plane`.
""" + _EMPTY_DOC + """    verbose : bool
        Show a tqdm progress bar with the gap.
    warm_start : bool
        Reuse the previous fit: its working set when the data, queries, loss and constraints
        are the same (e.g. a path over C), else its weights as the starting point.
    callback : callable, optional
        Called in every cutting-plane iteration with a dict: the iteration's ``history_``
        entry plus ``w`` and ``result`` (the inference result, e.g. its ``ranks``). For
        diagnostics and figures; it must not modify what it receives.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        The weights.
    n_iter_ : int
        Iterations run.
    converged_ : bool
        Whether the stopping rule was met (else a ``ConvergenceWarning`` said why the fit
        stopped: ``max_iter``, or a gap that stood still for 50 iterations, where ``tol`` is
        below what the fit resolves at this C).
    primal_, dual_, gap_ : float
        Final primal objective 1/2||w||^2 + C xi (xi from exact inference at the final w),
        dual objective of the working set, and their difference.
    history_ : list of dict
        One per iteration: primal, dual, gap, violation (exact slack), working_slack,
        n_constraints, inference_seconds, qp_seconds, n_last_rank (negatives at rank P+1),
        cut_seconds (the products X w and X'c and the cut's assembly).
""" + _SKIPPED_DOC


#: the rank SVMs' threshold
_THRESHOLD_DOC = """    threshold_ : float
        ``predict``'s threshold on w'x (+ b): the break-even point of the training ranking
        (as many training samples score above it as are relevant, weighted by
        ``sample_weight``; its precision equals its recall there), midway between the scores
        on either side. The rank SVMs learn a ranking and no bias, so 0 means nothing to
        them: ``decision_function`` is w'x (+ b) less ``threshold_`` (the ranking unchanged),
        and ``predict`` marks where it is above 0, as scikit-learn's classifiers do.
"""

#: the rank SVMs' parameters: their default learner is multi-cut OCAS
#: _COMMON_DOC without the entries of the estimators with queries (empty=, n_skipped_queries_)
_COMMON_DOC_NO_QUERIES = _COMMON_DOC.replace(_EMPTY_DOC, "").replace(_SKIPPED_DOC, "")
_RANK_COMMON_DOC = _COMMON_DOC.replace(
    '"dual-cd"}, default "ocas"', '"dual-cd"}, default "multi-cut"').replace(
    '"dual-cd" is OCAS. See',
    '"dual-cd" is OCAS. "multi-cut" is the rank SVMs\' default: on the fit\n'
    '        benchmark it needs the fewest iterations at C >= 100, at a little more time\n'
    '        than OCAS at small C; on one query it is OCAS (``docs/learning.md`` has the\n'
    '        figures).\n        See') + _THRESHOLD_DOC


class BinarySVM(_StructuredSVM):
    __doc__ = """Binary structural SVM with the weighted 0-1 loss (Dokania et al. 2014, eq. 7) and a
    bias.

    It minimises 1/2 ||w||^2 + C sum_i a_i max(0, 1 - s_i (w'x_i + b)), with s_i = +1 for the
    relevant class and -1 for the other, and per-sample weights a_i that sum to n, the number
    of training samples: a_i = n v_i / (J P + N), v_i = J for a positive and 1 for a negative.
    At the default J = N / P that is a_i = n / (2 P) for a positive and n / (2 N) for a
    negative, scikit-learn's ``class_weight="balanced"``: ``BinarySVM(C)`` solves the problem
    of ``LinearSVC(C=C, loss="hinge", class_weight="balanced", intercept_scaling=1)``
    (intercept_scaling alike; both regularise the bias), so C means what it means there and
    in ``LogisticRegression``. This is the 1-slack structural SVM of the weighted 0-1 loss at
    C n: the rank SVMs' C weighs a loss normalised to [0, 1], BinarySVM's a sum over samples.

    With qid, J, P and N are per query, and each query's weights a_i sum to n / Q (Q queries
    used): the queries weigh alike, as in the loss. Queries left out (``empty="skip"``) do
    not count in n.

    Besides the rank SVMs' cutting planes it has liblinear's dual coordinate descent
    (``solver="dual-cd"``, the default; ``docs/learning.md``), which stops as liblinear does.

    ``sample_weight`` (fit and score) weighs samples: a weight scales the sample's hinge term,
    and n, J P + N and the default J = N / P count weighted samples, so without qid (or within a
    query) weight 2 is the sample entered twice. With qid, each query counts with the mean
    weight of its samples: weights constant within queries are query weights, as for the rank
    SVMs. ``score`` is AP with the weights as sample counts, per query, in the same mean.
    ``predict`` is the second class where ``decision_function`` is above 0 (the learnt bias).

    Parameters
    ----------
    J : float, optional
        Weight of a positive; default N/P per query.
    intercept_scaling : float, default 1.0
        Value of the constant feature carrying the (regularised) bias.
""" + _COMMON_DOC.replace('"dual-cd"}, default "ocas"', '"dual-cd"}, default "dual-cd"').replace(
        """    C : float, default 1.0
        Weight of the slack against 1/2 ||w||^2.
""", """    C : float, default 1.0
        Weight of the sum of the samples' weighted hinges against 1/2 ||w||^2: a per-sample
        C, LinearSVC's (see above).
""").replace(_PRIMAL_DOC, """        Final primal objective 1/2||w||^2 + C sum_i a_i hinge_i (the
        0-1 loss's exact slack xi at the final w is that sum over n),""")

    _has_intercept = True
    _learns_threshold = False
    _parameter_constraints = {**_StructuredSVM._parameter_constraints,
                              "J": [NON_NEGATIVE, None], "intercept_scaling": [POSITIVE]}

    def __init__(self, C=1.0, *, J=None, intercept_scaling=1.0, tol=1e-3, max_iter=1000,
                 prune_after=50, solver="dual-cd", empty="skip", verbose=False,
                 warm_start=False,
                 callback=None):
        self.J = J
        self.intercept_scaling = intercept_scaling
        super().__init__(C, tol=tol, max_iter=max_iter, prune_after=prune_after, solver=solver,
                         empty=empty,
                         verbose=verbose, warm_start=warm_start, callback=callback)

    def _loss(self):
        return ZeroOne(self.J)

    def _slack_C(self, model) -> float:
        """C n: the model's slack xi is the weighted hinges' sum over n (their weights sum
        to 1 in the model), so C n xi is C times the sum of the a_i-weighted hinges."""
        return float(self.C) * model.n_samples_used

    def _algorithm(self):
        return "zero-one"

    def _weighted_metric(self, relevant, scores, qid, sample_weight):
        """Per-sample weights, as in ``fit``: each query's AP with the weights as sample counts
        (scikit-learn's ``average_precision_score``, whose ties are ``ties="sklearn"``), then
        the queries' mean weighted by the mean weight of their samples."""
        order, offsets, ids = as_query_groups(qid, scores.shape[0])
        values, weights = [], []
        for q in range(offsets.shape[0] - 1):
            rows = (slice(offsets[q], offsets[q + 1]) if order is None
                    else order[offsets[q]:offsets[q + 1]])
            if relevant[rows].any():
                values.append(average_precision_score(relevant[rows], scores[rows],
                                                      sample_weight=sample_weight[rows]))
                weights.append(sample_weight[rows].mean())
            elif self.empty == "error":
                where = "the input" if ids is None else f"query {ids[q:q + 1].tolist()[0]!r}"
                raise ValueError(f"{where} has no relevant sample of positive weight, so AP is "
                                 "undefined; pass empty='skip' to leave it out")
        if not values:
            raise ValueError("no query has a relevant sample of positive weight")
        return float(np.average(values, weights=weights))


class APSVM(_StructuredSVM):
    __doc__ = """Rank SVM optimising average precision (Yue et al. 2007).

    ``sample_weight`` (fit and score) is a query weight: constant within each query, it scales
    the query's loss and joint feature in the mean over queries (weight 2 is the query entered
    twice; zero leaves a sample out). ``score`` is then the weighted mean of per-query AP.

    Parameters
    ----------
    algorithm : str, default "auto"
        Exact AP inference algorithm from ``aprank.algorithms()``: all give the same w
        ("auto" runs "qs", the fastest exact kernel).
""" + _RANK_COMMON_DOC

    _parameter_constraints = {**_StructuredSVM._parameter_constraints, "algorithm": [str]}

    def __init__(self, C=1.0, *, algorithm="auto", tol=1e-3, max_iter=1000, prune_after=50,
                 solver="multi-cut",
                 empty="skip", verbose=False, warm_start=False, callback=None):
        self.algorithm = algorithm
        super().__init__(C, tol=tol, max_iter=max_iter, prune_after=prune_after, solver=solver,
                         empty=empty,
                         verbose=verbose, warm_start=warm_start, callback=callback)

    def _loss(self):
        return AveragePrecision()


class NDCGSVM(_StructuredSVM):
    __doc__ = """Rank SVM optimising NDCG with binary relevance (Mohapatra et al. 2018).

    ``sample_weight`` is a query weight, as for :class:`APSVM`; ``score`` is then the weighted
    mean of per-query NDCG.

    Parameters
    ----------
    algorithm : str, default "auto"
        Exact NDCG inference algorithm ("auto", "qs" or "ndcg-greedy").
    discount : array-like, optional
        Convex, non-increasing discount, ``discount[m-1] = D(m)``; default 1/log2(1+m).
""" + _RANK_COMMON_DOC

    _parameter_constraints = {**_StructuredSVM._parameter_constraints, "algorithm": [str],
                              "discount": ["array-like", None]}

    def __init__(self, C=1.0, *, algorithm="auto", discount=None, tol=1e-3, max_iter=1000,
                 prune_after=50, solver="multi-cut", empty="skip", verbose=False,
                 warm_start=False,
                 callback=None):
        self.algorithm = algorithm
        self.discount = discount
        super().__init__(C, tol=tol, max_iter=max_iter, prune_after=prune_after, solver=solver,
                         empty=empty,
                         verbose=verbose, warm_start=warm_start, callback=callback)

    def _loss(self):
        return NDCG(self.discount)

    def _metric(self, relevant, scores, qid, per_query=False):
        """NDCG with binary relevance and this model's discount (ties as scikit-learn): the
        metric the model optimises, and what ``score`` reports."""
        return ndcg(relevant.astype(float), scores, qid=qid, empty=self.empty,
                    discount=self.discount, per_query=per_query)


class APSVMAppx(_StructuredSVM):
    __doc__ = """AP-SVM-APPX (Mohapatra et al. 2014, section 3.3): AP loss over the difficult
    samples only.

    A :class:`BinarySVM` (tol and max_iter alike, and C / n, n the training samples in queries
    with a relevant sample, weighted: BinarySVM's C is per sample, so the two stages weigh
    their normalised losses alike) is trained first; samples it classifies with
    margin y(w'x + b) > 1 are easy. The ``keep`` fraction of the easy samples with the largest
    margins keep hard constraints y(w'x + b) >= 1; every other sample joins the difficult set,
    whose AP loss is optimised. Within the difficult set, queries left without positives are
    skipped.

    ``sample_weight`` is a query weight, as for :class:`APSVM`, and weighs both trainings (the
    BinarySVM's and the AP loss's); the ``keep`` fraction counts easy samples, not weights.

    Parameters
    ----------
    keep : float in [0, 1], default 0.5
        Fraction of the easy samples that stay easy (Mohapatra et al. 2014, Table 1: 25, 50 and
        75 %).
    algorithm : str, default "auto"
        Exact AP inference algorithm.
    intercept_scaling : float, default 1.0
        Value of the constant feature carrying the bias.
""" + _COMMON_DOC + _THRESHOLD_DOC + """    binary_ : BinarySVM
        The fitted first-stage BinarySVM.
    easy_ : ndarray of bool, shape (n_samples,)
        The samples kept easy (hard constraints).
"""

    _has_intercept = True
    _parameter_constraints = {**_StructuredSVM._parameter_constraints, "algorithm": [str],
                              "keep": [NoBoolInterval(Real, 0, 1, closed="both")],
                              "intercept_scaling": [POSITIVE]}

    def __init__(self, C=1.0, *, keep=0.5, algorithm="auto", intercept_scaling=1.0, tol=1e-3,
                 max_iter=1000, prune_after=50, solver="ocas", empty="skip",
                 verbose=False, warm_start=False,
                 callback=None):
        self.keep = keep
        self.algorithm = algorithm
        self.intercept_scaling = intercept_scaling
        super().__init__(C, tol=tol, max_iter=max_iter, prune_after=prune_after, solver=solver,
                         empty=empty,
                         verbose=verbose, warm_start=warm_start, callback=callback)

    def _loss(self):
        return AveragePrecision()

    @atomic_fit
    def fit(self, X, y, qid=None, sample_weight=None, **unexpected):
        """Learn w from samples X, binary labels y, optional query ids and query weights
        ``sample_weight`` (as :class:`APSVM`; the first stage gets them too)."""
        self._refuse_keywords(unexpected)
        self._check_params()
        data = self._validate_fit(X, y, qid, sample_weight)
        X, is_pos, qid, sw = data.X, data.is_pos, data.qid, data.sample_weight
        if sw is not None:      # refuse weights that are not query weights before any training
            query_weights(sw, *as_query_groups(qid, X.shape[0]))
        # BinarySVM's C is per sample: C / n is the structural C of the AP stage
        binary = BinarySVM(self.C / _n_with_positives(is_pos, qid, sw),
                           intercept_scaling=self.intercept_scaling, tol=self.tol,
                           max_iter=self.max_iter, prune_after=self.prune_after,
                           solver=self.solver,
                           empty=self.empty).fit(X, data.classes[is_pos.astype(int)], qid,
                                                 sample_weight=sw)
        signs = np.where(is_pos, 1.0, -1.0)
        margins = signs * binary.decision_function(X)
        easy = np.flatnonzero(margins > 1.0)
        kept = easy[np.argsort(-margins[easy], kind="stable")][:int(round(self.keep * easy.size))]
        is_easy = np.zeros(X.shape[0], dtype=bool)
        is_easy[kept] = True
        design = self._design(X)
        # rows y_i x_i of the hard constraints; sparse input stays sparse
        hard = (sp.diags(signs[kept]) @ design[kept]).tocsr() if sp.issparse(design) \
            else design[kept] * signs[kept][:, None]
        res, warm = self._train_difficult(design, is_pos, qid, sw, ~is_easy, hard)
        easy_given = is_easy
        if data.kept is not None:       # easy_ marks the samples as given, weight 0 included
            easy_given = np.zeros(data.kept.shape[0], dtype=bool)
            easy_given[np.flatnonzero(data.kept)[is_easy]] = True
        # the first stage left out (and said) the queries without a relevant sample; the AP
        # stage's own skips (queries whose positives all became easy) are not the data's
        self.__dict__.update(warm, **self._fitted(res, X.shape[1], data.classes, X, is_pos, sw),
                             binary_=binary, easy_=easy_given,
                             n_skipped_queries_=binary.n_skipped_queries_,
                             _n_fit_queries=binary._n_fit_queries)
        return self

    def _train_difficult(self, design, is_pos, qid, sample_weight, difficult, hard):
        Xd, yd = design[difficult], is_pos[difficult]
        qd = None if qid is None else qid[difficult]
        if yd.any() and not yd.all():
            # queries whose positives all became easy have no AP term left: skip them
            sd = None if sample_weight is None else sample_weight[difficult]
            return self._train(self._model(Xd, yd, qd, empty="skip", sample_weight=sd), hard=hard)
        # no AP term left (the difficult set lacks a class): only the hard constraints
        return self._train(_HardOnly(design.shape[1]), hard=hard)
