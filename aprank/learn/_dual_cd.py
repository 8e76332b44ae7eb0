"""Dual coordinate descent for a risk that is a sum of hinges (the 0-1 loss's structural SVM).

The 1-slack structural SVM of a decomposable loss, min_w 1/2 ||w||^2 + C xi with xi the
maximum over labellings, is the hinge-loss SVM min_w 1/2 ||w||^2 + C sum_i a_i max(0, 1 -
s_i x_i'w): the most violated labelling flips exactly the samples of margin below 1. Its dual
over one multiplier per sample, max sum_i alpha_i - 1/2 ||w(alpha)||^2 with 0 <= alpha_i <= C a_i
and w(alpha) = sum_i alpha_i s_i x_i, is what liblinear's dual coordinate descent solves
(Hsieh et al., ICML 2008); the compiled epochs are in ``_dual_cd_cy.pyx``. Its dual objective is
a lower bound of the same primal, so primal - dual is a true duality gap of the structural SVM
and the stopping rule and gap mean what they mean for the cutting planes.
"""
from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from aprank.learn._dual_cd_cy import epochs as _epochs

__all__ = ["HingeDual"]


class HingeDual:
    """The dual of a sum of hinges at one C, advanced by epochs of coordinate descent.

    Parameters
    ----------
    X : ndarray of shape (n, d), C-contiguous float64, or CSR matrix of float64
        The samples x_i (the model's design matrix).
    weight : ndarray of shape (n,)
        a_i >= 0, each hinge's weight in the risk (0: not in it).
    sign : ndarray of shape (n,)
        s_i in {-1, +1}.
    C : float
        The weight of the risk.
    fractions : ndarray of shape (n,), optional
        beta_i = alpha_i / (C a_i) of an earlier solve of the same hinges (at any C), to start
        from; else alpha = 0.
    """

    def __init__(self, X, weight: np.ndarray, sign: np.ndarray, C: float, fractions=None):
        n, d = X.shape
        self.X, self.C = X, float(C)
        self.sign = np.ascontiguousarray(sign, dtype=np.float64)
        self.bound = np.ascontiguousarray(C * np.asarray(weight, dtype=np.float64))
        if self.sign.shape != (n,) or self.bound.shape != (n,):
            raise ValueError(f"weight and sign must hold one value per sample ({n})")
        if sp.issparse(X):
            X = X.tocsr()
            self._dense = np.zeros((1, 1))
            self._data = np.ascontiguousarray(X.data, dtype=np.float64)
            self._indices = X.indices.astype(np.int64)
            self._indptr = X.indptr.astype(np.int64)
            sqnorm = np.asarray(X.multiply(X).sum(axis=1)).ravel()
        else:
            self._dense = np.ascontiguousarray(X, dtype=np.float64)
            self._data = np.zeros(0)
            self._indices = self._indptr = np.zeros(1, dtype=np.int64)
            sqnorm = np.einsum("ij,ij->i", self._dense, self._dense)
        self._sparse, self._d = sp.issparse(X), d
        self.sqnorm = np.ascontiguousarray(sqnorm, dtype=np.float64)
        self.alpha = np.zeros(n)
        if fractions is not None:
            fractions = np.asarray(fractions, dtype=np.float64)
            if fractions.shape == (n,):
                self.alpha = np.clip(fractions, 0.0, 1.0) * self.bound
        # a sample with x_i = 0 has gradient -1 whatever w: its multiplier sits at its bound
        zero = self.sqnorm <= 0.0
        self.alpha[zero] = self.bound[zero]
        self.units = np.flatnonzero((self.bound > 0) & ~zero).astype(np.intp)
        self.w = self._weights()
        self.epochs = 0
        self.visits = 0         # units visited over all epochs (one row product each)
        self.work = 0.0         # the multiply-adds of those row products
        self.eps = 1e-2

    def _weights(self) -> np.ndarray:
        """w(alpha), computed afresh (the epochs' running w gathers rounding)."""
        return np.asarray(self.X.T @ (self.alpha * self.sign), dtype=np.float64).ravel()

    @property
    def passes(self) -> float:
        """The epochs' work so far in full epochs: units visited / units (shrinking makes an
        epoch visit fewer)."""
        return self.visits / max(self.units.shape[0], 1)

    def run(self, max_epochs: int) -> float:
        """Up to ``max_epochs`` epochs (fewer when the projected gradients span at most the
        current ``eps``, which then shrinks tenfold for the next call); returns their seconds."""
        t0 = time.perf_counter()
        run, spread, visits, work = _epochs(
            self._dense, self._data, self._indices, self._indptr, self._sparse, self._d,
            self.sign, self.bound, self.sqnorm, self.alpha, self.w, self.units,
            int(max_epochs), self.eps, self.epochs + 1)
        self.epochs += run
        self.visits += visits
        self.work += work
        if spread <= self.eps:
            self.eps *= 0.1
        self.w = self._weights()
        return time.perf_counter() - t0

    def risk(self) -> float:
        """sum_i a_i max(0, 1 - s_i x_i'w) at the current w (C times it is the primal's)."""
        margins = self.sign * np.asarray(self.X @ self.w).ravel()
        hinge = np.maximum(0.0, 1.0 - margins)
        return float(self.bound @ hinge) / self.C

    @property
    def dual(self) -> float:
        """sum_i alpha_i - 1/2 ||w(alpha)||^2: a lower bound of the primal's minimum."""
        return float(self.alpha.sum()) - 0.5 * float(self.w @ self.w)

    @property
    def fractions(self) -> np.ndarray:
        """beta_i = alpha_i / (C a_i) (0 where a_i = 0): the state a warm start carries to
        another C."""
        return np.divide(self.alpha, self.bound, out=np.zeros_like(self.alpha),
                         where=self.bound > 0)
