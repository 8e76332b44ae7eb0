"""CCCP carrying its working set between outer iterations: each stored output's
constraint re-evaluated at the new imputation, per latent model, and the fits it gives."""
import pickle

import numpy as np
import pytest

from aprank.inference import group_pairs
from aprank.learn import (
    HOAPSVM,
    LatentAPSVM,
    LatentSSVM,
    LatentSVM,
    WorkingSet,
    cccp,
    cutting_plane,
)
from aprank.learn._cccp import carry
from aprank.models import (
    HOAPModel,
    LatentBinaryModel,
    LatentRankingModel,
    StructuredModel,
    pair_features,
)
from aprank_support.synthetic import grouped, mil


def _latent_data(seed=1):
    X, y, bags, _ = mil(seed=seed)
    return np.c_[X, np.ones(X.shape[0])], y, bags


def _hoap_model(seed=5):
    X, y, groups = grouped(n_groups=13, seed=seed)
    edges = group_pairs(groups)
    return HOAPModel(np.c_[X, np.ones(X.shape[0])], y, edges, pair_features(X, edges), 1.0)


def _models():
    X, y, bags = _latent_data()
    return {"latent-ap": LatentRankingModel(X, y, bags, None, "latent-ap"),
            "latent-ssvm": LatentRankingModel(X, y, bags, None, "latent-ssvm"),
            "latent-svm": LatentBinaryModel(X, y, bags),
            "hoap": _hoap_model()}


def _two_imputations(model, rng):
    """Two w whose completions differ (else re-evaluation would be trivially the same cut)."""
    d = model.size_joint_feature
    upper = getattr(model, "upper", np.full(d, np.inf))
    for _ in range(50):
        wa = np.minimum(rng.standard_normal(d), upper)
        wb = np.minimum(rng.standard_normal(d), upper)
        a, b = model.latent(wa), model.latent(wb)
        if isinstance(model, HOAPModel):
            differ = not np.array_equal(a.own_at_t, b.own_at_t)
        else:
            differ = not np.array_equal(model.impute(wa), model.impute(wb))
        if differ:
            return a, b, upper
    raise AssertionError("no two w with different imputations")


def _direct(model, completed, cut, w):
    """The constraint of ``cut``'s output in ``completed``, built from the output's definition
    (not from what ``reevaluate`` stores)."""
    r = cut.result
    if isinstance(model, LatentRankingModel):
        p = model.problem
        pos, P, N = p.bags.is_pos, p.P, p.N
        latent_ap = p.loss.name == "latent-ap"
        h = np.where(pos & latent_ap, completed.impute, r.h)
        truth_h = np.where(pos, completed.impute, r.truth_h)
        coef, truth = np.zeros(p.n_samples), np.zeros(p.n_samples)
        np.add.at(coef, h, r.coef[r.h])         # each bag's coefficient sits on its row
        np.add.at(truth, truth_h, np.where(pos, 1.0 / P, -1.0 / N))
        return model.X.T @ (truth - coef), r.loss
    if isinstance(model, LatentBinaryModel):
        return completed.X.T @ (completed.problem.truth_coef - r.coef), cut.b
    # HOAP: the rows V_k with the true labels' labellings of this completion and the other
    # labels' labellings of the point where the cut was found
    _, other, _ = model.clamped_psi(w)
    V = completed.sign * (completed.own_at_t - other)
    return V.T @ (model.ranking.truth_coef - r.coef), float(r.loss[0])


@pytest.mark.parametrize("name", ["latent-ap", "latent-ssvm", "latent-svm", "hoap"])
def test_reevaluated_constraints_equal_fresh_ones_and_are_valid_cuts(name):
    model = _models()[name]
    rng = np.random.default_rng(0)
    a, b, upper = _two_imputations(model, rng)
    d = model.size_joint_feature
    for _ in range(5):
        w = np.minimum(rng.standard_normal(d), upper)
        cut = a.most_violated(w)
        # in its own completion, the output gives its constraint back
        g, loss = a.reevaluate(cut.output)
        np.testing.assert_allclose(g, cut.g, atol=1e-12)
        assert loss == pytest.approx(cut.b)
        # in another completion, the constraint of the same output built from its definition
        g, loss = b.reevaluate(cut.output)
        g_ref, loss_ref = _direct(model, b, cut, w)
        np.testing.assert_allclose(g, g_ref, atol=1e-12)
        assert loss == pytest.approx(loss_ref)
        # a valid cut of b's problem: below its exact slack everywhere (what keeps the inner
        # run's dual a lower bound)
        for _ in range(10):
            v = np.minimum(3 * rng.standard_normal(d), upper)
            assert loss - v @ g <= b.most_violated(v).violation + 1e-10


def test_a_robust_latent_svm_drops_cuts_of_other_negatives():
    X, y, bags = _latent_data()
    model = LatentBinaryModel(X, y, bags, robust=0.3)
    rng = np.random.default_rng(1)
    for _ in range(50):
        wa, wb = rng.standard_normal((2, X.shape[1]))
        a, b = model.latent(wa), model.latent(wb)
        if not np.array_equal(a.rows[a.n_pos:], b.rows[b.n_pos:]):
            break
    cut = a.most_violated(wa)
    assert b.reevaluate(cut.output) is None
    ws = WorkingSet(X.shape[1])
    ws.add(cut.g, cut.b, True, output=cut.output)
    ws.add(-np.eye(1, X.shape[1], 0).ravel(), -1.0, False, permanent=True)
    carried = carry(ws, b)
    # the cut is left out; the bound, which no imputation changes, stays
    assert len(carried) == 1 and carried.permanent.all()
    np.testing.assert_array_equal(carried.G, ws.G[1:])


def test_working_set_keeps_outputs_aligned_and_pickles_them():
    ws = WorkingSet(2)
    for i in range(4):
        ws.add(np.array([i, 1.0]), float(i), True, output=("out", i))
    ws.keep(np.array([True, False, True, False]))
    assert ws.outputs == [("out", 0), ("out", 2)]
    assert pickle.loads(pickle.dumps(ws)).outputs == ws.outputs


def test_models_that_are_not_completions_reevaluate_nothing():
    assert StructuredModel.reevaluate(None, ("anything",)) is None


@pytest.mark.parametrize("solver", ["ocas", "cutting-plane"])
@pytest.mark.parametrize("name", ["latent-ap", "latent-ssvm", "latent-svm", "hoap"])
def test_each_carried_inner_run_solves_the_same_convex_problem(name, solver):
    """At every w_t, the inner run started from the carried working set reaches the bound's
    minimum within tol, as a run from an empty working set does, and reads the same F(w_t)."""
    model = _models()[name]
    C, tol = 10.0, 1e-4
    options = {"tol": tol, "upper": getattr(model, "upper", None), "solver": solver}
    checked = []

    def inner(completed, C, w0, **kw):
        res = cutting_plane(completed, C, w0=w0, **kw)
        if "working_set" in kw:
            cold = cutting_plane(completed, C, w0=w0, **options)
            assert res.converged and cold.converged
            assert res.history[0]["primal"] == pytest.approx(cold.history[0]["primal"], abs=1e-12)
            assert abs(res.primal - cold.primal) <= tol
            checked.append((res.n_iter, cold.n_iter))
        return res

    cccp(model, C, tol=tol, inner=inner, inner_options=options, carry_working_set=True)
    assert checked, "CCCP stopped before a second outer iteration: nothing was carried"


def _fit(est, data):
    X, y, extra = data
    return est.fit(X, y, **extra)


@pytest.mark.parametrize("make, data", [
    (lambda carry: LatentAPSVM(C=10.0, tol=1e-4, carry_working_set=carry), "bags"),
    (lambda carry: LatentSSVM(C=10.0, tol=1e-4, carry_working_set=carry), "bags"),
    (lambda carry: LatentSVM(C=10.0, tol=1e-4, carry_working_set=carry), "bags"),
    (lambda carry: HOAPSVM(C=10.0, eta=1.0, tol=1e-4, carry_working_set=carry), "groups"),
], ids=["LatentAPSVM", "LatentSSVM", "LatentSVM", "HOAPSVM"])
def test_carried_working_sets_reach_the_same_objective(make, data):
    if data == "bags":
        X, y, bags, _ = mil(seed=1)
        data = (X, y, {"bags": bags})
    else:
        X, y, groups = grouped(seed=4)
        data = (X, y, {"groups": groups})
    cold, warm = _fit(make(False), data), _fit(make(True), data)
    assert warm.objective_ == pytest.approx(cold.objective_, abs=cold.tol)
    # the same start, hence the same first objective; then never up by more than tol
    assert warm.cccp_history_[0]["objective"] == pytest.approx(
        cold.cccp_history_[0]["objective"], rel=1e-12)
    objectives = [h["objective"] for h in warm.cccp_history_]
    assert all(b <= a + warm.tol for a, b in zip(objectives, objectives[1:])), objectives
