"""Runners that hand a Problem to the compiled kernels."""
from __future__ import annotations

from aprank.inference import _driver_cy, _zero_one_cy


def ranking_runner(kernel_module, *, discount_table: bool = False):
    """run(problem) for a kernel module exposing SOLVE (see _driver_cy.rank_queries).

    discount_table: give the kernel the default NDCG discount as a table instead of computing
    logarithms on the fly; worth its O(n) memory only for algorithms that scan O(PN) ranks.
    """
    solve = kernel_module.SOLVE

    def run(problem):
        loss = problem.loss
        _driver_cy.rank_queries(
            solve, problem.scores, problem.is_pos.view("uint8"), problem.order, problem.offsets,
            loss._kind, loss.kernel_discount(problem.max_query_size, discount_table),
            problem.n_pos, problem.ranks, problem.coef, problem.query_loss, problem.query_objective,
        )

    return run


def finish_given_ranks(problem):
    """Fill coefficients, positive ranks, loss and objective from the negatives' ranks already
    in ``problem.ranks`` (used for user algorithms)."""
    loss = problem.loss
    _driver_cy.rank_queries(
        None, problem.scores, problem.is_pos.view("uint8"), problem.order, problem.offsets,
        loss._kind, loss.kernel_discount(problem.max_query_size), problem.n_pos,
        problem.ranks, problem.coef, problem.query_loss, problem.query_objective,
    )


def run_zero_one(problem):
    J = problem.loss.J
    _zero_one_cy.zero_one_queries(
        problem.scores, problem.is_pos.view("uint8"), problem.order, problem.offsets,
        -1.0 if J is None else J, problem.labelling, problem.ranks, problem.coef, problem.query_loss,
        problem.query_objective,
    )
