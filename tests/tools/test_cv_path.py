"""python -m benchmarks.cv_path: the C path of the ``*CV`` searches and the looser rules read
from its fits (times are reported, never asserted)."""
import numpy as np

from benchmarks import cv_path


def test_the_looser_rules_stop_no_later_and_agree_with_the_fits_own_at_small_c():
    measured = cv_path.measure(rounds=1, rows_used=300, names=("APSVM",))
    path = measured["paths"]["APSVM"]
    n_folds = measured["n_folds"]
    assert n_folds == 3 and path["seconds"].shape == cv_path.GRID.shape
    for key in ("c_tol", "relative"):
        assert np.all(path[f"iterations_{key}"] >= n_folds)
        assert np.all(path[f"iterations_{key}"] <= path["iterations"])
        assert np.all(path[f"at_{key}"] <= path["seconds"])
    # at C <= 1 the fit's own rule, gap <= min(1, C) tol, is gap <= C tol: a fit that met it
    # stopped at the first iteration that did
    small = (cv_path.GRID <= 1.0) & (path["converged"] == n_folds)
    assert small.sum() >= 2
    assert np.array_equal(path["iterations_c_tol"][small], path["iterations"][small])


def test_the_table_has_a_row_per_c_and_a_total():
    measured = {"paths": {"APSVM": {key: np.arange(1.0, 6.0) for key in
                                    ("seconds", "iterations", "converged", "at_c_tol",
                                     "at_relative", "iterations_c_tol",
                                     "iterations_relative")}},
                "logistic": 0.5, "n_folds": 3}
    text = cv_path.table(measured)
    assert text.count("\n| APSVM |") == len(cv_path.GRID) + 1
    assert "| APSVM | all | 15.000 | 15 | | 15.000 (15) | 15.000 (15) |" in text
    assert "on the same folds: 0.500 s" in text
