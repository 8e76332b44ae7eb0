"""The exact AP and NDCG hinges as boosting objectives (LightGBM, XGBoost).

:class:`HingeObjective` is the structural hinge of a ranking loss (AP or NDCG, binary
relevance) summed over the queries of a training set and divided by the number of queries
used. Its gradient is the subgradient of :func:`aprank.infer_batch`, ``coef - truth_coef`` of
the most violated ranking of each query. The hinge is piecewise linear and has no second
derivative, so the second-order term that a booster's Newton step divides by is a choice
(``hessian``), and both are multiplied by one constant, ``n / 2``, which makes the balanced
term sum to the number of samples (where every query has both classes), the scale that the
boosters' regularisers (``min_sum_hessian_in_leaf``, ``reg_lambda``) expect; a leaf's Newton
step is unchanged by it.
"""
from __future__ import annotations

import numpy as np

from aprank.inference import RankingProblem

__all__ = ["HingeObjective", "LOSSES", "HESSIANS"]

#: the ranking losses of the objective (binary relevance)
LOSSES = ("ap", "ndcg")
#: the second-order terms of the objective
HESSIANS = ("balanced", "rank")


def _balanced(is_pos: np.ndarray, qid: np.ndarray) -> np.ndarray:
    """``1 / P`` per positive, ``1 / N`` per negative of each query, over the used queries
    (those with a positive); ``1 / n_q`` per sample of a query left out (none of its samples
    has a gradient) or without negatives."""
    _, inv, counts = np.unique(qid, return_inverse=True, return_counts=True)
    inv = inv.ravel()
    n_pos = np.bincount(inv, weights=is_pos, minlength=counts.shape[0])
    n_neg = counts - n_pos
    used = n_pos > 0
    per = np.where(is_pos, 1.0 / np.maximum(n_pos[inv], 1), 1.0 / np.maximum(n_neg[inv], 1))
    per = np.where(used[inv] & (n_neg[inv] > 0), per, 1.0 / counts[inv])
    return per / max(int(used.sum()), 1)


class HingeObjective:
    """The hinge of the AP or NDCG loss as a LightGBM or XGBoost custom objective.

    The gradient is the mean over the used queries (those with a relevant sample) of
    ``coef - truth_coef`` of each query's most violated ranking, the subgradient that
    :func:`aprank.infer_batch` gives (ties included). The second-order term:

    ``"rank"`` (default)
        ``|gradient| + floor * balanced``. A positive's gradient is ``-2 / P`` times the
        fraction of negatives ranked above it in the most violated ranking, a negative's
        ``2 / N`` times the fraction of positives below it, so a sample weighs by how far it
        is interleaved with the other class, and the Newton step of a leaf is about one unit
        of score for the samples that are out of place; ``floor`` keeps every sample's term
        positive (a sample in place has a zero gradient).
    ``"balanced"``
        The hinge's own scale: ``1 / P`` for a positive and ``1 / N`` for a negative of a
        query with P positives and N negatives (the gradient of a positive lies in
        ``[-2 / P, 0]``, of a negative in ``[0, 2 / N]``), so a leaf's Newton step is of the
        order of the hinge's margin.

    Gradient and hessian are multiplied by ``factor = n / 2`` (n training samples), which
    makes the balanced term sum to n where every query has both classes.

    Parameters
    ----------
    labels : array-like of shape (n,)
        Training labels: binary, or graded (a sample is relevant where its label is at least
        ``positive_level``; the hinges are of binary relevance, NDCG included).
    qid : array-like of shape (n,), optional
        Each training sample's query (in any order); None: all the samples form one query.
    loss : {"ap", "ndcg"}, default "ap"
        The ranking loss whose hinge is minimised.
    hessian : {"rank", "balanced"}, default "rank"
        The second-order term (see above).
    scale : float, default 1.0
        Multiplies the balanced term (and the floor of the rank one): larger, shorter leaf
        steps.
    floor : float, default 0.01
        For ``hessian="rank"``: the share of the balanced term every sample keeps (positive).
    positive_level : int, default 1
        The least label that counts as relevant.

    Examples
    --------
    >>> import numpy as np
    >>> from aprank.boost import HingeObjective
    >>> objective = HingeObjective(np.array([1, 0, 1, 0]))
    >>> grad, hess = objective(np.zeros(4))   # every score tied: the negatives rank first
    >>> grad.tolist()
    [-2.0, 2.0, -2.0, 2.0]
    """

    #: the second-order terms this class computes (a subclass may add its own)
    HESSIANS: tuple = HESSIANS

    def __init__(self, labels, qid=None, *, loss="ap", hessian="rank", scale=1.0, floor=0.01,
                 positive_level=1):
        if loss not in LOSSES:
            raise ValueError(f"loss={loss!r}: one of {LOSSES}")
        if hessian not in self.HESSIANS:
            raise ValueError(f"hessian={hessian!r}: one of {self.HESSIANS}")
        if not scale > 0:
            raise ValueError(f"scale={scale!r}: positive")
        if not floor > 0:
            raise ValueError(f"floor={floor!r}: positive (the rank hessian of a sample in place "
                             "is floor times its balanced term)")
        labels = np.asarray(labels)
        if labels.ndim != 1:
            raise ValueError(f"labels must be 1-D, got shape {labels.shape}")
        self.is_pos = labels >= positive_level
        self.n = self.is_pos.shape[0]
        self.loss, self.hessian_kind, self.scale, self.floor = loss, hessian, scale, floor
        self.qid = np.zeros(self.n, np.int64) if qid is None else np.asarray(qid)
        if self.qid.shape != (self.n,):
            raise ValueError(f"qid must be 1-D with one entry per label ({self.n}), got shape "
                             f"{self.qid.shape}")
        self._problem, self._bal = self.fixed_queries()
        #: one constant for gradient and hessian: the balanced term sums to n
        self.factor = self.n / 2.0

    # The steps of a round, the extension points of a subclass (one that draws its queries
    # each round, perturbs the scores or takes another second-order term overrides them).
    def fixed_queries(self):
        """The problem and balanced term of ``qid``, built once at construction.

        Returns
        -------
        tuple
            (:class:`~aprank.inference.RankingProblem`, ndarray of shape (n,)), or what a
            subclass that draws its queries each round keeps instead.
        """
        return self.make_problem(self.qid), self.balanced(self.qid)

    def make_problem(self, qid) -> RankingProblem:
        """The ranking problem of the training labels over queries ``qid`` (queries without
        a relevant sample skipped).

        Parameters
        ----------
        qid : ndarray of shape (n,)
            Each sample's query.

        Returns
        -------
        RankingProblem
        """
        return RankingProblem(self.is_pos, self.loss, qid=qid, empty="skip")

    def round_queries(self):
        """This round's problem and balanced term (those of :meth:`fixed_queries`).

        Returns
        -------
        tuple
            (RankingProblem, ndarray of shape (n,)).
        """
        return self._problem, self._bal

    def round_subgradient(self, problem: RankingProblem, scores: np.ndarray) -> np.ndarray:
        """This round's subgradient at ``scores`` (:meth:`subgradient`).

        Parameters
        ----------
        problem : RankingProblem
            This round's problem.
        scores : ndarray of shape (n,)
            The current scores.

        Returns
        -------
        ndarray of shape (n,)
        """
        return self.subgradient(problem, scores)

    def second_order(self, g: np.ndarray, bal: np.ndarray) -> np.ndarray:
        """The second-order term of a round from its subgradient ``g`` and balanced term
        ``bal`` (``hessian``: see the class).

        Parameters
        ----------
        g : ndarray of shape (n,)
            The round's subgradient.
        bal : ndarray of shape (n,)
            The round's balanced term.

        Returns
        -------
        ndarray of shape (n,)
        """
        h = self.scale * bal
        if self.hessian_kind == "rank":
            h = np.abs(g) + self.floor * h
        return h

    def _terms(self, scores: np.ndarray):
        """(gradient, hessian, balanced term) of one round, before the common factor."""
        problem, bal = self.round_queries()
        g = self.round_subgradient(problem, scores)
        return g, self.second_order(g, bal), bal

    # the public face
    @staticmethod
    def subgradient(problem: RankingProblem, scores) -> np.ndarray:
        """Mean over the used queries of ``coef - truth_coef`` of the most violated rankings.

        Parameters
        ----------
        problem : RankingProblem
            The training labels and queries.
        scores : ndarray of shape (n,)
            The current scores.

        Returns
        -------
        ndarray of shape (n,)
            The subgradient (zero where no query is used).
        """
        r = problem.solve(scores)
        used = max(int(r.used.sum()), 1)
        return (r.coef - r.truth_coef) / used

    def balanced(self, qid) -> np.ndarray:
        """The balanced term of queries ``qid``: ``1 / P`` per positive, ``1 / N`` per negative
        of each query, divided by the number of used queries (those with a positive);
        ``1 / n_q`` per sample of a query left out or without negatives.

        Parameters
        ----------
        qid : ndarray of shape (n,)
            Each sample's query.

        Returns
        -------
        ndarray of shape (n,)
        """
        return _balanced(self.is_pos, np.asarray(qid))

    def grad_hess(self, scores):
        """(gradient, hessian) at ``scores``, before the common factor.

        Parameters
        ----------
        scores : array-like of shape (n,)
            The booster's current raw scores of the training samples.

        Returns
        -------
        tuple of two ndarray of shape (n,)
        """
        g, h, _ = self._terms(np.asarray(scores, dtype=np.float64).ravel())
        return g, h

    def gradient(self, scores) -> np.ndarray:
        """The gradient at ``scores``, before the common factor (see :meth:`grad_hess`)."""
        return self.grad_hess(scores)[0]

    def hessian(self, scores) -> np.ndarray:
        """The second-order term at ``scores``, before the common factor (see
        :meth:`grad_hess`)."""
        return self.grad_hess(scores)[1]

    def __call__(self, preds, dataset=None):
        """``(grad, hess)`` times ``factor``: the objective of
        ``lightgbm.train(params={"objective": self})`` and ``xgboost.train(obj=self)``.

        Parameters
        ----------
        preds : array-like of shape (n,)
            The current raw scores of the training samples, in the order of ``labels``.
        dataset : object, optional
            The booster's training set; not read (the labels are the object's).

        Returns
        -------
        tuple of two ndarray of shape (n,)
        """
        g, h = self.grad_hess(preds)
        return self.factor * g, self.factor * h

    def sklearn(self, y_true, y_pred):
        """The same, in the argument order of the scikit-learn interfaces of LightGBM and
        XGBoost (``objective=``); ``y_true`` is not read (the labels are the object's).

        Parameters
        ----------
        y_true : array-like of shape (n,)
            Ignored.
        y_pred : array-like of shape (n,)
            The current raw scores.

        Returns
        -------
        tuple of two ndarray of shape (n,)
        """
        return self(y_pred)
