"""The pairwise kind (labellings of linked samples, max-marginals by graph cuts) and the
high-order learners on it, HOB-SVM and HOAP-SVM (Dokania et al. 2014)."""
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.utils.estimator_checks import parametrize_with_checks

import aprank
from aprank.inference import PairwiseGraph, PairwiseProblem, group_pairs, max_marginals
from aprank.learn import APSVM, HOAPSVM, HOBSVM, BinarySVM
from aprank.losses import PairwiseZeroOne, ZeroOne
from aprank.models import HOBModel, RankingModel, pair_features
from aprank_support.synthetic import grouped

EXACT = ("graphcut", "graphcut-dynamic", "graphcut-static")


def _scale(*arrays):
    return max(1.0, *(float(np.abs(a).max()) for a in arrays))


# ------------------------------------------------------------------------------ inference
@pytest.mark.parametrize("augmented", [True, False])
@pytest.mark.parametrize("algorithm", EXACT)
def test_graphcut_equals_brute_on_tiny_graphs(algorithm, augmented):
    """Max-marginals, maximum and the labellings behind them, against enumeration, on 300
    random graphs (cliques, chains, random pairs; zero pair scores; ties)."""
    for trial in range(300):
        inst = aprank.checks.random_instance("pairwise", seed=7, trial=trial, max_n=12)
        problem = PairwiseProblem(inst.labels, edges=inst.edges, edge_scores=inst.edge_scores)
        ref = problem.solve(inst.scores, algorithm="brute", augmented=augmented)
        got = problem.solve(inst.scores, algorithm=algorithm, augmented=augmented, flips=True)
        tol = 1e-9 * _scale(ref.m_plus, ref.m_minus)
        where = f"trial {trial} ({inst.description})"
        assert abs(got.value - ref.value) <= tol, where
        np.testing.assert_allclose(got.m_plus, ref.m_plus, rtol=0, atol=tol, err_msg=where)
        np.testing.assert_allclose(got.m_minus, ref.m_minus, rtol=0, atol=tol, err_msg=where)
        np.testing.assert_allclose(np.maximum(got.m_plus, got.m_minus), got.value, atol=tol)
        # the labellings reach the values they report
        unary = inst.scores + (problem.loss_unary if augmented else 0.0)
        const = problem.loss_constant if augmented else 0.0

        def value(y):
            return problem.score(y, unary) + const

        y = got.labelling.astype(bool)
        assert abs(value(y) - got.value) <= tol, where
        flips = got.flips.toarray().astype(bool)
        for i in range(y.size):
            assert flips[i, i], where
            other = y ^ flips[i]
            expected = got.m_minus[i] if y[i] else got.m_plus[i]
            assert abs(value(other) - expected) <= tol, f"{where}, sample {i}"
        if augmented:
            assert got.objective >= -tol
            assert abs(got.loss - problem.delta(y)) <= 1e-12


def test_crosscheck_covers_the_pairwise_kind():
    report = aprank.crosscheck("pairwise-zero-one", n_trials=60, max_n=300)
    assert report.ok, str(report)
    assert report.kinds["pairwise-zero-one"] == "pairwise"
    assert set(report.algorithms["pairwise-zero-one"]) == {"graphcut", "graphcut-dynamic",
                                                           "graphcut-static", "brute"}


def test_graphcut_refuses_positive_pair_scores_and_brute_does_not():
    scores = np.array([1.0, -1.0, 0.5])
    edges = np.array([[0, 1], [1, 2]])
    for algorithm in EXACT:
        with pytest.raises(ValueError, match=r"exact only when every pair score is <= 0.*pair 1"):
            max_marginals(scores, edges, [-0.5, 0.25], algorithm=algorithm)
    r = max_marginals(scores, edges, [-0.5, 2.0], algorithm="brute")
    # cutting pair (1, 2) pays 2: best is y = (1, 0, 1) with 1 + 0.5 + 2 - 0.5... enumerate:
    Y = ((np.arange(8)[:, None] >> np.arange(3)) & 1).astype(bool)
    values = Y @ scores + (Y[:, 0] != Y[:, 1]) * -0.5 + (Y[:, 1] != Y[:, 2]) * 2.0
    assert r.value == pytest.approx(values.max())


def test_infer_entry_point_and_inputs_untouched():
    rng = np.random.default_rng(3)
    scores = rng.standard_normal(9)
    labels = rng.random(9) < 0.4
    labels[0] = True
    edges = np.array([[0, 1], [1, 2], [3, 4], [5, 6], [6, 7], [5, 7]])
    c = -np.abs(rng.standard_normal(6))
    copies = [a.copy() for a in (scores, labels, edges, c)]
    r = aprank.infer(scores, labels, loss="pairwise-zero-one", edges=edges, edge_scores=c)
    ref = aprank.infer(scores, labels, loss="pairwise-zero-one", algorithm="brute", edges=edges,
                       edge_scores=c)
    assert r.algorithm == "graphcut"
    assert r.objective == pytest.approx(ref.objective, abs=1e-12)
    for a, b in zip((scores, labels, edges, c), copies):
        np.testing.assert_array_equal(a, b)


def test_sparse_adjacency_and_repeated_pairs():
    rng = np.random.default_rng(0)
    scores = rng.standard_normal(6)
    pairs = np.array([[0, 1], [2, 1], [3, 4]])
    A = sp.coo_matrix((np.ones(3), (pairs[:, 0], pairs[:, 1])), shape=(6, 6))
    assert PairwiseGraph(6, A).edges.tolist() == [[0, 1], [1, 2], [3, 4]]
    with_zero = sp.coo_matrix((np.r_[np.ones(3), 0.0],
                               (np.r_[pairs[:, 0], 4], np.r_[pairs[:, 1], 5])), shape=(6, 6))
    assert PairwiseGraph(6, with_zero).edges.tolist() == [[0, 1], [1, 2], [3, 4]]
    a = max_marginals(scores, A, -0.7)
    b = max_marginals(scores, pairs, -0.7)
    np.testing.assert_allclose(a.scores, b.scores)
    # a pair listed twice is two terms of the sum (as the oracle counts it)
    twice = np.r_[pairs, pairs[:1]]
    np.testing.assert_allclose(max_marginals(scores, twice, -0.7).m_plus,
                               max_marginals(scores, twice, -0.7, algorithm="brute").m_plus)


@pytest.mark.parametrize("edges, edge_scores, match", [
    (np.array([[0, 5]]), None, r"edges\[0\] = \[0, 5\] is out of range for 4 samples"),
    (np.array([[1, 1]]), None, "links sample 1 to itself"),
    (np.array([[0.0, 1.0]]), None, "integer array"),
    (np.array([0, 1, 2]), None, r"\(m, 2\) integer array"),
    (sp.eye(3), None, r"adjacency matrix must be \(4, 4\)"),
    (sp.eye(4), None, "links sample 0 to itself"),
    (np.array([[0, 1]]), [-1.0, -2.0], "one score per pair"),
    (np.array([[0, 1]]), [np.nan], "not finite"),
])
def test_bad_graph_input(edges, edge_scores, match):
    with pytest.raises(ValueError, match=match):
        max_marginals(np.zeros(4), edges, edge_scores)


def test_bad_problem_input():
    with pytest.raises(ValueError, match="qid is not supported"):
        PairwiseProblem([1, 0, 1], qid=[0, 0, 1])
    with pytest.raises(ValueError, match="not the loss 'ap'"):
        PairwiseProblem([1, 0, 1], "ap")
    problem = PairwiseProblem([1, 0, 1], edges=[[0, 1]])
    with pytest.raises(ValueError, match="scores has 2 entries but the problem has 3"):
        problem.solve([0.0, 1.0])
    with pytest.raises(ValueError, match="refuses more than 16 samples"):
        max_marginals(np.zeros(17), None, algorithm="brute")
    with pytest.raises(ValueError, match="the graph has 3 samples, the scores 4"):
        max_marginals(np.zeros(4), graph=PairwiseGraph(3))
    with pytest.raises(ValueError, match="without max-marginals"):
        problem.solve([0.0, 1.0, 0.5], marginals=False).scores


def test_without_pairs_the_max_marginal_difference_is_the_score():
    s = np.array([0.3, -1.2, 0.0, 2.5])
    r = max_marginals(s)
    np.testing.assert_allclose(r.scores, s)
    assert r.labelling.tolist() == [1, 0, 0, 1]


# ------------------------------------------------------------------------------ models

def test_hob_model_constraint_is_the_oracle_violation():
    """most_violated's violation equals the brute-force max over labellings of
    Delta + w'(Psi(Y) - Psi(Y*)) / Z, and its row g reproduces it."""
    X, y, groups = grouped(n_groups=3, size=4)
    X = np.hstack([X, np.ones((X.shape[0], 1))])
    edges = group_pairs(groups)
    Phi = pair_features(X, edges)
    model = HOBModel(X, y.astype(bool), edges, Phi, eta=0.7, loss=PairwiseZeroOne(J=2.0))
    rng = np.random.default_rng(1)
    for _ in range(20):
        w = rng.standard_normal(model.size_joint_feature)
        w[model.d1:] = -np.abs(w[model.d1:])
        cut = model.most_violated(w)
        Y = ((np.arange(2 ** 12)[:, None] >> np.arange(12)) & 1).astype(bool)
        best = max(model.problem.delta(Yk) + w @ (model.psi(Yk) - model.psi_truth) / model.Z
                   for Yk in Y)
        assert cut.violation == pytest.approx(best, abs=1e-12)
        assert cut.b - w @ cut.g == pytest.approx(best, abs=1e-12)


def test_psi_of_flipped_labellings():
    X, y, groups = grouped(n_groups=4, size=3)
    edges = group_pairs(groups)
    model = HOBModel(X, y.astype(bool), edges, pair_features(X, edges), eta=1.3)
    rng = np.random.default_rng(2)
    labelling = rng.random(X.shape[0]) < 0.5
    flips = sp.random(X.shape[0], X.shape[0], density=0.2, random_state=3, format="csr")
    flips.data[:] = 1
    flips = (flips + sp.eye(X.shape[0])).astype(np.int8).tocsr()
    flips.data[:] = 1
    D = model.psi_flipped(labelling, flips)
    for i in range(X.shape[0]):
        other = labelling ^ flips[i].toarray().ravel().astype(bool)
        np.testing.assert_allclose(D[i], model.psi(other) - model.psi(labelling), atol=1e-12)


# ------------------------------------------------------------------------------ learners
def test_hobsvm_keeps_pair_weights_nonpositive_and_ranks_by_max_marginals():
    X, y, groups = grouped()
    est = HOBSVM(C=10.0, eta=1.0, tol=1e-4).fit(X, y, groups=groups)
    assert est.converged_
    assert est.coef_pairs_.shape == (X.shape[1],)
    assert np.all(est.coef_pairs_ <= 0)
    assert np.any(est.coef_pairs_ < -1e-6), "the pairs carry information here"
    s = est.decision_function(X, groups=groups)
    w = np.r_[est.coef_, est.intercept_, est.coef_pairs_]
    Phi = pair_features(X, group_pairs(groups))
    ref = max_marginals(X @ est.coef_ + est.intercept_, group_pairs(groups),
                        est.eta * (Phi @ est.coef_pairs_), algorithm="graphcut-static")
    np.testing.assert_allclose(s, ref.scores, atol=1e-10 * _scale(w))
    assert 0.5 < est.score(X, y, groups=groups) <= 1.0
    # edges given explicitly are the same pairs as groups
    np.testing.assert_allclose(est.decision_function(X, edges=group_pairs(groups)), s)


def test_hoapsvm_objective_never_increases_and_pair_weights_stay_nonpositive():
    X, y, groups = grouped(seed=4)
    history = []
    est = HOAPSVM(C=10.0, eta=1.0, tol=1e-4, callback=history.append).fit(X, y, groups=groups)
    objectives = [h["objective"] for h in est.cccp_history_]
    assert len(objectives) >= 2
    # the bound touches F at w_t and the inner solve is exact to tol: F(w_{t+1}) <= F(w_t) + tol
    assert all(b <= a + est.tol for a, b in zip(objectives, objectives[1:])), objectives
    assert est.objective_ == min(objectives)
    assert np.all(est.coef_pairs_ <= 0)
    assert len(history) == len(objectives) - 1 or len(history) == len(objectives)
    assert 0.5 < est.score(X, y, groups=groups) <= 1.0


def test_with_eta_zero_hobsvm_is_binarysvm():
    """eta = 0: for every w the same most violated constraint as BinarySVM's model (J = 1), so
    the same problem; the fits agree to the solver's tolerance and rank alike."""
    X, y, groups = grouped(seed=5)
    design = np.hstack([X, np.ones((X.shape[0], 1))])
    edges = group_pairs(groups)
    hob_model = HOBModel(design, y.astype(bool), edges, pair_features(X, edges), eta=0.0,
                         loss=PairwiseZeroOne(J=1.0))
    binary_model = RankingModel(design, y.astype(bool), ZeroOne(1.0), algorithm="zero-one")
    rng = np.random.default_rng(0)
    for _ in range(20):
        w = rng.standard_normal(design.shape[1])
        a = hob_model.most_violated(np.r_[w, -np.abs(rng.standard_normal(X.shape[1]))])
        b = binary_model.most_violated(w)
        assert a.violation == pytest.approx(b.violation, abs=1e-12)
        np.testing.assert_allclose(a.g[:design.shape[1]], b.g, atol=1e-12)
        np.testing.assert_array_equal(a.g[design.shape[1]:], 0.0)
    hob = HOBSVM(C=3.0, eta=0.0, J=1.0, tol=1e-7).fit(X, y, groups=groups)
    # BinarySVM's C is per sample: HOBSVM's C (the structural one) over n
    binary = BinarySVM(C=3.0 / X.shape[0], J=1.0, tol=1e-7).fit(X, y)
    assert hob.primal_ == pytest.approx(binary.primal_, abs=1e-6)
    np.testing.assert_allclose(hob.coef_, binary.coef_, atol=1e-3)
    _assert_same_ranking(hob.decision_function(X, groups=groups), binary.decision_function(X))


def _assert_same_ranking(s, ref, margin=1e-3):
    """Every pair the reference orders by more than ``margin`` is ordered alike (the fits are
    equal only to the solver's tolerance, so nearer pairs may swap)."""
    i, j = np.nonzero(ref[:, None] - ref[None, :] > margin)
    assert i.size and np.all(s[i] > s[j])


@pytest.mark.parametrize("init", ["zero", "hob"])
def test_with_eta_zero_hoapsvm_ranks_as_apsvm(init):
    X, y, groups = grouped(seed=6)
    hoap = HOAPSVM(C=3.0, eta=0.0, init=init, tol=1e-7).fit(X, y, groups=groups)
    ap = APSVM(C=3.0, tol=1e-7).fit(X, y)
    assert hoap.objective_ == pytest.approx(ap.primal_, abs=1e-6)
    np.testing.assert_allclose(hoap.coef_, ap.coef_, atol=1e-3)
    assert abs(hoap.intercept_) < 1e-3       # a bias cancels in AP's joint feature
    _assert_same_ranking(hoap.decision_function(X, groups=groups) - hoap.intercept_,
                         ap.decision_function(X))


def test_hoapsvm_whose_start_is_cccp_best_returns_the_start():
    """Tiny features: w = 0, the start, is CCCP's best w, which no inner run produced; the fit
    returns it, with no iteration in its history."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 4))
    y = (np.arange(30) % 3 == 0).astype(int)
    groups = np.repeat(np.arange(10), 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = HOAPSVM(init="zero").fit(X * 1e-100, y, groups=groups)
    assert est.n_iter_ == 0 and est.history_ == []
    assert np.array_equal(est.coef_, np.zeros(X.shape[1])) and est.intercept_ == 0.0
    assert est.coef_pairs_.ndim == 1
    assert est.decision_function(X, groups=groups).shape == (X.shape[0],)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")   # max_outer=3
def test_estimators_pickle_and_predict_alike():
    X, y, groups = grouped(seed=8)
    for est in (HOBSVM(C=1.0, eta=0.5), HOAPSVM(C=1.0, eta=0.5, max_outer=3)):
        est.fit(X, y, groups=groups)
        back = pickle.loads(pickle.dumps(est))
        np.testing.assert_array_equal(back.decision_function(X, groups=groups),
                                      est.decision_function(X, groups=groups))
        np.testing.assert_array_equal(back.predict(X, groups=groups),
                                      est.predict(X, groups=groups))
    r = max_marginals(np.array([0.5, -0.1]), [[0, 1]], -0.3, flips=True)
    back = pickle.loads(pickle.dumps(r))
    np.testing.assert_array_equal(back.m_plus, r.m_plus)
    assert (back.flips != r.flips).nnz == 0


def test_estimator_bad_input():
    X, y, groups = grouped()
    with pytest.raises(ValueError, match="as edges or as groups, not both"):
        HOBSVM().fit(X, y, edges=group_pairs(groups), groups=groups)
    with pytest.raises(ValueError, match=r"groups must hold one entry per sample \(60\)"):
        HOBSVM().fit(X, y, groups=groups[:-1])
    with pytest.raises(ValueError,
                       match=r"'eta' parameter of HOBSVM must be a float in the range "
                       r"\[0.0, inf\)"):
        HOBSVM(eta=-1.0).fit(X, y, groups=groups)
    with pytest.raises(ValueError, match=r"'init' parameter of HOAPSVM must be a str among "
                       r"\{'(hob|zero)', '(hob|zero)'\}. Got 'svm'"):
        HOAPSVM(init="svm").fit(X, y, groups=groups)
    with pytest.raises(ValueError, match="pair feature must be non-negative"):
        HOBSVM(pair_feature=lambda a, b: a - b).fit(X, y, groups=groups)
    with pytest.raises(ValueError, match="exactly 2 classes"):
        HOBSVM().fit(X, np.zeros_like(y), groups=groups)


@pytest.mark.parametrize("up_to", [10, 16])
def test_enumeration_and_cuts_agree_on_mixed_components(monkeypatch, up_to):
    """Components of 1 to 20 samples: "graphcut" (enumerating those of at most ``up_to``)
    against dynamic cuts alone, max-marginals and the value of every flipped labelling."""
    from aprank.inference.pairwise import _instances, _problem
    monkeypatch.setattr(_problem, "ENUMERATE_UP_TO", up_to)
    rng = np.random.default_rng(up_to)
    for trial in range(10):
        sizes = rng.integers(1, 21, 8)
        inst = _instances.group_instance(5, int(sizes.sum()) - 5, 1.0, seed=trial, sizes=sizes)
        c = np.where(rng.random(inst.edge_scores.size) < 0.3, 0.0, inst.edge_scores)
        problem = PairwiseProblem(inst.labels, edges=inst.edges, edge_scores=c)
        ref = problem.solve(inst.scores, algorithm="graphcut-dynamic")
        got = problem.solve(inst.scores, algorithm="graphcut", flips=True)
        tol = 1e-9 * _scale(ref.m_plus, ref.m_minus)
        np.testing.assert_allclose(got.m_plus, ref.m_plus, rtol=0, atol=tol)
        np.testing.assert_allclose(got.m_minus, ref.m_minus, rtol=0, atol=tol)
        unary = inst.scores + problem.loss_unary
        y = got.labelling.astype(bool)
        assert (problem.score(y, unary, c) + problem.loss_constant
                == pytest.approx(got.value, abs=tol))
        flips = got.flips.tocsr()
        for i in range(y.size):
            other = y.copy()
            other[flips[i].indices] ^= True
            expected = got.m_minus[i] if y[i] else got.m_plus[i]
            assert (problem.score(other, unary, c) + problem.loss_constant
                    == pytest.approx(expected, abs=tol))


def test_enumerate_up_to_is_checked():
    for bad in (-1, 25, 2.5, True, "10"):
        with pytest.raises(ValueError, match=r"enumerate_up_to must be an integer in \[0, 24\]"):
            max_marginals(np.zeros(3), [[0, 1]], -1.0, enumerate_up_to=bad)
    a = max_marginals(np.array([0.5, -0.2, 0.1]), [[0, 1], [1, 2]], -1.0, enumerate_up_to=0)
    b = max_marginals(np.array([0.5, -0.2, 0.1]), [[0, 1], [1, 2]], -1.0, enumerate_up_to=3)
    np.testing.assert_allclose(a.scores, b.scores)


def test_pairwise_bench_rows_are_measured():
    from benchmarks import pairwise
    rows, source = pairwise.pairwise_scaling(sizes=(600,), repeats=1)
    assert [r[2] for r in rows] == list(pairwise.PAIRWISE_ALGORITHMS)
    assert all(r[0] == 600 and r[1] > 0 and r[3] > 0 and r[4] > 0 for r in rows)
    crossover = pairwise.enumeration_crossover(ks=(4, 6), n=240, repeats=1)
    assert [k for k, *_ in crossover] == [4, 6] and all(min(t) > 0 for _, *t in crossover)
    component = pairwise.component_scaling(sizes=(200,), repeats=1)
    assert [r[2] for r in component] == list(pairwise.COMPONENT_ALGORITHMS)
    assert all(r[0] == 200 and r[1] == 200 * pairwise.COMPONENT_NEIGHBOURS and r[3] > 0
               and r[4] > 0 for r in component)
    table = pairwise.format_pairwise(rows, source, crossover, component, (0.5, 0.7))
    assert "graphcut-dynamic" in table and "| 6 |" in table and "| 200 | 2000 |" in table
    assert "0.50, 0.70" in table


def test_main_bench_times_the_pairwise_kind(monkeypatch):
    from benchmarks import ranking
    rows = ranking.bench(cells=((5, 60),), regimes={"overlapping": 1.0}, repeats=1,
                         log=lambda line: None)
    pairwise = {r.algorithm: r for r in rows if r.kind == "pairwise"}
    assert set(pairwise) == {"graphcut", "graphcut-dynamic", "graphcut-static"}   # brute: n > 16
    assert all(r.seconds > 0 and r.ratio > 0 and r.memory >= 0 for r in pairwise.values())
    # a call slower than the tracing limit is timed, its memory not traced, and the table says so
    monkeypatch.setattr(ranking, "TRACE_UP_TO", 0.0)
    rows = ranking.bench(cells=((5, 60),), regimes={"overlapping": 1.0}, repeats=1,
                         log=lambda line: None)
    untraced = [r for r in rows if r.kind == "pairwise"]
    assert untraced and all(r.memory is None and r.seconds > 0 for r in untraced)
    assert "not traced" in ranking.format_table(untraced)


def test_grid_search_routes_groups_to_fit_and_score():
    """With metadata routing, GridSearchCV splits by group and hands each fold's groups to fit
    and to score: its fold scores equal the ones computed by hand."""
    import sklearn
    from sklearn.model_selection import GridSearchCV, GroupKFold
    X, y, groups = grouped(n_groups=24, seed=9)
    with sklearn.config_context(enable_metadata_routing=True):
        est = HOBSVM(C=1.0, eta=1.0).set_fit_request(groups=True).set_score_request(groups=True)
        gs = GridSearchCV(est, {"eta": [1.0]}, cv=GroupKFold(3)).fit(X, y, groups=groups)
    by_hand = [HOBSVM(C=1.0, eta=1.0).fit(X[a], y[a], groups=groups[a])
               .score(X[b], y[b], groups=groups[b])
               for a, b in GroupKFold(3).split(X, y, groups)]
    assert gs.cv_results_["mean_test_score"][0] == pytest.approx(np.mean(by_hand), abs=1e-12)
    # without the groups, scoring ranks by w'x alone, which differs here (and warns)
    with pytest.warns(UserWarning, match="neither groups nor edges"):
        unlinked = [HOBSVM(C=1.0, eta=1.0).fit(X[a], y[a], groups=groups[a]).score(X[b], y[b])
                    for a, b in GroupKFold(3).split(X, y, groups)]
    assert not np.allclose(by_hand, unlinked)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
# scikit-learn's checks fit on string labels, whose relevant class the estimators say
@pytest.mark.filterwarnings("ignore::aprank.learn.RelevantClassWarning")
@parametrize_with_checks([HOBSVM(), HOAPSVM(max_outer=3)])
def test_sklearn_conventions(estimator, check):
    # without pairs (no edges, no groups) the estimators see independent samples; every
    # check applies
    check(estimator)


def test_compiled_grouping_matches_a_graph_search():
    """_components_cy.group (union-find, counting sorts) against scipy's connected components:
    the same partition of the samples, components ordered by their smallest sample, samples
    ascending within one, single samples last, every active pair in its component once and its
    samples' positions right; also no samples, no pairs and all pairs inactive."""
    from scipy.sparse.csgraph import connected_components
    rng = np.random.default_rng(23)
    cases = [(0, np.zeros((0, 2), np.int64)), (5, np.zeros((0, 2), np.int64))]
    for _ in range(40):
        n = int(rng.integers(1, 300))
        m = int(rng.integers(0, 2 * n))
        e = rng.integers(0, n, (m, 2))
        cases.append((n, e[e[:, 0] != e[:, 1]].astype(np.int64)))
    for n, edges in cases:
        graph = PairwiseGraph(n, edges)
        active = rng.random(graph.n_edges) < 0.7
        order, offsets, comp, pairs, e_off, ends = graph.grouping(active)
        position = np.empty(n, dtype=np.int64)
        position[order] = np.arange(n)
        assert np.array_equal(ends, position[graph.edges[pairs]].reshape(-1, 2))
        A = sp.coo_matrix((np.ones(int(active.sum())), tuple(graph.edges[active].T)), shape=(n, n))
        _, ref = connected_components(A, directed=False)
        sizes = np.bincount(ref, minlength=1)[ref] if n else np.zeros(0, int)
        linked = np.flatnonzero(sizes > 1)
        assert sorted(order.tolist()) == list(range(n))
        assert offsets[-1] == linked.size and set(order[:linked.size]) == set(linked)
        assert (np.diff(order[linked.size:]) > 0).all()
        for c in range(offsets.size - 1):
            members = order[offsets[c]:offsets[c + 1]]
            assert (np.diff(members) > 0).all() and np.unique(ref[members]).size == 1
            assert (comp[members] == c).all() and (sizes[members] == members.size).all()
            if c:
                assert members[0] > order[offsets[c - 1]]
            mine = pairs[e_off[c]:e_off[c + 1]]
            assert (np.diff(mine) > 0).all() and active[mine].all()
            assert (comp[graph.edges[mine]] == c).all()
        assert pairs.size == active.sum()
        singles = order[linked.size:]
        assert np.unique(comp[singles]).size == singles.size
        assert (comp[singles] >= offsets.size - 1).all()
