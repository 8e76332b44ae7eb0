"""What a solve is estimated to cost before it runs, for callers that plan many (the learners).

:func:`solve_seconds` asks an algorithm's ``seconds`` model (the registry's, the same that
warns before a long call) about the very call that ``problem.solve`` would hand the algorithm,
for a problem of any kind: the solve runs up to where it would start the algorithm (its
validation and the call's set-up, linear in the input) and a stand-in entry reports the
estimate there instead of running. :func:`slow_call_seconds` is the estimate at which a call
warns.
"""
from __future__ import annotations

import dataclasses

from aprank.inference import _registry
from aprank.inference._protocol import Problem

__all__ = ["solve_seconds", "slow_call_seconds"]


class _Estimated(Exception):
    """Carries the estimate out of the stand-in's ``run``."""

    def __init__(self, seconds: float):
        super().__init__(seconds)
        self.seconds = seconds


def solve_seconds(problem: Problem, scores, algorithm=None, **inputs) -> float | None:
    """Seconds that one run of the algorithm in ``problem.solve(scores, algorithm, **inputs)``
    is estimated to take, by its ``seconds`` model; None for an algorithm without one.

    Parameters
    ----------
    problem : Problem
        A problem of any kind.
    scores : array-like
        Scores of the shape the solve takes. The estimate reads what the call reads (query
        sizes, components of the pairs with non-zero scores, the core), not their values.
    algorithm : str, Algorithm or None
        As for ``problem.solve``.
    **inputs
        The kind's own inputs of ``problem.solve`` (e.g. the pairwise kind's ``edge_scores``,
        whose non-zero entries link the components the estimate counts).

    Returns
    -------
    float or None
        The estimate of one run (the top-k kind's solve runs its algorithm twice: a
        loss-augmented and a reference subset). Nothing is solved and nothing warns.

    Raises
    ------
    ValueError
        What the solve itself would raise for these inputs (e.g. an enumerating algorithm
        given more samples than it accepts).
    """
    algo = _registry.as_algorithm(problem.loss, algorithm)
    if algo.seconds is None:
        return None
    estimate = algo.seconds

    def run(call):
        raise _Estimated(_registry._as_float(estimate(call)))

    # no cost models on the stand-in: the solve's own warning does not fire for it, and its
    # name differs so that a problem's record of the calls it has warned about stays as it was
    stand_in = dataclasses.replace(algo, name=f"{algo.name}.estimate", run=run, cost=None,
                                   seconds=None, builtin=False)
    try:
        problem.solve(scores, stand_in, **inputs)
    except _Estimated as found:
        return found.seconds
    return 0.0      # the solve had nothing to run the algorithm on


def slow_call_seconds() -> float:
    """The estimate, in seconds, at which a call warns before it starts (a
    :class:`~aprank.inference.SlowAlgorithmWarning`), and a learner before a fit: the registry's
    ``SLOW_CALL_SECONDS``, read when asked."""
    return float(_registry.SLOW_CALL_SECONDS)
