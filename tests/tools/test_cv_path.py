"""python -m benchmarks.cv_path: the C path of the ``*CV`` searches and the looser rules read
from its fits (times are reported, never asserted)."""
import numpy as np
import pytest

from benchmarks import cv_path


@pytest.mark.parametrize("name", ["APSVM", "BinarySVM"])
def test_the_looser_rules_stop_no_later_and_agree_with_the_fits_own_at_small_c(name):
    measured = cv_path.measure(rounds=1, rows_used=300, names=(name,))
    path = measured["paths"][name]
    n_folds = measured["n_folds"]
    assert n_folds == 3 and path["seconds"].shape == cv_path.GRID.shape
    for key in ("c_tol", "relative"):
        assert np.all(path[f"iterations_{key}"] >= n_folds)
        assert np.all(path[f"iterations_{key}"] <= path["iterations"])
        assert np.all(path[f"at_{key}"] <= path["seconds"])
    # where the slack's weight C is at most 1, the fit's own rule, gap <= min(1, C) tol, is
    # gap <= C tol: a fit that met it stopped at the first iteration that did, within the
    # distance that rule promises (BinarySVM's C weighs each of the 200 training rows)
    slack = cv_path.slack_weight(name, cv_path.GRID, 200)
    small = (slack <= 1.0) & (path["converged"] == n_folds)
    assert small.sum() >= 1
    assert np.array_equal(path["iterations_c_tol"][small], path["iterations"][small])
    assert np.all(path["within_fit"][small] <= path["within_c_tol"][small])
    assert np.all(path["within_fit"] > 0) and np.all(np.isfinite(path["within_relative"]))


def test_the_distance_bound_is_that_of_a_1_strongly_convex_objective():
    assert cv_path.distance_bound(0.5) == 1.0 and cv_path.distance_bound(0.02) == 0.2
    assert cv_path.distance_bound(-1e-12) == 0.0


def test_the_table_has_a_row_per_c_and_a_total():
    keys = ("seconds", "iterations", "converged", "at_c_tol", "at_relative", "iterations_c_tol",
            "iterations_relative", "within_fit", "within_c_tol", "within_relative")
    measured = {"paths": {"APSVM": {key: np.arange(1.0, 6.0) for key in keys}},
                "logistic": 0.5, "n_folds": 3}
    text = cv_path.table(measured)
    assert text.count("\n| APSVM |") == len(cv_path.GRID) + 1
    assert "| APSVM | all | 15.000 | 15 | | 15.000 (15) | 15.000 (15) | |" in text
    assert ("| APSVM | 0.0001 | 1.000 | 1 | 1 of 3 | 1.000 (1) | 1.000 (1) "
            "| 1e+02 / 1e+02 / 1e+02 |") in text
    assert "on the same folds: 0.500 s" in text
