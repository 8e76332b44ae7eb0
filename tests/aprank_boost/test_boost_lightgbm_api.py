"""aprank.boost at lightgbm.LGBMRanker's API: eval sets reporting the ranker's own metric,
early stopping on a validation query set with ``best_iteration_`` used by ``predict``,
``evals_result_``, ``best_score_``, ``feature_importances_``, LightGBM's other parameters
passed through, and ``n_jobs`` meaning LightGBM's threads."""
import pickle

import joblib
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_digits

from aprank.metrics import average_precision, ndcg

lgb = pytest.importorskip("lightgbm", reason='needs lightgbm (pip install "aprank[boost]")')
#: an optional package the test extra leaves out: .ci/run's extras lane runs this file
pytestmark = pytest.mark.extras
from aprank.boost import APBoostRanker, NDCGBoostRanker  # noqa: E402

RANKERS = [(APBoostRanker, "average_precision",
            lambda r, s, qid: average_precision(r, s, qid=qid, empty="skip")),
           (NDCGBoostRanker, "ndcg", lambda r, s, qid: ndcg(r.astype(float), s, qid=qid,
                                                            empty="skip"))]


@pytest.fixture(scope="module")
def split():
    """Digits 3 against the rest in queries of 40: 20 training queries, 10 validation."""
    X, y = load_digits(return_X_y=True)
    X, relevant, qid = X[:1200] / 16, y[:1200] == 3, np.arange(1200) // 40
    train, valid = qid < 20, qid >= 20
    return (X[train], relevant[train], qid[train]), (X[valid], relevant[valid], qid[valid])


def _early_stopped(cls, split, rounds=300):
    (X, y, qid), (Xv, yv, qv) = split
    return cls(n_estimators=rounds, num_leaves=7, n_jobs=1).fit(
        X, y, qid=qid, eval_set=[(Xv, yv)], eval_qid=[qv], eval_names=["valid"],
        callbacks=[lgb.early_stopping(10, verbose=False)])


@pytest.mark.parametrize("cls, name, metric", RANKERS)
def test_early_stopping_stops_before_the_last_round_and_predict_uses_best_iteration(
        cls, name, metric, split):
    est = _early_stopped(cls, split)
    _, (Xv, yv, qv) = split
    rounds = est.booster_.current_iteration()
    # stopped early: ten rounds past the best, well short of n_estimators
    assert 0 < est.best_iteration_ == rounds - 10 < est.n_estimators
    assert len(est.evals_result_["valid"][name]) == rounds
    best = est.booster_.predict(Xv, raw_score=True, num_iteration=est.best_iteration_)
    last = est.booster_.predict(Xv, raw_score=True, num_iteration=rounds)
    np.testing.assert_array_equal(est.decision_function(Xv), best - est.threshold_)
    assert not np.array_equal(est.decision_function(Xv), last - est.threshold_)
    np.testing.assert_array_equal(est.predict(Xv), best - est.threshold_ > 0)
    # the validation score is the best round's, as early stopping recorded it
    assert est.score(Xv, yv, qid=qv) == est.best_score_["valid"][name]
    assert est.best_score_["valid"][name] == est.evals_result_["valid"][name][
        est.best_iteration_ - 1] == max(est.evals_result_["valid"][name])


@pytest.mark.parametrize("cls, name, metric", RANKERS)
def test_eval_sets_report_the_rankers_metric_every_round(cls, name, metric, split):
    (X, y, qid), (Xv, yv, qv) = split
    est = cls(n_estimators=6, num_leaves=7, n_jobs=1).fit(
        X, y, qid=qid, eval_set=[(X, y), (Xv, yv)], eval_qid=[None, qv])
    assert set(est.evals_result_) == {"training", "valid_1"}
    assert [len(v[name]) for v in est.evals_result_.values()] == [6, 6]
    for k in (1, 4, 6):
        valid = est.booster_.predict(Xv, raw_score=True, num_iteration=k)
        assert est.evals_result_["valid_1"][name][k - 1] == metric(yv, valid, qv)
        # the training set itself is evaluated on the training queries
        train = est.booster_.predict(X, raw_score=True, num_iteration=k)
        assert est.evals_result_["training"][name][k - 1] == metric(y, train, qid)
    assert est.best_iteration_ == 0                  # no early stopping: every tree
    assert est.best_score_["valid_1"][name] == est.evals_result_["valid_1"][name][-1]
    assert est.score(Xv, yv, qid=qv) == est.best_score_["valid_1"][name]


def test_threshold_is_the_break_even_point_of_the_best_round(split):
    (X, y, qid), _ = split
    est = _early_stopped(APBoostRanker, split)
    raw = est.booster_.predict(X, raw_score=True, num_iteration=est.best_iteration_)
    # midway between the P-th and the (P+1)-th highest training score, P the positives
    ranked = np.sort(raw)[::-1]
    P = np.count_nonzero(y)
    assert est.threshold_ == 0.5 * (ranked[P - 1] + ranked[P])
    assert np.count_nonzero(est.predict(X)) == np.count_nonzero(y)


def test_an_early_stopped_ranker_pickles(split):
    _, (Xv, _, _) = split
    est = _early_stopped(APBoostRanker, split)
    again = pickle.loads(pickle.dumps(est))
    assert again.best_iteration_ == est.best_iteration_
    np.testing.assert_array_equal(again.decision_function(Xv), est.decision_function(Xv))
    np.testing.assert_array_equal(again.feature_importances_, est.feature_importances_)


def test_feature_importances_count_the_best_rounds_splits_or_gain(split):
    est = _early_stopped(APBoostRanker, split)
    splits = est.feature_importances_
    assert splits.shape == (64,) and splits.sum() > 0
    np.testing.assert_array_equal(splits, est.booster_.feature_importance(
        "split", iteration=est.best_iteration_))
    assert splits.sum() < est.booster_.feature_importance("split", iteration=-1).sum()
    est.set_params(importance_type="gain")
    np.testing.assert_allclose(est.feature_importances_, est.booster_.feature_importance(
        "gain", iteration=est.best_iteration_))


def test_unfitted_ranker_has_no_feature_importances():
    assert not hasattr(APBoostRanker(), "feature_importances_")


def test_lightgbms_other_parameters_pass_through(split):
    (X, y, qid), _ = split
    # no split gains 1e9: one leaf per tree, so no feature is used
    est = APBoostRanker(n_estimators=3, min_gain_to_split=1e9, n_jobs=1).fit(X, y, qid=qid)
    assert est.feature_importances_.sum() == 0
    assert APBoostRanker(n_estimators=3, n_jobs=1).fit(X, y, qid=qid).feature_importances_.sum()
    assert est.get_params()["min_gain_to_split"] == 1e9
    assert "min_gain_to_split=1000000000.0" in repr(est)
    copy = clone(est)
    assert copy.get_params() == est.get_params()
    copy.set_params(min_gain_to_split=0.0, num_leaves=7)
    assert copy.get_params()["min_gain_to_split"] == 0.0
    assert est.get_params()["min_gain_to_split"] == 1e9     # the clone shares nothing
    assert copy.fit(X, y, qid=qid).feature_importances_.sum() > 0


def test_an_objective_keyword_is_refused(split):
    (X, y, _), _ = split
    est = APBoostRanker(n_estimators=3, objective="lambdarank")
    with pytest.raises(ValueError, match="objective=: its objective is the AP hinge"):
        est.fit(X, y)
    assert not hasattr(est, "booster_")


def test_n_jobs_means_lightgbms_threads():
    threads = {n: APBoostRanker(n_jobs=n)._lgb_params(None)["num_threads"]
               for n in (None, 0, 1, 3, -1, -2)}
    assert threads == {None: joblib.cpu_count(only_physical_cores=True), 0: 0, 1: 1, 3: 3,
                       -1: joblib.cpu_count(), -2: max(joblib.cpu_count() - 1, 1)}


def test_eval_sets_are_checked_before_training(split):
    (X, y, qid), (Xv, yv, qv) = split
    est = APBoostRanker(n_estimators=3, n_jobs=1)
    with pytest.raises(TypeError, match="'eval_group'; use eval_qid="):
        est.fit(X, y, qid=qid, eval_set=[(Xv, yv)], eval_group=[qv])
    with pytest.raises(ValueError, match="eval_qid has 2 entries for the 1 sets"):
        est.fit(X, y, eval_set=[(Xv, yv)], eval_qid=[qv, qv])
    with pytest.raises(ValueError, match="eval_names has 2 entries"):
        est.fit(X, y, eval_set=[(Xv, yv)], eval_names=["a", "b"])
    with pytest.raises(ValueError, match="give eval_set"):
        est.fit(X, y, eval_qid=[qv])
    with pytest.raises(ValueError, match="not fitted on: \\[7\\]"):
        est.fit(X, y, eval_set=[(Xv, np.where(yv, 7, 0))])
    with pytest.raises(ValueError, match=r"eval_set\[0\] has no relevant sample"):
        est.fit(X, y, eval_set=[(Xv, np.zeros_like(yv))])
    with pytest.raises(ValueError, match="features"):
        est.fit(X, y, eval_set=[(Xv[:, :10], yv)])
    assert not hasattr(est, "n_features_in_")     # a failed fit leaves nothing behind
    # a single (X, y) pair is one eval set, as LightGBM takes it
    est.fit(X, y, qid=qid, eval_set=(Xv, yv), eval_qid=[qv])
    assert list(est.evals_result_) == ["valid_0"]
