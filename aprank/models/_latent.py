"""Latent models of Behl (2015): bags of candidate rows, one hidden row per bag.

A bag's score is w'x of its chosen row; the rows X (M, d) carry the features, the bag of each
row and one label per bag. Three models, each a :class:`LatentModel` whose ``latent(w)``
imputes the positives' rows at w (Behl 2015, Proposition 2, eq. A.4; a known row stays) and returns
the completed convex model that CCCP's inner learner trains:

* :class:`LatentRankingModel` with loss "latent-ap" -- latent AP-SVM (Behl 2015, ch. 3); the
  completed model's most violated constraint is exact (``latent-ap``: Proposition 3, then AP
  inference on the bag scores).
* :class:`LatentRankingModel` with loss "latent-ssvm" -- latent SSVM with the AP loss (Behl
  2015, appendix A); its most violated constraint is approximate (``latent-greedy``).
* :class:`LatentBinaryModel` -- the latent binary SVM baseline (Felzenszwalb et al. 2010; Behl 2015,
  sec. 4): the imputed positive rows against every candidate row of the negative bags, weighted 0-1
  loss, optionally ignoring the most confusing fraction of the negative rows.
"""
from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from aprank.inference import LatentProblem, get_kind, resolve, solve_seconds
from aprank.losses import ZeroOne, get_loss
from aprank.models._base import Constraint, LatentModel, StructuredModel, digest, product_seconds
from aprank.models._ranking import RankingModel

__all__ = ["LatentRankingModel", "LatentRankingCompleted", "LatentBinaryModel",
           "LatentBinaryCompleted", "bag_max", "bag_means"]


def bag_max(scores: np.ndarray, bags) -> tuple:
    """Each bag's highest score: a bag is scored by its best row.

    Parameters
    ----------
    scores : ndarray of shape (M,)
        One score per row.
    bags : array-like of shape (M,)
        The bag id of each row.

    Returns
    -------
    ids : ndarray
        The bag ids, sorted.
    best : ndarray of shape (n_bags,)
        Each bag's highest score, in the order of ``ids``.
    """
    ids, inverse = np.unique(np.asarray(bags), return_inverse=True)
    best = np.full(ids.shape[0], -np.inf)
    np.maximum.at(best, inverse.ravel(), scores)
    return ids, best


def bag_means(X, bags, labels) -> tuple:
    """The mean row and the label of each bag: the non-latent view of the data.

    Every bag is scored by the mean of its rows; bags come in sorted id order.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (M, d)
        The rows.
    bags : array-like of shape (M,)
        The bag id of each row.
    labels : array-like of shape (M,)
        Per row; a bag is positive when its rows are.

    Returns
    -------
    means : ndarray of shape (n_bags, d)
        The mean row of each bag.
    bag_labels : ndarray of bool, shape (n_bags,)
        Each bag's label.
    """
    _, inverse = np.unique(np.asarray(bags), return_inverse=True)
    inverse = inverse.ravel()
    counts = np.bincount(inverse)
    S = sp.csr_matrix((1.0 / counts[inverse], (inverse, np.arange(inverse.shape[0]))),
                      shape=(counts.shape[0], X.shape[0]))
    means = S @ X
    bag_labels = np.zeros(counts.shape[0], dtype=bool)
    bag_labels[inverse[np.asarray(labels).astype(bool)]] = True
    return (means.toarray() if sp.issparse(means) else np.asarray(means)), bag_labels


class _Bags:
    """Rows, bags and labels, validated once through the latent kind's problem type."""

    def __init__(self, X, labels, bags, h, loss, ranking_algorithm="qs"):
        self.X = X
        self.problem = LatentProblem(labels, loss, bags=bags, h=h, n_samples=X.shape[0],
                                     ranking_algorithm=ranking_algorithm)

    @property
    def size_joint_feature(self) -> int:
        return self.X.shape[1]

    def scores(self, w: np.ndarray) -> np.ndarray:
        return np.asarray(self.X @ w).ravel()

    def impute(self, w: np.ndarray) -> np.ndarray:
        """Per bag, its best row at w (its known row where given)."""
        return self.problem.impute(self.scores(w))

    @property
    def has_choice(self) -> bool:
        """Whether any bag has more than one candidate row left (else nothing is latent)."""
        bags = self.problem.bags
        return bool(((bags.counts > 1) & (bags.known < 0)).any())


class LatentRankingModel(_Bags, LatentModel):
    """A ranking of bags with latent rows and the AP loss.

    Parameters
    ----------
    X : array or CSR matrix of shape (M, d)
        The rows.
    labels : array-like of shape (M,)
        Per row; the rows of a bag share their label.
    bags : array-like of shape (M,), optional
        The bag id of each row (None: every row a bag).
    h : dict or ndarray of bool, optional
        Known rows ({bag id: row} or an (M,) bool mask), see
        ``aprank.inference.LatentProblem``.
    loss : {"latent-ap", "latent-ssvm"}, default "latent-ap"
        "latent-ap" (latent AP-SVM) or "latent-ssvm" (latent SSVM).
    algorithm : str, optional
        Algorithm of the latent kind (default: the loss's default).
    ranking_algorithm : str, default "qs"
        Exact AP algorithm of latent-ap's second step.
    """

    def __init__(self, X, labels, bags=None, h=None, loss="latent-ap", *, algorithm=None,
                 ranking_algorithm="qs"):
        super().__init__(X, labels, bags, h, loss, ranking_algorithm)
        loss = get_loss(loss)
        self.algorithm = resolve(loss, get_kind(loss.kind).default_for(loss)
                                 if algorithm is None else algorithm)

    def latent(self, w) -> LatentRankingCompleted:
        return LatentRankingCompleted(self, self.impute(w))

    def fingerprint(self) -> str:
        p = self.problem
        return digest(self.X, p.bags.inverse, p.bags.is_pos, p.bags.known, p.loss.identity(),
                      self.algorithm.name, p.ranking_algorithm.name)


class LatentRankingCompleted(StructuredModel):
    """The convex model of one CCCP iteration of :class:`LatentRankingModel`.

    The positives' rows are fixed at ``impute`` in the ground truth (for latent AP-SVM in both
    terms); its slack is the loss's objective.

    Parameters
    ----------
    parent : LatentRankingModel
        The latent model.
    impute : ndarray of int
        Per bag, the row imputed at w_t (``parent.impute(w_t)``).
    """

    def __init__(self, parent: LatentRankingModel, impute: np.ndarray):
        self.parent = parent
        self.impute = impute

    @property
    def size_joint_feature(self) -> int:
        return self.parent.size_joint_feature

    def estimated_seconds(self):
        """Seconds of one :meth:`most_violated`: the latent kind's inference by its ``seconds``
        model, and the products over the rows (see :meth:`StructuredModel.estimated_seconds`)."""
        parent = self.parent
        inference = solve_seconds(parent.problem, np.zeros(parent.problem.n_samples),
                                  parent.algorithm, impute=self.impute)
        return None if inference is None else inference + product_seconds(parent.X, 2)

    def most_violated(self, w) -> Constraint:
        parent = self.parent
        scores = parent.scores(w)
        t0 = time.perf_counter()
        r = parent.problem.solve(scores, parent.algorithm, impute=self.impute)
        seconds = time.perf_counter() - t0
        # only the rows some term uses (one or two per bag) enter the joint feature
        used = np.union1d(r.h, r.truth_h)
        g = np.asarray(parent.X[used].T @ (r.truth_coef - r.coef)[used]).ravel()
        return Constraint(g, r.loss, r.objective, seconds, r, output=self._output(r))

    def _output(self, r) -> tuple:
        """The output (ranking, rows) apart from this completion: per positive bag the weight
        of its imputed row, and the row coefficients of every other term (sparse).

        The imputed row of positive bag b carries 1/P in the ground truth and, for latent
        AP-SVM (whose output scores the positives at their imputed rows too), minus its
        coefficient in the ranking; every other row's coefficient (the negatives' rows in
        both terms, latent SSVM's output rows of the positives) does not depend on the
        imputation.
        """
        parent = self.parent
        pos = parent.problem.bags.is_pos
        rows = self.impute[pos]
        weight = r.truth_coef[rows].copy()
        if parent.problem.loss.name == "latent-ap":
            weight -= r.coef[rows]
        rest = r.truth_coef - r.coef
        np.subtract.at(rest, rows, weight)
        kept = np.flatnonzero(rest)
        return weight, kept, rest[kept], float(r.loss)

    def reevaluate(self, output) -> tuple:
        """The constraint of a stored output (see ``Constraint.output``) with the positives at
        this completion's rows: the same ranking of bags and the same rows of every other term.

        Parameters
        ----------
        output : tuple
            A ``Constraint.output`` of a completion of the same :class:`LatentRankingModel`.

        Returns
        -------
        (g, b)
            Its joint-feature difference and loss here.
        """
        weight, kept, rest, loss = output
        rows = self.impute[self.parent.problem.bags.is_pos]
        X = self.parent.X
        g = np.asarray(X[rows].T @ weight).ravel() + np.asarray(X[kept].T @ rest).ravel()
        return g, loss

    def fingerprint(self) -> str:
        return digest(self.parent.fingerprint(), self.impute)


class LatentBinaryModel(_Bags, LatentModel):
    """The latent binary SVM: positives at their imputed rows, every candidate row of a
    negative bag a negative sample (its known row only, where given), the weighted 0-1 loss
    of :class:`aprank.losses.ZeroOne` (J = N / P by default, N counting negative rows).

    X must carry the bias column (the learner's design matrix).

    Parameters
    ----------
    X : array-like or sparse matrix of shape (M, d)
        The rows, bias column included.
    labels : array-like of shape (M,)
        Per row; the rows of a bag share their label.
    bags : array-like of shape (M,), optional
        The bag id of each row (None: every row a bag).
    h : dict or ndarray of bool, optional
        Known rows ({bag id: row} or an (M,) bool mask), see
        ``aprank.inference.LatentProblem``.
    J : float, optional
        The weight of a positive in the 0-1 loss (default N / P).
    robust : float, default 0.0
        The fraction c in [0, 1) of the negative rows to ignore in each CCCP iteration: those
        scoring highest at w_t (the most confusing), while every negative bag keeps at least
        one row (its lowest-scoring). 0 is the standard latent SVM.
    """

    def __init__(self, X, labels, bags=None, h=None, *, J=None, robust=0.0):
        super().__init__(X, labels, bags, h, "latent-ap")
        if not (0.0 <= robust < 1.0):
            raise ValueError(f"robust must be in [0, 1), got {robust!r}")
        self.J, self.robust = J, float(robust)
        bags = self.problem.bags
        neg_bag = ~bags.is_pos[bags.inverse]
        known = bags.known[bags.inverse]
        # negative rows: all candidates of negative bags (the known row where there is one)
        chosen_or_any = (known < 0) | (known == np.arange(bags.n_rows))
        self.negative_rows = np.flatnonzero(neg_bag & chosen_or_any)

    def kept_negatives(self, w) -> np.ndarray:
        """The negative rows used at w: all but the ``robust`` fraction scoring highest, at
        least one per negative bag."""
        rows = self.negative_rows
        drop = int(np.floor(self.robust * rows.size))
        if drop == 0:
            return rows
        s = self.scores(w)[rows]
        order = np.argsort(-s, kind="stable")
        dropped = np.zeros(rows.size, dtype=bool)
        dropped[order[:drop]] = True
        inverse = self.problem.bags.inverse[rows]
        # a bag whose rows were all dropped keeps its lowest-scoring one
        kept_per_bag = np.bincount(inverse[~dropped], minlength=self.problem.n_bags)
        for b in np.flatnonzero((kept_per_bag == 0) & ~self.problem.bags.is_pos):
            mine = np.flatnonzero(inverse == b)
            if mine.size:
                dropped[mine[np.argmin(s[mine])]] = False
        return rows[~dropped]

    def latent(self, w) -> LatentBinaryCompleted:
        impute = self.impute(w)
        pos_rows = impute[self.problem.bags.is_pos]
        rows = np.r_[pos_rows, self.kept_negatives(w)]
        labels = np.r_[np.ones(pos_rows.size, bool), np.zeros(rows.size - pos_rows.size, bool)]
        return LatentBinaryCompleted(self.X[rows], labels, ZeroOne(self.J), rows=rows,
                                     n_pos=pos_rows.size)

    def fingerprint(self) -> str:
        p = self.problem
        return digest(self.X, p.bags.inverse, p.bags.is_pos, p.bags.known, self.J, self.robust)


class LatentBinaryCompleted(RankingModel):
    """The convex model of one CCCP iteration of :class:`LatentBinaryModel`: the 0-1 loss on
    the positives' imputed rows (in bag order) and the kept negative rows.

    Parameters
    ----------
    X, labels, loss
        As for :class:`RankingModel` (``X`` is the parent's rows ``rows``).
    rows : ndarray of int
        The parent's row of each sample: the positives' imputed rows, then the negatives.
    n_pos : int
        How many of ``rows`` are positives.
    """

    def __init__(self, X, labels, loss, *, rows, n_pos):
        super().__init__(X, labels, loss, algorithm="zero-one")
        self.rows, self.n_pos = np.asarray(rows), int(n_pos)

    def most_violated(self, w) -> Constraint:
        cut = super().most_violated(w)
        # a labelling's coefficients per sample: sample k is the same positive bag (or the same
        # negative row) in every completion that keeps the same negative rows
        coef = (self.problem.truth_coef - cut.result.coef) / self.n_used
        cut.output = (coef, self.rows[self.n_pos:], cut.b)
        return cut

    def reevaluate(self, output):
        """The constraint of a stored labelling (see ``Constraint.output``) on this
        completion's rows; None where the completion that stored it kept other negative rows
        (``robust`` > 0), whose samples do not correspond.

        Parameters
        ----------
        output : tuple
            A ``Constraint.output`` of a completion of the same :class:`LatentBinaryModel`.

        Returns
        -------
        (g, b) or None
        """
        coef, negatives, loss = output
        if not np.array_equal(negatives, self.rows[self.n_pos:]):
            return None
        return self._transposed_product(coef), loss
