"""Runners that hand a validated call (see ``_problem.Call``) to the compiled kernels."""
from __future__ import annotations

import numpy as np

from aprank.inference import _driver_cy, _zero_one_cy


def _rank_queries(solve, call, discount_table: bool = False, choice=None) -> None:
    spec = call.loss.kernel_spec(call.max_query_size, discount_table)
    _driver_cy.rank_queries(
        solve, call.scores, call.is_pos.view("uint8"), call.order, call.offsets, spec.code,
        spec.discount, call.n_pos, call.ranks, call.coef, call.query_loss, call.query_objective,
        call.truth_out(), choice,
    )


class RankingKernel:
    """run(call) for a kernel module exposing SOLVE (see _driver_cy.rank_queries).

    discount_table: give the kernel the default NDCG discount as a table instead of computing
    logarithms on the fly; worth its O(n) memory only for algorithms that scan O(PN) ranks.
    """

    def __init__(self, kernel_module, *, discount_table: bool = False):
        self.solve = kernel_module.SOLVE
        self.discount_table = discount_table

    def __call__(self, call) -> None:
        _rank_queries(self.solve, call, self.discount_table)


class AutoKernel:
    """run(call) for the "auto" algorithm: each query runs the kernel that ``rule`` picks from
    its P and N, all queries in one compiled loop (no Python per query).

    candidates : {kernel loss code ("ap", "ndcg"): (kernel modules, rule)}, where
        ``rule(P, N)`` maps arrays of per-query positives and negatives to the index of the
        module to run on each query. Every candidate is an exact kernel, so the choice changes
        the time only: all follow the tie rule and return the same ranks, and the outputs are
        computed from the ranks by the driver alone. No candidate gets NumPy's NDCG discount
        table (``discount_table``, ``ndcg-greedy``'s): it may differ in the last bit from the
        driver's own table (``own_table``), and the results would then depend on the choice.
    """

    def __init__(self, candidates: dict):
        self.candidates = {code: (tuple(m.SOLVE for m in modules), rule)
                           for code, (modules, rule) in candidates.items()}

    def choose(self, call) -> np.ndarray:
        """The index of the kernel each query of ``call`` runs (int8, one per query)."""
        rule = self.candidates[call.loss.kernel_spec(0).code][1]
        P = call.positives
        return np.asarray(rule(P, np.diff(call.offsets) - P), dtype=np.int8)

    def __call__(self, call) -> None:
        solves = self.candidates[call.loss.kernel_spec(0).code][0]
        if len(solves) == 1:        # nothing to choose: no per-query rule to evaluate
            _rank_queries(solves[0], call)
        else:
            _rank_queries(solves, call, choice=self.choose(call))


#: The runs that need of a call only what the driver reads: ``infer`` hands them a
#: ``SingleCall`` (one query, no problem built).
COMPILED_RUNS = (RankingKernel, AutoKernel)


def finish_given_ranks(call) -> None:
    """Fill coefficients, positive ranks, loss and objective from the negatives' ranks already
    in ``call.ranks`` (used for user algorithms)."""
    _rank_queries(None, call)


def run_zero_one(call) -> None:
    J = call.loss.J
    _zero_one_cy.zero_one_queries(
        call.scores, call.is_pos.view("uint8"), call.order, call.offsets,
        -1.0 if J is None else J, call.labelling, call.ranks, call.coef, call.query_loss,
        call.query_objective,
    )
