"""Structured SVM estimators with the scikit-learn API.

Each one is the same 1-slack cutting-plane learner (``_cutting_plane.py``) with a different
loss, so iteration counts and inference times are comparable across them:

* :class:`BinarySVM` -- weighted 0-1 loss (paper 002 eq. 7), with a bias: a class-weighted
  hinge-loss SVM.
* :class:`APSVM` -- AP loss (Yue et al. 2007; papers 000 and 004).
* :class:`NDCGSVM` -- NDCG loss (paper 004).
* :class:`APSVMAppx` -- paper 000 section 3.3: a BinarySVM picks easy samples, the AP loss is
  optimised over the rest while the easiest are kept correctly classified.

The rank SVMs score samples by w'x: the ranking is what they learn (a bias would cancel in
their joint feature), so ``predict`` only marks scores above 0 and ``score`` is the mean AP.
"""
from __future__ import annotations

import hashlib
import time
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from aprank import _registry
from aprank._infer import _resolve, solve_problem
from aprank._problem import Problem
from aprank.learn._cutting_plane import Cut, cutting_plane
from aprank.losses import NDCG, AveragePrecision, ZeroOne
from aprank.metrics import average_precision

__all__ = ["BinarySVM", "APSVM", "NDCGSVM", "APSVMAppx"]


def _check_qid(qid, n):
    if qid is None:
        return None
    qid = np.asarray(qid)
    if qid.ndim != 1 or qid.shape[0] != n:
        raise ValueError(f"qid must be 1-D with one entry per sample ({n}), got shape {qid.shape}")
    return qid


class InferenceOracle:
    """Most violated constraint at w: exact loss-augmented inference on every query at once."""

    def __init__(self, X, is_pos, qid, loss, algorithm, empty, record_ranks=False):
        self.X, self.is_pos, self.qid = X, is_pos, qid
        self.loss, self.algo = _resolve(loss, algorithm)
        self.empty, self.record_ranks = empty, record_ranks
        problem = self._problem(np.zeros(X.shape[0]))       # validates labels and queries once
        self.truth = problem.truth_coef()
        self.weight = problem.per_sample(problem.used) / max(int(problem.used.sum()), 1)
        self.last_rank = problem.per_sample(problem.positives_per_query() + 1)   # rank P+1

    def _problem(self, scores):
        return Problem.build(scores, self.is_pos, self.loss, qid=self.qid, empty=self.empty)

    def __call__(self, w) -> Cut:
        scores = np.asarray(self.X @ w).ravel()
        t0 = time.perf_counter()
        problem = solve_problem(self._problem(scores), self.algo)
        seconds = time.perf_counter() - t0
        used = problem.used
        g = np.asarray(self.X.T @ ((self.truth - problem.coef) * self.weight)).ravel()
        negatives = ~self.is_pos
        return Cut(g=g, b=float(problem.query_loss[used].mean()),
                   violation=float(problem.query_objective[used].mean()), seconds=seconds,
                   n_last_rank=int(np.sum(problem.ranks[negatives] == self.last_rank[negatives])),
                   ranks=problem.ranks.copy() if self.record_ranks else None)


class _StructuredSVM(ClassifierMixin, BaseEstimator):
    """Shared fit / decision_function / score. Subclasses define the loss and the algorithm."""

    _has_intercept = False

    def __init__(self, C=1.0, *, tol=1e-3, max_iter=1000, prune_after=50, empty="error",
                 verbose=False, warm_start=False, record_ranks=False):
        self.C = C
        self.tol = tol
        self.max_iter = max_iter
        self.prune_after = prune_after
        self.empty = empty
        self.verbose = verbose
        self.warm_start = warm_start
        self.record_ranks = record_ranks

    def _loss(self):
        raise NotImplementedError

    def _algorithm(self) -> str:
        return self.algorithm

    # --------------------------------------------------------------------------- validation
    def _validate_fit(self, X, y, qid):
        if not (isinstance(self.C, (int, float, np.number)) and self.C > 0):
            raise ValueError(f"C must be a positive number, got {self.C!r}")
        if not (self.tol > 0):
            raise ValueError(f"tol must be positive, got {self.tol!r}")
        if self.empty not in ("error", "skip"):
            raise ValueError(f"empty must be 'error' or 'skip', got {self.empty!r}")
        algo = _registry.get(self._algorithm())            # unknown name: clear ValueError
        loss = self._loss()
        if not algo.supports(loss.name):
            raise ValueError(f"algorithm {algo.name!r} does not serve the {loss.name!r} loss; "
                             f"choose one of {[a.name for a in _registry.for_loss(loss.name)]}")
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64,
                             ensure_all_finite=True, ensure_min_samples=1)
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        if self.classes_.shape[0] != 2:
            raise ValueError(f"Only binary classification is supported. {type(self).__name__} "
                             f"needs samples of exactly 2 classes (relevant and not); got "
                             f"{self.classes_.shape[0]} class(es): {self.classes_.tolist()}")
        return X, y == self.classes_[1], _check_qid(qid, X.shape[0])

    def _design(self, X):
        """X with the constant bias column appended (when the model has a bias)."""
        if not self._has_intercept:
            return X
        ones = np.full((X.shape[0], 1), self.intercept_scaling)
        return sp.hstack([X, ones], format="csr") if sp.issparse(X) else np.hstack([X, ones])

    # --------------------------------------------------------------------------- training
    def _train(self, X, is_pos, qid, loss, hard=None, empty=None):
        """Run the cutting plane on design matrix X; returns the CuttingPlaneResult."""
        oracle = InferenceOracle(X, is_pos, qid, loss, self._algorithm(),
                                 self.empty if empty is None else empty, self.record_ranks)
        fingerprint = _fingerprint(X, is_pos, qid, loss, hard)
        working_set, w0 = None, None
        if self.warm_start and hasattr(self, "_working_set"):
            if getattr(self, "_fingerprint", None) == fingerprint:
                working_set = self._working_set        # constraints stay valid for the same data
            elif self._w.shape[0] == X.shape[1]:
                w0 = self._w
        bar = None
        if self.verbose:
            from tqdm.auto import tqdm
            bar = tqdm(total=self.max_iter, desc=type(self).__name__, leave=False)

        def progress(h):
            if bar is not None:
                bar.update(1)
                bar.set_postfix(gap=f"{h['gap']:.2e}", violation=f"{h['violation']:.3g}")

        try:
            res = cutting_plane(oracle, X.shape[1], float(self.C), tol=self.tol,
                                max_iter=self.max_iter, prune_after=self.prune_after, hard=hard,
                                w0=w0, working_set=working_set, record_ranks=self.record_ranks,
                                progress=progress)
        finally:
            if bar is not None:
                bar.close()
        self._working_set, self._fingerprint, self._w = res.working_set, fingerprint, res.w
        if not res.converged:
            warnings.warn(f"{type(self).__name__} did not converge in {self.max_iter} iterations "
                          f"(gap {res.gap:.3g}, tol {self.tol:g}); raise max_iter or tol",
                          ConvergenceWarning)
        return res

    def _store(self, res, n_features):
        self.coef_ = res.w[:n_features].copy()
        if self._has_intercept:
            self.intercept_ = float(res.w[n_features] * self.intercept_scaling)
        self.n_iter_, self.converged_ = res.n_iter, res.converged
        self.primal_, self.dual_, self.gap_ = res.primal, res.dual, res.gap
        self.history_ = res.history

    def fit(self, X, y, qid=None):
        """Learn w from samples X (dense or CSR), binary labels y and optional query ids."""
        X, is_pos, qid = self._validate_fit(X, y, qid)
        res = self._train(self._design(X), is_pos, qid, self._loss())
        self._store(res, X.shape[1])
        return self

    # --------------------------------------------------------------------------- prediction
    def decision_function(self, X):
        """Scores w'x (+ bias): rank samples by them, highest first."""
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        scores = np.asarray(X @ self.coef_).ravel()
        return scores + self.intercept_ if self._has_intercept else scores

    def predict(self, X):
        """The second class where the score is above 0 (rank SVMs learn no threshold)."""
        check_is_fitted(self)
        return self.classes_[(self.decision_function(X) > 0).astype(int)]

    def score(self, X, y, qid=None):
        """Mean average precision (per query when qid is given; ties as scikit-learn)."""
        check_is_fitted(self)
        return average_precision(np.asarray(y) == self.classes_[1], self.decision_function(X),
                                 qid=qid, empty=self.empty)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.classifier_tags.multi_class = False
        return tags


def _fingerprint(X, is_pos, qid, loss, hard):
    h = hashlib.sha1()
    data = X.data if sp.issparse(X) else X
    for part in (np.ascontiguousarray(data), X.shape, is_pos, qid, repr(loss), hard):
        h.update(repr(part).encode() if not isinstance(part, np.ndarray) else part.tobytes())
    return h.hexdigest()


_COMMON_DOC = """
    C : float, default 1.0
        Weight of the slack against 1/2 ||w||^2.
    tol : float, default 1e-3
        Stop when the most violated constraint exceeds the working-set slack by at most tol
        and the primal-dual gap is at most tol.
    max_iter : int, default 1000
        Cutting-plane iterations (a ConvergenceWarning is raised when reached).
    prune_after : int, default 50
        Drop working-set constraints inactive for this many iterations in a row.
    empty : {"error", "skip"}, default "error"
        A query without positives: raise, or leave it out of training and of ``score``.
    verbose : bool
        Show a tqdm progress bar with the gap.
    warm_start : bool
        Reuse the previous fit: its working set when the data are the same (e.g. a path over
        C), else its weights as the starting point.
    record_ranks : bool
        Keep the interleaving ranks of every iteration in ``history_`` (for the heatmaps).

    Attributes
    ----------
    coef_ : (n_features,) weights.
    n_iter_, converged_ : iterations run and whether the stopping rule was met.
    primal_, dual_, gap_ : final primal objective 1/2||w||^2 + C xi (xi from exact inference at
        the final w), dual objective of the working set, and their difference.
    history_ : list of dicts, one per iteration: primal, dual, gap, violation (exact slack),
        working_slack, n_constraints, inference_seconds, qp_seconds, n_last_rank (negatives at
        rank P+1), and ranks when ``record_ranks``.
"""


class BinarySVM(_StructuredSVM):
    __doc__ = """Binary structural SVM with the weighted 0-1 loss (paper 002 eq. 7) and a bias.

    Trained by the same cutting plane as the rank SVMs; the 1-slack problem is the
    class-weighted hinge-loss SVM with weights J (positives) and 1 (negatives).

    Parameters
    ----------
    J : float, optional
        Weight of a positive; default N/P per query.
    intercept_scaling : float, default 1.0
        Value of the constant feature carrying the (regularised) bias.
""" + _COMMON_DOC

    _has_intercept = True

    def __init__(self, C=1.0, *, J=None, intercept_scaling=1.0, tol=1e-3, max_iter=1000,
                 prune_after=50, empty="error", verbose=False, warm_start=False,
                 record_ranks=False):
        self.J = J
        self.intercept_scaling = intercept_scaling
        super().__init__(C, tol=tol, max_iter=max_iter, prune_after=prune_after, empty=empty,
                         verbose=verbose, warm_start=warm_start, record_ranks=record_ranks)

    def _loss(self):
        return ZeroOne(self.J)

    def _algorithm(self):
        return "zero-one"


class APSVM(_StructuredSVM):
    __doc__ = """Rank SVM optimising average precision (Yue et al. 2007).

    Parameters
    ----------
    algorithm : str, default "qs"
        Exact AP inference algorithm from ``aprank.algorithms()``: all give the same w.
""" + _COMMON_DOC

    def __init__(self, C=1.0, *, algorithm="qs", tol=1e-3, max_iter=1000, prune_after=50,
                 empty="error", verbose=False, warm_start=False, record_ranks=False):
        self.algorithm = algorithm
        super().__init__(C, tol=tol, max_iter=max_iter, prune_after=prune_after, empty=empty,
                         verbose=verbose, warm_start=warm_start, record_ranks=record_ranks)

    def _loss(self):
        return AveragePrecision()


class NDCGSVM(_StructuredSVM):
    __doc__ = """Rank SVM optimising NDCG with binary relevance (paper 004).

    Parameters
    ----------
    algorithm : str, default "qs"
        Exact NDCG inference algorithm ("qs" or "ndcg-greedy").
    discount : array-like, optional
        Convex, non-increasing discount, ``discount[m-1] = D(m)``; default 1/log2(1+m).
""" + _COMMON_DOC

    def __init__(self, C=1.0, *, algorithm="qs", discount=None, tol=1e-3, max_iter=1000,
                 prune_after=50, empty="error", verbose=False, warm_start=False,
                 record_ranks=False):
        self.algorithm = algorithm
        self.discount = discount
        super().__init__(C, tol=tol, max_iter=max_iter, prune_after=prune_after, empty=empty,
                         verbose=verbose, warm_start=warm_start, record_ranks=record_ranks)

    def _loss(self):
        return NDCG(self.discount)


class APSVMAppx(_StructuredSVM):
    __doc__ = """AP-SVM-APPX (paper 000 section 3.3): AP loss over the difficult samples only.

    A :class:`BinarySVM` (same C, tol, max_iter) is trained first; samples it classifies with
    margin y(w'x + b) > 1 are easy. The ``keep`` fraction of the easy samples with the largest
    margins keep hard constraints y(w'x + b) >= 1; every other sample joins the difficult set,
    whose AP loss is optimised. Within the difficult set, queries left without positives are
    skipped.

    Parameters
    ----------
    keep : float in [0, 1], default 0.5
        Fraction of the easy samples that stay easy (paper 000 Table 1: 25, 50 and 75 %).
    algorithm : str, default "qs"
        Exact AP inference algorithm.
    intercept_scaling : float, default 1.0
        Value of the constant feature carrying the bias.
""" + _COMMON_DOC + """    binary_ : the fitted first-stage BinarySVM.
    easy_ : (n_samples,) bool, samples kept easy (hard constraints).
"""

    _has_intercept = True

    def __init__(self, C=1.0, *, keep=0.5, algorithm="qs", intercept_scaling=1.0, tol=1e-3,
                 max_iter=1000, prune_after=50, empty="error", verbose=False, warm_start=False,
                 record_ranks=False):
        self.keep = keep
        self.algorithm = algorithm
        self.intercept_scaling = intercept_scaling
        super().__init__(C, tol=tol, max_iter=max_iter, prune_after=prune_after, empty=empty,
                         verbose=verbose, warm_start=warm_start, record_ranks=record_ranks)

    def _loss(self):
        return AveragePrecision()

    def fit(self, X, y, qid=None):
        if not (0.0 <= self.keep <= 1.0):
            raise ValueError(f"keep must be in [0, 1], got {self.keep!r}")
        X, is_pos, qid = self._validate_fit(X, y, qid)
        self.binary_ = BinarySVM(self.C, intercept_scaling=self.intercept_scaling, tol=self.tol,
                                 max_iter=self.max_iter, prune_after=self.prune_after,
                                 empty=self.empty).fit(X, y, qid)
        signs = np.where(is_pos, 1.0, -1.0)
        margins = signs * self.binary_.decision_function(X)
        easy = np.flatnonzero(margins > 1.0)
        kept = easy[np.argsort(-margins[easy], kind="stable")][:int(round(self.keep * easy.size))]
        self.easy_ = np.zeros(X.shape[0], dtype=bool)
        self.easy_[kept] = True
        design = self._design(X)
        hard = np.asarray((sp.csr_matrix(design[kept]).multiply(signs[kept][:, None])).todense()) \
            if sp.issparse(design) else design[kept] * signs[kept][:, None]
        difficult = ~self.easy_
        res = self._train_difficult(design, is_pos, qid, difficult, hard)
        self._store(res, X.shape[1])
        return self

    def _train_difficult(self, design, is_pos, qid, difficult, hard):
        Xd, yd = design[difficult], is_pos[difficult]
        qd = None if qid is None else qid[difficult]
        if yd.any() and not yd.all():
            # queries whose positives all became easy have no AP term left: skip them
            return self._train(Xd, yd, qd, self._loss(), hard=hard, empty="skip")
        # no AP term left (the difficult set lacks a class): only the hard constraints
        dim = design.shape[1]
        return cutting_plane(lambda w: Cut(np.zeros(dim), 0.0, 0.0, 0.0), dim, float(self.C),
                             tol=self.tol, max_iter=self.max_iter, hard=hard)
