"""The c-star precision@k model of Mensink et al. (2011): per-label scores plus label interactions
on a core.

For a sample with label scores s (one per label, L labels) the score of a subset t of k labels
is f(t) = t's + t'Ft (eq. 6), F non-zero only in the rows and columns of a core of C labels.
This module holds what the model is (the joint feature and which inference to call); the
learner (``aprank.learn.CStarPrecisionAtK``) decides how its parameters are found.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from aprank.inference import TopKProblem, solve_seconds
from aprank.losses import PrecisionAtK

__all__ = ["CStarModel", "CStarBound", "greedy_core"]


@dataclass
class CStarBound:
    """The loss bound of eq. 8 for every sample, and its subgradient.

    Attributes
    ----------
    bound : ndarray of shape (n,)
        Per sample, max_t [Delta + f(t)] - f(t_ref) (0 for samples left out).
    loss : ndarray of shape (n,)
        Per sample, Delta(t*, z) of the most violated subset.
    grad_scores : ndarray of shape (n, L)
        d bound / d s = t* - t_ref (eq. 9).
    grad_interactions : ndarray of shape (L, L)
        The sum over samples of t* t*' - t_ref t_ref' (eq. 9, unsymmetrised: f = t'Ft counts
        F[i, j] and F[j, i] separately), zero outside the core's rows and columns.
    used : ndarray of bool, shape (n,)
        Per sample, False where it was left out (break-even k without relevant labels).
    """

    bound: np.ndarray
    loss: np.ndarray
    grad_scores: np.ndarray
    grad_interactions: np.ndarray
    used: np.ndarray


def _mutual_information(a: np.ndarray, b: np.ndarray) -> float:
    """Empirical mutual information (nats) of two discrete label codes."""
    _, ia = np.unique(a, return_inverse=True)
    _, ib = np.unique(b, return_inverse=True)
    joint = np.zeros((ia.max() + 1, ib.max() + 1))
    np.add.at(joint, (ia, ib), 1.0)
    joint /= joint.sum()
    pa, pb = joint.sum(1, keepdims=True), joint.sum(0, keepdims=True)
    nz = joint > 0
    return float((joint[nz] * np.log(joint[nz] / (pa @ pb)[nz])).sum())


def greedy_core(Y, n_core: int) -> np.ndarray:
    """Core labels chosen greedily for joint mutual information (Mensink et al. 2011, section 5).

    Each step adds the label c maximising the sum over the labels j outside the core of
    I(y_j ; y_{core + c}), the information the joint state of the core carries about the rest
    (empirical, on the training labels).

    Parameters
    ----------
    Y : array-like of shape (n_samples, n_labels)
        The training labels, 0/1 or bool.
    n_core : int
        The core size (at most the number of labels is used).

    Returns
    -------
    ndarray of int64
        The core's label indices in the order chosen.
    """
    Y = np.asarray(Y, dtype=bool)
    L = Y.shape[1]
    core: list[int] = []
    code = np.zeros(Y.shape[0], dtype=np.int64)
    for _ in range(min(n_core, L)):
        best, best_c = -np.inf, -1
        for c in range(L):
            if c in core:
                continue
            joint = code * 2 + Y[:, c]
            gain = sum(_mutual_information(joint, Y[:, j]) for j in range(L)
                       if j != c and j not in core)
            if gain > best + 1e-12:
                best, best_c = gain, c
        core.append(best_c)
        code = code * 2 + Y[:, best_c]
    return np.array(core, dtype=np.int64)


class CStarModel:
    """Samples with L binary labels each; the c-star score of a label subset.

    Parameters
    ----------
    Y : array-like of shape (n, L)
        The relevant labels of each sample, 0/1 or bool.
    k : "bep" or int, default "bep"
        "bep": k = the sample's number of relevant labels (samples without one are left out);
        an int fixes k.
    core : sequence of int, default ()
        Label indices of the core (may be empty: independent labels).
    """

    def __init__(self, Y, k="bep", core=()):
        Y = np.asarray(Y)
        self.n_samples, self.n_labels = Y.shape
        self.Y = Y.astype(bool)
        self.loss = PrecisionAtK(None if k == "bep" else k)
        self.core = np.asarray(core, dtype=np.int64)
        self.qid = np.repeat(np.arange(self.n_samples), self.n_labels)
        self.mask = np.zeros((self.n_labels, self.n_labels), dtype=bool)
        self.mask[self.core, :] = True
        self.mask[:, self.core] = True

    def problem(self, F=None, Y=None, k=None) -> TopKProblem:
        """The top-k problem of these samples (or of ``Y``) with interactions F."""
        Y = self.Y if Y is None else np.asarray(Y, dtype=bool)
        loss = self.loss if k is None else PrecisionAtK(k)
        core = self.core if self.core.size else None
        F = None if core is None else np.where(self.mask, 0.0 if F is None else F, 0.0)
        return TopKProblem(Y.ravel(), loss, qid=np.repeat(np.arange(Y.shape[0]), self.n_labels),
                           empty="skip", interactions=F, core=core)

    def estimated_seconds(self):
        """Seconds one :meth:`bound` is estimated to take: two runs of the c-star algorithm
        (the loss-augmented and the reference subsets) by its ``seconds`` model."""
        one = solve_seconds(self.problem(), np.zeros(self.n_samples * self.n_labels), "cstar")
        return 2.0 * one

    def bound(self, S, F) -> CStarBound:
        """Loss-augmented inference for every sample at label scores S (n, L)."""
        result = self.problem(F).solve(np.asarray(S, dtype=np.float64).ravel(), "cstar")
        n, L = self.n_samples, self.n_labels
        t, ref = result.coef.reshape(n, L), result.truth_coef.reshape(n, L)
        grad_F = (t.T @ t - ref.T @ ref) * self.mask
        return CStarBound(result.objective, result.loss, t - ref, grad_F, result.used)

    def predict(self, S, F, k, clamp=None, infeasible="raise") -> tuple[np.ndarray, np.ndarray]:
        """(n, L) int8: the best subset of k[m] labels of each sample at scores S, with label
        clamps (n, L) of -1 (out), 0 (free), 1 (in); and the subsets' values. Clamps leaving a
        sample no subset of k[m] labels are a ValueError, or (``infeasible="-inf"``) give it
        value -inf and no label."""
        n = S.shape[0]
        problem = self.problem(F, Y=np.ones((n, self.n_labels), bool), k=1)
        t, value = problem.maximise(np.asarray(S, dtype=np.float64).ravel(), None,
                                    None if clamp is None else np.asarray(clamp).ravel(),
                                    np.asarray(k, dtype=np.int64), infeasible=infeasible)
        return t.reshape(n, self.n_labels), value
