"""The working-set dual QP solver (aprank/learn/_qp.py) against quadprog and against its own
optimality certificate.

    max b'z - 1/2 z'Kz  s.t.  z >= 0,  sum(z[soft]) <= C,    K = G G',  w = G'z.

Where K is positive definite quadprog is exact and the active set must give its w. Where K is
singular (equal constraints, more constraints than features) quadprog refuses or errs, so the
check is the duality gap of the working set: w = G'z with its exact slack has primal objective
1/2||w||^2 + C max(0, max_soft(b - Gw)) (hard rows met), which bounds every dual value from
above; a z whose dual value reaches it is optimal, and w is then the unique optimum.
"""
import copy
import pickle

import numpy as np
import pytest
import scipy.sparse as sp

from aprank.learn import WorkingSet, solvers
from aprank.learn._qp import active_set, solve_dual, solve_dual_quadprog
from aprank.models import RankingModel


def working_set(seed, k, d, singular=False, hard_fraction=0.3):
    rng = np.random.default_rng(seed)
    G = rng.normal(size=(k, d))
    if singular and k >= 3:
        G[1] = G[0]                          # two equal constraints
        G[2] = 0.5 * G[0] - 2.0 * G[-1]      # a dependent one
    b = rng.uniform(0.0, 1.0, k)
    soft = rng.random(k) >= hard_fraction
    # hard rows w'h >= b_h that some w meets (else the dual is unbounded)
    feasible = rng.normal(size=d)
    b[~soft] = np.minimum(b[~soft], G[~soft] @ feasible)
    C = float(10 ** rng.uniform(-2, 2))
    return G, b, soft, C


def certificate(G, b, soft, C, z):
    """(relative duality gap, largest hard-row violation, w) of z."""
    assert z.min() >= 0.0 and z[soft].sum() <= C * (1 + 1e-12)
    w = G.T @ z
    xi = max(0.0, float(np.max((b - G @ w)[soft], initial=0.0)))
    hard = float(np.max((b - G @ w)[~soft], initial=0.0))
    primal = 0.5 * w @ w + C * xi
    dual = float(b @ z - 0.5 * z @ (G @ G.T) @ z)
    return (primal - dual) / max(1.0, abs(primal)), hard, w


@pytest.mark.parametrize("seed", range(40))
def test_positive_definite_working_sets_give_quadprogs_w(seed):
    rng = np.random.default_rng(1000 + seed)
    k = int(rng.integers(1, 25))
    G, b, soft, C = working_set(seed, k, d=k + int(rng.integers(5, 30)))
    K = G @ G.T
    assert np.linalg.cond(K) < 1e8      # quadprog is the reference only where it is exact
    ref = solve_dual_quadprog(K, b, soft, C)
    assert ref.ridge == 0.0
    got = solve_dual(K, b, soft, C)
    w_ref, w = G.T @ ref.z, G.T @ got.z
    assert np.abs(w - w_ref).max() <= 1e-9 * max(np.abs(w_ref).max(), 1e-12)
    assert got.objective == pytest.approx(ref.objective, rel=1e-10, abs=1e-14)
    assert got.ridge == 0.0 and got.steps > 0


@pytest.mark.parametrize("seed", range(60))
def test_singular_working_sets_reach_a_zero_duality_gap(seed):
    rng = np.random.default_rng(2000 + seed)
    k = int(rng.integers(3, 40))
    d = int(rng.integers(1, k + 1))              # as many constraints as features, or more
    G, b, soft, C = working_set(seed, k, d, singular=True,
                                hard_fraction=0.0 if seed % 3 == 0 else 0.3)
    K = G @ G.T
    z, steps = active_set(K, b, soft, C)
    gap, hard, w = certificate(G, b, soft, C, z)
    assert gap <= 1e-10 and hard <= 1e-9
    # quadprog (the fallback), where it manages at all, reaches at most the same dual value
    try:
        old = solve_dual_quadprog(K, b, soft, C, precision=1e-12)
    except RuntimeError:
        return
    assert old.objective <= b @ z - 0.5 * z @ K @ z + 1e-9 * max(1.0, abs(old.objective))


@pytest.mark.parametrize("seed", range(30))
def test_warm_starts_reach_the_same_w(seed):
    """The cutting plane's pattern: the optimum of k-1 constraints, the new one at 0; and any
    start at all (negative, over the sum), which the solver makes feasible first."""
    rng = np.random.default_rng(3000 + seed)
    k = int(rng.integers(2, 30))
    G, b, soft, C = working_set(seed, k, d=int(rng.integers(2, 40)), singular=seed % 2 == 0)
    K = G @ G.T
    cold, _ = active_set(K, b, soft, C)
    _, _, w = certificate(G, b, soft, C, cold)
    before, _ = active_set(K[:-1, :-1], b[:-1], soft[:-1], C)
    starts = [np.r_[before, 0.0], rng.normal(size=k), np.full(k, 10.0 * C)]
    for start in starts:
        z, _ = active_set(K, b, soft, C, z0=start)
        gap, hard, w_warm = certificate(G, b, soft, C, z)
        assert gap <= 1e-10 and hard <= 1e-9
        assert np.abs(w_warm - w).max() <= 1e-8 * max(np.abs(w).max(), 1.0)


def test_hard_constraints_alone_and_equal_rows():
    G = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 2.0]])
    b = np.array([1.0, 1.0, 1.0])
    soft = np.zeros(3, dtype=bool)
    z, _ = active_set(G @ G.T, b, soft, 1.0)
    np.testing.assert_allclose(G.T @ z, [1.0, 0.5], rtol=1e-12)     # the least-norm w meeting all


def test_zero_constraint_vectors_put_the_whole_sum_on_the_largest_offset():
    K = np.zeros((3, 3))
    b = np.array([0.2, 0.7, -0.1])
    soft = np.ones(3, dtype=bool)
    z, _ = active_set(K, b, soft, 2.0)
    np.testing.assert_allclose(z, [0.0, 2.0, 0.0])


def test_infeasible_hard_constraints_are_reported_not_solved():
    G = np.array([[1.0], [-1.0]])        # w >= 1 and -w >= 1
    assert active_set(G @ G.T, np.ones(2), np.zeros(2, dtype=bool), 1.0) is None


def test_a_roundoff_curvature_is_no_curvature():
    # w'u >= 1/c0 and -w'u >= 1/c1 (and a third along u): infeasible, so the dual is unbounded
    # along a null direction of K = G G'; computed, its curvature is roundoff, sometimes
    # above 0, whose "minimum along it" lies 1e15 away. That is no minimum: refused, every time.
    for seed in range(200):
        rng = np.random.default_rng(seed)
        u, c = rng.normal(size=5), rng.uniform(0.5, 2.0, size=3)
        G = np.array([c[0] * u, -c[1] * u, c[2] * u])
        assert active_set(G @ G.T, np.ones(3), np.zeros(3, dtype=bool), 1.0) is None, seed


def test_working_set_buffers_match_a_rebuild_and_pickle():
    rng = np.random.default_rng(0)
    ws = WorkingSet(5)
    rows = []
    for i in range(21):                  # past two doublings of the capacity
        g = rng.normal(size=5)
        ws.add(g, float(i), soft=bool(i % 3), permanent=i == 4)
        rows.append(g)
    mask = np.arange(21) % 4 != 1
    ws.keep(mask)
    G = np.array(rows)[mask]
    np.testing.assert_array_equal(ws.G, G)
    np.testing.assert_allclose(ws.K, G @ G.T, rtol=1e-12)
    assert len(ws) == mask.sum() and ws.b.tolist() == np.arange(21)[mask].astype(float).tolist()
    ws.add(np.ones(5), 9.0, soft=True)
    copy = pickle.loads(pickle.dumps(ws))
    np.testing.assert_array_equal(copy.G, ws.G)
    np.testing.assert_array_equal(copy.K, ws.K)
    copy.add(np.zeros(5), 1.0, soft=True)            # a restored working set grows again
    assert len(copy) == len(ws) + 1 and len(ws) == mask.sum() + 1


@pytest.mark.parametrize("sparse", [False, True])
def test_the_cut_reads_only_rows_that_change(sparse):
    """X'c over the rows whose coefficient is not 0 is X'c: a well-ranked AP cut has most
    negatives at rank P+1, where the coefficient difference is 0."""
    rng = np.random.default_rng(1)
    y = rng.random(400) < 0.1
    X = rng.normal(size=(400, 7)) + 3.0 * y[:, None]
    model = RankingModel(sp.csr_matrix(X) if sparse else X, y, "ap")
    w = np.ones(7)
    cut = model.most_violated(w)
    res = model.loss_augmented_inference(w)
    diff = res.truth_coef - res.coef
    assert 4 * np.count_nonzero(diff) < diff.size        # the gathering path is taken
    np.testing.assert_allclose(cut.g, X.T @ diff, rtol=1e-12, atol=1e-14)


#: what a working set pickled by aprank 0.1.0 holds: the buffers and the QP's state, no
#: outputs, blocks or descent multipliers
STATE_0_1_0 = {"_G", "_K", "_n", "b", "soft", "idle", "permanent", "z", "ridge"}


def test_a_working_set_pickled_by_0_1_0_loads_and_warm_starts_a_fit():
    from aprank.learn import cutting_plane

    rng = np.random.default_rng(3)
    X = rng.normal(size=(120, 6))
    model = RankingModel(X, X @ rng.normal(size=6) > 0.3, "ap", algorithm="qs")
    first = cutting_plane(model, 10.0, solver="cutting-plane")
    state = {k: v for k, v in first.working_set.__getstate__().items() if k in STATE_0_1_0}
    assert set(state) == STATE_0_1_0
    old = WorkingSet.__new__(WorkingSet)       # what unpickling does with the state
    old.__setstate__(state)
    assert old.parts == 1 and old.fractions is None and old.outputs == [None] * len(old)
    np.testing.assert_array_equal(old.block, np.zeros(len(old), dtype=np.int64))
    for solver in ("cutting-plane", "multi-cut"):
        warm = cutting_plane(model, 10.0, solver=solver, working_set=copy.deepcopy(old))
        assert warm.converged and abs(warm.primal - first.primal) <= 1e-3
    assert cutting_plane(model, 10.0, solver="cutting-plane", working_set=old).n_iter == 1


def test_the_dual_is_exact_at_large_C_on_a_degenerate_working_set(digits):
    # 300 cuts of AP on digits (64 features) at C = 1e4, never pruned: K is singular and its
    # entries times C reach 1e6, so the roundoff-scaled multiplier tolerance (5e-5) alone would
    # let the active set stop 0.37 short of the optimum (3.7e-5 times C), and a cutting plane
    # that cannot prune would stall at that gap for good. With the caller's precision the
    # bounds' multipliers are held to precision / C.
    from aprank.learn import cutting_plane

    X, y = digits
    model = RankingModel(X, y == 3, "ap", algorithm="qs")
    C = 1e4
    ws = cutting_plane(model, C, tol=1e-3, max_iter=300, prune_after=0,
                       solver="cutting-plane").working_set
    assert len(ws) >= 250 and np.linalg.matrix_rank(ws.G) < len(ws)
    for z0 in (ws.z, None):
        sol = solve_dual(ws.K, ws.b, ws.soft, C, z0=z0, precision=1e-6)
        gap, hard, _ = certificate(ws.G, ws.b, ws.soft, C, sol.z)
        assert gap * max(1.0, abs(sol.objective)) <= 1e-4 and hard <= 1e-9


@pytest.mark.parametrize("solver", list(solvers()))
def test_the_cutting_plane_converges_at_large_C_without_pruning(digits, solver):
    # the stall above, end to end: every solver converges with prune_after=0 at C = 1e4
    from aprank.learn import cutting_plane

    X, y = digits
    model = RankingModel(X, y == 3, "ap", algorithm="qs")
    res = cutting_plane(model, 1e4, tol=1e-3, max_iter=1000, prune_after=0, solver=solver)
    assert res.converged and res.gap <= 1e-3


def test_the_active_set_solves_the_degenerate_working_sets_of_a_hinge_fit(digits, monkeypatch):
    # BinarySVM at C = 1e4 hands its descent over to multi-cut OCAS, whose working sets hold
    # more cuts than the 65 dimensions of w: a released bound's column is then nearly a
    # combination of the free ones', with a small but true curvature along its direction. A
    # step to the next bound along it raised the objective, and a chain of such steps
    # returned to where it started, a cycle the step limit alone ended (then quadprog's
    # ridged steps, a hundred times slower). The active set solves every one of them.
    import aprank.learn._qp as qp
    from aprank.learn import BinarySVM

    fallbacks = []
    monkeypatch.setattr(qp, "solve_dual_quadprog",
                        lambda *args, **kwargs: fallbacks.append(args) or pytest.fail(
                            "the active set failed on a working-set QP"))
    X, y = digits
    train = np.r_[600:1797]                  # a fold's training rows: 2 / 3 of the digits
    fitted = BinarySVM(C=1e4, max_iter=400).fit(X[train], y[train] == 3)
    assert fitted.converged_ and not fallbacks


@pytest.mark.parametrize("seed", range(4))
def test_the_quadprog_fallback_starts_from_the_warm_start_and_never_ends_below_it(seed):
    # more constraints than features: K singular, where the fallback's ridged steps run
    G, b, soft, C = working_set(seed, 40, 8, singular=True, hard_fraction=0.0)
    K = G @ G.T
    best = solve_dual(K, b, soft, C).z
    start = 3.0 * best                            # infeasible: its sum is 3 C where C binds
    feasible = start * min(1.0, C / start.sum())
    held = solve_dual_quadprog(K, b, soft, C, ridge=1e-6, max_steps=0, z0=start)
    np.testing.assert_allclose(held.z, feasible)
    assert held.objective == pytest.approx(float(b @ feasible - 0.5 * feasible @ K @ feasible))
    stepped = solve_dual_quadprog(K, b, soft, C, ridge=1e-6, z0=best)
    assert stepped.objective >= float(b @ best - 0.5 * best @ K @ best)
