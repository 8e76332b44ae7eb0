"""solver="bundle" (issue 27, acceptance b): the level bundle method reaches the plain
cutting plane's objective within tol, with a true duality gap (the best point's objective
less a working-set dual, which bounds min F from below), meets hard constraints (APSVMAppx's
w'h_i >= 1) and upper bounds (HOB-SVM's w2 <= 0), and takes one inference per iteration."""
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler

from aprank.learn import APSVM, HOBSVM, BinarySVM, NDCGSVM, cutting_plane
from aprank.models import RankingModel

TOL = 1e-3


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return StandardScaler().fit_transform(X), y


class Counted(RankingModel):
    calls = 0

    def most_violated(self, w):
        Counted.calls += 1
        return super().most_violated(w)


@pytest.mark.parametrize("C", [0.1, 100.0, 1e4])
@pytest.mark.parametrize("cls", [BinarySVM, APSVM, NDCGSVM])
def test_bundle_reaches_the_plain_objective(digits, cls, C):
    X, y = digits
    X, y = X[:500], y[:500] == 8
    qid = np.repeat(np.arange(5), 100)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        plain, bundle = [cls(C=C, tol=TOL, solver=s).fit(X, y, qid=qid)
                         for s in ("cutting-plane", "bundle")]
    assert plain.converged_ and bundle.converged_
    assert 0 <= bundle.gap_ <= min(1.0, C) * TOL
    assert abs(bundle.primal_ - plain.primal_) <= TOL


@pytest.mark.parametrize("C", [100.0, 1e4])
def test_bundle_gap_is_true_and_one_inference_per_iteration(digits, C):
    # every dual the history reports is at most the plain solver's converged objective (which
    # is within tol of min F), and the primal never rises
    X, y = digits
    plain = cutting_plane(RankingModel(X, y == 3, "ap", algorithm="qs"), C, tol=1e-6,
                          max_iter=3000, solver="cutting-plane")
    assert plain.converged
    Counted.calls = 0
    res = cutting_plane(Counted(X, y == 3, "ap", algorithm="qs"), C, tol=TOL, solver="bundle")
    assert res.converged and Counted.calls == res.n_iter == len(res.history)
    dual = np.array([h["dual"] for h in res.history])
    primal = np.array([h["primal"] for h in res.history])
    assert dual.max() <= plain.primal + 1e-6
    assert np.all(np.diff(primal) <= 0) and np.all(np.diff(dual) >= 0)
    assert res.gap == pytest.approx(res.primal - res.dual) and res.gap <= TOL
    assert abs(res.primal - plain.primal) <= TOL
    # the returned w is the one whose objective is reported
    w = res.w
    assert res.primal == pytest.approx(0.5 * w @ w + C * max(
        RankingModel(X, y == 3, "ap", algorithm="qs").most_violated(w).violation, 0.0), rel=1e-12)


@pytest.mark.parametrize("C", [0.1, 100.0])
def test_bundle_meets_hard_constraints_at_the_plain_objective(digits, C):
    X, y = digits
    X, y = np.c_[X[:500], np.ones(500)], y[:500] == 8
    signs = np.where(y, 1.0, -1.0)
    margins = signs * BinarySVM(C=1.0).fit(X[:, :-1], y).decision_function(X[:, :-1])
    easy = margins > 1.0
    hard = X[easy] * signs[easy, None]
    model = RankingModel(X[~easy], y[~easy], "ap", algorithm="qs")
    plain, bundle = [cutting_plane(model, C, tol=TOL, hard=hard, solver=s)
                     for s in ("cutting-plane", "bundle")]
    assert easy.sum() >= 50 and plain.converged and bundle.converged
    assert (hard @ bundle.w).min() >= 1 - TOL
    assert abs(bundle.primal - plain.primal) <= TOL


def test_bundle_keeps_hob_pair_weights_nonpositive():
    rng = np.random.default_rng(0)
    groups = np.repeat(np.arange(12), 5)
    group_label = rng.random(12) < 0.4
    group_label[:2] = (True, False)
    y = group_label[groups] ^ (rng.random(groups.size) < 0.15)
    X = rng.standard_normal((groups.size, 4)) + 0.8 * y[:, None]
    plain, bundle = [HOBSVM(C=C_, eta=1.0, tol=TOL, solver=s).fit(X, y.astype(int), groups=groups)
                     for C_ in (10.0,) for s in ("cutting-plane", "bundle")]
    assert bundle.converged_ and np.all(bundle.coef_pairs_ <= 0)
    assert np.any(bundle.coef_pairs_ < -1e-6)
    assert abs(bundle.primal_ - plain.primal_) <= TOL


def test_bundle_warm_start_reaches_the_cold_objective(digits):
    X, y = digits
    cold = APSVM(C=30.0, solver="bundle").fit(X, y == 9)
    warm = APSVM(C=10.0, solver="bundle", warm_start=True).fit(X, y == 9)
    warm.set_params(C=30.0).fit(X, y == 9)
    assert cold.converged_ and warm.converged_
    assert abs(warm.primal_ - cold.primal_) <= TOL
