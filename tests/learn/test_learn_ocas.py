"""solver="ocas": the optimized cutting plane reaches the plain cutting
plane's objective within tol, with the same stopping rule and a true duality gap, for every
structured SVM (binary, AP, NDCG, APPX with its hard constraints, HOB with its w2 <= 0 bounds,
the inner runs of CCCP), and converges where the plain one runs out of iterations."""
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GroupKFold, StratifiedKFold

from aprank.learn import (
    APSVM,
    APSVMCV,
    HOBSVM,
    NDCGSVM,
    NDCGSVMCV,
    APSVMAppx,
    BinarySVM,
    BinarySVMCV,
    LatentAPSVM,
    cutting_plane,
    solvers,
)
from aprank.models import RankingModel
from aprank.sklearn_compat import InvalidParameterError
from aprank_support.synthetic import grouped, mil

TOL = 1e-3
#: the solvers registered when the tests are collected
SOLVERS = list(solvers())


@pytest.mark.parametrize("C", [0.1, 100.0])
@pytest.mark.parametrize("cls", [BinarySVM, APSVM, NDCGSVM])
def test_solvers_reach_the_plain_objective(digits, cls, C):
    # all stop at gap <= tol over a lower bound of the same convex objective, so their primal
    # objectives are within tol of the optimum and of each other (multi-cut splits the cut
    # over the 10 queries, or the 0-1 loss's samples: tests/learn/test_learn_multicut.py)
    X, y = digits
    X, y = X[:500], y[:500] == 8
    qid = np.repeat(np.arange(10), 50)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        # at one structural C: BinarySVM's is per sample, C / n
        C_est = C / X.shape[0] if cls is BinarySVM else C
        fits = {s: cls(C=C_est, tol=TOL, solver=s).fit(X, y, qid=qid) for s in SOLVERS}
    plain, ocas, multi = fits["cutting-plane"], fits["ocas"], fits["multi-cut"]
    assert all(fit.converged_ for fit in fits.values())
    for name, fit in fits.items():
        if name != "cutting-plane":
            # OCAS's rule (a gap may be a rounding below 0 where the model is exact at the best
            # point)
            assert -1e-12 * fit.primal_ <= fit.gap_ <= min(1.0, C) * TOL, name
            assert abs(fit.primal_ - plain.primal_) <= TOL, name
    if C == 100.0:
        # multi-cut's tighter model: far fewer iterations than either 1-slack loop at this C
        assert 2 * multi.n_iter_ <= min(plain.n_iter_, ocas.n_iter_)


@pytest.mark.parametrize("C", [0.1, 100.0])
def test_ocas_meets_appx_hard_constraints_at_the_plain_objective(digits, C):
    # APSVMAppx's problem: AP over the difficult samples, w'h_i >= 1 for the easy ones. The
    # estimators' easy sets come from first stages that differ within tol, so the two
    # solvers are compared on one set: the samples far on their side of a BinarySVM
    X, y = digits
    X, y = np.c_[X[:500], np.ones(500)], y[:500] == 8
    signs = np.where(y, 1.0, -1.0)
    # BinarySVM's C is per sample: 1 / n is the structural C = 1 these rows were chosen at
    margins = signs * BinarySVM(C=1.0 / 500).fit(X[:, :-1], y).decision_function(X[:, :-1])
    easy = margins > 1.0
    hard = X[easy] * signs[easy, None]
    model = RankingModel(X[~easy], y[~easy], "ap", algorithm="qs")
    plain, ocas = [cutting_plane(model, C, tol=TOL, hard=hard, solver=s)
                   for s in ("cutting-plane", "ocas")]
    assert easy.sum() >= 50 and plain.converged and ocas.converged
    assert (hard @ ocas.w).min() >= 1 - TOL
    assert abs(ocas.primal - plain.primal) <= TOL
    # and the estimator runs OCAS in both its stages, meeting its own hard constraints (at
    # C = 100, where its first stage finds easy samples)
    appx = APSVMAppx(C=100.0, keep=1.0, solver="ocas").fit(X[:, :-1], y)
    assert appx.converged_ and appx.binary_.solver == "ocas" and appx.easy_.any()
    # the hard constraints bind w'x + b (decision_function also subtracts threshold_)
    raw = X[:, :-1] @ appx.coef_ + appx.intercept_
    assert (signs * raw)[appx.easy_].min() >= 1 - TOL


def test_ocas_history_is_monotone_and_its_gap_true(digits):
    # the best point never gets worse, and every dual is a lower bound of every primal
    X, y = digits
    model = RankingModel(X, y == 3, "ap", algorithm="qs")
    res = cutting_plane(model, 1e3, tol=TOL, solver="ocas")
    primal = np.array([h["primal"] for h in res.history])
    dual = np.array([h["dual"] for h in res.history])
    assert res.converged
    assert np.all(np.diff(primal) <= 0)
    assert dual.max() <= primal.min() + 1e-9
    assert res.primal == primal[-1] and res.gap == pytest.approx(primal[-1] - dual[-1])
    # the returned w is the point whose objective is reported
    assert model.most_violated(res.w).violation * 1e3 + 0.5 * res.w @ res.w == \
        pytest.approx(res.primal, rel=1e-12)


def test_ocas_converges_where_the_plain_cutting_plane_runs_out(digits):
    # at C = 1e4 the plain cutting plane needs 662 iterations on digit 8 (fit benchmark
    # territory), OCAS 263: with max_iter = 400 only OCAS meets tol
    X, y = digits
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        plain = APSVM(C=1e4, max_iter=400, solver="cutting-plane").fit(X, y == 8)
    ocas = APSVM(C=1e4, max_iter=400, solver="ocas").fit(X, y == 8)
    assert not plain.converged_ and plain.gap_ > TOL
    assert ocas.converged_ and ocas.gap_ <= TOL
    assert ocas.primal_ <= plain.primal_


@pytest.mark.parametrize("solver", ["ocas", "multi-cut"])
def test_ocas_keeps_hob_pair_weights_nonpositive(solver):
    # HOB-SVM's w2 <= 0 bounds: OCAS's points are convex combinations of bounded ones (HOB's
    # cut does not split: multi-cut is OCAS there)
    X, y, groups = grouped()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        plain, ocas = [HOBSVM(C=10.0, eta=1.0, tol=TOL, solver=s).fit(X, y, groups=groups)
                       for s in ("cutting-plane", solver)]
    assert np.all(ocas.coef_pairs_ <= 0)
    assert np.any(ocas.coef_pairs_ < -1e-6)       # the bounds are not all slack
    assert abs(ocas.primal_ - plain.primal_) <= TOL


def test_ocas_as_cccps_inner_solver():
    # the latent objective is not convex, but CCCP with OCAS inside keeps its guarantees:
    # every inner run converges and the objective never increases
    X, y, bags, _ = mil(seed=1)
    ocas = LatentAPSVM(C=10.0, tol=TOL, solver="ocas").fit(X, y, bags=bags)
    objectives = [h["objective"] for h in ocas.cccp_history_]
    assert len(objectives) >= 2 and ocas.converged_
    assert all(h["inner_converged"] for h in ocas.cccp_history_)
    assert all(b <= a + TOL for a, b in zip(objectives, objectives[1:]))


# the path's objectives are the subject; where its C lands is beside the point
@pytest.mark.filterwarnings("ignore::aprank.learn.GridEdgeWarning")
@pytest.mark.parametrize("solver", ["ocas", "multi-cut"])
def test_warm_start_and_cv_path_reach_the_cold_objective(digits, solver):
    # (multi-cut: tests/learn/test_learn_multicut.py; its working set holds cuts of the queries)
    X, y = digits
    qid = np.arange(y.size) // 180
    cold = APSVM(C=30.0, solver=solver).fit(X, y == 9, qid=qid)
    warm = APSVM(C=10.0, solver=solver, warm_start=True).fit(X, y == 9, qid=qid)
    warm.set_params(C=30.0).fit(X, y == 9, qid=qid)
    assert warm.n_iter_ < cold.n_iter_
    assert abs(warm.primal_ - cold.primal_) <= TOL
    X, y = X[:400], y[:400] == 2
    qid = np.repeat(np.arange(8), 50)
    Cs = [0.1, 10.0, 1e3]
    path = APSVMCV(Cs=Cs, cv=2, warm_path=True, solver=solver).fit(X, y, qid=qid)
    cold = APSVMCV(Cs=Cs, cv=2, solver="cutting-plane").fit(X, y, qid=qid)
    assert np.all(np.abs(path.primal_path_ - cold.primal_path_) <= TOL)


def test_an_unknown_solver_is_refused(digits):
    X, y = digits
    with pytest.raises(InvalidParameterError, match="solver"):
        APSVM(solver="bmrm").fit(X[:50], y[:50] == 1)
    with pytest.raises(InvalidParameterError, match="solver"):
        cutting_plane(RankingModel(X[:50], y[:50] == 1, "ap"), 1.0, solver="bmrm")


# the searches' objectives are the subject; where their C lands is beside the point
@pytest.mark.filterwarnings("ignore::aprank.learn.GridEdgeWarning")
@pytest.mark.parametrize("cv_cls", [BinarySVMCV, APSVMCV, NDCGSVMCV])
def test_ocas_reaches_the_plain_objective_in_the_experiments_searches(digits, cv_cls):
    # the experiments' kind of fit (experiments/supervised.py): the CV estimators given fixed
    # folds, one ranking without qid (digits, birds, high-order) or queries some of which have
    # no positive (yahoo, empty="skip"), C over the decades the widened searches reach
    X, y = digits
    X, y = X[:300], y[:300] == 5
    if cv_cls is NDCGSVMCV:
        qid = np.repeat(np.arange(10), 30)
        y = y & (qid != 3)                         # a query without a positive, skipped
        splits = list(GroupKFold(3).split(X, y, qid))
    else:
        qid = None
        splits = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, y))
    Cs = [1e-3, 0.1, 10.0, 1e3]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        default, plain = [cv_cls(Cs=Cs, cv=splits, refit=False, tol=TOL, **kw).fit(X, y, qid=qid)
                          for kw in ({}, {"solver": "cutting-plane"})]
    assert default.solver == ("dual-cd" if cv_cls is BinarySVMCV else "multi-cut")
    assert np.all(np.abs(default.primal_path_ - plain.primal_path_) <= TOL)
