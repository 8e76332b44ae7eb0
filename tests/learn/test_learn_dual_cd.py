"""solver="dual-cd": dual coordinate descent for the 0-1 loss's risk, a sum of hinges.

What it must keep of the cutting planes: the same objective (the plain loop's primal within
tol), a true duality gap under the same stopping rule, OCAS where the risk is no sum of hinges,
warm starts and weights; and what it adds: the hinge terms are the model's own risk, the
descent's cut carries its dual to OCAS, fits are reproducible, and Ctrl-C stops the epochs.
"""
import signal
import threading
import time
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from aprank.learn import BinarySVM, BinarySVMCV, _cutting_plane, cutting_plane
from aprank.learn._dual_cd import HingeDual
from aprank.models import RankingModel

pytestmark = pytest.mark.min_versions

TOL = 1e-3


#: the samples of ``data``: BinarySVM's C is per sample, so C / N_DATA is the structural C
N_DATA = 300


def data(seed=0, n=N_DATA, d=8, queries=None, sparse=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = X @ rng.normal(size=d) + rng.normal(scale=1.5, size=n) > 0.5
    X = np.hstack([X, np.ones((n, 1))])           # the bias column of BinarySVM's design
    qid = None if queries is None else rng.integers(0, queries, n)
    if sparse:
        X[rng.random(X.shape) < 0.5] = 0.0
        X = sp.csr_matrix(X)
    return X, y, qid


def model(X, y, qid=None, sample_weight=None, loss="zero-one"):
    algorithm = "zero-one" if loss == "zero-one" else "qs"
    return RankingModel(X, y, loss, qid=qid, algorithm=algorithm, empty="skip",
                        sample_weight=sample_weight)


def hinge_risk(terms, w):
    margins = terms.sign * np.asarray(terms.X @ w).ravel()
    return float(terms.weight @ np.maximum(0.0, 1.0 - margins))


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_the_hinge_terms_are_the_models_risk(sparse, weighted):
    """At any w, sum_i a_i max(0, 1 - s_i x_i'w) is the most violated constraint's slack, over
    queries of different sizes, one without a positive (left out), with or without weights."""
    X, y, qid = data(1, queries=7, sparse=sparse)
    y = y & (qid != 3)                                # query 3: no positive, skipped
    rng = np.random.default_rng(2)
    sw = rng.uniform(0.5, 3.0, y.shape[0]) if weighted else None
    m = model(X, y, qid, sample_weight=sw)
    terms = m.hinge_terms()
    assert np.all(terms.weight[qid == 3] == 0)
    for scale in (0.0, 0.3, 3.0):
        w = scale * rng.normal(size=X.shape[1])
        assert hinge_risk(terms, w) == pytest.approx(m.most_violated(w).violation, abs=1e-12)


def test_a_ranking_loss_has_no_hinge_terms_and_dual_cd_is_ocas_there():
    X, y, qid = data(3, queries=5)
    m = model(X, y, qid, loss="ap")
    assert m.hinge_terms() is None
    got = cutting_plane(m, 10.0, tol=TOL, solver="dual-cd")
    ref = cutting_plane(m, 10.0, tol=TOL, solver="ocas")
    np.testing.assert_array_equal(got.w, ref.w)
    assert got.n_iter == ref.n_iter


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("C", [0.01, 1.0, 100.0, 1e4])
def test_dual_cd_reaches_the_plain_objective_with_a_true_gap(C, sparse):
    """Converged, gap <= min(1, C) tol, the plain loop's primal within tol, and every dual the
    history records below the optimum (a lower bound: the plain loop's primal + tol)."""
    X, y, qid = data(4, queries=3, sparse=sparse)
    m = model(X, y, qid)
    plain = cutting_plane(m, C, tol=1e-6, solver="cutting-plane", max_iter=5000)
    assert plain.converged
    got = cutting_plane(m, C, tol=TOL, solver="dual-cd")
    assert got.converged
    assert got.gap <= min(1.0, C) * TOL
    assert abs(got.primal - plain.primal) <= TOL
    # the reported primal is the true objective at the returned w (exact inference)
    assert got.primal == pytest.approx(0.5 * got.w @ got.w + C * m.most_violated(got.w).violation,
                                       abs=1e-9)
    assert max(h["dual"] for h in got.history) <= plain.primal + 1e-6


@pytest.mark.parametrize("weighted", [False, True], ids=["multi-cut", "ocas"])
def test_past_its_budget_the_descent_hands_its_w_to_ocas(monkeypatch, weighted):
    """With a budget of 3 epochs, the descent stops early and OCAS finishes from its w
    (multi-cut, where the model splits its cut; with sample weights it does not): the same
    objective and a true gap, the iterations of both in one history, numbered on through the
    hand-over as the callback sees them."""
    monkeypatch.setattr(_cutting_plane, "DUAL_CD_EPOCHS", 3)
    X, y, qid = data(5)
    sw = np.linspace(0.5, 2.0, y.shape[0]) if weighted else None
    m = model(X, y, qid, sample_weight=sw)
    seen = []
    got = cutting_plane(m, 1e3, tol=TOL, solver="dual-cd", callback=seen.append)
    assert got.working_set.parts == (1 if weighted else _cutting_plane.MULTI_CUT_BLOCKS)
    plain = cutting_plane(m, 1e3, tol=1e-6, solver="cutting-plane", max_iter=5000)
    descent = [h for h in got.history if "epochs" in h]
    assert len(descent) == 1 and descent[0]["epochs"] == 3
    assert len(got.history) == got.n_iter > 1
    assert [h["iteration"] for h in got.history] == list(range(1, got.n_iter + 1))
    assert [h["iteration"] for h in seen] == list(range(1, got.n_iter + 1))
    assert got.converged and got.gap <= TOL
    assert abs(got.primal - plain.primal) <= TOL


def test_fits_are_reproducible_and_leave_the_data_alone():
    X, y, qid = data(7, queries=4)
    kept = X.copy()
    first = BinarySVM(C=100.0 / N_DATA).fit(X[:, :-1], y, qid=qid)
    again = BinarySVM(C=100.0 / N_DATA).fit(X[:, :-1], y, qid=qid)
    assert first.solver == "dual-cd"
    np.testing.assert_array_equal(first.coef_, again.coef_)
    np.testing.assert_array_equal(X, kept)


def test_warm_starts_along_c_reach_the_cold_objectives():
    """warm_start carries the multipliers (as fractions of their bounds) to the next C: the
    cold fit's objective within tol, and a refit at the same C ends in its first round."""
    X, y, qid = data(8, queries=4)
    X = X[:, :-1]
    warm = BinarySVM(warm_start=True)
    for C in (0.1 / N_DATA, 1.0 / N_DATA, 10.0 / N_DATA, 100.0 / N_DATA):
        warm.set_params(C=C).fit(X, y, qid=qid)
        cold = BinarySVM(C=C).fit(X, y, qid=qid)
        assert abs(warm.primal_ - cold.primal_) <= TOL
        assert warm._working_set.fractions is not None
    warm.set_params(C=1.0 / N_DATA).fit(X, y, qid=qid)
    assert all("epochs" in h for h in warm.history_)      # the descent converged alone
    warm.fit(X, y, qid=qid)
    assert warm.n_iter_ == 1


def test_weight_two_and_the_sample_entered_twice_have_the_same_objective():
    """The descent's order differs between the two, so w may differ within tol (scikit-learn's
    equivalence checks ask 1e-7: tests/learn/test_learn.py); the objective of each fit's w evaluated
    on the other problem is the optimum within tol."""
    X, y, _ = data(9)
    X = X[:, :-1]
    sw = np.where(X[:, 0] > 0.5, 2.0, 1.0)
    twice = np.r_[np.arange(y.shape[0]), np.flatnonzero(sw == 2.0)]
    C = 10.0 / N_DATA
    weighted = BinarySVM(C=C).fit(X, y, sample_weight=sw)
    repeated = BinarySVM(C=C).fit(X[twice], y[twice])
    assert abs(weighted.primal_ - repeated.primal_) <= TOL
    unweighted = BinarySVM(C=C).fit(X, y)
    assert np.linalg.norm(unweighted.coef_ - weighted.coef_) > 1e-2 * np.linalg.norm(
        weighted.coef_)                                                 # the weights matter


# the two solvers' searches agree; where their C lands is beside the point
@pytest.mark.filterwarnings("ignore::aprank.learn.GridEdgeWarning")
def test_binary_svm_cv_on_the_descent_equals_its_grid_under_ocas():
    """The CV estimator's path with the descent reaches OCAS's objectives at every C."""
    X, y, _ = data(10)
    X = X[:, :-1]
    Cs = [0.01, 1.0, 100.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        got = BinarySVMCV(Cs=Cs, cv=3, refit=False).fit(X, y)
        ref = BinarySVMCV(Cs=Cs, cv=3, refit=False, solver="ocas").fit(X, y)
    assert np.all(np.abs(got.primal_path_ - ref.primal_path_) <= 2 * TOL)


def test_ctrl_c_stops_the_epochs_within_a_second():
    """Epochs that would run for hours (eps below any spread) end on SIGINT, in the kernel."""
    X, y, _ = data(11, n=20_000, d=50)
    terms = model(X, y).hinge_terms()
    dual_cd = HingeDual(terms.X, terms.weight, terms.sign, 1e6)
    dual_cd.eps = -1.0
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    fired = []
    timer = threading.Timer(0.3, lambda: (fired.append(time.perf_counter()),
                                          signal.raise_signal(signal.SIGINT)))
    try:
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            dual_cd.run(10 ** 12)
        stopped = time.perf_counter()
    finally:
        timer.cancel()
        timer.join()
        signal.signal(signal.SIGINT, previous)
    assert fired and stopped - fired[0] < 1.0


def test_the_work_budget_ends_the_descent_too(monkeypatch):
    """A budget of work (full epochs) far below one round's ends the descent after its first
    round, however many epochs remain; OCAS finishes."""
    monkeypatch.setattr(_cutting_plane, "DUAL_CD_PASSES", 1e-9)
    X, y, _ = data(13)
    m = model(X, y)
    got = cutting_plane(m, 1e3, tol=TOL, solver="dual-cd")
    descent = [h for h in got.history if "epochs" in h]
    assert len(descent) == 1 and descent[0]["epochs"] < _cutting_plane.DUAL_CD_EPOCHS
    assert got.converged and got.n_iter > 1


def test_max_iter_ends_the_descent_unconverged():
    X, y, _ = data(14)
    with pytest.warns(ConvergenceWarning, match="did not converge in 1 iterations"):
        est = BinarySVM(C=1e4 / N_DATA, max_iter=1).fit(X[:, :-1], y)
    assert not est.converged_ and est.n_iter_ == 1 and est.gap_ > TOL


def test_dense_wide_data_stay_with_the_descent():
    """On dense data wider than it is long, an epoch is as costly as a cutting-plane
    iteration's products: the descent's budget is in passes over X, so it converges there
    rather than handing over to OCAS after a few epochs' worth of multiply-adds (as a budget
    of 2e7 multiply-adds did, and OCAS then took 20 x the descent's time at large C)."""
    rng = np.random.default_rng(3)
    n, d = 150, 20_000                  # 3e6 multiply-adds an epoch
    Z = rng.standard_normal((n, 5))
    X = Z @ rng.standard_normal((5, d)) / np.sqrt(5) + rng.standard_normal((n, d))
    y = Z @ rng.standard_normal(5) + rng.standard_normal(n) > 0.8
    est = BinarySVM(C=10.0, tol=1e-4).fit(X, y)
    assert est.converged_
    descent = [h for h in est.history_ if "epochs" in h]
    assert len(descent) == est.n_iter_ and descent[-1]["epochs"] > 7
