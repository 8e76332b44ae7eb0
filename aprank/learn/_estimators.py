"""Structured SVM estimators with the scikit-learn API.

Each one validates its input once, builds an ``aprank.models.RankingModel`` with its loss and
hands it to the same 1-slack cutting-plane learner (``_cutting_plane.py``), so iteration counts
and inference times are comparable across them:

* :class:`BinarySVM` -- weighted 0-1 loss (paper 002 eq. 7), with a bias: a class-weighted
  hinge-loss SVM.
* :class:`APSVM` -- AP loss (Yue et al. 2007; papers 000 and 004).
* :class:`NDCGSVM` -- NDCG loss (paper 004).
* :class:`APSVMAppx` -- paper 000 section 3.3: a BinarySVM picks easy samples, the AP loss is
  optimised over the rest while the easiest are kept correctly classified.

The rank SVMs score samples by w'x: the ranking is what they learn (a bias would cancel in
their joint feature), so ``predict`` only marks scores above 0; ``score`` is the mean AP (the
mean NDCG for NDCGSVM).
"""
from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data
from tqdm.auto import tqdm

from aprank.inference import resolve
from aprank.learn._cutting_plane import cutting_plane
from aprank.losses import NDCG, AveragePrecision, ZeroOne
from aprank.metrics import average_precision, ndcg
from aprank.models import Constraint, RankingModel, StructuredModel, digest

__all__ = ["BinarySVM", "APSVM", "NDCGSVM", "APSVMAppx"]


def _check_qid(qid, n):
    if qid is None:
        return None
    qid = np.asarray(qid)
    if qid.ndim != 1 or qid.shape[0] != n:
        raise ValueError(f"qid must be 1-D with one entry per sample ({n}), got shape {qid.shape}")
    return qid


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
        return digest("hard-only", self.dim)


class _StructuredSVM(ClassifierMixin, BaseEstimator):
    """Shared fit / decision_function / score. Subclasses define the loss and the algorithm."""

    _has_intercept = False

    def __init__(self, C=1.0, *, tol=1e-3, max_iter=1000, prune_after=50, empty="error",
                 verbose=False, warm_start=False, callback=None):
        self.C = C
        self.tol = tol
        self.max_iter = max_iter
        self.prune_after = prune_after
        self.empty = empty
        self.verbose = verbose
        self.warm_start = warm_start
        self.callback = callback

    def _loss(self):
        raise NotImplementedError

    def _algorithm(self) -> str:
        return self.algorithm

    # --------------------------------------------------------------------------- validation
    def _validate_params(self):
        """Check the parameters (not the data); ValueError / NotImplementedError naming them."""
        if not (isinstance(self.C, (int, float, np.number)) and self.C > 0):
            raise ValueError(f"C must be a positive number, got {self.C!r}")
        if not (self.tol > 0):
            raise ValueError(f"tol must be positive, got {self.tol!r}")
        if self.empty not in ("error", "skip"):
            raise ValueError(f"empty must be 'error' or 'skip', got {self.empty!r}")
        # unknown name: ValueError; an algorithm not serving the loss: NotImplementedError
        resolve(self._loss(), self._algorithm())

    def _check_classes(self, classes):
        if classes.shape[0] != 2:
            raise ValueError(f"Only binary classification is supported. {type(self).__name__} "
                             f"needs samples of exactly 2 classes (relevant and not); got "
                             f"{classes.shape[0]} class(es): {classes.tolist()}")

    def _validate_fit(self, X, y, qid):
        self._validate_params()
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64,
                             ensure_all_finite=True, ensure_min_samples=1)
        check_classification_targets(y)
        classes = np.unique(y)
        self._check_classes(classes)
        self.classes_ = classes
        return X, y == self.classes_[1], _check_qid(qid, X.shape[0])

    def _design(self, X):
        """X with the constant bias column appended (when the model has a bias)."""
        if not self._has_intercept:
            return X
        ones = np.full((X.shape[0], 1), self.intercept_scaling)
        return sp.hstack([X, ones], format="csr") if sp.issparse(X) else np.hstack([X, ones])

    # --------------------------------------------------------------------------- training
    def _model(self, X, is_pos, qid, empty=None) -> RankingModel:
        """The model of design matrix X (labels and queries validated here, once per fit)."""
        return RankingModel(X, is_pos, self._loss(), qid=qid, algorithm=self._algorithm(),
                            empty=self.empty if empty is None else empty)

    def _train(self, model: StructuredModel, hard=None, upper=None):
        """Run the cutting plane on ``model``; returns the CuttingPlaneResult."""
        working_set, w0, fingerprint = None, None, None
        if self.warm_start:
            # the working set's constraints hold only for the same data, structure, loss and
            # hard constraints, which the fingerprint covers (computed only when needed)
            fingerprint = digest(model.fingerprint(), hard, upper)
            if getattr(self, "_fingerprint", None) == fingerprint:
                working_set = self._working_set
            elif getattr(self, "_w", None) is not None and self._w.shape[0] == model.size_joint_feature:
                w0 = self._w
        bar = tqdm(total=self.max_iter, desc=type(self).__name__, leave=False) if self.verbose else None
        user_callback = self.callback

        def callback(info):
            if bar is not None:
                bar.update(1)
                bar.set_postfix(gap=f"{info['gap']:.2e}", violation=f"{info['violation']:.3g}")
            if user_callback is not None:
                user_callback(info)

        try:
            res = cutting_plane(model, float(self.C), tol=self.tol, max_iter=self.max_iter,
                                prune_after=self.prune_after, hard=hard, w0=w0,
                                working_set=working_set, upper=upper, callback=callback)
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
        res = self._train(self._model(self._design(X), is_pos, qid))
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
        Reuse the previous fit: its working set when the data, queries, loss and constraints
        are the same (e.g. a path over C), else its weights as the starting point.
    callback : callable, optional
        Called in every cutting-plane iteration with a dict: the iteration's ``history_``
        entry plus ``w`` and ``result`` (the inference result, e.g. its ``ranks``). For
        diagnostics and figures; it must not modify what it receives.

    Attributes
    ----------
    coef_ : (n_features,) weights.
    n_iter_, converged_ : iterations run and whether the stopping rule was met.
    primal_, dual_, gap_ : final primal objective 1/2||w||^2 + C xi (xi from exact inference at
        the final w), dual objective of the working set, and their difference.
    history_ : list of dicts, one per iteration: primal, dual, gap, violation (exact slack),
        working_slack, n_constraints, inference_seconds, qp_seconds, n_last_rank (negatives at
        rank P+1).
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
                 callback=None):
        self.J = J
        self.intercept_scaling = intercept_scaling
        super().__init__(C, tol=tol, max_iter=max_iter, prune_after=prune_after, empty=empty,
                         verbose=verbose, warm_start=warm_start, callback=callback)

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
                 empty="error", verbose=False, warm_start=False, callback=None):
        self.algorithm = algorithm
        super().__init__(C, tol=tol, max_iter=max_iter, prune_after=prune_after, empty=empty,
                         verbose=verbose, warm_start=warm_start, callback=callback)

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
                 callback=None):
        self.algorithm = algorithm
        self.discount = discount
        super().__init__(C, tol=tol, max_iter=max_iter, prune_after=prune_after, empty=empty,
                         verbose=verbose, warm_start=warm_start, callback=callback)

    def _loss(self):
        return NDCG(self.discount)

    def score(self, X, y, qid=None):
        """Mean NDCG with binary relevance and this model's discount (per query when qid is
        given; ties as scikit-learn): the metric the model optimises."""
        check_is_fitted(self)
        return ndcg((np.asarray(y) == self.classes_[1]).astype(float), self.decision_function(X),
                    qid=qid, empty=self.empty, discount=self.discount)


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
                 callback=None):
        self.keep = keep
        self.algorithm = algorithm
        self.intercept_scaling = intercept_scaling
        super().__init__(C, tol=tol, max_iter=max_iter, prune_after=prune_after, empty=empty,
                         verbose=verbose, warm_start=warm_start, callback=callback)

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
        # rows y_i x_i of the hard constraints; sparse input stays sparse
        hard = (sp.diags(signs[kept]) @ design[kept]).tocsr() if sp.issparse(design) \
            else design[kept] * signs[kept][:, None]
        difficult = ~self.easy_
        res = self._train_difficult(design, is_pos, qid, difficult, hard)
        self._store(res, X.shape[1])
        return self

    def _train_difficult(self, design, is_pos, qid, difficult, hard):
        Xd, yd = design[difficult], is_pos[difficult]
        qd = None if qid is None else qid[difficult]
        if yd.any() and not yd.all():
            # queries whose positives all became easy have no AP term left: skip them
            return self._train(self._model(Xd, yd, qd, empty="skip"), hard=hard)
        # no AP term left (the difficult set lacks a class): only the hard constraints
        return self._train(_HardOnly(design.shape[1]), hard=hard)
