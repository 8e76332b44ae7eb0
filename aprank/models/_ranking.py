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

from aprank.inference import BatchResult, RankingProblem, resolve, solve_seconds
from aprank.models._base import (
    Constraint,
    HingeTerms,
    RiskSplit,
    StructuredModel,
    digest,
    product_seconds,
)
from aprank.models._block_sums_cy import block_dense_sums, block_row_sums
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
        ``aprank.models._weights``. None is every weight 1, with no reweighting at all (the
        unweighted arithmetic).
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
    def n_samples_used(self) -> float:
        """The samples of the queries the risk counts, each counted with its weight (1
        without ``sample_weight``): the n of a per-sample C (``aprank.learn.BinarySVM``)."""
        used = self.problem.per_sample(self.problem.used)
        if self.sample_weight is None:
            return float(np.count_nonzero(used))
        return float(self.sample_weight[used].sum())

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

    def estimated_seconds(self) -> float | None:
        """Seconds of one :meth:`most_violated`: inference over every query by the algorithm's
        ``seconds`` model, and the products X w and X'c (see
        :meth:`StructuredModel.estimated_seconds`)."""
        inference = solve_seconds(self.problem, np.zeros(self.problem.n_samples), self.algorithm)
        return None if inference is None else inference + product_seconds(self.X, 2)

    def loss_augmented_inference(self, w: np.ndarray) -> BatchResult:
        return self.problem.solve(self.scores(w), self.algorithm)

    def most_violated(self, w: np.ndarray) -> Constraint:
        return self._cut(w, None)[0]

    def _cut(self, w: np.ndarray, n_blocks):
        """(the cut at w, its parts over n_blocks blocks or None when n_blocks is None)."""
        t0 = time.perf_counter()
        scores = self.scores(w)
        t1 = time.perf_counter()
        result = self.problem.solve(scores, self.algorithm)
        t2 = time.perf_counter()
        n_last_rank = int(np.count_nonzero(result.ranks == self.problem.last_rank))
        parts = None
        if self.weighting is not None:
            coef, b, violation = self.weighting.cut(self.problem, result, scores)
            g = self._transposed_product(coef)
        else:
            if n_blocks is None:
                g = self._transposed_product(self.problem.truth_coef - result.coef) / self.n_used
            else:
                parts = self._parts(result, n_blocks)
                g = parts[0].sum(0)
            loss, objective = result.loss, result.objective
            if not self._all_used:
                loss, objective = loss[self.problem.used], objective[self.problem.used]
            # sum / size is np.mean's own arithmetic, without its call overhead
            b = float(loss.sum()) / loss.shape[0]
            violation = float(objective.sum()) / objective.shape[0]
        # what the cut cost besides inference: the products X w, X'c and the cut's assembly
        info = {"n_last_rank": n_last_rank,
                "cut_seconds": (t1 - t0) + (time.perf_counter() - t2)}
        return Constraint(g=g, b=b, violation=violation, seconds=t2 - t1, result=result,
                          info=info), parts

    def hinge_terms(self) -> HingeTerms | None:
        """The 0-1 loss's risk as a sum of hinges (:meth:`StructuredModel.hinge_terms`): a
        flipped sample's slack is its loss, ``abs(c*_i - c_i) = 2 abs(c*_i)``, times one minus
        its margin, so the weight of sample i is ``2 abs(c*_i)`` over the queries used, or the
        weighting's scale. None for AP and NDCG, whose risk is a maximum over rankings.
        """
        if self.problem.kind != "labelling":
            return None
        if self.weighting is not None:
            return HingeTerms(self.X, self.weighting.scale, self.weighting.sign)
        truth = self.problem.truth_coef
        return HingeTerms(self.X, 2.0 * np.abs(truth) / self.n_used,
                          np.where(truth < 0, -1.0, 1.0))

    def split_risk(self, n_blocks: int) -> RiskSplit | None:
        """The risk split over blocks of queries (AP, NDCG: each query's term has its own
        maximum) or of samples (the 0-1 loss: each sample's flip is its own); see
        :meth:`StructuredModel.split_risk`. Unit j (in query order, or sample order) is in
        block j mod n_blocks. None with ``sample_weight`` (its cut is formed elsewhere) or
        fewer than two units.

        Parameters
        ----------
        n_blocks : int
            The most blocks wanted.

        Returns
        -------
        RiskSplit or None
        """
        if self.weighting is not None or n_blocks < 2:
            return None
        n_parts = self._blocks(int(n_blocks))[1]
        return _Blocks(self, int(n_blocks), n_parts) if n_parts >= 2 else None

    def _parts(self, result: BatchResult, n_blocks: int) -> tuple:
        """(G, b) of the cut's parts (:meth:`split_risk`) from an inference result."""
        diff = (self.problem.truth_coef - result.coef) / self.n_used
        if self.problem.kind == "labelling":
            # a flipped sample's loss v_i / z_q is |c*_i - c_i|: its coefficient
            # v_i (2 y_i - 1) / (2 z_q) changes sign (losses.ZeroOne)
            return self._sample_parts(diff, np.abs(diff), n_blocks)
        k = self._blocks(n_blocks)[1]
        used = np.flatnonzero(self.problem.used)
        b = np.bincount(np.arange(used.shape[0]) % k, weights=result.loss[used],
                        minlength=k) / self.n_used
        return self._block_products(diff, np.flatnonzero(diff), n_blocks), b

    def _sample_parts(self, coef: np.ndarray, loss: np.ndarray, n_blocks: int) -> tuple:
        """(G, b) of a cut given per sample: G[j] = X' coef over block j, b[j] = the sum of
        block j's losses."""
        block, k = self._blocks(n_blocks)
        nonzero = np.flatnonzero(coef)
        b = np.bincount(block[nonzero], weights=loss[nonzero], minlength=k)
        return self._block_products(coef, nonzero, n_blocks), b

    def _block_products(self, coef: np.ndarray, nonzero: np.ndarray, n_blocks: int) -> np.ndarray:
        """G of shape (blocks, d): row j is X' coef over block j's rows (``nonzero``: where
        coef is not 0)."""
        block, k = self._blocks(n_blocks)
        if sp.issparse(self.X):
            # one compiled pass over the counted rows' entries, which runs without bounds
            # checks: X's structure is checked once per block count (_blocks), and
            # here every counted row lies in a block
            rows = np.ascontiguousarray(nonzero, dtype=np.int64)
            if rows.size and (rows.max() >= coef.shape[0] or block[rows].min() < 0):
                raise ValueError("a cut's part has a sample outside the used queries")
            G = np.zeros((k, self.X.shape[1]))
            block_row_sums(self.X.data, self.X.indices, self.X.indptr, rows, block,
                           np.ascontiguousarray(coef, dtype=np.float64), G)
            return G
        # dense X: the product of a sparse block-by-sample matrix with X, its terms added in
        # that product's order, without building the matrix at every cut (a third of a cut
        # at 1,200 x 64)
        G = np.zeros((k, self.X.shape[1]))
        rows = np.ascontiguousarray(nonzero, dtype=np.int64)
        if rows.size and (rows.max() >= coef.shape[0] or block[rows].min() < 0
                          or coef.shape[0] != self.X.shape[0]):
            raise ValueError("a cut's part has a sample outside the used queries")
        block_dense_sums(self.X, rows, block, np.ascontiguousarray(coef, dtype=np.float64), G)
        return G

    def _blocks(self, n_blocks: int):
        """(block of each sample, number of blocks), made once per block count."""
        cached = self.__dict__.get("_cached_blocks")
        if cached is not None and cached[0] == n_blocks:
            return cached[1:]
        block, k = self._unit_blocks(n_blocks)
        if sp.issparse(self.X):
            # what block_row_sums reads without bounds checks: every row's entries in range
            X = self.X
            if (X.indptr.shape[0] != X.shape[0] + 1 or X.indptr[0] != 0
                    or np.any(np.diff(X.indptr) < 0) or X.indptr[-1] > X.indices.shape[0]
                    or (X.indices.size and (X.indices.min() < 0 or X.indices.max() >= X.shape[1]))):
                raise ValueError("X is not a valid CSR matrix: its index arrays are out of range")
        self.__dict__["_cached_blocks"] = (n_blocks, block, k)
        return block, k

    def _unit_blocks(self, n_blocks: int):
        """(block of each sample, number of blocks): the units (used queries, or the samples of
        used queries under the 0-1 loss) dealt out in turn; -1 outside the used queries."""
        p = self.problem
        n = p.n_samples
        sizes = np.diff(p.offsets)
        query = np.empty(n, dtype=np.int64)
        query[p.order if p.order is not None else np.arange(n)] = np.repeat(
            np.arange(p.n_queries), sizes)
        used = p.used[query]
        if p.kind == "labelling":
            units = int(used.sum())
            k = min(n_blocks, units)
            block = np.full(n, -1, dtype=np.int64)
            block[used] = np.arange(units) % max(k, 1)
        else:
            rank = np.cumsum(p.used) - 1          # a used query's place among the used
            k = min(n_blocks, int(p.used.sum()))
            block = np.where(used, rank[query] % max(k, 1), -1)
        return block, k

    def fingerprint(self) -> str:
        p = self.problem
        weights = () if self.sample_weight is None else (self.sample_weight,)
        return digest(self.X, p.is_pos, p.order, p.offsets, p.used, self.loss.identity(), *weights)


class _Blocks(RiskSplit):
    """:meth:`RankingModel.split_risk`'s parts: ``n_parts`` blocks of the units, formed
    together with the cut from one inference (g the parts' sum, no separate product X'c)."""

    def __init__(self, model: RankingModel, n_blocks: int, n_parts: int):
        self.model, self.n_blocks, self.n_parts = model, n_blocks, n_parts

    def most_violated(self, w: np.ndarray) -> tuple:
        cut, (G, b) = self.model._cut(w, self.n_blocks)
        return cut, G, b
