"""``aprank.infer``: loss-augmented inference through the registry."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from aprank import _registry
from aprank._problem import Problem
from aprank.losses import get_loss

__all__ = ["InferenceResult", "BatchResult", "infer", "infer_batch", "solve_problem"]


@dataclass(frozen=True)
class InferenceResult:
    """The most violated ranking of one query.

    ranks : int64, one per sample in input order. A negative's interleaving rank is 1 + the
        number of positives ranked above it (1 ... P+1); a positive's is 1 + the number of
        negatives ranked above it. (For the 0-1 loss, see ``aprank.losses.ZeroOne``: the
        labelling is reported as a two-block ranking.)
    coef : float64, one per sample: Psi(X, R) = sum_k coef[k] psi(x_k) for the returned ranking.
    loss : Delta(R*, R).
    objective : Delta(R*, R) + w'Psi(X, R) - w'Psi(X, R*), the constraint violation (>= 0 for an
        exact algorithm, since R* itself scores 0).
    algorithm : name of the algorithm used.
    labelling : for the 0-1 loss, int8 per sample, 1 where the most violated labelling marks
        the sample relevant; None for ranking losses.
    """

    ranks: np.ndarray
    coef: np.ndarray
    loss: float
    objective: float
    algorithm: str
    labelling: np.ndarray | None = None


def _resolve(loss, algorithm):
    """The Loss and the Algorithm, checked to fit each other."""
    loss = get_loss(loss)
    algo = _registry.get(algorithm)
    if not algo.supports(loss.name):
        raise NotImplementedError(
            f"algorithm {algo.name!r} does not support loss {loss.name!r} (it serves "
            f"{', '.join(algo.losses)}); algorithms for {loss.name!r}: "
            f"{[a.name for a in _registry.for_loss(loss.name)]}"
        )
    return loss, algo


def solve_problem(problem: Problem, algo) -> Problem:
    """Run a registry algorithm on a validated problem (checks its size limit first)."""
    if algo.max_samples is not None and problem.max_query_size > algo.max_samples:
        raise ValueError(
            f"algorithm {algo.name!r} enumerates every ranking and refuses queries of more than "
            f"{algo.max_samples} samples (got {problem.max_query_size})"
        )
    algo.run(problem)
    problem.clear_unused()
    return problem


def infer(scores, labels, *, loss="ap", algorithm="qs") -> InferenceResult:
    """Loss-augmented inference: the ranking R maximising Delta(R*, R) + w'Psi(X, R).

    Parameters
    ----------
    scores : array-like (n,)
        Individual scores s_k = w'psi(x_k); any real dtype, any strides, may be read-only.
    labels : array-like (n,)
        Relevance as bool, {0, 1} or {-1, +1}.
    loss : str or aprank.losses.Loss
        "ap", "ndcg", "zero-one", or a Loss instance (e.g. ``NDCG(discount=...)``).
    algorithm : str
        A name from ``aprank.algorithms()``.

    Ties: samples are ordered by descending score, equal scores by ascending input index, and
    among equally good ranks a negative gets the largest (lowest placed) one. Every exact
    algorithm follows this rule, so all return the same ranking.

    Raises
    ------
    ValueError
        Bad input (non-finite scores, non-binary labels, mismatched lengths, 2-D or empty input,
        no positives for AP/NDCG), unknown loss or algorithm.
    NotImplementedError
        The algorithm does not serve the loss.

    The caller's arrays are never modified. With no negatives, loss and objective are 0.
    """
    loss, algo = _resolve(loss, algorithm)
    problem = solve_problem(Problem.build(scores, labels, loss), algo)
    return InferenceResult(problem.ranks, problem.coef, float(problem.query_loss[0]),
                           float(problem.query_objective[0]), algo.name, problem.labelling)


@dataclass(frozen=True)
class BatchResult:
    """The most violated ranking of every query (see :class:`InferenceResult`).

    ranks, coef, labelling : per sample, in input order (coef is per query's joint feature).
    truth_coef : per sample, the coefficients of Psi(X, R*) of its query.
    loss, objective : per query, in the order of ``query_ids``.
    used : per query; False for queries without positives left out under ``empty="skip"``
        (their loss, objective and coefficients are 0).
    """

    ranks: np.ndarray
    coef: np.ndarray
    truth_coef: np.ndarray
    loss: np.ndarray
    objective: np.ndarray
    query_ids: np.ndarray
    used: np.ndarray
    algorithm: str
    labelling: np.ndarray | None = None

    @property
    def mean_loss(self) -> float:
        return float(self.loss[self.used].mean())

    @property
    def mean_objective(self) -> float:
        return float(self.objective[self.used].mean())


def infer_batch(scores, labels, qid, *, loss="ap", algorithm="qs", empty="error") -> BatchResult:
    """Loss-augmented inference for every query at once (one compiled loop over the queries).

    ``qid`` gives each sample's query; a query's samples need not be contiguous. A query
    without positives has no AP or NDCG: ``empty="error"`` raises ValueError naming it,
    ``empty="skip"`` leaves it out (``used`` False). Otherwise as :func:`infer`.
    """
    loss, algo = _resolve(loss, algorithm)
    if qid is None:
        raise ValueError("infer_batch needs qid; use infer for a single query")
    problem = solve_problem(Problem.build(scores, labels, loss, qid=qid, empty=empty), algo)
    return BatchResult(problem.ranks, problem.coef, problem.truth_coef(), problem.query_loss,
                       problem.query_objective, problem.query_ids, problem.used, algo.name,
                       problem.labelling)
