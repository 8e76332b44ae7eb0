"""What the estimators refuse, and what a refusal or an interruption leaves: parameters are
checked by declaration before any data is read, a fit that fails late or is interrupted (Ctrl-C)
leaves the estimator as it was, and score refuses labels the estimator was not fitted on."""
import pickle
import warnings

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

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
from aprank.sklearn_compat import InvalidParameterError
from aprank_support.synthetic import two_classes

CUTTING_PLANE = [BinarySVM, APSVM, NDCGSVM, APSVMAppx]


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
    parameter and the estimator, raised before any data is read: max_iter=0 never reaches the
    loop, C=inf never runs to max_iter, True is not taken for 1 nor NaN scaling into the
    inference."""
    X, y = two_classes()
    est = cls(**{name: value})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(InvalidParameterError, match=f"'{name}' parameter of {cls.__name__}"):
            fit_any(est, X, y)
    assert not hasattr(est, "classes_") and not hasattr(est, "n_features_in_")


def test_numpy_scalars_are_accepted():
    X, y = two_classes()
    a = APSVM(C=np.float64(2.0), max_iter=np.int64(200), tol=np.float32(1e-3)).fit(X, y)
    b = APSVM(C=2.0, max_iter=200, tol=float(np.float32(1e-3))).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)


def test_dask_estimators_check_parameters_by_declaration():
    pytest.importorskip("dask", reason="the dask extra (pip install 'aprank[dask]') is absent")
    from aprank.dask import DaskAPSVM, DaskBinarySVM
    X, y = two_classes()
    for est, name in ((DaskAPSVM(max_iter=0), "max_iter"),
                      (DaskBinarySVM(intercept_scaling=np.nan), "intercept_scaling")):
        with pytest.raises(InvalidParameterError, match=f"'{name}' parameter of"):
            est.fit(X, y)
        assert not hasattr(est, "classes_")


@pytest.mark.parametrize("name, value", [("C", np.inf), ("C", True), ("tol", None),
                                         ("max_iter", 0), ("max_iter", 2.5), ("prune_after", -1)])
def test_the_learner_functions_check_their_parameters(name, value):
    """cutting_plane and cccp, public learners, declare their parameters too: max_iter=0 and
    C=inf are refused by name, not met as an IndexError or as inf objectives."""
    from aprank.learn import cccp, cutting_plane
    from aprank.models import LatentRankingModel, RankingModel
    X, y = two_classes()
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
                         ids=[c.__name__ + "".join(f"-{v}" for v in kw.values()
                                                   if isinstance(v, str))
                              for c, kw in INTERRUPTIBLE])
def test_keyboard_interrupt_leaves_the_estimator_as_it_was(cls, kwargs):
    """Ctrl-C inside the training loop: a fitted estimator keeps every attribute (the warm-start
    working set too), an unfitted one stays unfitted (NotFittedError, not AttributeError)."""
    def data(seed, n, d):
        X, y = two_classes(seed=seed, n=n, d=d)
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
    X, y = two_classes(seed=3, n=80, d=5)
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
    """A check that fails after the data were read (a qid, bags or groups of the wrong length,
    one label) sets nothing: an unfitted estimator stays unfitted (predict raises
    NotFittedError), a fitted one keeps its fit and still takes its own training data."""
    X, y = two_classes(seed=4, n=40, d=3)
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


# ------------------------------------------------------- score refuses labels never fitted on
SCORED = [
    (BinarySVM, {}), (APSVM, {}), (NDCGSVM, {}), (APSVMAppx, {}), (LatentAPSVM, {}),
    (LatentSVM, {}), (HOBSVM, {}), (HOAPSVM, {"max_outer": 3}),
]


@pytest.mark.parametrize("cls, kwargs", SCORED, ids=[c.__name__ for c, _ in SCORED])
def test_score_refuses_labels_it_was_not_fitted_on(cls, kwargs):
    X, y = two_classes(seed=8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = cls(**kwargs).fit(X, y)
    assert np.isfinite(est.score(X, y))
    other = y.copy()
    other[:3] = 2                           # a third class: refused, not counted as negative
    with pytest.raises(ValueError, match=r"not fitted on: \[2\]; its classes_ are \[0, 1\]"):
        est.score(X, other)
    # strings where ints were fitted: refused by name, not met as "no relevant sample"
    with pytest.raises(ValueError, match=r"not fitted on: \['1', '0'\]"):
        est.score(X, y.astype(str))


@pytest.mark.parametrize("cls", CUTTING_PLANE + [LatentAPSVM, HOBSVM])
def test_string_labels_score_as_their_classes(cls):
    X, y = two_classes(seed=9)
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
    X, y = two_classes(seed=10)
    est = DaskAPSVM().fit(X, y)
    with pytest.raises(ValueError, match=r"not fitted on: \[7\]"):
        est.score(X, np.where(np.arange(y.size) == 0, 7, y))
