"""``aprank.infer``: loss-augmented inference through the registry."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from aprank import _registry
from aprank._problem import Problem
from aprank.losses import get_loss

__all__ = ["InferenceResult", "infer", "solve_problem"]


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
