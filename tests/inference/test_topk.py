"""The top-k kind (Mensink et al. 2011): the c-star kernel against exhaustive search over
k-subsets."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import aprank
from aprank.inference import TopKProblem
from aprank.losses import PrecisionAtK


def random_case(rng, n_max=10, c_max=3):
    n = int(rng.integers(1, n_max + 1))
    C = int(rng.integers(0, min(c_max, n) + 1))
    core = np.sort(rng.choice(n, C, replace=False))
    F = np.zeros((n, n))
    F[core, :] = rng.standard_normal((C, n))
    F[:, core] = rng.standard_normal((n, C))
    s = rng.standard_normal(n)
    z = rng.random(n) < 0.5
    z[int(rng.integers(n))] = True
    digits = rng.choice([None, 1, 0])
    if digits is not None:            # ties among scores and interactions
        s, F = np.round(s, digits), np.round(F, digits)
    if rng.random() < 0.1:
        s = np.zeros(n)
    k = int(rng.integers(1, n + 1))
    return s, z, k, core, F


def test_cstar_equals_brute_force_with_and_without_the_loss_term():
    """Acceptance a: hundreds of tiny instances (N <= 10, C <= 3), ties included."""
    rng = np.random.default_rng(0)
    for _ in range(600):
        s, z, k, core, F = random_case(rng)
        loss = PrecisionAtK(k) if rng.random() < 0.7 else PrecisionAtK()
        problem = TopKProblem(z, loss, interactions=F, core=core)
        # loss-augmented: the objective and the loss of the chosen subset
        a, b = problem.solve_one(s, "cstar"), problem.solve_one(s, "brute")
        assert a.objective == pytest.approx(b.objective, rel=1e-12, abs=1e-12)
        assert a.objective >= -1e-12
        kk = problem.k[0]
        t = a.labelling.astype(float)
        assert t.sum() == kk
        assert a.loss == pytest.approx(t @ (1 - z) / kk)
        # without the loss term, and with random clamps
        clamp = rng.choice([-1, 0, 0, 0, 1], s.size)
        n_in, n_out = np.count_nonzero(clamp > 0), np.count_nonzero(clamp < 0)
        if n_in > kk or s.size - n_out < kk:       # no subset of size k: refused
            for algorithm in ("cstar", "brute"):
                with pytest.raises(ValueError, match="the clamps leave the query no subset"):
                    problem.maximise(s, algorithm, clamp=clamp)
            continue
        ta, va = problem.maximise(s, "cstar", clamp=clamp)
        tb, vb = problem.maximise(s, "brute", clamp=clamp)
        assert va[0] == pytest.approx(vb[0], rel=1e-12, abs=1e-12)
        t = ta.astype(float)
        assert t.sum() == kk and np.all(t[clamp > 0] == 1) and np.all(t[clamp < 0] == 0)
        assert va[0] == pytest.approx(t @ s + t @ F @ t, rel=1e-12, abs=1e-12)


def test_no_core_is_plain_top_k_selection():
    rng = np.random.default_rng(1)
    s = rng.standard_normal(1000)
    z = rng.random(1000) < 0.1
    t, value = TopKProblem(z, PrecisionAtK(37)).maximise(s)
    assert set(np.flatnonzero(t)) == set(np.argsort(-s)[:37])
    assert value[0] == pytest.approx(np.sort(s)[-37:].sum())


def test_break_even_reference_is_the_relevant_set():
    s = np.array([3.0, 2.0, 1.0, 0.0])
    z = np.array([0, 1, 0, 1])
    r = aprank.infer_batch(s, z, np.zeros(4, int), loss="precision@k")
    assert r.truth_coef.tolist() == [0, 1, 0, 1]
    # the most violated subset: both highest scores (+1/2 loss each on item 0)
    assert r.labelling.tolist() == [1, 1, 0, 0]
    assert r.loss[0] == 0.5
    assert r.objective[0] == pytest.approx(0.5 + (3 + 2) - (2 + 0))


def test_many_queries_share_the_interactions():
    rng = np.random.default_rng(2)
    L, n_q = 8, 30
    core = np.array([1, 5])
    F = np.zeros((L, L))
    F[core, :] = rng.standard_normal((2, L))
    s, z = rng.standard_normal(L * n_q), rng.random(L * n_q) < 0.4
    qid = np.repeat(np.arange(n_q), L)
    # queries need not be contiguous, but each keeps its items in order (item i = label i)
    keys = np.sort(rng.random((n_q, L)), axis=1).ravel()
    perm = np.argsort(keys)
    for k in [None, 3]:
        loss = PrecisionAtK(k)
        z[::L] = True
        batch = aprank.infer_batch(s[perm], z[perm], qid[perm], loss=loss, interactions=F,
                                   core=core)
        for q in range(n_q):
            one = aprank.infer(s[q * L:(q + 1) * L], z[q * L:(q + 1) * L], loss=loss,
                               interactions=F, core=core, algorithm="brute")
            assert batch.objective[q] == pytest.approx(one.objective, rel=1e-12, abs=1e-12)


def test_sparse_interactions_equal_dense():
    rng = np.random.default_rng(3)
    s, z, k, core, F = random_case(rng, n_max=10, c_max=3)
    while core.size == 0:
        s, z, k, core, F = random_case(rng)
    dense = aprank.infer(s, z, loss=PrecisionAtK(k), interactions=F, core=core)
    sparse = aprank.infer(s, z, loss=PrecisionAtK(k), interactions=sp.csr_matrix(F), core=core)
    assert dense.objective == sparse.objective


@pytest.mark.parametrize("kwargs, match", [
    (dict(loss=PrecisionAtK(6)), "k = 6 exceeds the 5 items"),
    (dict(core=[0, 7], interactions=np.zeros((5, 5))), "core index 7 is out of range"),
    (dict(core=[1, 1], interactions=np.zeros((5, 5))), "distinct"),
    (dict(core=[1], interactions=np.eye(5)), r"interactions\[0, 0\] = 1.0 is non-zero outside"),
    (dict(core=[1], interactions=np.zeros((4, 4))), "shape"),
    (dict(core=[1]), "give both"),
    (dict(interactions=np.zeros((5, 5))), "give both"),
    (dict(core=[1], interactions=np.full((5, 5), np.nan)), "finite"),
    (dict(labels=[0, 1, 2, 0, 1]), r"labels\[2\]"),
    (dict(labels=[0, 0, 0, 0, 0]), "undefined without positive samples"),
])
def test_bad_input_is_a_clear_value_error(kwargs, match):
    """Acceptance c."""
    args = dict(scores=[0.1, 0.2, 0.3, 0.4, 0.5], labels=[1, 0, 1, 0, 0], loss="precision@k")
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        aprank.infer(**args)


def test_bad_k_is_refused():
    for k in [0, -1, 2.5, True]:
        with pytest.raises(ValueError, match="k must be an integer"):
            PrecisionAtK(k)


def test_oversized_core_is_refused():
    with pytest.raises(ValueError, match="at most 20"):
        TopKProblem(np.ones(30, bool), interactions=np.zeros((30, 30)), core=np.arange(21))


def test_caller_arrays_are_not_modified():
    rng = np.random.default_rng(4)
    s, z, k, core, F = random_case(rng)
    before = s.copy(), z.copy(), F.copy()
    aprank.infer(s, z, loss=PrecisionAtK(k), interactions=F, core=core)
    F[core, :] += 1.0      # later edits do not reach a built problem either
    assert np.array_equal(s, before[0]) and np.array_equal(z, before[1])


# ---------------------------------------------------------------------------- the estimator
from aprank.learn import CStarPrecisionAtK, break_even_precision  # noqa: E402
from aprank.models import CStarModel, greedy_core  # noqa: E402


def tiny_multilabel(seed=0, n=60, d=4, L=5):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    A = rng.standard_normal((d, L))
    Y = (X @ A + 0.5 * rng.standard_normal((n, L))) > 0.3
    Y[:, 1] = Y[:, 0] & (rng.random(n) < 0.9)   # a correlated pair for the core to find
    Y[Y.sum(1) == 0, 2] = True
    return X, Y


@pytest.mark.parametrize("kwargs", [dict(n_core=0), dict(n_core=2), dict(n_core=2, k=2),
                                    dict(n_core=2, kernel="rbf", gamma=0.5)])
def test_subgradient_training_decreases_the_bound(kwargs):
    """Acceptance b: the training objective (regulariser + C x mean loss bound) ends well below
    its value at the start, and the bound at the kept parameters equals a recomputation."""
    X, Y = tiny_multilabel()
    est = CStarPrecisionAtK(C=10.0, max_iter=150, **kwargs).fit(X, Y)
    assert est.objective_[0] == pytest.approx(10.0 * np.mean(
        CStarModel(Y, est.k, est.core_).bound(np.zeros(Y.shape), np.zeros((5, 5))).bound))
    assert est.objective_.min() < 0.6 * est.objective_[0]
    # the kept iterate is the best one, and its objective is what the model recomputes
    model = CStarModel(Y, est.k, est.core_)
    W = est.coef_ if est.kernel is None else est.dual_coef_
    b = model.bound(est.decision_function(X), est.interactions_)
    reg = np.sum(W * W) if est.kernel is None else np.sum(
        W * (W @ est._features(X)))
    recomputed = 0.5 * (reg + np.sum(est.interactions_ ** 2)) + 10.0 * b.bound.mean()
    assert recomputed == pytest.approx(est.objective_.min(), rel=1e-9)
    # interactions stay in the core's rows and columns
    outside = np.ones((5, 5), bool)
    outside[est.core_, :] = outside[:, est.core_] = False
    assert np.all(est.interactions_[outside] == 0)


def test_greedy_core_finds_the_informative_labels():
    rng = np.random.default_rng(1)
    a = rng.random(400) < 0.5
    Y = np.c_[rng.random(400) < 0.5, a, a ^ (rng.random(400) < 0.05), rng.random(400) < 0.5]
    assert set(greedy_core(Y, 1)) <= {1, 2}


def test_predict_score_and_interactive_labelling():
    X, Y = tiny_multilabel(seed=2)
    est = CStarPrecisionAtK(n_core=2, C=10.0, max_iter=100).fit(X, Y)
    k = Y.sum(1)
    T = est.predict(X, k=k)
    assert np.array_equal(T.sum(1), k)
    assert est.score(X, Y) == break_even_precision(Y, T)
    out = est.interactive_labelling(X, Y, questions=(1, 3, 5))
    assert out[0] == pytest.approx(est.score(X, Y))
    assert out[5] == 1.0          # every label of 5 asked: the truth
    assert out[0] <= out[3] + 1e-12
    with pytest.raises(ValueError, match="pass predict"):
        est.predict(X)


@pytest.mark.parametrize("kwargs, y, match", [
    (dict(k=9), None, "k must be 'bep' or an integer in 1 ... 5"),
    (dict(n_core=7), None, "n_core must be an integer in 0 ... 5"),
    (dict(C=0), None,
     r"'C' parameter of CStarPrecisionAtK must be a float in the range \(0.0, inf\)"),
    (dict(max_iter=0), None, "max_iter"),
    (dict(), "nonbinary", r"y must be binary .*y\[0, 0\] = 2"),
    (dict(), "1d", "y must be an"),
])
def test_estimator_refuses_bad_input(kwargs, y, match):
    X, Y = tiny_multilabel()
    if y == "nonbinary":
        Y = Y.astype(int)
        Y[0, 0] = 2
    elif y == "1d":
        Y = Y[:, 0]
    with pytest.raises(ValueError, match=match):
        CStarPrecisionAtK(**kwargs).fit(X, Y)


@pytest.mark.parametrize("k", ["bep", 2])
@pytest.mark.parametrize("labels, which", [("ones", "all relevant"), ("zeros", "all irrelevant"),
                                           ("rows", "all relevant or all irrelevant")])
def test_labels_that_leave_nothing_to_rank_are_refused(labels, which, k):
    # every subset of k labels then has the same precision: the fit returned an all-zero model
    X, _ = tiny_multilabel()
    Y = {"ones": np.ones((X.shape[0], 5), bool), "zeros": np.zeros((X.shape[0], 5), bool),
         "rows": np.arange(X.shape[0])[:, None] % 2 == np.zeros((1, 5))}[labels]
    with pytest.raises(ValueError, match=rf"every sample's labels are {which} .*nothing to "
                                         "learn"):
        CStarPrecisionAtK(n_core=2, k=k).fit(X, Y)


@pytest.mark.parametrize("C", [1e3, 1e300])
def test_a_large_C_learns_what_the_bound_alone_gives(C):
    # at C = 1e3 every step of 0.1 overshoots on these data, at 1e300 the first overflows: the
    # best iterate stayed w = 0 and the model came back all zero, without a word
    X, Y = tiny_multilabel()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = CStarPrecisionAtK(n_core=2, C=C, max_iter=100).fit(X, Y)
    assert est.learning_rate_ < est.learning_rate
    assert np.abs(est.coef_).max() > 0 and est.objective_.min() < 0.9 * est.objective_[0]
    assert est.score(X, Y) > CStarPrecisionAtK(n_core=2, C=1.0, max_iter=5).fit(X, Y).score(X, Y)


def test_a_C_whose_objective_overflows_is_refused():
    X, Y = tiny_multilabel()
    with pytest.raises(ValueError, match=r"C = 1e\+308 is too large: the objective at w = 0.*"
                                         "overflows float64"):
        CStarPrecisionAtK(n_core=2, C=1e308).fit(X, Y)


def test_estimator_pickles():
    import pickle
    X, Y = tiny_multilabel()
    est = CStarPrecisionAtK(n_core=2, max_iter=20).fit(X, Y)
    back = pickle.loads(pickle.dumps(est))
    assert np.array_equal(back.predict(X, k=2), est.predict(X, k=2))


def test_queries_of_different_sizes_without_a_core():
    rng = np.random.default_rng(5)
    sizes = rng.integers(1, 9, 40)
    qid = np.repeat(np.arange(40), sizes)
    s = np.round(rng.standard_normal(qid.size), 1)
    z = rng.random(qid.size) < 0.4
    z[np.r_[0, np.cumsum(sizes)[:-1]]] = True
    fast = aprank.infer_batch(s, z, qid, loss="precision@k")
    slow = aprank.infer_batch(s, z, qid, loss="precision@k", algorithm="brute")
    np.testing.assert_allclose(fast.objective, slow.objective, rtol=1e-12, atol=1e-12)
