"""What every model of the nonlinear experiment is to its harness (``experiments.nonlinear``).

A model is a :class:`Candidate`: a name, the hyper-parameter settings the harness searches by
inner cross-validation, and one function that fits on a training part and scores evaluation
parts. Training budgets (epochs of a network, rounds of a boosted ensemble) are not in the
grid: one fit reports its scores after each budget of ``budgets``, so that choosing the budget
costs no extra fits.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["Task", "Candidate"]


@dataclass(frozen=True)
class Task:
    """A data set of the experiment: its rows are the columns of ``Y``.

    Attributes
    ----------
    name : str
        The data set's name in the table.
    X : ndarray of shape (n, d), float64
        Features, as loaded (models standardise on their training part where they need it).
    Y : ndarray of shape (n, L), int64
        Labels: 0/1 per column for one-against-the-rest tasks (each column ranks every
        sample), graded relevance 0-4 for a ranking data set (L = 1, queries in ``qid``).
    row_names : tuple of str
        One name per column of ``Y``.
    groups : ndarray of shape (n,)
        Samples that must stay on one side of every split (a recording, a bag, a query).
    qid : ndarray of shape (n,) or None
        Query of each sample where the data set is a ranking one; None: each column ranks all
        samples of a part.
    positive_level : int
        A sample is relevant (a positive for AP) where its label is at least this.
    """

    name: str
    X: np.ndarray
    Y: np.ndarray
    row_names: tuple
    groups: np.ndarray
    qid: np.ndarray | None = None
    positive_level: int = 1

    @property
    def graded(self) -> bool:
        """Whether labels are graded relevance (NDCG reported beside AP)."""
        return self.positive_level > 1


#: fit_predict(params, X, Y, qid, X_evals, seed, positive_level) ->
#:     {budget: [scores of shape (len(X_eval), L) for each X_eval in X_evals]}
FitPredict = Callable[[dict, np.ndarray, np.ndarray, "np.ndarray | None", Sequence[np.ndarray],
                       int, int], dict]


@dataclass(frozen=True)
class Candidate:
    """A model of the experiment.

    Attributes
    ----------
    name : str
        Its row in the tables.
    family : {"network", "trees"}
        Where it is compared.
    settings : str
        Its fixed settings in one line (the table's notes print it).
    grid : tuple of dict
        Hyper-parameter settings searched by inner cross-validation (each with every budget).
    budgets : tuple of int
        Training budgets reported by one fit (epochs, rounds), increasing.
    fit_predict : FitPredict
        Fits on ``X, Y`` (all columns at once or one model per column, as the model is) with
        ``params`` and returns the scores of each ``X_eval`` after each budget. ``qid`` is the
        training samples' query (None for one-against-the-rest tasks); ``positive_level`` as in
        :class:`Task`. Deterministic for a given ``seed``.
    """

    name: str
    family: str
    settings: str
    grid: tuple
    budgets: tuple
    fit_predict: FitPredict
