"""The cross-validated estimators (APSVMCV, NDCGSVMCV, BinarySVMCV): scikit-learn's conventions,
pickling, agreement with GridSearchCV over the same grid and splitter, the warm-started path
over C, queries and their splitters."""
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, GroupKFold, LeaveOneGroupOut, StratifiedKFold
from sklearn.utils.estimator_checks import parametrize_with_checks

from aprank.learn import (
    APSVM,
    APSVMCV,
    NDCGSVM,
    NDCGSVMCV,
    BinarySVM,
    BinarySVMCV,
    EmptyQueryWarning,
    OneQueryWarning,
)
from aprank_support.estimator_checks import expected_failed_checks

# the grids here are the subject of agreement with GridSearchCV, pickling and the checks,
# many of two C where every choice is an edge: tests/learn/test_grid_edge.py tests the edge
pytestmark = [pytest.mark.min_versions,
              pytest.mark.filterwarnings("ignore::aprank.learn.GridEdgeWarning")]

#: two C and three folds keep the checks' many fits quick
CHECKED = [APSVMCV(Cs=[0.1, 10.0], cv=3), NDCGSVMCV(Cs=[0.1, 10.0], cv=3),
           BinarySVMCV(Cs=[0.1, 10.0], cv=3), BinarySVMCV(Cs=[0.1, 10.0], cv=3, solver="ocas")]
PAIRS = [(APSVMCV, APSVM), (NDCGSVMCV, NDCGSVM), (BinarySVMCV, BinarySVM)]
CS = [0.01, 0.1, 1.0, 10.0]


# scikit-learn's checks fit on string labels, whose relevant class the estimators say
@pytest.mark.filterwarnings("ignore::aprank.learn.RelevantClassWarning")
@parametrize_with_checks(CHECKED, expected_failed_checks=expected_failed_checks)
def test_sklearn_conventions(estimator, check):
    with warnings.catch_warnings():
        # the checks' data has no queries: the rank SVMs' CV says so, which is not the point
        warnings.simplefilter("ignore", OneQueryWarning)
        check(estimator)


@pytest.fixture(scope="module")
def digit3_in_12_queries(unit_digits):
    """600 digits, 3 against the rest, in 12 queries of 50."""
    images, digit = unit_digits
    return images[:600], digit[:600] == 3, np.arange(600) // 50


def routed_search(base, splitter, X, y, qid, **fit):
    """GridSearchCV over CS with qid routed to fit and score, as docs/learning.md shows."""
    with sklearn.config_context(enable_metadata_routing=True):
        est = base().set_fit_request(qid=True, sample_weight="sample_weight" in fit)
        est.set_score_request(qid=True, sample_weight="sample_weight" in fit)
        return GridSearchCV(est, {"C": CS}, cv=splitter, error_score="raise").fit(
            X, y, groups=qid, qid=qid, **fit)


def assert_same_search(cv, gs):
    """The same choice, score and table as the GridSearchCV."""
    assert cv.C_ == gs.best_params_["C"] and cv.best_index_ == gs.best_index_
    assert cv.best_score_ == pytest.approx(gs.best_score_, abs=1e-9)
    for key in ("mean_test_score", "std_test_score"):
        np.testing.assert_allclose(cv.cv_results_[key], gs.cv_results_[key], atol=1e-9)
    np.testing.assert_array_equal(cv.cv_results_["rank_test_score"],
                                  gs.cv_results_["rank_test_score"])
    assert cv.cv_results_["params"] == gs.cv_results_["params"]
    for k in range(cv.n_splits_):
        np.testing.assert_allclose(cv.cv_results_[f"split{k}_test_score"],
                                   gs.cv_results_[f"split{k}_test_score"], atol=1e-9)


@pytest.mark.parametrize("cv_class, base", PAIRS, ids=["APSVMCV", "NDCGSVMCV", "BinarySVMCV"])
def test_equals_a_routed_grid_search_over_group_folds(cv_class, base, digit3_in_12_queries):
    """An int cv with qid is GroupKFold over the queries: the same folds, fits and scores as
    GridSearchCV(base, {"C": Cs}, cv=GroupKFold(4)) with qid routed, and the same C."""
    X, y, qid = digit3_in_12_queries
    cv = cv_class(Cs=CS, cv=4).fit(X, y, qid=qid)
    gs = routed_search(base, GroupKFold(4), X, y, qid)
    assert cv.n_splits_ == 4 and cv.scores_.shape == (4, len(CS))
    assert_same_search(cv, gs)
    # the refit is the search's best estimator
    np.testing.assert_allclose(cv.coef_, gs.best_estimator_.coef_, atol=1e-12)
    assert cv.score(X, y, qid=qid) == gs.best_estimator_.score(X, y, qid=qid)


def test_query_weights_weigh_the_folds_as_a_routed_search(digit3_in_12_queries):
    X, y, qid = digit3_in_12_queries
    weight = np.where(qid % 3 == 0, 2.0, 1.0)
    kept = weight.copy()
    cv = APSVMCV(Cs=CS, cv=3).fit(X, y, qid=qid, sample_weight=weight)
    assert_same_search(cv, routed_search(APSVM, GroupKFold(3), X, y, qid, sample_weight=weight))
    np.testing.assert_array_equal(weight, kept)          # the caller's array is not modified
    unweighted = APSVMCV(Cs=CS, cv=3).fit(X, y, qid=qid)
    assert not np.allclose(unweighted.scores_, cv.scores_)


def test_a_flat_curve_chooses_the_smallest_C_as_grid_search_does():
    """Separable queries: every C ranks every test query perfectly, the mean scores tie at 1,
    and both choose the first of the ascending grid; an unsorted Cs is sorted first."""
    rng = np.random.default_rng(0)
    y = np.tile(np.r_[np.ones(5, bool), np.zeros(15, bool)], 8)
    X = np.c_[np.where(y, 3.0, -3.0) + rng.normal(0, 0.1, y.size), rng.normal(size=(y.size, 2))]
    qid = np.repeat(np.arange(8), 20)
    cv = APSVMCV(Cs=[10.0, 0.01, 1.0, 0.1], cv=4).fit(X, y, qid=qid)
    np.testing.assert_array_equal(cv.Cs_, CS)
    np.testing.assert_array_equal(cv.cv_results_["mean_test_score"], 1.0)
    np.testing.assert_array_equal(cv.cv_results_["rank_test_score"], 1)
    gs = routed_search(APSVM, GroupKFold(4), X, y, qid)
    assert cv.C_ == gs.best_params_["C"] == 0.01
    assert_same_search(cv, gs)


def test_the_warm_path_reaches_the_cold_objectives(digit3_in_12_queries):
    """warm_path=True: each fold's fit at each C, started from the working set of the C before,
    has the primal objective of a fit from nothing within tol (both are within tol above the
    optimum: gap <= tol), in fewer iterations over the path; warm_path=False is the cold fits."""
    X, y, qid = digit3_in_12_queries
    tol = 1e-3
    warm = APSVMCV(Cs=CS, cv=3, tol=tol, warm_path=True).fit(X, y, qid=qid)
    cold = APSVMCV(Cs=CS, cv=3, tol=tol).fit(X, y, qid=qid)
    for k, (train, _) in enumerate(GroupKFold(3).split(X, y, qid)):
        for j, C in enumerate(CS):
            alone = APSVM(C=C, tol=tol).fit(X[train], y[train], qid=qid[train])
            assert abs(warm.primal_path_[k, j] - alone.primal_) <= tol, (k, C)
            assert cold.primal_path_[k, j] == alone.primal_
            assert cold.n_iter_[k, j] == alone.n_iter_
    # the first C of a fold starts from nothing either way
    np.testing.assert_array_equal(warm.n_iter_[:, 0], cold.n_iter_[:, 0])
    assert warm.n_iter_.sum() < cold.n_iter_.sum()


def test_a_grouped_splitter_gets_the_queries(digit3_in_12_queries):
    """A splitter is given groups=qid: LeaveOneGroupOut makes one fold per query, and the
    result is a routed search's over the same splitter."""
    X, y, qid = digit3_in_12_queries
    X, y, qid = X[:300], y[:300], qid[:300]
    cv = APSVMCV(Cs=CS, cv=LeaveOneGroupOut()).fit(X, y, qid=qid)
    assert cv.n_splits_ == 6
    assert_same_search(cv, routed_search(APSVM, LeaveOneGroupOut(), X, y, qid))


def test_without_qid_the_stratified_search_of_one_ranking_quietly(digit3_in_12_queries):
    """No qid: one ranking, said by nothing; the folds are StratifiedKFold's, each fitted and
    scored as one ranking, as a GridSearchCV does them."""
    X, y, _ = digit3_in_12_queries
    with warnings.catch_warnings():
        warnings.simplefilter("error", OneQueryWarning)
        cv = APSVMCV(Cs=CS, cv=3).fit(X, y)
        gs = GridSearchCV(APSVM(), {"C": CS}, cv=StratifiedKFold(3)).fit(X, y)
        BinarySVMCV(Cs=[1.0], cv=3).fit(X, y)
    assert_same_search(cv, gs)


def test_a_scorer_after_fits_on_queries_says_once_that_it_drops_them(digit3_in_12_queries):
    """A scikit-learn scorer scores each test fold as one set: after fits on queries that drops
    the queries, said once (not per fold and C); without queries there is nothing to drop."""
    X, y, qid = digit3_in_12_queries
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        BinarySVMCV(Cs=CS[:2], cv=3, scoring="average_precision").fit(X, y, qid=qid)
    one_query = [w for w in said if issubclass(w.category, OneQueryWarning)]
    assert len(one_query) == 1, [str(w.message) for w in said]
    assert "scoring='average_precision'" in str(one_query[0].message)
    assert str(one_query[0].message).endswith("docs/learning.md#queries-qid")
    with warnings.catch_warnings():
        warnings.simplefilter("error", OneQueryWarning)
        BinarySVMCV(Cs=CS[:2], cv=3, scoring="average_precision").fit(X, y)
        BinarySVMCV(Cs=CS[:2], cv=list(StratifiedKFold(3).split(X, y)),
                    scoring="average_precision").fit(X, y, qid=np.zeros(len(y)))


def test_empty_queries_are_said_once_by_the_refit(digit3_in_12_queries):
    X, y, qid = digit3_in_12_queries
    y = y & (qid != 0)                  # query 0 loses its positives
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        cv = APSVMCV(Cs=CS, cv=3).fit(X, y, qid=qid)
    empty = [w for w in said if issubclass(w.category, EmptyQueryWarning)]
    assert len(empty) == 1 and "1 of 12 training queries" in str(empty[0].message)
    assert cv.n_skipped_queries_ == 1


def test_fitted_estimators_pickle(digit3_in_12_queries):
    X, y, qid = digit3_in_12_queries
    for cv_class, _ in PAIRS:
        cv = cv_class(Cs=[0.1, 1.0], cv=3).fit(sp.csr_matrix(X), y, qid=qid)
        back = pickle.loads(pickle.dumps(cv))
        np.testing.assert_array_equal(back.decision_function(X), cv.decision_function(X))
        assert back.C_ == cv.C_ and back.score(X, y, qid=qid) == cv.score(X, y, qid=qid)
        np.testing.assert_array_equal(back.scores_, cv.scores_)


def test_refit_false_keeps_only_the_search(digit3_in_12_queries):
    X, y, qid = digit3_in_12_queries
    cv = APSVMCV(Cs=CS, cv=3, refit=False).fit(X, y, qid=qid)
    assert cv.C_ in CS and cv.classes_.tolist() == [False, True]
    for method in ("decision_function", "predict", "score"):
        assert not hasattr(cv, method)
    assert not hasattr(cv, "coef_")
    assert cv.C_ == APSVMCV(Cs=CS, cv=3).fit(X, y, qid=qid).C_
    cv.set_params(refit=True)           # no model was refitted: not fitted, naming what lacks
    with pytest.raises(NotFittedError, match="best_estimator_"):
        cv.decision_function(X)


def test_folds_in_parallel_give_the_same_search(digit3_in_12_queries):
    X, y, qid = digit3_in_12_queries
    one = NDCGSVMCV(Cs=CS, cv=3).fit(X, y, qid=qid)
    two = NDCGSVMCV(Cs=CS, cv=3, n_jobs=2).fit(X, y, qid=qid)
    np.testing.assert_array_equal(one.scores_, two.scores_)
    assert one.C_ == two.C_


def test_a_scorer_by_name(digit3_in_12_queries):
    """A scikit-learn scorer scores each test fold's samples as one set (no queries)."""
    X, y, qid = digit3_in_12_queries
    with pytest.warns(OneQueryWarning, match="scoring='roc_auc'"):
        cv = BinarySVMCV(Cs=CS, cv=3, scoring="roc_auc").fit(X, y, qid=qid)
    with sklearn.config_context(enable_metadata_routing=True):
        gs = GridSearchCV(BinarySVM().set_fit_request(qid=True), {"C": CS}, cv=GroupKFold(3),
                          scoring="roc_auc").fit(X, y, groups=qid, qid=qid)
    assert_same_search(cv, gs)


def test_an_int_grid_spans_logistic_regression_cvs(digit3_in_12_queries):
    """An int Cs is that many C log-spaced over [1e-4, 1e4], as LogisticRegressionCV's."""
    from sklearn.linear_model import LogisticRegressionCV
    X, y, qid = digit3_in_12_queries
    X, y, qid = X[:100], y[:100], qid[:100]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)   # scikit-learn's own, on defaults
        logistic = LogisticRegressionCV(Cs=3, cv=2).fit(X, y)
    cv = BinarySVMCV(Cs=3, cv=2).fit(X, y, qid=qid)
    np.testing.assert_allclose(cv.Cs_, logistic.Cs_)
    np.testing.assert_allclose(cv.Cs_, [1e-4, 1.0, 1e4])
    assert BinarySVMCV().Cs == APSVMCV().Cs == NDCGSVMCV().Cs == 5


def test_bad_grids(digit3_in_12_queries):
    X, y, qid = digit3_in_12_queries
    for Cs in ([], [1.0, -1.0], [[1.0]], [np.inf]):
        with pytest.raises(ValueError, match="Cs must be an int or a non-empty 1-D list"):
            APSVMCV(Cs=Cs).fit(X, y, qid=qid)
    with pytest.raises(TypeError, match="use qid= for queries"):
        APSVMCV(Cs=[1.0]).fit(X, y, group=qid)


class RecordingGroupKFold(GroupKFold):
    """GroupKFold that keeps the groups it was given and the folds it made."""

    def split(self, X, y=None, groups=None):
        self.groups_, self.folds_ = groups, []
        for train, test in super().split(X, y, groups):
            self.folds_.append((train, test))
            yield train, test


def _bagged(n_bags=30, size=4, seed=0):
    """One ranking whose rows come in bags (MIL-style): a bag's rows share their label."""
    rng = np.random.default_rng(seed)
    bags = rng.permutation(np.repeat(np.arange(n_bags), size))
    label = rng.random(n_bags) < 0.4
    label[:2] = (True, False)
    y = label[bags]
    X = rng.standard_normal((bags.size, 5)) + 0.7 * y[:, None]
    return X, y, bags


@pytest.mark.parametrize("cv_class, base", PAIRS, ids=["APSVMCV", "NDCGSVMCV", "BinarySVMCV"])
def test_groups_go_to_the_splitter_and_the_fits_stay_one_ranking(cv_class, base):
    """groups= keeps bags whole in the folds (GroupKFold), independent of qid: without qid
    every fold is one ranking, the fits and scores of a GridSearchCV given groups= alone."""
    X, y, bags = _bagged()
    splitter = RecordingGroupKFold(3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", OneQueryWarning)
        cv = cv_class(Cs=CS[:3], cv=splitter).fit(X, y, groups=bags)
    np.testing.assert_array_equal(splitter.groups_, bags)
    assert cv.n_splits_ == len(splitter.folds_) == 3
    for train, test in splitter.folds_:
        assert not set(bags[train]) & set(bags[test])       # no bag on both sides
    gs = GridSearchCV(base(), {"C": CS[:3]}, cv=GroupKFold(3)).fit(X, y, groups=bags)
    assert_same_search(cv, gs)
    assert cv.best_estimator_._n_fit_queries == 1
    # an int cv with groups is GroupKFold over them, as it is over qid without groups
    by_int = cv_class(Cs=CS[:3], cv=3).fit(X, y, groups=bags)
    np.testing.assert_array_equal(by_int.scores_, cv.scores_)


def test_groups_and_qid_together(digit3_in_12_queries):
    """groups split, qid ranks: the folds keep the groups whole, the fits and scores are per
    query, as a routed GridSearchCV given both."""
    X, y, qid = digit3_in_12_queries
    groups = np.arange(len(y)) // 25              # two groups per query of 50
    splitter = RecordingGroupKFold(3)
    cv = APSVMCV(Cs=CS[:3], cv=splitter).fit(X, y, qid=qid, groups=groups)
    np.testing.assert_array_equal(splitter.groups_, groups)
    for train, test in splitter.folds_:
        assert not set(groups[train]) & set(groups[test])
    with sklearn.config_context(enable_metadata_routing=True):
        est = APSVM().set_fit_request(qid=True).set_score_request(qid=True)
        gs = GridSearchCV(est, {"C": CS[:3]}, cv=GroupKFold(3)).fit(X, y, groups=groups,
                                                                       qid=qid)
    assert_same_search(cv, gs)
    assert cv.best_estimator_._n_fit_queries == 12
    with pytest.raises(ValueError, match="groups must be 1-D with one entry per sample"):
        APSVMCV(Cs=[1.0]).fit(X, y, groups=groups[1:])


def test_the_cv_estimator_routes_as_the_base_estimators(digit3_in_12_queries):
    """set_fit_request / set_score_request exist for qid and sample_weight, so the CV
    estimator nests in a routed outer cross-validation."""
    from sklearn.model_selection import cross_val_score
    X, y, qid = digit3_in_12_queries
    with sklearn.config_context(enable_metadata_routing=True):
        est = APSVMCV(Cs=[0.1, 1.0], cv=2).set_fit_request(qid=True).set_score_request(qid=True)
        scores = cross_val_score(est, X, y, cv=GroupKFold(3), params={"qid": qid, "groups": qid})
    assert scores.shape == (3,) and np.all((0 < scores) & (scores <= 1))
