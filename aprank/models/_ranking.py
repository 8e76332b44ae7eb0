"""The model of the rank SVMs and the binary structural SVM: a linear score per sample.

Psi(X, R) = sum_k c_k(R) x_k, where the per-sample coefficients c(R) come from inference (the
``coef`` of a result); over several queries, Psi and Delta are means over the queries used.
With ``sample_weight`` they are weighted as ``_weights.py`` says (query weights for AP and
NDCG, sample weights for the 0-1 loss).
"""
from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from aprank.inference import BatchResult, RankingProblem, resolve
from aprank.models._base import Constraint, Line, StructuredModel, digest
from aprank.models._weights import WEIGHTINGS, as_sample_weight

__all__ = ["RankingModel"]


class RankingModel(StructuredModel):
    """Samples X with binary labels, grouped in queries, scored by w'x.

    The labels, queries and ground truth are validated and built once, here, and X is held
    once in the layout its products want (C-contiguous float64, or CSR float64; a copy only
    where X is not already so); each call of :meth:`most_violated` only computes scores, runs
    inference and forms the cut.

    Parameters
    ----------
    X : array or sparse matrix of shape (n, d)
        Features (the design matrix, bias column included when the learner has one).
    labels : array-like of shape (n,)
        Binary labels: bool, {0, 1} or {-1, +1}.
    loss : str or Loss
        A loss of the ranking kind (AP, NDCG) or of the labelling kind (the 0-1 loss).
    qid : array-like of shape (n,), optional
        Query of each sample.
    algorithm : str
        Name of the registry algorithm for loss-augmented inference.
    empty : {"error", "skip"}
        Queries without positives (see ``aprank.infer_batch``).
    sample_weight : array-like of shape (n,), optional
        Positive floats. AP / NDCG: query weights (constant within each query; ValueError
        otherwise); the 0-1 loss: sample weights. A weight counts copies: see
        ``aprank.models._weights``. None is every weight 1, computed as before (no reweighting
        at all).
    """

    def __init__(self, X, labels, loss="ap", *, qid=None, algorithm="qs", empty="error",
                 sample_weight=None):
        self.X = (sp.csr_matrix(X, dtype=np.float64) if sp.issparse(X)
                  else np.ascontiguousarray(X, dtype=np.float64))
        self.problem = RankingProblem(labels, loss, qid=qid, empty=empty, n_samples=X.shape[0])
        #: the registry Algorithm, resolved once for every solve of the fit
        self.algorithm = resolve(self.problem.loss, algorithm)
        # Psi and Delta are means over the queries used; outside them coef and truth are 0
        self.n_used = max(int(self.problem.used.sum()), 1)
        self._all_used = bool(self.problem.used.all())
        self.sample_weight = self.weighting = None
        if sample_weight is not None:
            self.sample_weight = as_sample_weight(sample_weight, X.shape[0])
            self.weighting = WEIGHTINGS[self.problem.kind](self.problem, self.sample_weight)

    @property
    def loss(self):
        return self.problem.loss

    @property
    def size_joint_feature(self) -> int:
        return self.X.shape[1]

    def scores(self, w: np.ndarray) -> np.ndarray:
        return np.asarray(self.X @ w).ravel()

    def joint_feature(self, coef: np.ndarray) -> np.ndarray:
        """Psi = sum_k coef_k x_k / (number of queries used): the mean joint feature."""
        return np.asarray(self.X.T @ coef).ravel() / self.n_used

    def _transposed_product(self, coef: np.ndarray) -> np.ndarray:
        """X'coef, reading only the rows whose coefficient is not 0 where they are few: a
        negative ranked at P+1 (AP, NDCG) or a sample not flipped (0-1 loss) keeps its truth
        coefficient, so most rows drop out of the cut once w ranks well."""
        if 4 * np.count_nonzero(coef) < coef.shape[0]:
            # gathering the rows costs about as much as reading them twice: worth it below 1/4
            rows = np.flatnonzero(coef)
            if sp.issparse(self.X):
                return np.asarray(self.X[rows].T @ coef[rows]).ravel()
            return coef[rows] @ self.X[rows]
        return np.asarray(self.X.T @ coef).ravel()

    def loss_augmented_inference(self, w: np.ndarray) -> BatchResult:
        return self.problem.solve(self.scores(w), self.algorithm)

    def _cut_terms(self, result: BatchResult, scores: np.ndarray):
        """(c, scale, b, violation): the cut at these scores is g = scale X'c, b = Delta."""
        if self.weighting is not None:
            coef, b, violation = self.weighting.cut(self.problem, result, scores)
            return coef, 1.0, b, violation
        loss, objective = result.loss, result.objective
        if not self._all_used:
            loss, objective = loss[self.problem.used], objective[self.problem.used]
        # sum / size is np.mean's own arithmetic, without its call overhead
        return (self.problem.truth_coef - result.coef, 1.0 / self.n_used,
                float(loss.sum()) / loss.shape[0], float(objective.sum()) / objective.shape[0])

    def _constraint(self, result: BatchResult, terms, seconds: float, t0: float) -> Constraint:
        """The Constraint of an inference result and its :meth:`_cut_terms` (X'c formed here);
        t0: when the cut's products began, for its ``cut_seconds``."""
        coef, scale, b, violation = terms
        g = self._transposed_product(coef)
        if scale != 1.0:
            g /= self.n_used
        n_last_rank = int(np.count_nonzero(result.ranks == self.problem.last_rank))
        # what the cut cost besides inference: the products X w, X'c and the cut's assembly
        info = {"n_last_rank": n_last_rank, "cut_seconds": time.perf_counter() - t0 - seconds}
        return Constraint(g=g, b=b, violation=violation, seconds=seconds, result=result, info=info)

    def most_violated(self, w: np.ndarray) -> Constraint:
        t0 = time.perf_counter()
        scores = self.scores(w)
        t1 = time.perf_counter()
        result = self.problem.solve(scores, self.algorithm)
        seconds = time.perf_counter() - t1
        return self._constraint(result, self._cut_terms(result, scores), seconds, t0)

    def line(self, w: np.ndarray, target: np.ndarray) -> "ScoreLine":
        """The risk along w -> target from the scores X w and X target: each point on the line
        is one inference, with no product (:class:`ScoreLine`)."""
        return ScoreLine(self, w, target)

    def fingerprint(self) -> str:
        p = self.problem
        weights = () if self.sample_weight is None else (self.sample_weight,)
        return digest(self.X, p.is_pos, p.order, p.offsets, p.used, self.loss.identity(), *weights)


class ScoreLine(Line):
    """:class:`aprank.models.Line` of a :class:`RankingModel`: the scores are linear in w, so
    the scores at w + t d are s_w + t s_d from two products made once, and a point costs one
    inference and an O(n) slope (d'g = scale s_d'c); only :meth:`constraint` forms X'c.

    Parameters
    ----------
    model : RankingModel
    w, target : ndarray of shape (d,)
        The points at t = 0 and t = 1.
    scores : ndarray of shape (n,), optional
        X w where the caller has it (a line continued by :meth:`towards`).
    """

    def __init__(self, model: RankingModel, w: np.ndarray, target: np.ndarray,
                 scores: np.ndarray | None = None):
        super().__init__(model, w, target)
        t0 = time.perf_counter()
        self.scores_w = model.scores(w) if scores is None else scores
        self.scores_d = model.scores(target) - self.scores_w
        self.cut_seconds += time.perf_counter() - t0
        self._found = {}

    def _solve(self, t: float):
        found = self._found.get(t)
        if found is None:
            t0 = time.perf_counter()
            scores = self.scores_w + t * self.scores_d
            t1 = time.perf_counter()
            result = self.model.problem.solve(scores, self.model.algorithm)
            t2 = time.perf_counter()
            terms = self.model._cut_terms(result, scores)
            self.inference_seconds += t2 - t1
            self.cut_seconds += time.perf_counter() - t0 - (t2 - t1)
            found = self._found[t] = (result, terms, t2 - t1)
        return found

    def risk(self, t: float) -> tuple:
        _, (coef, scale, _, violation), _ = self._solve(t)
        return max(violation, 0.0), -scale * float(self.scores_d @ coef)

    def constraint(self, t: float) -> Constraint:
        cut = self._cuts.get(t)
        if cut is None:
            result, terms, seconds = self._solve(t)
            t0 = time.perf_counter()
            cut = self._cuts[t] = self.model._constraint(result, terms, 0.0, t0)
            cut.seconds = seconds
            self.cut_seconds += time.perf_counter() - t0
        return cut

    def evaluated(self):
        return list(self._found)

    def known(self, t: float) -> bool:
        return t in self._found

    def towards(self, t: float, target: np.ndarray) -> "ScoreLine":
        line = ScoreLine(self.model, self.point(t), target, self.scores_w + t * self.scores_d)
        # the point at t is the new line's start: what inference found there still holds
        if t in self._found:
            line._found[0.0] = self._found[t]
        if t in self._cuts:
            line._cuts[0.0] = self._cuts[t]
        return line
