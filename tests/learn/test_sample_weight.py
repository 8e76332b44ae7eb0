"""sample_weight in fit and score: a rank SVM's weight is its query's (weight 2 is the query
entered twice, weights varying within a query are refused), BinarySVM's a sample's; equal
weights are no weights and a zero weight drops its samples, bit for bit; bad weights are refused
in fit and score; the weighted score is the weighted mean of the per-query metric, also through
a pipeline under metadata routing; the estimators without weights refuse them."""
import pickle
import warnings

import numpy as np
import pytest
import sklearn
from sklearn.model_selection import GridSearchCV, GroupKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import check_sample_weights_not_overwritten

from aprank.learn import (
    APSVM,
    HOAPSVM,
    HOBSVM,
    NDCGSVM,
    APSVMAppx,
    BinarySVM,
    CStarPrecisionAtK,
    LatentAPSVM,
    LatentSSVM,
    LatentSVM,
)
from aprank.metrics import average_precision, ndcg
from aprank_support.synthetic import two_classes

RANKERS = [APSVM, NDCGSVM, APSVMAppx]
CUTTING_PLANE = [BinarySVM, APSVM, NDCGSVM, APSVMAppx]


@pytest.fixture(scope="module")
def digit_queries(unit_digits):
    """240 digits, standardised, in 8 queries of 30, "3" relevant; every query has both
    classes."""
    X, y = unit_digits
    rng = np.random.default_rng(0)
    rows = np.r_[rng.choice(np.flatnonzero(y == 3), 40, replace=False),
                 rng.choice(np.flatnonzero(y != 3), 200, replace=False)]
    rows = rows[rng.permutation(rows.size)]
    X = StandardScaler().fit_transform(X[rows])
    yb = (y[rows] == 3).astype(int)
    qid = np.repeat(np.arange(8), 30)
    for q in range(8):                     # a positive in every query
        if not yb[qid == q].any():
            yb[np.flatnonzero(qid == q)[0]] = 1
    return X, yb, qid


def fit_quiet(est, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error", category=sklearn.exceptions.ConvergenceWarning)
        return est.fit(*args, **kwargs)


def w_of(est):
    return np.r_[est.coef_, getattr(est, "intercept_", 0.0)]


#: APSVMAppx with keep=0: its easy set comes from the BinarySVM's margins > 1, and the
#: support vectors sit at margin 1 up to rounding, so a sample can cross over between two equal
#: problems; weights reaching that first stage are checked on their own below
QUERY_WEIGHTED = [(APSVM, {}), (NDCGSVM, {}), (APSVMAppx, {"keep": 0.0}), (BinarySVM, {})]


@pytest.mark.parametrize("cls, kwargs", QUERY_WEIGHTED, ids=[c.__name__ for c, _ in QUERY_WEIGHTED])
def test_query_weight_two_is_the_query_entered_twice(digit_queries, cls, kwargs):
    X, y, qid = digit_queries
    # BinarySVM's C is per sample: C / n is the rank SVMs' structural C (at C = 10 per sample
    # the data are separated and the weights would not matter)
    C = 10.0 / X.shape[0] if cls is BinarySVM else 10.0
    est = lambda: cls(C=C, tol=1e-6, **kwargs)      # noqa: E731
    sw = np.where(qid == 3, 2.0, 1.0)
    weighted = fit_quiet(est(), X, y, qid=qid, sample_weight=sw)
    twice = np.r_[np.arange(X.shape[0]), np.flatnonzero(qid == 3)]
    qid_twice = np.r_[qid, np.full((qid == 3).sum(), 100)]
    duplicated = fit_quiet(est(), X[twice], y[twice], qid=qid_twice)
    w, ref = w_of(weighted), w_of(duplicated)
    np.testing.assert_allclose(w, ref, atol=1e-4 * np.linalg.norm(ref))
    unweighted = w_of(fit_quiet(est(), X, y, qid=qid))
    assert np.linalg.norm(unweighted - w) > 1e-2 * np.linalg.norm(w)    # the weight matters
    # score: the same weighted mean of per-query values
    assert weighted.score(X, y, qid=qid, sample_weight=sw) == pytest.approx(
        weighted.score(X[twice], y[twice], qid=qid_twice), abs=1e-12)
    if cls is APSVMAppx:        # the first stage is the BinarySVM of the same weights
        # at C / n, n the weighted samples (every query has a relevant one)
        first = BinarySVM(C=10.0 / sw.sum(), tol=1e-6, solver=weighted.solver).fit(
            X, y, qid=qid, sample_weight=sw)
        np.testing.assert_array_equal(weighted.binary_.coef_, first.coef_)


def test_binary_weight_two_is_the_sample_entered_twice(digit_queries):
    """Without qid (one query) BinarySVM's weights count copies of samples: the same w and the
    same score as the data with each sample repeated (scikit-learn's check of the same kind
    passes too, tests/learn/test_learn.py)."""
    X, y, _ = digit_queries
    counts = np.random.default_rng(5).integers(0, 4, X.shape[0])
    counts[:2] = 1
    rows = np.repeat(np.arange(X.shape[0]), counts)
    weighted = fit_quiet(BinarySVM(C=10.0, tol=1e-7), X, y, sample_weight=counts.astype(float))
    repeated = fit_quiet(BinarySVM(C=10.0, tol=1e-7), X[rows], y[rows])
    ref = w_of(repeated)
    np.testing.assert_allclose(w_of(weighted), ref, atol=1e-5 * np.linalg.norm(ref))
    assert weighted.score(X, y, sample_weight=counts) == pytest.approx(
        weighted.score(X[rows], y[rows]), abs=1e-12)


@pytest.mark.parametrize("cls", CUTTING_PLANE)
@pytest.mark.parametrize("value", [1.0, 3.5])
def test_equal_weights_are_no_weights(digit_queries, cls, value):
    """All ones (or any one value) is the unweighted fit, bit for bit, and so is its score."""
    X, y, qid = digit_queries
    sw = np.full(X.shape[0], value)
    a = cls(C=10.0).fit(X, y, qid=qid, sample_weight=sw)
    b = cls(C=10.0).fit(X, y, qid=qid)
    np.testing.assert_array_equal(w_of(a), w_of(b))
    assert a.n_iter_ == b.n_iter_
    assert a.score(X, y, qid=qid, sample_weight=sw) == b.score(X, y, qid=qid)


@pytest.mark.parametrize("cls", CUTTING_PLANE)
def test_zero_weight_drops_samples(digit_queries, cls):
    X, y, qid = digit_queries
    sw = np.where(qid == 2, 0.0, 1.0)
    kept = qid != 2
    a = cls(C=10.0).fit(X, y, qid=qid, sample_weight=sw)
    b = cls(C=10.0).fit(X[kept], y[kept], qid=qid[kept])
    np.testing.assert_array_equal(w_of(a), w_of(b))
    assert a.score(X, y, qid=qid, sample_weight=sw) == b.score(X[kept], y[kept], qid=qid[kept])
    if cls is APSVMAppx:                    # easy_ is over the samples as given
        assert a.easy_.shape == (X.shape[0],) and not a.easy_[~kept].any()
        np.testing.assert_array_equal(a.easy_[kept], b.easy_)


@pytest.mark.parametrize("cls", RANKERS)
def test_rankers_refuse_weights_that_vary_within_a_query(digit_queries, cls):
    X, y, qid = digit_queries
    sw = np.ones(X.shape[0])
    sw[np.flatnonzero(qid == 6)[4]] = 2.0
    with pytest.raises(ValueError, match="constant within each query.*query 6 mixes weights "
                                         "from 1 to 2"):
        cls().fit(X, y, qid=qid, sample_weight=sw)
    with pytest.raises(ValueError, match="constant within each query.*without qid"):
        cls().fit(X, y, sample_weight=np.r_[2.0, np.ones(X.shape[0] - 1)])
    est = cls().fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="constant within each query.*query 6"):
        est.score(X, y, qid=qid, sample_weight=sw)


@pytest.mark.parametrize("cls", RANKERS)
# scikit-learn's checks fit on string labels, whose relevant class the estimators say
@pytest.mark.filterwarnings("ignore::aprank.learn.RelevantClassWarning")
def test_the_rankers_expected_failures_of_check_estimator_are_the_query_weight_rule(cls):
    """tests/aprank_support/estimator_checks.py declares the per-sample weight checks as expected
    failures of the rank SVMs: this is the reason, and no other."""
    with pytest.raises(ValueError, match="constant within each query"):
        check_sample_weights_not_overwritten(cls.__name__, cls())


BAD_WEIGHTS = [
    (lambda n: -np.ones(n), "Negative values in data passed to `sample_weight`"),
    (lambda n: np.r_[np.nan, np.ones(n - 1)], "NaN"),
    (lambda n: np.r_[np.inf, np.ones(n - 1)], "infinity"),
    (lambda n: np.ones(n - 1), r"sample_weight.shape == \(\d+,\), expected"),
    (lambda n: np.ones((n, 2)), "1D array"),
    (lambda n: np.zeros(n), "sample_weight is zero for every sample"),
]


@pytest.mark.parametrize("cls", CUTTING_PLANE)
@pytest.mark.parametrize("make, match", BAD_WEIGHTS,
                         ids=["negative", "nan", "inf", "length", "2d", "all-zero"])
def test_bad_weights_are_refused_in_fit_and_score(digit_queries, cls, make, match):
    X, y, qid = digit_queries
    with pytest.raises(ValueError, match=match):
        cls().fit(X, y, qid=qid, sample_weight=make(X.shape[0]))
    est = cls().fit(X, y, qid=qid)
    with pytest.raises(ValueError, match=match):
        est.score(X, y, qid=qid, sample_weight=make(X.shape[0]))


def test_the_callers_weights_are_not_modified(digit_queries):
    X, y, qid = digit_queries
    sw = np.where(qid == 1, 3.0, 1.0)
    sw[qid == 4] = 0.0
    copy = sw.copy()
    sw.setflags(write=False)
    for cls in CUTTING_PLANE:
        cls().fit(X, y, qid=qid, sample_weight=sw).score(X, y, qid=qid, sample_weight=sw)
    np.testing.assert_array_equal(sw, copy)


def test_weighted_score_is_the_weighted_mean_of_the_per_query_metric(digit_queries):
    X, y, qid = digit_queries
    sw = 1.0 + qid % 3
    sw[qid == 7] = 0.0
    used = qid != 7
    for cls, metric in ((APSVM, average_precision), (NDCGSVM, ndcg),
                        (APSVMAppx, average_precision)):
        est = cls().fit(X, y, qid=qid)
        s = est.decision_function(X)
        ids, values = metric(y[used], s[used], qid=qid[used], per_query=True)
        expected = np.average(values, weights=1.0 + ids % 3)
        assert est.score(X, y, qid=qid, sample_weight=sw) == pytest.approx(expected, rel=1e-12)


def test_weighted_estimators_pickle(digit_queries):
    X, y, qid = digit_queries
    sw = 1.0 + qid % 2
    for cls in CUTTING_PLANE:
        est = cls(warm_start=True).fit(X, y, qid=qid, sample_weight=sw)
        back = pickle.loads(pickle.dumps(est))
        np.testing.assert_array_equal(back.decision_function(X), est.decision_function(X))


def test_pipeline_with_metadata_routing_scores_weights(digit_queries):
    """Under metadata routing, sample_weight requested by fit and score reaches the estimator
    in a pipeline: the pipeline's score is the estimator's weighted score, and GridSearchCV over
    it scores every fold (finite, the weighted score of the fold's refit)."""
    X, y, qid = digit_queries
    sw = 1.0 + qid % 3
    with sklearn.config_context(enable_metadata_routing=True):
        est = (APSVM(C=1.0).set_fit_request(qid=True, sample_weight=True)
               .set_score_request(qid=True, sample_weight=True))
        pipe = make_pipeline(StandardScaler().set_fit_request(sample_weight=False), est)
        pipe.fit(X, y, qid=qid, sample_weight=sw)
        score = pipe.score(X, y, qid=qid, sample_weight=sw)
        by_hand = APSVM(C=1.0).fit(StandardScaler().fit_transform(X), y, qid=qid, sample_weight=sw)
        assert np.isfinite(score)
        assert score == by_hand.score(StandardScaler().fit_transform(X), y, qid=qid,
                                      sample_weight=sw)
        gs = GridSearchCV(pipe, {"apsvm__C": [0.1, 10.0]}, cv=GroupKFold(4), error_score="raise")
        gs.fit(X, y, groups=qid, qid=qid, sample_weight=sw)
    assert np.isfinite(gs.cv_results_["mean_test_score"]).all()
    train, test = next(iter(GroupKFold(4).split(X, y, qid)))
    fold = make_pipeline(StandardScaler(), APSVM(C=0.1))
    fold.fit(X[train], y[train], apsvm__qid=qid[train], apsvm__sample_weight=sw[train])
    expected = fold[-1].score(fold[0].transform(X[test]), y[test], qid=qid[test],
                              sample_weight=sw[test])
    assert gs.cv_results_["split0_test_score"][0] == pytest.approx(expected, abs=1e-12)


def test_binary_svm_pipeline_with_per_sample_weights(digit_queries):
    X, y, _ = digit_queries
    sw = np.random.default_rng(7).uniform(0.5, 2.0, X.shape[0])
    with sklearn.config_context(enable_metadata_routing=True):
        est = BinarySVM().set_fit_request(sample_weight=True).set_score_request(sample_weight=True)
        pipe = make_pipeline(StandardScaler().set_fit_request(sample_weight=False), est)
        gs = GridSearchCV(pipe, {"binarysvm__C": [0.1, 1.0]}, cv=3, error_score="raise")
        gs.fit(X, y, sample_weight=sw)
    assert np.isfinite(gs.cv_results_["mean_test_score"]).all()


REFUSING = [LatentAPSVM, LatentSSVM, LatentSVM, HOBSVM, HOAPSVM, CStarPrecisionAtK]


@pytest.mark.parametrize("cls", REFUSING, ids=[c.__name__ for c in REFUSING])
def test_estimators_without_weights_refuse_them(cls):
    """No weighting in their models: passing weights is a TypeError naming sample_weight (never
    a silently unweighted fit), and metadata routing offers no sample_weight request."""
    X, y = two_classes()
    est = cls()
    with pytest.raises(TypeError, match="sample_weight"):
        est.fit(X, y, sample_weight=np.ones(X.shape[0]))
    with sklearn.config_context(enable_metadata_routing=True):
        if hasattr(est, "set_fit_request"):     # those with metadata (bags, groups) have one
            with pytest.raises(TypeError, match="sample_weight"):
                est.set_fit_request(sample_weight=True)


def test_dask_estimators_refuse_weights():
    pytest.importorskip("dask", reason="the dask extra (pip install 'aprank[dask]') is absent")
    from aprank.dask import DaskAPSVM
    X, y = two_classes()
    with pytest.raises(TypeError, match="sample_weight"):
        DaskAPSVM().fit(X, y, sample_weight=np.ones(X.shape[0]))
