"""A cross-validated estimator whose chosen C lies at an edge of its grid, where the mean test
score still rises toward the edge, says so once in a GridEdgeWarning naming ``Cs`` and the
edge, as a user of scikit-learn's ``LogisticRegressionCV`` reads ``C_`` against ``Cs_``; a C
inside the grid, a grid of one C and a flat curve (the smallest C chosen among equals) are
quiet.

The warnings are recorded under explicit filters, so the tests hold whether or not the
project's pytest configuration makes GridEdgeWarning an error.
"""
import warnings

import numpy as np
import pytest
from sklearn.model_selection import cross_validate

from aprank.learn import APSVMCV, NDCGSVMCV, BinarySVMCV, GridEdgeWarning

CV_CLASSES = [APSVMCV, NDCGSVMCV, BinarySVMCV]
#: C far too small for digits: every class's score rises toward the top of this grid
SMALL = [1e-4, 1e-3, 1e-2]


def _edge_warnings(call, action="always"):
    """The GridEdgeWarnings ``call()`` issues under the filter ``action``, and its value."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter(action)
        value = call()
    return [w for w in record if issubclass(w.category, GridEdgeWarning)], value


def _quiet(call):
    """``call()`` under GridEdgeWarning as an error; its value."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", GridEdgeWarning)
        return call()


def test_the_default_grid_on_digits_says_its_top_edge_once(unit_digits):
    """Digit 1 against the rest: the default grid (1e-4 to 1e4) chooses its top, 1e4."""
    X, digit = unit_digits
    said, cv = _edge_warnings(lambda: APSVMCV().fit(X, digit == 1))
    assert cv.C_ == 1e4 and cv.best_index_ == len(cv.Cs_) - 1
    assert len(said) == 1, [str(w.message) for w in said]
    message = str(said[0].message)
    assert "C_ = 10000, the highest C of its grid Cs (0.0001 to 10000)" in message, message
    assert "widen Cs above 10000" in message, message
    assert said[0].filename == __file__           # the line that started the fit


def test_the_bottom_edge_is_said_when_it_scores_above_the_next(unit_digits):
    """Digit 6: the smallest C of the default grid scores best, above the next."""
    X, digit = unit_digits
    said, cv = _edge_warnings(lambda: APSVMCV().fit(X, digit == 6))
    means = cv.cv_results_["mean_test_score"]
    assert cv.best_index_ == 0 and means[0] > means[1]
    assert len(said) == 1 and "the lowest C of its grid Cs" in str(said[0].message)
    assert "widen Cs below 0.0001" in str(said[0].message)


@pytest.mark.parametrize("cls", CV_CLASSES, ids=lambda c: c.__name__)
def test_every_cv_estimator_says_its_top_edge(cls, unit_digits):
    X, digit = unit_digits
    said, cv = _edge_warnings(lambda: cls(Cs=SMALL, cv=3, refit=False).fit(X, digit == 1))
    assert cv.C_ == SMALL[-1]
    assert len(said) == 1 and str(said[0].message).startswith(f"{cls.__name__} chose C_ = 0.01")


@pytest.mark.parametrize("cls,Cs,folds", [(APSVMCV, 5, None), (NDCGSVMCV, 5, None),
                                          (BinarySVMCV, [1e-3, 1e-2, 0.1, 1.0], 3)],
                         ids=["APSVMCV", "NDCGSVMCV", "BinarySVMCV"])
def test_a_choice_inside_the_grid_is_quiet(cls, Cs, folds, unit_digits):
    """Digit 3: a C inside the grid scores best (1e2 of the default grid; 1e-2 of a grid that
    keeps BinarySVMCV's fits cheap)."""
    X, digit = unit_digits
    cv = _quiet(lambda: cls(Cs=Cs, cv=folds).fit(X, digit == 3))
    assert 0 < cv.best_index_ < len(cv.Cs_) - 1


@pytest.mark.parametrize("cls", CV_CLASSES, ids=lambda c: c.__name__)
def test_a_grid_of_one_c_is_quiet(cls, unit_digits):
    X, digit = unit_digits
    cv = _quiet(lambda: cls(Cs=[1e-2], cv=3).fit(X, digit == 1))
    assert cv.C_ == 1e-2


@pytest.mark.parametrize("cls", CV_CLASSES, ids=lambda c: c.__name__)
def test_a_flat_curve_choosing_the_smallest_c_is_quiet(cls):
    """One feature that separates the classes: every C ranks every fold alike, the curve is
    flat and the rule takes the smallest C, which says nothing of a better C below it."""
    rng = np.random.default_rng(0)
    y = rng.random(300) < 0.3
    X = (y + 0.1 * rng.standard_normal(300))[:, None]
    cv = _quiet(lambda: cls(Cs=[0.01, 0.1, 1.0], cv=3).fit(X, y))
    assert cv.best_index_ == 0
    np.testing.assert_array_equal(cv.cv_results_["mean_test_score"], 1.0)


def test_a_cross_validation_of_the_estimator_says_it_once(unit_digits):
    """Each outer fold's fit chooses the top: said once for the whole cross-validation, under
    the filter a user's script runs with."""
    X, digit = unit_digits
    said, _ = _edge_warnings(lambda: cross_validate(APSVMCV(Cs=SMALL, cv=2), X, digit == 1,
                                                    cv=3), action="default")
    assert len(said) == 1 and said[0].filename == __file__, [str(w.message) for w in said]


@pytest.mark.parametrize("cls", CV_CLASSES, ids=lambda c: c.__name__)
def test_the_docstrings_say_what_c_is_and_name_the_warning(cls):
    numpydoc = pytest.importorskip("numpydoc.docscrape", reason="needs numpydoc: pip install "
                                                                "-e \".[test]\"")
    doc = numpydoc.ClassDoc(cls, config={"show_class_members": False})
    c_ = next(a for a in doc["Attributes"] if a.name == "C_")
    assert "GridEdgeWarning" in " ".join(c_.desc)
    assert [w.type for w in doc["Warns"]] == ["GridEdgeWarning"]
    fit = numpydoc.FunctionDoc(cls.fit)
    assert [w.type for w in fit["Warns"]] == ["GridEdgeWarning"]
