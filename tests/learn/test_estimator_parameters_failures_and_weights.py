"""Parameters checked by declaration and fits that fail or are interrupted
leave the estimator as it was, sample_weight in fit and score, and score refusing labels the
estimator was not fitted on."""
import pickle
import warnings

import numpy as np
import pytest
import sklearn
from sklearn.datasets import load_digits
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, GroupKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import check_sample_weights_not_overwritten

from aprank.learn import (APSVM, HOAPSVM, HOBSVM, NDCGSVM, APSVMAppx, BinarySVM,
                          CStarPrecisionAtK, LatentAPSVM, LatentSSVM, LatentSVM)
from aprank.metrics import average_precision, ndcg

RANKERS = [APSVM, NDCGSVM, APSVMAppx]
CUTTING_PLANE = [BinarySVM, APSVM, NDCGSVM, APSVMAppx]


@pytest.fixture(scope="module")
def digits():
    """240 scaled digits in 8 queries of 30, "3" relevant; every query has both classes."""
    X, y = load_digits(return_X_y=True)
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


def tiny(seed=0, n=40, d=3):
    rng = np.random.default_rng(seed)
    y = np.r_[np.ones(n // 4, int), np.zeros(n - n // 4, int)]
    X = rng.standard_normal((n, d)) + 0.8 * y[:, None]
    return X, y


def multilabel(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((30, 4))
    Y = (rng.random((30, 5)) < 0.4).astype(int)
    Y[:, 0] = 1
    return X, Y


def fit_any(est, X, y):
    """fit with what each family needs (multi-label Y for the c-star model)."""
    if isinstance(est, CStarPrecisionAtK):
        return est.fit(*multilabel())
    return est.fit(X, y)


# ----------------------------------------------- parameters, and failed or interrupted fits
BAD_PARAMETERS = [
    (APSVM, "max_iter", 0), (APSVM, "max_iter", -1), (APSVM, "max_iter", 2.5),
    (APSVM, "max_iter", True), (APSVM, "C", np.inf), (APSVM, "C", True), (APSVM, "C", np.nan),
    (APSVM, "C", "1"), (APSVM, "tol", None), (APSVM, "tol", np.inf), (APSVM, "tol", 0.0),
    (APSVM, "prune_after", -1), (APSVM, "empty", "drop"), (APSVM, "warm_start", "yes"),
    (APSVM, "callback", 3), (APSVM, "algorithm", 1),
    (BinarySVM, "intercept_scaling", np.nan), (BinarySVM, "intercept_scaling", 0.0),
    (BinarySVM, "J", -1.0), (BinarySVM, "J", np.inf), (BinarySVM, "max_iter", 0),
    (NDCGSVM, "C", np.inf), (NDCGSVM, "discount", 3.0), (NDCGSVM, "max_iter", 0),
    (APSVMAppx, "keep", 1.5), (APSVMAppx, "keep", True), (APSVMAppx, "max_iter", -1),
    (APSVMAppx, "intercept_scaling", np.inf),
    (LatentAPSVM, "C", True), (LatentAPSVM, "max_iter", 0), (LatentAPSVM, "max_outer", 2.5),
    (LatentAPSVM, "n_init", 0), (LatentAPSVM, "tol", np.inf), (LatentSSVM, "prune_after", -1),
    (LatentSVM, "c", 1.0), (LatentSVM, "intercept_scaling", np.nan), (LatentSVM, "J", -2.0),
    (HOBSVM, "max_iter", 0), (HOBSVM, "eta", np.inf), (HOBSVM, "C", np.inf),
    (HOBSVM, "intercept_scaling", np.nan), (HOAPSVM, "tol", None), (HOAPSVM, "max_outer", 0),
    (HOAPSVM, "init", "svm"),
    (CStarPrecisionAtK, "max_iter", True), (CStarPrecisionAtK, "C", np.inf),
    (CStarPrecisionAtK, "learning_rate", np.nan), (CStarPrecisionAtK, "k", 0),
    (CStarPrecisionAtK, "n_core", -1), (CStarPrecisionAtK, "tol", None),
]


@pytest.mark.parametrize("cls, name, value", BAD_PARAMETERS,
                         ids=[f"{c.__name__}-{n}={v!r}" for c, n, v in BAD_PARAMETERS])
def test_bad_parameters_are_refused_by_declaration(cls, name, value):
    """Each is scikit-learn's InvalidParameterError (a ValueError and a TypeError) naming the
    parameter and the estimator, raised before any data is read: old main ran max_iter=0 into an
    IndexError, C=inf for 1000 iterations, took True for 1 and NaN scaling into the inference."""
    X, y = tiny()
    est = cls(**{name: value})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(InvalidParameterError, match=f"'{name}' parameter of {cls.__name__}"):
            fit_any(est, X, y)
    assert not hasattr(est, "classes_") and not hasattr(est, "n_features_in_")


def test_numpy_scalars_are_accepted():
    X, y = tiny()
    a = APSVM(C=np.float64(2.0), max_iter=np.int64(200), tol=np.float32(1e-3)).fit(X, y)
    b = APSVM(C=2.0, max_iter=200, tol=float(np.float32(1e-3))).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)


def test_dask_estimators_check_parameters_by_declaration():
    pytest.importorskip("dask", reason="the dask extra (pip install 'aprank[dask]') is absent")
    from aprank.dask import DaskAPSVM, DaskBinarySVM
    X, y = tiny()
    for est, name in ((DaskAPSVM(max_iter=0), "max_iter"),
                      (DaskBinarySVM(intercept_scaling=np.nan), "intercept_scaling")):
        with pytest.raises(InvalidParameterError, match=f"'{name}' parameter of"):
            est.fit(X, y)
        assert not hasattr(est, "classes_")


@pytest.mark.parametrize("name, value", [("C", np.inf), ("C", True), ("tol", None),
                                         ("max_iter", 0), ("max_iter", 2.5), ("prune_after", -1)])
def test_the_learner_functions_check_their_parameters(name, value):
    """cutting_plane and cccp, public learners, declare their parameters too (old main: an
    IndexError for max_iter=0, inf objectives for C=inf)."""
    from aprank.learn import cccp, cutting_plane
    from aprank.models import LatentRankingModel, RankingModel
    X, y = tiny()
    args = {"C": 1.0, name: value}
    with pytest.raises(InvalidParameterError, match=f"'{name}' parameter of cutting_plane"):
        cutting_plane(RankingModel(X, y, "ap"), **args)
    if name != "max_iter" and name != "prune_after":
        bags = np.arange(X.shape[0]) // 2
        latent = LatentRankingModel(X, y[2 * bags].astype(bool), bags, None, "latent-ap")
        with pytest.raises(InvalidParameterError, match=f"'{name}' parameter of cccp"):
            cccp(latent, **args)


class Interrupt:
    """A callback that presses Ctrl-C at the given iteration (or CCCP outer iteration)."""

    def __init__(self, at):
        self.at, self.calls = at, 0

    def __call__(self, info):
        self.calls += 1
        if self.calls == self.at:
            raise KeyboardInterrupt


def snapshot(est):
    """Everything fit set (the parameters left out), as bytes."""
    return {k: pickle.dumps(v) for k, v in vars(est).items() if k not in est.get_params()}


INTERRUPTIBLE = [
    # BinarySVM's dual coordinate descent converges in one round at C = 1 here
    (APSVM, {}), (NDCGSVM, {}), (BinarySVM, {"C": 1e4}), (BinarySVM, {"solver": "ocas"}),
    (APSVMAppx, {}), (HOBSVM, {}),
    (HOAPSVM, {"max_outer": 5, "init": "zero", "tol": 1e-9}),
    (LatentAPSVM, {"max_outer": 5, "tol": 1e-9}), (LatentSVM, {"max_outer": 5, "tol": 1e-9}),
]


@pytest.mark.parametrize("cls, kwargs", INTERRUPTIBLE,
                         ids=[c.__name__ + "".join(f"-{v}" for v in kw.values() if isinstance(v, str))
                              for c, kw in INTERRUPTIBLE])
def test_keyboard_interrupt_leaves_the_estimator_as_it_was(cls, kwargs):
    """Ctrl-C inside the training loop: a fitted estimator keeps every attribute (the warm-start
    working set too), an unfitted one stays unfitted (NotFittedError, not AttributeError)."""
    def data(seed, n, d):
        X, y = tiny(seed=seed, n=n, d=d)
        if cls in (LatentAPSVM, LatentSVM):   # bags of two rows, so that CCCP has a choice
            bags = np.arange(n) // 2
            return X, y[2 * bags], {"bags": bags}
        return X, y, {}

    X, y, extra = data(1, 60, 4)
    fresh = cls(callback=Interrupt(2), **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(KeyboardInterrupt):
            fresh.fit(X, y, **extra)
        assert fresh.callback.calls == 2            # it did stop inside the loop
        with pytest.raises(NotFittedError):
            fresh.predict(X)
        fitted = cls(**kwargs).fit(X, y, **extra)
        before, scores = snapshot(fitted), fitted.decision_function(X)
        X2, y2, extra2 = data(2, 50, 6)
        fitted.set_params(callback=Interrupt(2))
        with pytest.raises(KeyboardInterrupt):
            fitted.fit(X2, y2, **extra2)
    assert snapshot(fitted) == before
    np.testing.assert_array_equal(fitted.decision_function(X), scores)


def test_interrupted_warm_start_keeps_its_working_set():
    X, y = tiny(seed=3, n=80, d=5)
    est = APSVM(C=1.0, tol=1e-9, warm_start=True).fit(X, y)
    before = snapshot(est)
    est.set_params(C=100.0, callback=Interrupt(3))
    with pytest.raises(KeyboardInterrupt):
        est.fit(X, y)
    est.set_params(callback=None)
    assert snapshot(est) == before
    # the kept working set still warm-starts the path: the same w as a cold fit at C = 100
    warm = est.fit(X, y).coef_
    cold = APSVM(C=100.0, tol=1e-9).fit(X, y).coef_
    np.testing.assert_allclose(warm, cold, atol=1e-5 * np.linalg.norm(cold))


@pytest.mark.parametrize("cls", CUTTING_PLANE + [LatentAPSVM, HOBSVM, CStarPrecisionAtK])
def test_a_fit_that_fails_late_leaves_the_estimator_as_it_was(cls):
    """Old main: validate_data had already set n_features_in_ (and classes_ was set) when a
    later check failed, so an unfitted estimator looked fitted and predict raised
    AttributeError; a fitted one refused its own training data."""
    X, y = tiny(seed=4, n=40, d=3)
    if cls is CStarPrecisionAtK:
        X, y = multilabel()
        bad = lambda est: est.fit(X[:, :2], y[:, :1])       # noqa: E731  one label: refused
    elif cls in (LatentAPSVM,):
        bad = lambda est: est.fit(X[:, :2], y, bags=np.arange(5))    # noqa: E731
    elif cls is HOBSVM:
        bad = lambda est: est.fit(X[:, :2], y, groups=np.arange(5))   # noqa: E731
    else:
        bad = lambda est: est.fit(X[:, :2], y, qid=np.arange(5))     # noqa: E731
    fresh = cls()
    with pytest.raises(ValueError):
        bad(fresh)
    assert vars(fresh) == vars(cls())
    with pytest.raises(NotFittedError):
        fresh.predict(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = cls().fit(X, y)
    before = snapshot(fitted)
    with pytest.raises(ValueError):
        bad(fitted)
    assert snapshot(fitted) == before
    fitted.decision_function(X)            # still the model of X: 3 features


# ------------------------------------------------------------ sample_weight in fit and score
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
def test_query_weight_two_is_the_query_entered_twice(digits, cls, kwargs):
    X, y, qid = digits
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


def test_binary_weight_two_is_the_sample_entered_twice(digits):
    """Without qid (one query) BinarySVM's weights count copies of samples: the same w and the
    same score as the data with each sample repeated (scikit-learn's check of the same kind
    passes too, tests/learn/test_learn.py)."""
    X, y, _ = digits
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
def test_equal_weights_are_no_weights(digits, cls, value):
    """All ones (or any one value) is the unweighted fit, bit for bit, and so is its score."""
    X, y, qid = digits
    sw = np.full(X.shape[0], value)
    a = cls(C=10.0).fit(X, y, qid=qid, sample_weight=sw)
    b = cls(C=10.0).fit(X, y, qid=qid)
    np.testing.assert_array_equal(w_of(a), w_of(b))
    assert a.n_iter_ == b.n_iter_
    assert a.score(X, y, qid=qid, sample_weight=sw) == b.score(X, y, qid=qid)


@pytest.mark.parametrize("cls", CUTTING_PLANE)
def test_zero_weight_drops_samples(digits, cls):
    X, y, qid = digits
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
def test_rankers_refuse_weights_that_vary_within_a_query(digits, cls):
    X, y, qid = digits
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
def test_the_rankers_expected_failures_of_check_estimator_are_the_query_weight_rule(cls):
    """tests/learn/test_learn.py declares the per-sample weight checks as expected failures for the
    rank SVMs: this is the reason, and no other."""
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
def test_bad_weights_are_refused_in_fit_and_score(digits, cls, make, match):
    X, y, qid = digits
    with pytest.raises(ValueError, match=match):
        cls().fit(X, y, qid=qid, sample_weight=make(X.shape[0]))
    est = cls().fit(X, y, qid=qid)
    with pytest.raises(ValueError, match=match):
        est.score(X, y, qid=qid, sample_weight=make(X.shape[0]))


def test_the_callers_weights_are_not_modified(digits):
    X, y, qid = digits
    sw = np.where(qid == 1, 3.0, 1.0)
    sw[qid == 4] = 0.0
    copy = sw.copy()
    sw.setflags(write=False)
    for cls in CUTTING_PLANE:
        cls().fit(X, y, qid=qid, sample_weight=sw).score(X, y, qid=qid, sample_weight=sw)
    np.testing.assert_array_equal(sw, copy)


def test_weighted_score_is_the_weighted_mean_of_the_per_query_metric(digits):
    X, y, qid = digits
    sw = 1.0 + qid % 3
    sw[qid == 7] = 0.0
    used = qid != 7
    for cls, metric in ((APSVM, average_precision), (NDCGSVM, ndcg), (APSVMAppx, average_precision)):
        est = cls().fit(X, y, qid=qid)
        s = est.decision_function(X)
        ids, values = metric(y[used], s[used], qid=qid[used], per_query=True)
        expected = np.average(values, weights=1.0 + ids % 3)
        assert est.score(X, y, qid=qid, sample_weight=sw) == pytest.approx(expected, rel=1e-12)


def test_weighted_estimators_pickle(digits):
    X, y, qid = digits
    sw = 1.0 + qid % 2
    for cls in CUTTING_PLANE:
        est = cls(warm_start=True).fit(X, y, qid=qid, sample_weight=sw)
        back = pickle.loads(pickle.dumps(est))
        np.testing.assert_array_equal(back.decision_function(X), est.decision_function(X))


def test_pipeline_with_metadata_routing_scores_weights(digits):
    """Old main: ``set_fit_request(sample_weight=...)`` did not exist, and a pipeline's score
    with sample_weight failed (``Pipeline.score got unexpected argument(s)``), so GridSearchCV
    over it scored NaN."""
    X, y, qid = digits
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


def test_binary_svm_pipeline_with_per_sample_weights(digits):
    X, y, _ = digits
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
    X, y = tiny()
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
    X, y = tiny()
    with pytest.raises(TypeError, match="sample_weight"):
        DaskAPSVM().fit(X, y, sample_weight=np.ones(X.shape[0]))


# ------------------------------------------------------- score refuses labels never fitted on
SCORED = [
    (BinarySVM, {}), (APSVM, {}), (NDCGSVM, {}), (APSVMAppx, {}), (LatentAPSVM, {}),
    (LatentSVM, {}), (HOBSVM, {}), (HOAPSVM, {"max_outer": 3}),
]


@pytest.mark.parametrize("cls, kwargs", SCORED, ids=[c.__name__ for c, _ in SCORED])
def test_score_refuses_labels_it_was_not_fitted_on(cls, kwargs):
    X, y = tiny(seed=8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = cls(**kwargs).fit(X, y)
    assert np.isfinite(est.score(X, y))
    other = y.copy()
    other[:3] = 2                           # a third class: not to be counted as negative
    with pytest.raises(ValueError, match=r"not fitted on: \[2\]; its classes_ are \[0, 1\]"):
        est.score(X, other)
    # strings where ints were fitted: unseen labels, not "no relevant sample"
    with pytest.raises(ValueError, match=r"not fitted on: \['1', '0'\]"):
        est.score(X, y.astype(str))


@pytest.mark.parametrize("cls", CUTTING_PLANE + [LatentAPSVM, HOBSVM])
def test_string_labels_score_as_their_classes(cls):
    X, y = tiny(seed=9)
    names = np.array(["neg", "pos"])[y]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = cls().fit(X, names)
        ref = cls().fit(X, y)
    assert list(est.classes_) == ["neg", "pos"]
    assert est.score(X, names) == ref.score(X, y)
    with pytest.raises(ValueError, match=r"not fitted on: \['Pos'\]"):
        est.score(X, np.where(y == 1, "Pos", "neg"))


def test_dask_score_refuses_labels_it_was_not_fitted_on():
    pytest.importorskip("dask", reason="the dask extra (pip install 'aprank[dask]') is absent")
    from aprank.dask import DaskAPSVM
    X, y = tiny(seed=10)
    est = DaskAPSVM().fit(X, y)
    with pytest.raises(ValueError, match=r"not fitted on: \[7\]"):
        est.score(X, np.where(np.arange(y.size) == 0, 7, y))
