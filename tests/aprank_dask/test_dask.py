"""aprank.dask on a distributed.LocalCluster of 2 worker processes: the estimators learn the
single-machine w, and the split inference of one giant query equals ``qs``."""
import pickle
import subprocess
import sys

import numpy as np
import pytest

dask = pytest.importorskip("dask", reason="aprank.dask needs the dask extra")
distributed = pytest.importorskip("distributed", reason="aprank.dask needs the dask extra")
import dask.array as da  # noqa: E402
import dask.dataframe as dd  # noqa: E402
import pandas as pd  # noqa: E402

import aprank  # noqa: E402
import aprank.dask  # noqa: E402
from aprank.dask import DaskAPSVM, DaskBinarySVM, DaskNDCGSVM, infer  # noqa: E402
from aprank.learn import APSVM, NDCGSVM, BinarySVM, EmptyQueryWarning  # noqa: E402
from aprank.models import RankingModel  # noqa: E402
from aprank_support.synthetic import one_query  # noqa: E402
from benchmarks import dask_bench  # noqa: E402

pytestmark = pytest.mark.min_versions   # also run against the declared minimum versions (.ci/run)

PAIRS = [(APSVM, DaskAPSVM), (NDCGSVM, DaskNDCGSVM), (BinarySVM, DaskBinarySVM)]
#: the tests on the module's cluster of worker processes: the quick lane (-m "not slow") leaves
#: them out, with the cluster's start
ON_A_CLUSTER = pytest.mark.slow


@pytest.fixture(scope="module")
def cluster_client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster,\
            distributed.Client(cluster) as c:
        yield c


@pytest.fixture(scope="module")
def digit3_in_queries(unit_digits):
    X, t = unit_digits
    rng = np.random.default_rng(0)
    # 12 queries whose rows are scattered over every partition: the fit must regroup them
    return X, (t == 3).astype(int), rng.integers(0, 12, X.shape[0])


def _split(X, y, qid, chunks):
    return (da.from_array(X, chunks=(chunks, X.shape[1])), da.from_array(y, chunks=chunks),
            None if qid is None else da.from_array(qid, chunks=chunks))


# ------------------------------------------------------------------ a) the same w as one machine
@pytest.mark.parametrize("single, on_dask", PAIRS, ids=[p[1].__name__ for p in PAIRS])
@pytest.mark.parametrize("queries", ["many", "one"])
@ON_A_CLUSTER
def test_same_w_as_one_machine(cluster_client, digit3_in_queries, single, on_dask, queries):
    X, y, qid = digit3_in_queries
    qid = qid if queries == "many" else None
    ref = single(C=10, solver="ocas").fit(X, y, qid)     # the Dask estimators' default solver
    got = on_dask(C=10).fit(*_split(X, y, qid, 230))
    assert got.converged_ and got.n_iter_ == ref.n_iter_
    assert np.abs(got.coef_ - ref.coef_).max() <= 1e-6 * np.linalg.norm(ref.coef_)
    if single is BinarySVM:
        assert got.intercept_ == pytest.approx(ref.intercept_, abs=1e-6 * np.linalg.norm(ref.coef_))
    assert got.primal_ == pytest.approx(ref.primal_, rel=1e-9)
    Xd, yd, qd = _split(X, y, qid, 300)
    assert got.score(Xd, yd, qd) == pytest.approx(ref.score(X, y, qid), rel=1e-9)
    np.testing.assert_allclose(got.decision_function(Xd).compute(), ref.decision_function(X),
                               rtol=1e-6, atol=1e-9)
    assert np.array_equal(got.predict(Xd).compute(), ref.predict(X))


@ON_A_CLUSTER
def test_dataframe_inputs_and_query_straddling(cluster_client, digit3_in_queries):
    X, y, qid = digit3_in_queries
    order = np.argsort(qid, kind="stable")     # sorted queries, but partitions cut through them
    X, y, qid = X[order], y[order], qid[order]
    frame = pd.DataFrame(X, columns=[f"f{k}" for k in range(X.shape[1])])
    frame["y"], frame["qid"] = y, qid
    ddf = dd.from_pandas(frame, npartitions=5)
    got = DaskAPSVM(C=1).fit(ddf.drop(columns=["y", "qid"]), ddf["y"], ddf["qid"])
    ref = APSVM(C=1, solver="ocas").fit(X, y, qid)
    assert np.abs(got.coef_ - ref.coef_).max() <= 1e-6 * np.linalg.norm(ref.coef_)


@ON_A_CLUSTER
def test_skip_queries_without_positives(cluster_client, digit3_in_queries):
    X, y, qid = digit3_in_queries
    y = np.where(qid < 5, 0, y)          # queries 0-4 have no positive left
    with pytest.warns(EmptyQueryWarning, match="5 of 12 training queries"):
        ref = APSVM(C=1, empty="skip", solver="ocas").fit(X, y, qid)
    with pytest.warns(EmptyQueryWarning, match="5 of 12 training queries"):
        got = DaskAPSVM(C=1, empty="skip").fit(*_split(X, y, qid, 400))
    assert np.abs(got.coef_ - ref.coef_).max() <= 1e-6 * np.linalg.norm(ref.coef_)
    with pytest.raises(ValueError, match="without positive"):
        DaskAPSVM(C=1, empty="error").fit(*_split(X, y, qid, 400))


@ON_A_CLUSTER
def test_fitted_estimator_pickles(cluster_client, digit3_in_queries):
    X, y, qid = digit3_in_queries
    est = DaskNDCGSVM(C=1).fit(*_split(X, y, qid, 500))
    back = pickle.loads(pickle.dumps(est))
    assert np.array_equal(back.coef_, est.coef_) and back.get_params() == est.get_params()


@ON_A_CLUSTER
def test_bad_input_is_refused(cluster_client, digit3_in_queries):
    X, y, qid = digit3_in_queries
    with pytest.raises(ValueError, match="'C' parameter of DaskAPSVM must be"):
        DaskAPSVM(C=-1).fit(*_split(X, y, None, 500))
    with pytest.raises(ValueError, match="exactly 2 classes"):
        DaskAPSVM().fit(*_split(X, np.zeros_like(y), None, 500))
    with pytest.raises(ValueError, match="rows but y has"):
        DaskAPSVM().fit(da.from_array(X), da.from_array(y[:-1]))
    bad = X.copy()
    bad[700, 3] = np.nan
    with pytest.raises(ValueError, match=r"X\[700, 3\]"):
        DaskAPSVM().fit(*_split(bad, y, None, 500))
    with pytest.raises(ValueError, match="qid has"):
        DaskAPSVM().fit(da.from_array(X), da.from_array(y), da.from_array(qid[:10]))


# ------------------------------------------------------------- b) split inference equals qs
def _assert_same(result, ref):
    assert np.array_equal(result.ranks.compute(), ref.ranks)
    assert np.array_equal(result.coef.compute(), ref.coef)
    assert result.loss == pytest.approx(ref.loss, rel=1e-12, abs=1e-14)
    assert result.objective == pytest.approx(ref.objective, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("loss", ["ap", "ndcg"])
@pytest.mark.parametrize("decimals", [None, 1], ids=["no-ties", "ties"])
@ON_A_CLUSTER
def test_split_inference_equals_qs_on_a_million(cluster_client, loss, decimals):
    scores, labels = one_query(10**6, 2000, 7, 1.5, decimals)
    result = infer(da.from_array(scores, chunks=125_000), da.from_array(labels, chunks=125_000),
                   loss=loss)
    assert result.n_rounds >= 2         # the pivots really had to be refined
    _assert_same(result, aprank.infer(scores, labels, loss=loss, algorithm="qs"))


@pytest.mark.parametrize("seed", range(40))
@ON_A_CLUSTER
def test_split_inference_equals_qs_on_small_queries(cluster_client, seed):
    """Uneven chunks (some without positives or negatives), heavy ties, few pivots."""
    rng = np.random.default_rng([seed, 1])
    n = int(rng.integers(2, 400))
    scores, labels = one_query(n, int(rng.integers(1, n)), seed, 1.5, [None, 1, 0][seed % 3])
    if seed % 10 == 9:
        scores[:] = 3.0                   # every score tied
    cuts = np.unique(rng.integers(1, n, int(rng.integers(0, 6))))
    chunks = tuple(np.diff(np.r_[0, cuts, n]).tolist())
    loss = ["ap", "ndcg"][seed % 2]
    result = infer(da.from_array(scores, chunks=(chunks,)), da.from_array(labels, chunks=(chunks,)),
                   loss=loss, samples=int(rng.integers(1, 8)))
    _assert_same(result, aprank.infer(scores, labels, loss=loss, algorithm="qs"))


@ON_A_CLUSTER
def test_split_inference_refuses_bad_input(cluster_client):
    scores, labels = one_query(100, 10, 0, 1.5)
    with pytest.raises(ValueError, match="without positive"):
        infer(da.from_array(scores, chunks=30), da.from_array(np.zeros(100, bool), chunks=30))
    bad = scores.copy()
    bad[3] = np.inf
    with pytest.raises(ValueError, match="not finite"):
        infer(da.from_array(bad, chunks=30), da.from_array(labels, chunks=30))
    with pytest.raises(ValueError, match="ranking losses"):
        infer(da.from_array(scores), da.from_array(labels), loss="zero-one")
    with pytest.raises(ValueError, match="equally long"):
        infer(da.from_array(scores), da.from_array(labels[:50]))


def test_a_ranking_kind_loss_that_is_no_ranking_loss_is_refused():
    """A Loss saying kind "ranking" without being a RankingLoss has none of the methods split
    inference needs: a ValueError, on Dask's local scheduler (nothing reaches a worker)."""
    from aprank.losses import Loss

    class Impostor(Loss):
        name, kind = "impostor-ranking", "ranking"

    scores, labels = one_query(100, 10, 0, 1.5)
    with pytest.raises(ValueError, match="ranking losses .* not 'impostor-ranking'"):
        infer(da.from_array(scores, chunks=30), da.from_array(labels, chunks=30), loss=Impostor())
    X = np.random.default_rng(0).standard_normal((100, 3))
    with pytest.raises(ValueError, match="ranking losses .* not 'impostor-ranking'"):
        aprank.dask.ranking_model(da.from_array(X, chunks=(30, 3)),
                                  da.from_array(labels.astype(int), chunks=30), Impostor())


@pytest.mark.parametrize("on_dask", [DaskAPSVM, DaskNDCGSVM, DaskBinarySVM])
def test_score_refuses_a_sample_weight_and_routes_none(on_dask):
    """score takes the single-machine signature, but the Dask models have no weighting: a
    sample_weight is a TypeError (before anything is computed), and metadata routing asks for
    qid alone."""
    X, y = da.zeros((4, 2)), da.from_array(np.array([0, 1, 0, 1]))
    with pytest.raises(TypeError, match=rf"{on_dask.__name__}.score\(\) takes no sample_weight"):
        on_dask().score(X, y, None, np.ones(4))
    assert on_dask().get_metadata_routing().score.requests == {"qid": None}


# ------------------------------------------------------------------------ c) the benchmark
@pytest.mark.parametrize("loss", ["ap", "ndcg", "zero-one"])
@pytest.mark.parametrize("queries", ["many", "one"])
@ON_A_CLUSTER
def test_ranking_model_cuts_as_one_machine(cluster_client, digit3_in_queries, loss, queries):
    """aprank.dask.ranking_model (what the benchmark times): the single-machine model's cut."""
    X, y, qid = digit3_in_queries
    qid = qid if queries == "many" else None
    w = np.random.default_rng(1).standard_normal(X.shape[1])
    algorithm = "zero-one" if loss == "zero-one" else "qs"
    ref = RankingModel(X, y == 1, loss, qid=qid, algorithm=algorithm).most_violated(w)
    Xd, yd, qd = _split(X, y, qid, 230)
    got = aprank.dask.ranking_model(Xd, yd, loss, qid=qd, algorithm=algorithm).most_violated(w)
    assert np.abs(got.g - ref.g).max() <= 1e-9 * np.linalg.norm(ref.g)
    assert got.b == pytest.approx(ref.b, rel=1e-9)
    with pytest.raises(ValueError, match="exactly 2 classes"):
        aprank.dask.ranking_model(Xd, da.zeros_like(yd), loss, qid=qd)


@ON_A_CLUSTER
def test_benchmark_runs_and_its_cuts_agree(cluster_client):
    table = dask_bench.run(n=100_000, d=4, partitions=(1, 2), repeats=1, client=cluster_client)
    lines = table.splitlines()
    header = next(line.split("|") for line in lines if line.startswith("| problem"))
    diff = [c.strip() for c in header].index("max abs diff of g / abs g")
    rows = [line.split("|") for line in lines if "| cluster |" in line]
    assert len(rows) == 4           # two problems x two partition counts
    assert all(float(r[diff]) < 1e-9 for r in rows)      # the cluster's cut is the process's


def test_import_aprank_does_not_import_dask():
    code = ("import sys, aprank, aprank.learn; "
            "print(sorted({'dask', 'distributed'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_without_a_distributed_client():
    """Dask's local threads scheduler (no Client): the same w and the same split ranks."""
    code = """
import numpy as np, dask.array as da, aprank
from aprank.dask import DaskAPSVM, infer
from aprank.learn import APSVM
rng = np.random.default_rng(3)
X = rng.standard_normal((600, 5)); y = X[:, 0] + rng.standard_normal(600) > 1
got = DaskAPSVM(C=1).fit(da.from_array(X, chunks=(150, 5)), da.from_array(y, chunks=150))
ref = APSVM(C=1).fit(X, y)
assert np.abs(got.coef_ - ref.coef_).max() <= 1e-6 * np.linalg.norm(ref.coef_)
s = np.round(X @ ref.coef_, 1)
r = infer(da.from_array(s, chunks=100), da.from_array(y, chunks=100))
assert np.array_equal(r.ranks.compute(), aprank.infer(s, y).ranks)
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]
