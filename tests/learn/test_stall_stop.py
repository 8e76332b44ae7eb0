"""Where a fit stops unconverged before ``max_iter``: the gap between the least primal and the
greatest dual recorded has not fallen in ``STALL_ITERATIONS`` iterations
(``CuttingPlaneRun.stalled``). Toy solvers write the records the rule reads; the digits at
C = 1e4 are a fit whose gap stands still for good."""
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from aprank.learn import (
    STALL_ITERATIONS,
    BinarySVM,
    Solver,
    cutting_plane,
    register_solver,
    unregister_solver,
)
from aprank.models import RankingModel
from aprank_support.synthetic import grouped


class Scripted(Solver):
    """Records primal ``primals(i)`` and dual ``duals(i)`` at iteration i, never converges,
    never moves w."""

    def __init__(self, primals, duals):
        self.primals, self.duals = primals, duals

    def start(self, run):
        self.i = 0

    def iterate(self, run):
        self.i += 1
        run.record(self.primals(self.i), 0.0, 0.0, 0.0, w=run.w, dual=self.duals(self.i))
        return None

    def grow(self, run):
        pass

    def finish(self, run):
        return run.w


@pytest.fixture
def scripted_fit():
    """fit(primals, duals, max_iter): the CuttingPlaneResult of a Scripted solver's run."""
    X, y, groups = grouped(n_groups=12, size=8, d=4, seed=3)
    model = RankingModel(np.c_[X, np.ones(len(y))], y == 1, "zero-one", qid=groups % 3,
                         algorithm="zero-one")

    def fit(primals, duals, max_iter):
        register_solver("scripted", lambda: Scripted(primals, duals))
        try:
            return cutting_plane(model, 1.0, max_iter=max_iter, solver="scripted")
        finally:
            unregister_solver("scripted")

    return fit


def test_a_gap_that_stands_still_stops_the_loop_after_the_window(scripted_fit):
    res = scripted_fit(lambda i: 2.0, lambda i: 1.0, max_iter=1000)
    assert res.n_iter == STALL_ITERATIONS + 1 and res.stalled and not res.converged


def test_a_gap_that_falls_by_any_amount_keeps_the_loop_going(scripted_fit):
    # the dual creeps up by 1e-12 a record: the gap falls every iteration
    res = scripted_fit(lambda i: 2.0, lambda i: 1.0 + 1e-12 * i, max_iter=3 * STALL_ITERATIONS)
    assert res.n_iter == 3 * STALL_ITERATIONS and not res.stalled
    # a new least primal after a still stretch shorter than the window restarts it
    res = scripted_fit(lambda i: 2.0 - 0.1 * (i // (STALL_ITERATIONS - 1)), lambda i: 1.0,
                       max_iter=4 * STALL_ITERATIONS)
    assert res.n_iter == 4 * STALL_ITERATIONS and not res.stalled


def test_a_gap_never_finite_never_stalls(scripted_fit):
    res = scripted_fit(lambda i: 2.0, lambda i: float("nan"), max_iter=2 * STALL_ITERATIONS)
    assert res.n_iter == 2 * STALL_ITERATIONS and not res.stalled


def test_a_large_C_on_raw_pixels_stops_where_its_gap_stands_still_and_says_raise_tol():
    # the raw 0-16 pixels at C = 1e4: the gap stands at 0.02-0.04 against the rule's 0.001
    from sklearn.datasets import load_digits

    X, digit = load_digits(return_X_y=True)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        fit = BinarySVM(C=1e4).fit(X[600:], digit[600:] == 8)
    told = [str(w.message) for w in said if w.category is ConvergenceWarning]
    assert not fit.converged_ and fit.n_iter_ < fit.max_iter
    assert len(told) == 1 and "raise tol" in told[0] and "max_iter" not in told[0]
    gaps = [h["primal"] for h in fit.history_], [h["dual"] for h in fit.history_]
    bound_gap = np.minimum.accumulate(gaps[0]) - np.maximum.accumulate(gaps[1])
    assert bound_gap[-1] == bound_gap[-1 - STALL_ITERATIONS] > fit.tol
