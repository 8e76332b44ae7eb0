"""Long fits: a warning before the work, and Ctrl-C within a second.

Every estimator's fit adds up what its work is estimated to take (the registry's ``seconds``
models of the inference it calls, its products, its set-up) before the work starts, and warns
once (``SlowFitWarning``) when that reaches ``aprank.inference.slow_call_seconds()``. The tests
stub the registry entry the fit would run with one that fails the test, so the warning, made
an error, must come before any inference (and the stub shows that without the error the fit
does reach it). A SIGINT, sent by a child process to itself a second into a fit sized to run
for many seconds, stops the fit within a second and leaves the estimator as it was: unfitted,
or with the attributes of its previous fit.
"""
from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.utils.validation import check_is_fitted

import aprank.learn._dual_cd as dual_cd
from aprank.checks import bench_instance
from aprank.inference import _registry, slow_call_seconds
from aprank.learn import (
    APSVM,
    APSVMCV,
    HOAPSVM,
    HOBSVM,
    NDCGSVM,
    APSVMAppx,
    BinarySVM,
    CStarPrecisionAtK,
    LatentAPSVM,
    LatentSSVM,
    LatentSVM,
    SlowFitWarning,
)
from aprank_support.signals import interrupted_after

ROOT = Path(__file__).resolve().parents[2]


def _never_run(call):
    raise AssertionError("the algorithm ran: the warning must come before the fit's work")


@pytest.fixture
def stub(monkeypatch):
    """stub(name, kind): the registry entry that fits resolve, with a run that fails the test
    (its cost models unchanged); stub("dual-cd"): the coordinate descent's compiled epochs,
    which BinarySVM's default solver runs instead of inference."""
    def replace(name, kind=None):
        if name == "dual-cd":
            monkeypatch.setattr(dual_cd, "_epochs", lambda *args: _never_run(None))
            return
        entry = _registry.get(name, kind)
        monkeypatch.setitem(_registry._TABLE, (kind, name),
                            dataclasses.replace(entry, run=_never_run))
    return replace


@pytest.fixture
def threshold(monkeypatch):
    """threshold(seconds): the estimate at which calls and fits warn, for this test."""
    return lambda seconds: monkeypatch.setattr(_registry, "SLOW_CALL_SECONDS", seconds)


def _ranking_data(n=400, d=5, queries=8, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = (X[:, 0] + 0.5 * rng.standard_normal(n)) > 0.5
    return X, y, np.repeat(np.arange(queries), n // queries)


def _multilabel(n=200, L=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 4))
    Y = (X @ rng.standard_normal((4, L)) + 0.5 * rng.standard_normal((n, L))) > 0.3
    Y[Y.sum(1) == 0, 0] = True
    return X, Y


def _bags(P=40, N=160):
    instance = bench_instance("latent", P, N, 1.0)
    rng = np.random.default_rng(0)
    X = np.c_[instance.scores, rng.standard_normal((instance.scores.size, 3))]
    return X, instance.labels, instance.bags


# (estimator, the registry entry its inference runs, fit arguments)
def _fits():
    X, y, qid = _ranking_data()
    groups = np.arange(X.shape[0]) // 10
    Xb, yb, bags = _bags()
    Xm, Ym = _multilabel()
    return [
        ("rank SVM", APSVM(), ("auto", "ranking"), (X, y), dict(qid=qid)),
        ("rank SVM (NDCG)", NDCGSVM(), ("auto", "ranking"), (X, y), dict(qid=qid)),
        ("binary", BinarySVM(solver="ocas"), ("zero-one", "labelling"), (X, y), dict(qid=qid)),
        ("binary, dual-cd", BinarySVM(), ("dual-cd",), (X, y), dict(qid=qid)),
        ("APSVMAppx", APSVMAppx(solver="ocas"), ("zero-one", "labelling"), (X, y), dict(qid=qid)),
        ("cross-validation", APSVMCV(Cs=2, cv=2), ("auto", "ranking"), (X, y), dict(qid=qid)),
        ("high-order HOB", HOBSVM(), ("graphcut", "pairwise"), (X, y), dict(groups=groups)),
        ("high-order HOAP", HOAPSVM(init="zero"), ("graphcut", "pairwise"), (X, y),
         dict(groups=groups)),
        ("latent AP", LatentAPSVM(), ("qs", "ranking"), (Xb, yb), dict(bags=bags)),
        ("latent SSVM", LatentSSVM(), ("qs", "ranking"), (Xb, yb), dict(bags=bags)),
        ("latent binary", LatentSVM(), ("zero-one", "labelling"), (Xb, yb), dict(bags=bags)),
        ("c-star", CStarPrecisionAtK(n_core=2), ("cstar", "topk"), (Xm, Ym), {}),
    ]


FITS = _fits()


@pytest.mark.parametrize("kind, estimator, entry, args, kwargs", FITS,
                         ids=[f[0] for f in FITS])
def test_a_fit_estimated_over_the_threshold_warns_once_before_its_work(
        kind, estimator, entry, args, kwargs, stub, threshold):
    stub(*entry)
    threshold(1e-6)       # every fit's estimate is over it
    with warnings.catch_warnings():
        warnings.simplefilter("error", SlowFitWarning)
        with pytest.raises(SlowFitWarning, match=rf"^{type(estimator).__name__}\.fit is "
                                                 r"estimated to take about [\d.]+ (us|ms|s) or "
                                                 r"more \("):
            estimator.fit(*args, **kwargs)
    with pytest.raises(Exception, match="not fitted"):
        check_is_fitted(estimator)
    # without the error the same fit reaches the algorithm, after exactly one warning: the
    # warning came first
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(AssertionError, match="the algorithm ran"):
            estimator.fit(*args, **kwargs)
    assert [type(w.message) for w in caught].count(SlowFitWarning) == 1
    # the warning points at this file's call of fit, not at aprank's or scikit-learn's code
    assert {Path(w.filename).name for w in caught if w.category is SlowFitWarning} == {
        Path(__file__).name}


@pytest.mark.parametrize("kind, estimator, entry, args, kwargs", FITS,
                         ids=[f[0] for f in FITS])
def test_ordinary_fits_do_not_warn(kind, estimator, entry, args, kwargs):
    assert slow_call_seconds() == 60.0
    with warnings.catch_warnings():
        warnings.simplefilter("error", SlowFitWarning)
        warnings.simplefilter("ignore", UserWarning)    # convergence, one query, ...
        estimator.set_params(**({"max_iter": 20} if "max_iter" in estimator.get_params()
                                else {})).fit(*args, **kwargs)


def test_the_estimate_decides_not_the_estimator(stub, threshold):
    # the same fit under a threshold a little above and a little below its estimate
    X, y, qid = _ranking_data()
    stub("auto", "ranking")
    threshold(1e-6)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(AssertionError, match="the algorithm ran"):
            APSVM().fit(X, y, qid=qid)
    message = next(str(w.message) for w in caught if w.category is SlowFitWarning)
    assert "10 iterations of about" in message
    value, unit = message.split("estimated to take about ")[1].split(" ")[:2]
    estimate = float(value) * {"us": 1e-6, "ms": 1e-3, "s": 1.0}[unit]
    threshold(2 * estimate)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SlowFitWarning)
        with pytest.raises(AssertionError, match="the algorithm ran"):
            APSVM().fit(X, y, qid=qid)


def test_the_pairs_of_a_large_group_are_estimated_before_they_are_built(monkeypatch, threshold):
    # one clique of 3,000 samples: 4.5 million pairs, counted from the group sizes alone
    import aprank.learn._high_order as high_order

    monkeypatch.setattr(high_order, "group_pairs",
                        lambda groups: pytest.fail("the pairs were built before the warning"))
    threshold(1.0)
    X = np.random.default_rng(0).standard_normal((3000, 5))
    with warnings.catch_warnings():
        warnings.simplefilter("error", SlowFitWarning)
        with pytest.raises(SlowFitWarning, match=r"set-up of 4,498,500 pairs: \d"):
            HOBSVM(max_iter=5).fit(X, X[:, 0] > 0, groups=np.zeros(3000, int))


def test_one_large_clique_warns_at_the_real_threshold(stub):
    # 4.5 million pairs whose single cut takes many seconds once the pairs are strong: the
    # estimate (the cut's cost grows with the component's degree) passes the minute in five
    # iterations, before any cut
    stub("graphcut", "pairwise")
    X = np.random.default_rng(0).standard_normal((3000, 5))
    est = HOBSVM(max_iter=5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SlowFitWarning)
        with pytest.raises(SlowFitWarning, match=r"^HOBSVM\.fit is estimated to take"):
            est.fit(X, X[:, 0] > 0, groups=np.zeros(3000, int))
    assert not hasattr(est, "coef_")


def test_a_large_core_warns_at_the_real_threshold(stub):
    # 2^16 core states over 2,000 samples of 20 labels, twice per step: minutes per step
    stub("cstar", "topk")
    rng = np.random.default_rng(0)
    X, Y = rng.standard_normal((2000, 3)), rng.random((2000, 20)) < 0.3
    est = CStarPrecisionAtK(n_core=16)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SlowFitWarning)
        with pytest.raises(SlowFitWarning, match=r"^CStarPrecisionAtK\.fit is estimated to take "
                                                 r"about \d+ minutes or more \(21 iterations "
                                                 r"of about \d+ s"):
            est.fit(X, Y)
    assert not hasattr(est, "coef_")


# ------------------------------------------------------------------------------ Ctrl-C
#: A child process fits ``make()`` on ``data()`` twice: once fresh and once after a quick fit
#: on ``small()`` (5 iterations), each sent SIGINT by a timer thread DELAY s in, and prints
#: what it saw. Uninterrupted, each of these fits runs for more than 5 s.
CHILD = r"""
import json, signal, sys, threading, time, warnings
# Python leaves SIGINT ignored where its parent did (a background job of a non-interactive
# shell, as CI may start the tests): Ctrl-C's handler, whatever the parent ignores
signal.signal(signal.SIGINT, signal.default_int_handler)
import numpy as np
from sklearn.utils.validation import check_is_fitted
warnings.simplefilter("ignore")
import aprank.learn._dual_cd as dual_cd
from aprank.checks import bench_instance
from aprank.learn import *
DELAY = 1.0
{setup}

def interrupted(est, args, kwargs):
    fired = []
    def fire():
        fired.append(time.perf_counter())
        signal.raise_signal(signal.SIGINT)
    timer = threading.Timer(DELAY, fire)
    start = time.perf_counter()
    timer.start()
    try:
        est.fit(*args, **kwargs)
        stopped = None
    except KeyboardInterrupt:
        stopped = time.perf_counter()
    timer.cancel()
    return dict(fired=bool(fired), ran=time.perf_counter() - start,
                latency=None if stopped is None or not fired else stopped - fired[0])

def fitted(est):
    try:
        check_is_fitted(est)
        return True
    except Exception:
        return False

fresh = make()
out = dict(fresh=interrupted(fresh, *data()), fresh_fitted=fitted(fresh))
before = make()
sized = before.get_params()
before.set_params(max_iter=5).fit(*small()[0], **small()[1])    # a quick previous fit
before.set_params(**sized)
state = {{k: repr(v) for k, v in vars(before).items()}}
out["refit"] = interrupted(before, *data())
out["refit_unchanged"] = state == {{k: repr(v) for k, v in vars(before).items()}}
print(json.dumps(out))
"""

#: per estimator kind: the code of make(), data() and small() ((args, kwargs) each)
KINDS = {
    "rank SVM": """
rng = np.random.default_rng(0)
X = rng.standard_normal((400_000, 30)); y = X[:, 0] + rng.standard_normal(400_000) > 1
make = lambda: APSVM(C=1e4, tol=1e-9, max_iter=100_000)
data = lambda: ((X, y), dict(qid=np.arange(400_000) // 1000))
small = lambda: ((X[:300], y[:300]), dict(qid=np.arange(300) // 100))
""",
    "binary": """
rng = np.random.default_rng(0)
X = rng.standard_normal((400_000, 50)); y = X[:, 0] + 2 * rng.standard_normal(400_000) > 1
make = lambda: BinarySVM(C=1e4, tol=1e-9, max_iter=100_000)
data = lambda: ((X, y), {})
small = lambda: ((X[:300], y[:300]), {})
""",
    "high-order HOB": """
rng = np.random.default_rng(0)
X = rng.standard_normal((20_000, 5)); y = X[:, 0] + rng.standard_normal(20_000) > 0.5
make = lambda: HOBSVM(C=100.0, tol=1e-9, max_iter=100_000)
data = lambda: ((X, y), dict(groups=np.arange(20_000) // 200))
small = lambda: ((X[:200], y[:200]), dict(groups=np.arange(200) // 10))
""",
    "high-order HOAP": """
rng = np.random.default_rng(0)
X = rng.standard_normal((20_000, 5)); y = X[:, 0] + rng.standard_normal(20_000) > 0.5
make = lambda: HOAPSVM(C=10.0, init="zero", tol=1e-9, max_iter=100_000)
data = lambda: ((X, y), dict(groups=np.arange(20_000) // 100))
small = lambda: ((X[:200], y[:200]), dict(groups=np.arange(200) // 10))
""",
    "latent": """
i = bench_instance("latent", 1500, 6000, 1.0)
rng = np.random.default_rng(0)
X = np.c_[i.scores, rng.standard_normal((i.scores.size, 4))]
make = lambda: LatentSSVM(C=100.0, tol=1e-9, max_iter=100_000)
data = lambda: ((X, i.labels), dict(bags=i.bags))
s = bench_instance("latent", 10, 30, 1.0)
small = lambda: ((np.c_[s.scores, np.zeros((s.scores.size, 4))], s.labels), dict(bags=s.bags))
""",
    "c-star": """
rng = np.random.default_rng(0)
X = rng.standard_normal((3000, 4)); Y = rng.random((3000, 20)) < 0.3
make = lambda: CStarPrecisionAtK(n_core=14, max_iter=1000, tol=0.0)
data = lambda: ((X, Y), {})
small = lambda: ((X[:100], Y[:100]), {})
""",
}

#: What the stop may take: the kernels ask for signals every 0.1 s and no NumPy step of these
#: fits takes longer; the rest is margin for a loaded machine (2 cores shared with a build).
STOP_SECONDS = 1.0


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_ctrl_c_stops_a_long_fit_within_a_second_and_leaves_the_estimator_as_it_was(kind):
    result = subprocess.run([sys.executable, "-c", CHILD.format(setup=KINDS[kind])], cwd=ROOT,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    out = json.loads(result.stdout.strip().splitlines()[-1])
    for run in ("fresh", "refit"):
        assert out[run]["fired"], f"{kind}: the fit ended before the signal ({out[run]})"
        assert out[run]["latency"] is not None, f"{kind}: the fit ignored the signal {out}"
        assert out[run]["latency"] < STOP_SECONDS, f"{kind}: {out}"
    assert not out["fresh_fitted"], f"{kind}: an interrupted fit left fitted attributes"
    assert out["refit_unchanged"], f"{kind}: an interrupted refit changed the estimator"


def test_ctrl_c_stops_a_large_working_set_qp_within_a_second():
    # 2,200 constraints (a multi-cut working set can hold thousands): one compiled active-set
    # solve of some 5 s, O(n^2) a step; the steps ask for signals
    from aprank.learn._qp import solve_dual

    rng = np.random.default_rng(0)
    G = rng.standard_normal((2200, 4400)) / np.sqrt(4400)
    K, b = G @ G.T, rng.random(2200)
    kept = K.copy()
    assert interrupted_after(lambda: solve_dual(K, b, np.ones(2200, bool), 1e4), 0.5) < 1.0
    np.testing.assert_array_equal(K, kept)
