"""The structured SVM estimators: scikit-learn conventions, exactness, queries, bad input."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn
from sklearn.model_selection import GridSearchCV, GroupKFold
from sklearn.svm import LinearSVC
from sklearn.utils.estimator_checks import (
    check_sample_weight_equivalence_on_dense_data,
    check_sample_weight_equivalence_on_sparse_data,
    parametrize_with_checks,
)

import aprank
from aprank.learn import APSVM, NDCGSVM, APSVMAppx, BinarySVM, EmptyQueryWarning
from aprank.metrics import average_precision, ndcg
from aprank_support.estimator_checks import expected_failed_checks

pytestmark = pytest.mark.min_versions   # also run against the declared minimum versions (.ci/run)

ESTIMATORS = [BinarySVM(), BinarySVM(solver="ocas"), APSVM(), NDCGSVM(), APSVMAppx()]


# scikit-learn's checks fit on string labels, whose relevant class the estimators say
@pytest.mark.filterwarnings("ignore::aprank.learn.RelevantClassWarning")
@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks)
def test_sklearn_conventions(estimator, check):
    # The estimators are binary classifiers whose predict marks decision_function above 0;
    # apart from the per-sample weights that the rank SVMs refuse and the descent's
    # tolerance (tests/aprank_support/estimator_checks.py), every check applies.
    check(estimator)


@pytest.mark.parametrize("check", [check_sample_weight_equivalence_on_dense_data,
                                   check_sample_weight_equivalence_on_sparse_data])
def test_dual_cd_passes_the_weight_checks_at_a_tight_tol(check):
    """The descent's exemption (tests/aprank_support/estimator_checks.py) is its stopping rule, not
    its weighting: at tol 1e-6 weights and repeated samples give the same w to scikit-learn's
    1e-7."""
    check("BinarySVM", BinarySVM(tol=1e-6))


def test_exact_algorithms_learn_the_same_w(digits):
    """Mohapatra et al. (2014): AP-SVM with SEARCH or SELECT learns exactly what Yue's greedy
    learns."""
    X, y = digits
    for digit in (3, 8):
        ws = {a.name: APSVM(C=10.0, algorithm=a.name).fit(X, y == digit).coef_
              for a in aprank.algorithms(loss="ap", exact=True) if a.name != "brute"}
        assert set(ws) >= {"yue", "search", "select", "qs"}
        ref = ws["yue"]
        for name, w in ws.items():
            assert np.abs(w - ref).max() <= 1e-6 * np.linalg.norm(ref), name


def test_binary_svm_is_the_class_weighted_hinge_svm(digits):
    """BinarySVM(C) solves LinearSVC(C, loss="hinge", class_weight="balanced")'s problem: C is
    per sample, the weights n / (2 n_class) (the structural C of the 0-1 loss is C n)."""
    X, y = digits
    yb = y == 5
    for C in (0.01, 2.0):
        ours = BinarySVM(C=C, tol=1e-7, max_iter=5000).fit(X, yb)
        ref = LinearSVC(C=C, loss="hinge", class_weight="balanced", intercept_scaling=1.0,
                        tol=1e-10, max_iter=200_000).fit(X, yb)
        w_ref = np.r_[ref.coef_.ravel(), ref.intercept_]
        w_ours = np.r_[ours.coef_, ours.intercept_]
        assert np.linalg.norm(w_ours - w_ref) <= 1e-3 * np.linalg.norm(w_ref)
        # primal_ is that objective: 1/2 ||w||^2 + C sum_i a_i hinge_i, the a_i summing to n
        n, P = yb.size, yb.sum()
        a = np.where(yb, n / (2 * P), n / (2 * (n - P)))
        hinge = np.maximum(0.0, 1.0 - np.where(yb, 1.0, -1.0) * (X @ ours.coef_ + ours.intercept_))
        assert ours.primal_ == pytest.approx(0.5 * w_ours @ w_ours + C * a @ hinge, rel=1e-9)


def test_binary_svm_per_sample_c_with_queries_and_weights(digits):
    """With qid each query's weights sum to n / Q, and with sample_weight n counts weights:
    the primal is C times the weighted hinges' sum, the structural C being C n."""
    X, y = digits
    X, yb = X[:300], y[:300] == 4
    qid = np.arange(300) % 3
    sw = np.random.default_rng(0).uniform(0.5, 2.0, 300)
    est = BinarySVM(C=0.5, tol=1e-8).fit(X, yb, qid=qid, sample_weight=sw)
    margins = np.where(yb, 1.0, -1.0) * (X @ est.coef_ + est.intercept_)
    a = np.empty(300)
    for q in range(3):
        rows = qid == q
        for cls in (True, False):
            mine = rows & (yb == cls)
            # class-balanced within the query, counting weights; the query's sum n / Q
            a[mine] = sw[mine] * (sw.sum() / 3) / (2 * sw[mine].sum())
    w = np.r_[est.coef_, est.intercept_]
    assert est.primal_ == pytest.approx(0.5 * w @ w + 0.5 * a @ np.maximum(0, 1 - margins),
                                        rel=1e-9)


@pytest.fixture(scope="module")
def eights_halves(unit_digits):
    """Digits, 8 against the rest: the first 1,200 rows, X in [0, 1], split in stratified
    halves (seed 0) as (X_train, X_test, y_train, y_test)."""
    from sklearn.model_selection import train_test_split

    X, d = unit_digits
    X, y = X[:1200], d[:1200] == 8
    return train_test_split(X, y, test_size=0.5, stratify=y, random_state=0)


def test_binary_svm_default_c_matches_linear_svc_on_digits(eights_halves):
    """At the default C, BinarySVM's balanced accuracy is within 0.05 of
    LinearSVC(class_weight="balanced")'s at its default (a per-sample C of 1 / n, the
    structural C = 1, calls 98 % of the test samples positive: balanced accuracy 0.51)."""
    from sklearn.metrics import balanced_accuracy_score

    Xtr, Xte, ytr, yte = eights_halves
    ours = balanced_accuracy_score(yte, BinarySVM().fit(Xtr, ytr).predict(Xte))
    ref = balanced_accuracy_score(yte,
                                  LinearSVC(class_weight="balanced").fit(Xtr, ytr).predict(Xte))
    assert ours >= ref - 0.05 and ours > 0.85


def test_apsvm_appx_first_stage_keeps_the_structural_c(digits):
    """APSVMAppx(C)'s BinarySVM is BinarySVM(C / n): the 0-1 loss weighed as the AP loss."""
    X, y = digits
    X, yb = X[:200], y[:200] == 3
    est = APSVMAppx(C=20.0).fit(X, yb)
    assert est.binary_.C == pytest.approx(20.0 / 200, rel=1e-12)


def test_rank_svms_predict_at_the_learnt_threshold(eights_halves):
    """The rank SVMs learn no bias: decision_function is w'x (+ b) less threshold_, the
    training ranking's break-even point (as many training samples above it as positives), and
    predict marks it above 0, not w'x (w'x > 0 calls 93 % of the test samples positive for
    APSVM(C=1000))."""
    from sklearn.metrics import balanced_accuracy_score

    Xtr, Xte, ytr, yte = eights_halves
    for est in (APSVM(C=1000.0), NDCGSVM(C=1000.0), APSVMAppx(C=1000.0)):
        est.fit(Xtr, ytr)
        raw = Xtr @ est.coef_ + getattr(est, "intercept_", 0.0)
        assert np.count_nonzero(raw > est.threshold_) == ytr.sum()
        # the shift is the whole difference: the ranking (and AP) is w'x's
        np.testing.assert_allclose(est.decision_function(Xtr), raw - est.threshold_,
                                   rtol=0, atol=1e-12 * np.abs(raw).max())
        assert np.count_nonzero(est.decision_function(Xtr) > 0) == ytr.sum()
        # scikit-learn's convention: predict is decision_function above 0
        np.testing.assert_array_equal(est.predict(Xte), est.classes_[
            (est.decision_function(Xte) > 0).astype(int)])
        predicted = est.predict(Xte)
        assert abs(predicted.mean() - yte.mean()) < 0.05
        assert balanced_accuracy_score(yte, predicted) > 0.85


def test_break_even_threshold_counts_weights():
    from aprank.learn._estimators import break_even_threshold

    scores = np.array([5.0, 4.0, 3.0, 2.0, 1.0])
    is_pos = np.array([True, False, True, False, False])
    assert break_even_threshold(scores, is_pos) == 3.5          # two above: 5, 4
    # the positives weigh 3: three samples' weight above
    assert break_even_threshold(scores, is_pos, np.array([1.0, 1.0, 2.0, 1.0, 1.0])) == 2.5
    assert not hasattr(BinarySVM().fit(np.c_[scores], is_pos), "threshold_")


def test_ndcgsvm_scores_with_ndcg(digits):
    """NDCGSVM.score is NDCG (not AP), with the model's own discount where it has one."""
    X, y = digits
    X, y = X[:600], y[:600]
    est = NDCGSVM(C=1.0).fit(X, y == 7)
    scores = est.decision_function(X)
    expected = ndcg((y == 7).astype(float), scores)
    assert est.score(X, y == 7) == pytest.approx(expected, rel=1e-12)
    assert expected != pytest.approx(average_precision(y == 7, scores), rel=1e-6)
    # with the model's own discount
    n = X.shape[0]
    steep = 1.0 / np.arange(1, n + 1)
    est = NDCGSVM(C=1.0, discount=steep).fit(X, y == 7)
    assert est.score(X, y == 7) == pytest.approx(
        ndcg((y == 7).astype(float), est.decision_function(X), discount=steep), rel=1e-12)


def test_qid_takes_the_mean_over_queries(digits):
    X, y = digits
    X, yb = X[:400], y[:400] == 1
    single = APSVM(C=5.0, tol=1e-8).fit(X, yb)
    # the same data twice, as two queries: the mean constraint is the single query's
    X2, y2 = np.vstack([X, X]), np.r_[yb, yb]
    blocks = np.r_[np.full(400, 7), np.full(400, 3)]
    interleaved = np.empty(800, dtype=int)
    interleaved[::2], interleaved[1::2] = 7, 3               # queries not contiguous
    rows = np.argsort(interleaved, kind="stable").argsort()  # put row r of query q where it goes
    for qid, Xq, yq in ((blocks, X2, y2), (interleaved, X2[np.argsort(blocks, kind="stable")][rows],
                                           y2[np.argsort(blocks, kind="stable")][rows])):
        est = APSVM(C=5.0, tol=1e-8).fit(Xq, yq, qid=qid)
        assert est.primal_ == pytest.approx(single.primal_, abs=1e-7)
        np.testing.assert_allclose(est.coef_, single.coef_, atol=1e-5 * np.abs(single.coef_).max())


def test_sparse_and_dense_agree(digits):
    X, y = digits
    for est in (APSVM(C=3.0), BinarySVM(C=3.0), APSVMAppx(C=3.0)):
        dense = type(est)(**est.get_params()).fit(X, y == 2)
        sparse = type(est)(**est.get_params()).fit(sp.csr_matrix(X), y == 2)
        np.testing.assert_allclose(sparse.coef_, dense.coef_, atol=1e-8)
        np.testing.assert_allclose(sparse.decision_function(sp.csr_matrix(X)),
                                   dense.decision_function(X), atol=1e-8)


def test_history_and_reports(digits):
    X, y = digits
    seen = []
    est = APSVM(C=10.0, callback=seen.append).fit(X, y == 4)
    h = est.history_
    assert est.converged_ and len(h) == est.n_iter_ == len(seen)
    assert est.gap_ == h[-1]["gap"] <= est.tol and est.dual_ <= est.primal_
    assert h[-1]["violation"] <= h[-1]["working_slack"] + est.tol
    for row, info in zip(h, seen):
        negatives = y != 4
        assert info["iteration"] == row["iteration"] and info["w"].shape == (X.shape[1],)
        assert row["n_last_rank"] == np.sum(info["result"].ranks[negatives] == (y == 4).sum() + 1)
        assert row["inference_seconds"] >= 0 and row["qp_seconds"] >= 0
    # the primal objective is the true objective of the final w: recompute it
    scores = X @ est.coef_
    from aprank import infer
    xi = infer(scores, y == 4).objective
    assert est.primal_ == pytest.approx(0.5 * est.coef_ @ est.coef_ + 10.0 * xi, rel=1e-12)
    # duals never exceed primals, and the primal at the end is below the first one
    assert all(r["dual"] <= r["primal"] + 1e-12 for r in h)


def test_warm_start_reuses_the_working_set(digits):
    X, y = digits
    cold = APSVM(C=30.0).fit(X, y == 9)
    warm = APSVM(C=10.0, warm_start=True).fit(X, y == 9)
    warm.set_params(C=30.0).fit(X, y == 9)
    assert warm.n_iter_ < cold.n_iter_
    assert warm.primal_ == pytest.approx(cold.primal_, abs=2 * cold.tol)


def test_verbose_shows_progress(digits, capsys):
    X, y = digits
    APSVM(C=1.0, verbose=True).fit(X[:300], y[:300] == 0)
    assert "APSVM" in capsys.readouterr().err


def test_appx_extremes(digits):
    X, y = digits
    yb = y == 6
    # keep = 0: every sample is difficult, the bias cancels in the AP loss -> APSVM's w
    appx = APSVMAppx(C=5.0, keep=0.0, tol=1e-6).fit(X, yb)
    plain = APSVM(C=5.0, tol=1e-6).fit(X, yb)
    assert not appx.easy_.any()
    np.testing.assert_allclose(appx.coef_, plain.coef_, atol=1e-3 * np.abs(plain.coef_).max())
    assert abs(appx.intercept_) < 1e-6
    # keep = 1: every easy sample keeps its hard constraint
    appx = APSVMAppx(C=5.0, keep=1.0).fit(X, yb)
    signs = np.where(yb, 1.0, -1.0)
    margins = signs * (X @ appx.coef_ + appx.intercept_)
    assert appx.easy_.sum() == np.sum(signs * appx.binary_.decision_function(X) > 1)
    assert margins[appx.easy_].min() >= 1 - appx.tol


def test_grid_search(digits):
    X, y = digits
    X, yb = X[:600], y[:600] == 7
    search = GridSearchCV(APSVM(), {"C": [0.1, 10.0]}, cv=3).fit(X, yb)
    assert search.best_params_["C"] in (0.1, 10.0)
    assert search.best_score_ == pytest.approx(
        max(search.cv_results_["mean_test_score"]))


def test_grid_search_with_qid(digits):
    X, y = digits
    X, yb = X[:600], y[:600] == 7
    qid = np.arange(600) // 60
    with sklearn.config_context(enable_metadata_routing=True):
        est = APSVM().set_fit_request(qid=True).set_score_request(qid=True)
        search = GridSearchCV(est, {"C": [0.1, 10.0]}, cv=GroupKFold(3))
        search.fit(X, yb, groups=qid, qid=qid)
    best = APSVM(C=search.best_params_["C"]).fit(X, yb, qid=qid)
    assert best.score(X, yb, qid=qid) == pytest.approx(
        average_precision(yb, best.decision_function(X), qid=qid))


def test_bad_input(digits):
    X, y = digits
    yb = y == 1
    bad = X.copy()
    bad[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        APSVM().fit(bad, yb)
    with pytest.raises(ValueError, match="2 classes"):
        APSVM().fit(X, np.zeros(len(y)))
    with pytest.raises(ValueError, match="inconsistent"):
        APSVM().fit(X, yb[:-1])
    with pytest.raises(ValueError, match="qid"):
        APSVM().fit(X, yb, qid=np.zeros(3))
    with pytest.raises(NotImplementedError, match="algorithm"):
        APSVM(algorithm="ndcg-greedy").fit(X, yb)       # not an AP algorithm
    with pytest.raises(ValueError, match="unknown algorithm"):
        APSVM(algorithm="nope").fit(X, yb)
    with pytest.raises(ValueError, match="'C' parameter of APSVM must be"):
        APSVM(C=0).fit(X, yb)
    with pytest.raises(ValueError, match="keep"):
        APSVMAppx(keep=1.5).fit(X, yb)


def test_queries_without_positives_follow_empty(digits):
    X, y = digits
    X, yb = X[:300], y[:300] == 1
    qid = np.arange(300) // 30
    yb = yb & (qid != 4)                      # query 4 has no positive
    with pytest.raises(ValueError, match="query 4"):
        APSVM(empty="error").fit(X, yb, qid=qid)
    with pytest.warns(EmptyQueryWarning, match="1 of 10 training queries"):
        est = APSVM(empty="skip").fit(X, yb, qid=qid)
    kept = qid != 4
    same = APSVM().fit(X[kept], yb[kept], qid=qid[kept])
    np.testing.assert_allclose(est.coef_, same.coef_, atol=1e-9)
    with pytest.raises(ValueError, match="query 4"):
        APSVM(C=1.0, empty="error").fit(X[kept], yb[kept], qid=qid[kept]).score(X, yb, qid=qid)
    with pytest.warns(EmptyQueryWarning, match=r"left out 1 of 10 queries .*\(4\)"):
        left_out = est.score(X, yb, qid=qid)
    assert left_out == pytest.approx(same.score(X[kept], yb[kept], qid=qid[kept]))


def test_convergence_warning(digits):
    X, y = digits
    with pytest.warns(sklearn.exceptions.ConvergenceWarning):
        est = APSVM(C=100.0, max_iter=3).fit(X, y == 1)
    assert not est.converged_ and est.n_iter_ == 3
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        APSVM(C=1.0).fit(X, y == 1, qid=np.zeros(len(y)))
