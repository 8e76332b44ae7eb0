"""The experiments' choice of C: a grid widened by decades until the choice
is interior, the one-standard-error rule, and an honest count of choices left on an edge."""
import warnings

import numpy as np
import pytest
from sklearn.model_selection import KFold

from experiments.supervised import (
    C_GRID,
    C_LIMITS,
    _cross_validated_C,
    best_mean_choice,
    cv_scores,
    loop_scores,
    one_standard_error_choice,
)


class _Peaked:
    """A stand-in estimator whose validation score peaks at log10(C) = ``peak`` (a tiny
    fold-dependent wobble keeps the standard error positive)."""

    fitted_Cs = []

    def __init__(self, C, peak):
        self.C, self.peak = C, peak

    def fit(self, X, y):
        self.fitted_Cs.append(self.C)
        return self

    def score(self, X, y):
        return -abs(np.log10(self.C) - self.peak) + 1e-6 * X[0, 0]


def _search(peak):
    _Peaked.fitted_Cs = []
    X, y = np.arange(30.0).reshape(-1, 1), np.zeros(30)
    return _cross_validated_C(loop_scores(lambda C: _Peaked(C, peak), X, y, KFold(3)), C_GRID)


@pytest.mark.parametrize("peak, expected, tried", [
    (3, 1e3, (0.1, 1.0, 10.0, 100.0, 1e3, 1e4)),       # one decade past the peak shows it is one
    (-2, 1e-2, (1e-3, 1e-2, 0.1, 1.0, 10.0, 100.0)),
    (1, 10.0, C_GRID),                                # interior at once: nothing added
])
def test_grid_widens_until_the_choice_is_interior(peak, expected, tried):
    choice = _search(peak)
    assert choice.C == expected and not choice.on_edge
    assert choice.tried == tried
    assert sorted(set(_Peaked.fitted_Cs)) == list(tried)     # every C tried was cross-validated


def test_a_choice_beyond_the_limits_is_reported_on_the_edge():
    high, low = _search(9), _search(-9)
    assert (high.C, high.on_edge, max(high.tried)) == (C_LIMITS[1], True, C_LIMITS[1])
    assert (low.C, low.on_edge, min(low.tried)) == (C_LIMITS[0], True, C_LIMITS[0])


def test_widened_decades_are_written_exactly():
    assert all(np.log10(C) == round(np.log10(C)) for C in _search(-9).tried)


def test_one_standard_error_rule_takes_the_smallest_indistinguishable_C():
    scores = {0.1: np.array([0.70, 0.72, 0.71]), 1.0: np.array([0.80, 0.84, 0.82]),
              10.0: np.array([0.81, 0.85, 0.83]), 100.0: np.array([0.60, 0.61, 0.62])}
    # best mean 0.83 at C = 10, standard error 0.02 / sqrt(3) ~ 0.0115: 0.82 at C = 1 is within
    assert one_standard_error_choice(scores) == 1.0
    scores[1.0] = scores[1.0] - 0.02
    assert one_standard_error_choice(scores) == 10.0


class _FlatBelow(_Peaked):
    """Validation score constant for C <= 0.1 (the fits rank alike there), falling above."""

    def score(self, X, y):
        return min(-np.log10(self.C), 1.0) + 1e-6 * X[0, 0]


def test_a_flat_edge_stops_the_search_and_is_reported_as_flat():
    _Peaked.fitted_Cs = []
    X, y = np.arange(30.0).reshape(-1, 1), np.zeros(30)
    choice = _cross_validated_C(loop_scores(lambda C: _FlatBelow(C, 0), X, y, KFold(3)), C_GRID)
    assert (choice.C, choice.on_edge, choice.flat) == (0.01, True, True)
    assert choice.tried == (0.01, 0.1, 1.0, 10.0, 100.0)     # not on down to the limit 1e-3
    assert not _search(3).flat and not _search(9).flat


def test_classes_in_processes_give_the_same_choices_and_test_ap():
    from experiments.supervised import digits
    one, two = digits(quick=True, log=lambda *a: None), digits(quick=True, log=print, jobs=2)
    # the first table (choices and test AP) is identical; timings below it may differ
    assert one.split("### Digits: loss-augmented")[0] == two.split("### Digits: loss-augmented")[0]


def test_the_cv_estimators_give_the_fold_loops_scores_and_choice(digits):
    # the tables' C searches for APSVM and NDCGSVM run through the package's CV estimators
    # (BinarySVM's, at the structural C, through the loop); given the same folds they score
    # every C as the loop over folds does (cold fits), so the choice is the loop's, under
    # either rule
    from sklearn.model_selection import GroupKFold, StratifiedKFold

    from aprank.learn import APSVM, APSVMCV, NDCGSVM, NDCGSVMCV, BinarySVM, BinarySVMCV

    X, y = digits
    X, y = X[:360], y[:360] == 3
    qid = np.repeat(np.arange(12), 30)
    grid = (0.1, 1.0, 10.0)
    cases = [(BinarySVM, BinarySVMCV, None, StratifiedKFold(3, shuffle=True, random_state=0)),
             (APSVM, APSVMCV, None, StratifiedKFold(3, shuffle=True, random_state=0)),
             (NDCGSVM, NDCGSVMCV, qid, GroupKFold(3))]
    for cls, cv_cls, q, splitter in cases:
        splits = list(splitter.split(X, y, q))
        loop = loop_scores(lambda C: cls(C=C, tol=1e-3), X, y, splitter, groups=q, qid=q)(grid)
        by_cv = cv_scores(lambda Cs, cv: cv_cls(Cs=Cs, cv=cv, refit=False, tol=1e-3),
                          X, y, splits, qid=q)(grid)
        assert sorted(by_cv) == list(grid)
        for C in grid:
            np.testing.assert_allclose(by_cv[C], loop[C], rtol=0, atol=1e-12)
        for rule in (one_standard_error_choice, best_mean_choice):
            assert rule(by_cv) == rule(loop)
        # and the estimator's own choice is the best-mean rule's
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # APSVM without qid: one query, on purpose
            est = cv_cls(Cs=list(grid), cv=splits, refit=False, tol=1e-3).fit(X, y, qid=q)
        assert est.C_ == best_mean_choice(by_cv)


def test_the_tables_binary_svm_fits_at_the_structural_c(unit_digits):
    # the tables' C is the rank SVMs' for every method: BinarySVM's per-sample C is C / n,
    # n the fit's own training samples in queries with a relevant sample
    from aprank.learn import BinarySVM
    from experiments.supervised import METHODS, StructuralBinarySVM

    X, y = unit_digits
    X, y = X[:300], y[:300] == 3
    qid = np.repeat(np.arange(10), 30)
    qid_empty = qid[~y][0]                      # a query left without a relevant sample
    y = y & (qid != qid_empty)
    n = np.count_nonzero(qid != qid_empty)
    assert isinstance(METHODS["BinarySVM"](10.0), StructuralBinarySVM)
    for q, n_used in ((None, 300), (qid, n)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # the query skipped
            got = StructuralBinarySVM(C=10.0, tol=1e-6).fit(X, y, qid=q)
            ref = BinarySVM(C=10.0 / n_used, tol=1e-6).fit(X, y, qid=q)
        np.testing.assert_array_equal(got.coef_, ref.coef_)
        assert got.intercept_ == ref.intercept_ and got.C == 10.0
