"""Everything a worker may receive pickles (pickle and cloudpickle), and the registry and the
SIMD switch are per process, as documented."""
import multiprocessing
import pickle
from concurrent.futures import ProcessPoolExecutor

import cloudpickle
import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV

import aprank
from aprank.inference import RankingProblem, get_algorithm
from aprank.learn import APSVM, NDCGSVM, APSVMAppx, BinarySVM
from aprank.models import RankingModel

PICKLERS = [pytest.param(pickle, id="pickle"), pytest.param(cloudpickle, id="cloudpickle")]
ENTRIES = [(a.kind, a.name) for a in aprank.algorithms()]


def roundtrip(obj, pickler):
    return pickle.loads(pickler.dumps(obj))


@pytest.fixture(scope="module")
def digits_400(digits):
    """The first 400 of the shared digits."""
    X, y = digits
    return X[:400], y[:400]


@pytest.mark.parametrize("pickler", PICKLERS)
@pytest.mark.parametrize("kind,name", ENTRIES)
def test_registry_entries_pickle_by_name(kind, name, pickler):
    algo = get_algorithm(name, kind)
    assert roundtrip(algo, pickler) is algo
    kind_entry = aprank.inference.get_kind(kind)
    assert roundtrip(kind_entry, pickler) is kind_entry


@pytest.mark.parametrize("pickler", PICKLERS)
@pytest.mark.parametrize("kind,name", ENTRIES)
def test_results_of_every_algorithm_pickle(kind, name, pickler):
    rng = np.random.default_rng(3)
    scores = np.round(rng.standard_normal(12), 1)
    labels = np.arange(12) % 3 == 0
    qid = np.arange(12) % 2
    options = {}
    if kind == "latent":            # six bags of two rows, one label per bag
        options = {"bags": np.arange(12) // 2}
        labels = (np.arange(12) // 2) % 3 == 0
    for loss in aprank.inference.get_kind(kind).losses():
        if not get_algorithm(name, kind).supports(aprank.losses.get_loss(loss)):
            continue
        results = [aprank.infer(scores, labels, loss=loss, algorithm=name, **options)]
        if kind in ("pairwise", "latent"):      # one joint problem of all samples: no queries
            with pytest.raises(ValueError, match="qid is not supported"):
                aprank.infer_batch(scores, labels, qid, loss=loss, algorithm=name, **options)
        else:
            results.append(aprank.infer_batch(scores, labels, qid, loss=loss, algorithm=name))
        for result in results:
            back = roundtrip(result, pickler)
            assert type(back) is type(result)
            for field in result.__dataclass_fields__:
                a, b = getattr(result, field), getattr(back, field)
                if isinstance(a, np.ndarray):
                    np.testing.assert_array_equal(a, b)
                else:
                    assert a == b


@pytest.mark.parametrize("pickler", PICKLERS)
@pytest.mark.parametrize("make", [BinarySVM, APSVM, NDCGSVM, APSVMAppx,
                                  lambda: APSVM(algorithm="select")],
                         ids=["BinarySVM", "APSVM", "NDCGSVM", "APSVMAppx", "APSVM-select"])
def test_fitted_estimators_pickle(make, pickler, digits_400):
    X, y = digits_400
    est = make().fit(X, y == 2)
    back = roundtrip(est, pickler)
    np.testing.assert_array_equal(back.decision_function(X), est.decision_function(X))
    assert back.score(X, y == 2) == est.score(X, y == 2)
    # a pickled estimator can go on: a warm refit from the unpickled working set
    back.set_params(warm_start=True, C=2.0).fit(X, y == 2)
    assert back.converged_


@pytest.mark.parametrize("pickler", PICKLERS)
def test_models_and_problems_pickle(pickler, digits_400):
    X, y = digits_400
    qid = np.arange(X.shape[0]) % 4
    model = RankingModel(X, y == 1, "ndcg", qid=qid, algorithm="qs")
    w = np.random.default_rng(0).standard_normal(X.shape[1])
    a, b = model.most_violated(w), roundtrip(model, pickler).most_violated(w)
    np.testing.assert_array_equal(a.g, b.g)
    assert (a.b, a.violation) == (b.b, b.violation)
    problem = RankingProblem(y == 1, "ap", qid=qid)
    np.testing.assert_array_equal(roundtrip(problem, pickler).solve(X @ w).ranks,
                                  problem.solve(X @ w).ranks)


def test_grid_search_on_two_processes(digits_400):
    X, y = digits_400
    grid = {"C": [0.1, 10.0]}
    parallel = GridSearchCV(APSVM(), grid, cv=3, n_jobs=2).fit(X, y == 8)
    serial = GridSearchCV(APSVM(), grid, cv=3, n_jobs=1).fit(X, y == 8)
    assert parallel.best_params_ == serial.best_params_
    np.testing.assert_allclose(parallel.cv_results_["mean_test_score"],
                               serial.cv_results_["mean_test_score"], rtol=1e-12)


def last_rank(pos_scores, neg_scores, loss):
    return np.full(neg_scores.size, pos_scores.size + 1)


def what_a_worker_sees(pickled_algorithm):
    """Run in a fresh process: its registry, its SIMD setting, and an algorithm sent to it."""
    names = aprank.algorithms().names()
    simd_default = aprank.set_simd(True)      # returns the setting the worker started with
    try:
        received = pickle.loads(pickled_algorithm).name
    except ValueError as err:
        received = f"ValueError: {err}"
    return names, simd_default, received


def test_registrations_and_simd_are_per_process():
    aprank.register("py-last", last_rank, losses="ap", exact=False)
    previous = aprank.set_simd(False)
    try:
        sent = pickle.dumps(get_algorithm("py-last", "ranking"))
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(1, mp_context=context) as pool:
            names, simd_default, received = (pool.submit(what_a_worker_sees, sent)
                                             .result(timeout=120))
    finally:
        aprank.set_simd(previous)
        aprank.unregister("py-last")
    assert "py-last" not in names and "qs" in names       # the worker has the built-ins only
    assert simd_default is True                            # and the default SIMD setting
    assert received.startswith("ValueError: unknown algorithm 'py-last'")
