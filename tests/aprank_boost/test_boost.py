"""aprank.boost: the hinge objective's gradient is infer_batch's subgradient (ties included),
its hessian is positive, and the rankers follow scikit-learn's conventions, pickle, take qid
through a routed search and refuse what they do not support."""
import pickle
import warnings

import numpy as np
import pytest
import sklearn
from sklearn.datasets import load_digits
from sklearn.model_selection import GridSearchCV, GroupKFold
from sklearn.utils.estimator_checks import parametrize_with_checks

import aprank
from aprank.checks import random_instance
from aprank.learn import EmptyQueryWarning, OneQueryWarning, RelevantClassWarning
from aprank.metrics import average_precision, ndcg
from aprank.sklearn_compat import InvalidParameterError

lgb = pytest.importorskip("lightgbm", reason='needs lightgbm (pip install "aprank[boost]")')
#: an optional package the test extra leaves out: .ci/run's extras lane runs this file
pytestmark = pytest.mark.extras
from aprank.boost import APBoostRanker, HingeObjective, NDCGBoostRanker  # noqa: E402

LOSSES = ["ap", "ndcg"]


def _instances():
    """The ranking kind's cross-check instances (all-equal scores, dense ties, reversed and
    overlapping regimes among them)."""
    return [random_instance("ranking", seed, trial, 200) for seed in (0, 1) for trial in range(30)]


def _expected(scores, relevant, qid, loss):
    """infer_batch's subgradient, reduced as the objective reduces: mean over used queries."""
    r = aprank.infer_batch(scores, relevant, qid, loss=loss, empty="skip")
    return (r.coef - r.truth_coef) / max(int(r.used.sum()), 1)


def test_the_instances_have_ties():
    descriptions = [i.description for i in _instances()]
    assert any("ties=all" in d for d in descriptions)
    assert any("ties=heavy" in d for d in descriptions), descriptions


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("hessian", ["rank", "balanced"])
def test_gradient_is_infer_batch_subgradient_on_one_query(loss, hessian):
    for inst in _instances():
        n = inst.scores.shape[0]
        obj = HingeObjective(inst.labels.astype(int), loss=loss, hessian=hessian)
        expected = _expected(inst.scores, inst.labels, np.zeros(n, int), loss)
        g, h = obj(inst.scores)
        np.testing.assert_allclose(g, obj.factor * expected, rtol=0, atol=1e-12,
                                   err_msg=inst.description)
        np.testing.assert_allclose(obj.gradient(inst.scores), expected, rtol=0, atol=1e-15)
        assert np.all(np.isfinite(h)) and np.all(h > 0), inst.description


@pytest.mark.parametrize("loss", LOSSES)
def test_gradient_is_infer_batch_subgradient_on_several_queries(loss):
    rng = np.random.default_rng(3)
    instances = _instances()
    for k in range(0, len(instances), 5):
        group = instances[k:k + 5]
        scores = np.concatenate([i.scores for i in group])
        labels = np.concatenate([i.labels for i in group])
        qid = np.concatenate([np.full(i.scores.shape[0], 10 - j) for j, i in enumerate(group)])
        # a query without relevant samples, left out of the mean; queries interleaved
        scores, labels = np.append(scores, [0.0, 0.0, 1.0]), np.append(labels, [False] * 3)
        qid = np.append(qid, [99] * 3)
        perm = rng.permutation(scores.shape[0])
        scores, labels, qid = scores[perm], labels[perm], qid[perm]
        obj = HingeObjective(labels.astype(int), qid, loss=loss)
        np.testing.assert_allclose(obj.gradient(scores), _expected(scores, labels, qid, loss),
                                   rtol=0, atol=1e-15)
        assert np.all(obj.hessian(scores) > 0)


def test_all_equal_scores_rank_every_negative_first():
    g, h = HingeObjective(np.array([1, 0, 1, 0, 0])).grad_hess(np.zeros(5))
    np.testing.assert_allclose(g, [-1, 2 / 3, -1, 2 / 3, 2 / 3])
    # rank hessian: |g| + 0.01 * (1/P, 1/N)
    np.testing.assert_allclose(h, np.abs(g) + 0.01 * np.array([1 / 2, 1 / 3, 1 / 2, 1 / 3, 1 / 3]))


def test_hessians():
    labels = np.array([1, 0, 0, 1, 0, 0, 0, 0, 0, 1, 1])
    qid = np.array([0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3])
    scores = np.linspace(-1, 1, 11)
    balanced = HingeObjective(labels, qid, hessian="balanced").hessian(scores)
    # 1/P per positive, 1/N per negative, over the 3 used queries (0, 1, 3); 1/n_q in query 2
    # (no positive: left out) and in query 3 (no negative)
    np.testing.assert_allclose(balanced, np.array([1, 1 / 2, 1 / 2, 1, 1 / 3, 1 / 3, 1 / 3,
                                                   1 / 2, 1 / 2, 1 / 2, 1 / 2]) / 3)
    obj = HingeObjective(labels, qid, hessian="rank", floor=0.2)
    np.testing.assert_allclose(obj.hessian(scores), np.abs(obj.gradient(scores)) + 0.2 * balanced)
    # the common factor makes the balanced term sum to n where every query has both classes
    both = HingeObjective(labels[:7], qid[:7], hessian="balanced")
    assert both.factor * both.hessian(scores[:7]).sum() == pytest.approx(7)


def test_objective_refuses_bad_options():
    with pytest.raises(ValueError, match="hessian="):
        HingeObjective([1, 0], hessian="unit")
    with pytest.raises(ValueError, match="loss="):
        HingeObjective([1, 0], loss="auc")
    with pytest.raises(ValueError, match="floor="):
        HingeObjective([1, 0], floor=0.0)
    with pytest.raises(ValueError, match="qid must be 1-D"):
        HingeObjective([1, 0, 1], qid=[0, 1])


@pytest.fixture(scope="module")
def digits_in_queries():
    X, y = load_digits(return_X_y=True)
    return X[:600] / 16, y[:600], np.arange(600) // 50


def test_lightgbm_and_xgboost_train_on_the_objective(digits_in_queries):
    X, y, _ = digits_in_queries
    relevant = (y == 3).astype(int)
    before = aprank.infer_batch(np.zeros(600), relevant, np.zeros(600, int)).mean_objective
    booster = lgb.train({"objective": HingeObjective(relevant), "num_leaves": 7,
                         "num_threads": 1, "verbose": -1}, lgb.Dataset(X, relevant), 20)
    after = aprank.infer_batch(booster.predict(X), relevant, np.zeros(600, int)).mean_objective
    assert after < before / 2
    xgb = pytest.importorskip("xgboost", reason="needs xgboost")
    booster = xgb.train({"max_depth": 3, "nthread": 1, "base_score": 0.0},
                        xgb.DMatrix(X, relevant), 20, obj=HingeObjective(relevant))
    scores = booster.predict(xgb.DMatrix(X))
    assert aprank.infer_batch(scores, relevant, np.zeros(600, int)).mean_objective < before / 2


@pytest.mark.parametrize("cls, loss", [(APBoostRanker, "ap"), (NDCGBoostRanker, "ndcg")])
def test_the_ranker_is_lightgbm_on_the_objective(cls, loss, digits_in_queries):
    X, y, qid = digits_in_queries
    est = cls(n_estimators=15, num_leaves=7, hessian="balanced").fit(X, y == 8, qid=qid)
    relevant = (y == 8).astype(int)
    objective = HingeObjective(relevant, qid, loss=loss, hessian="balanced")
    booster = lgb.train({**est._lgb_params(objective), "seed": est._lgb_params(None)["seed"]},
                        lgb.Dataset(X, relevant.astype(float)), 15)
    np.testing.assert_array_equal(est.booster_.predict(X, raw_score=True),
                                  booster.predict(X, raw_score=True))
    metric = average_precision if loss == "ap" else ndcg
    assert est.score(X, y == 8, qid=qid) == pytest.approx(
        metric(relevant, est.decision_function(X), qid=qid, empty="skip"))
    assert est.score(X, y == 8, qid=qid) > 0.9


# scikit-learn's checks fit on string labels, whose relevant class the estimators say
@pytest.mark.filterwarnings("ignore::aprank.learn.RelevantClassWarning")
@parametrize_with_checks([APBoostRanker(n_estimators=10), NDCGBoostRanker(n_estimators=10)])
def test_sklearn_conventions(estimator, check):
    # binary classifiers whose predict marks decision_function above 0; no sample_weight, so
    # the weight checks do not apply
    check(estimator)


def test_pickle_round_trip(digits_in_queries):
    X, y, qid = digits_in_queries
    est = APBoostRanker(n_estimators=10, num_leaves=7).fit(X, y == 5, qid=qid)
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.decision_function(X), est.decision_function(X))
    assert again.threshold_ == est.threshold_


def test_predict_marks_the_break_even_point(digits_in_queries):
    X, y, _ = digits_in_queries
    est = APBoostRanker(n_estimators=10, num_leaves=7).fit(X, y == 5)
    # as many training samples above the threshold as there are positives (no ties there)
    assert np.count_nonzero(est.predict(X)) == np.count_nonzero(y == 5)
    assert set(np.unique(est.predict(X))) <= {False, True}


def test_qid_reaches_fit_and_score_in_a_routed_search(digits_in_queries):
    X, y, qid = digits_in_queries
    relevant = y == 3
    grid = {"num_leaves": [3, 7]}
    with sklearn.config_context(enable_metadata_routing=True):
        est = APBoostRanker(n_estimators=8).set_fit_request(qid=True).set_score_request(qid=True)
        search = GridSearchCV(est, grid, cv=GroupKFold(3), error_score="raise")
        with warnings.catch_warnings():
            warnings.simplefilter("error", OneQueryWarning)   # score got qid
            search.fit(X, relevant, groups=qid, qid=qid)
    # split 0 of the first candidate, by hand with qid
    train, test = next(GroupKFold(3).split(X, relevant, qid))
    by_hand = APBoostRanker(n_estimators=8, num_leaves=3).fit(X[train], relevant[train],
                                                              qid=qid[train])
    assert search.cv_results_["split0_test_score"][0] == pytest.approx(
        by_hand.score(X[test], relevant[test], qid=qid[test]), abs=1e-12)
    one_query = APBoostRanker(n_estimators=8, num_leaves=3).fit(X[train], relevant[train])
    assert not np.array_equal(one_query.decision_function(X), by_hand.decision_function(X))


def test_empty_queries_are_skipped_and_said(digits_in_queries):
    X, y, qid = digits_in_queries
    relevant = (y == 3) & (qid != 0)
    with pytest.warns(EmptyQueryWarning, match="1 of 12 training queries") as fitted:
        est = APBoostRanker(n_estimators=5).fit(X, relevant, qid=qid)
    assert est.n_skipped_queries_ == 1
    # score leaves query 0 out of the mean, and says so, naming it
    per_query = [average_precision(relevant[qid == q], est.decision_function(X[qid == q]))
                 for q in range(1, 12)]
    with pytest.warns(EmptyQueryWarning, match=r"left out 1 of 12 queries .*\(0\)") as scored:
        assert est.score(X, relevant, qid=qid) == pytest.approx(np.mean(per_query))
    # the rankers take no empty=: their warnings do not offer it, as the rank SVMs' do
    said = [str(w.message) for w in [*fitted, *scored]]
    assert said and not [m for m in said if "empty='error'" in m], said


def test_score_without_qid_after_a_fit_on_queries_says_so(digits_in_queries):
    X, y, qid = digits_in_queries
    est = APBoostRanker(n_estimators=5).fit(X, y == 3, qid=qid)
    with pytest.warns(OneQueryWarning, match="got no qid"):
        est.score(X, y == 3)


def test_clear_errors(digits_in_queries):
    X, y, qid = digits_in_queries
    est = APBoostRanker(n_estimators=3)
    with pytest.raises(TypeError, match="sample_weight.*no per-sample weights"):
        est.fit(X, y == 3, sample_weight=np.ones(600))
    with pytest.raises(TypeError, match="'groups'; use qid="):
        est.fit(X, y == 3, groups=qid)
    with pytest.raises(ValueError, match="exactly 2 classes.*got 10"):
        est.fit(X, y)
    with pytest.raises(ValueError, match="qid must be 1-D with one entry per sample"):
        est.fit(X, y == 3, qid=qid[:10])
    with pytest.raises(InvalidParameterError, match="hessian"):
        APBoostRanker(hessian="unit").fit(X, y == 3)
    assert not hasattr(est, "n_features_in_")     # a failed fit leaves nothing behind
    est.fit(X, y == 3)
    with pytest.raises(ValueError, match="labels that APBoostRanker was not fitted on"):
        est.score(X, y)
    with pytest.raises(TypeError):
        est.score(X, y == 3, sample_weight=np.ones(600))


def test_string_labels_say_which_class_is_ranked_relevant(digits_in_queries):
    X, y, qid = digits_in_queries
    with pytest.warns(RelevantClassWarning, match=r"ranks 'miss', the second"):
        APBoostRanker(n_estimators=3).fit(X, np.where(y == 3, "hit", "miss"), qid=qid)
