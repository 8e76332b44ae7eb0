"""The labelling kind's registry entries: the compiled weighted 0-1 kernel and the oracle."""
from __future__ import annotations

import aprank.inference.labelling._zero_one_cy as _zero_one_cy
from aprank.inference._registry import Algorithm, ProblemKind, per_query_seconds
from aprank.inference.labelling._instances import LabellingInstances
from aprank.inference.labelling._oracle import MAX_SAMPLES, run_brute
from aprank.inference.labelling._problem import LabellingProblem

__all__ = ["run_zero_one", "KINDS", "ALGORITHMS"]


def run_zero_one(call) -> None:
    """The compiled kernel: per query, every sample whose flip raises the objective is flipped
    (Dokania et al. 2014, eq. 7), all queries in one call."""
    J = call.loss.J
    _zero_one_cy.zero_one_queries(
        call.scores, call.is_pos.view("uint8"), call.order, call.offsets,
        -1.0 if J is None else J, call.labelling, call.ranks, call.coef, call.query_loss,
        call.query_objective,
    )


def _linear_cost(P, N):
    return N + P


def _brute_labelling_cost(P, N):
    return 2 ** (P + N) * (P + N)


#: Microseconds per unit of each cost model and per query (``seconds``, the warning of a call
#: over a minute): zero-one timed per sample at n = 1e6 (its validation included), brute per
#: unit over queries of 12-14 samples; rounded up (the measurements: docs/benchmarks/kinds.md,
#: Cost models).
_US_ZERO_ONE, _US_BRUTE = (0.01, 0.1), (0.05, 1.0)

KINDS = (
    ProblemKind("labelling", "scores and binary labels per query -> the most violated "
                "labelling (the weighted 0-1 loss)", LabellingProblem, LabellingInstances(),
                oracle="brute", default="zero-one"),
)

ALGORITHMS = (
    Algorithm("zero-one", "labelling", ("zero-one",), True, "O(N + P)",
              "Dokania et al. (2014), eq. 7 (weighted 0-1 loss)", run_zero_one, cost=_linear_cost,
              seconds=per_query_seconds(_linear_cost, *_US_ZERO_ONE)),
    Algorithm("brute", "labelling", None, True, "O(2^n n)",
              "exhaustive over labellings: the oracle", run_brute, cost=_brute_labelling_cost,
              max_samples=MAX_SAMPLES,
              seconds=per_query_seconds(_brute_labelling_cost, *_US_BRUTE)),
)
