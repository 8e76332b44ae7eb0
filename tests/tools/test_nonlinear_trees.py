"""The hinge objectives of experiments.nonlinear_trees against infer_batch, and the tree fits'
protocol."""
import numpy as np
import pytest

import aprank

# the objective lives in aprank.boost, whose extra is LightGBM: without it nothing here imports
pytest.importorskip("lightgbm", reason="needs lightgbm (the boost extra)")
#: an optional package the test extra leaves out: .ci/run's extras lane runs this file
pytestmark = pytest.mark.extras

from experiments.nonlinear_trees import (  # noqa: E402
    HingeObjective,
    lightgbm_fit_predict,
    stratified_queries,
    xgboost_fit_predict,
)


def _instances():
    """(scores, graded labels 0-3, qid): ties within and across positives and negatives,
    several queries, a query without positives and one without negatives."""
    rng = np.random.default_rng(7)
    out = []
    # one query, every score equal
    out.append((np.zeros(9), np.array([1, 0, 0, 2, 0, 3, 0, 0, 1]), np.zeros(9, int)))
    # ties across classes: scores from {-1, 0, 1}, three queries, not contiguous
    n = 40
    labels = rng.integers(0, 4, n)
    qid = rng.integers(0, 3, n)
    out.append((rng.integers(-1, 2, n).astype(float), labels, qid))
    # a query without positives (4) and one without negatives (5); continuous scores
    labels = np.concatenate([labels, [0, 0, 0, 2, 3]])
    qid = np.concatenate([qid, [4, 4, 4, 5, 5]])
    scores = np.round(rng.normal(size=labels.shape[0]), 1)  # rounding leaves a few ties
    out.append((scores, labels, qid))
    return out


def _expected(scores, relevant, qid, loss):
    r = aprank.infer_batch(scores, relevant, qid, loss=loss, empty="skip")
    return (r.coef - r.truth_coef) / r.used.sum()


@pytest.mark.parametrize("loss", ["ap", "ndcg"])
@pytest.mark.parametrize("level", [1, 2])
@pytest.mark.parametrize("case", range(3))
def test_gradient_is_infer_batch_subgradient(loss, level, case):
    scores, labels, qid = _instances()[case]
    relevant = (labels >= level).astype(int)
    expected = _expected(scores, relevant, qid, loss)
    for hessian in ("unit", "balanced", "rank"):
        obj = HingeObjective(labels, qid, loss=loss, hessian=hessian, positive_level=level)
        np.testing.assert_allclose(obj.gradient(scores), expected, rtol=0, atol=1e-15)
        g, h = obj(scores)
        np.testing.assert_allclose(g, obj.factor * expected, rtol=0, atol=1e-12)
        assert np.all(h > 0)


def test_all_equal_scores_subgradient_values():
    # every negative above every positive (ties go against the positives): -2/P, +2/N
    obj = HingeObjective(np.array([1, 0, 1, 0, 0]))
    np.testing.assert_allclose(obj.gradient(np.zeros(5)), [-1, 2 / 3, -1, 2 / 3, 2 / 3])


def test_rank_hessian_is_the_interleaving():
    # interleaving ranks of the most violated ranking: a positive's is 1 + the negatives above
    # it, a negative's 1 + the positives above it. |gradient|: 2/P times the fraction of
    # negatives above a positive, 2/N times the fraction of positives below a negative; plus
    # the floor's share of the balanced hessian
    scores, labels, _ = _instances()[1]
    for level in (1, 2):
        pos = labels >= level
        P, N = int(pos.sum()), int((~pos).sum())
        r = aprank.infer_batch(scores, pos, np.zeros(len(pos), int))
        expected = np.where(pos, 2 / P * (r.ranks - 1) / N, 2 / N * (P - r.ranks + 1) / P)
        expected += 0.2 * np.where(pos, 1 / P, 1 / N)
        h = HingeObjective(labels, hessian="rank", floor=0.2, positive_level=level).hessian(scores)
        np.testing.assert_allclose(h, expected, rtol=1e-12, atol=0)


def test_stochastic_queries_are_infer_batch_on_the_drawn_partition():
    scores, labels, _ = _instances()[2]
    relevant = labels >= 1
    obj = HingeObjective(labels, queries=8, seed=3)
    rng = np.random.default_rng(3)
    for _ in range(2):  # a fresh partition each round
        qid = stratified_queries(relevant, 8, rng)
        assert np.bincount(qid[relevant]).min() >= 1
        np.testing.assert_allclose(obj.gradient(scores), _expected(scores, relevant, qid, "ap"),
                                   rtol=0, atol=1e-15)


def test_smoothed_is_the_mean_subgradient_of_perturbed_scores():
    scores, labels, qid = _instances()[1]
    obj = HingeObjective(labels, qid, smooth=0.5, draws=3, seed=1)
    rng = np.random.default_rng(1)
    expected = np.mean([_expected(scores + 0.5 * rng.standard_normal(scores.shape[0]),
                                  labels >= 1, qid, "ap") for _ in range(3)], axis=0)
    np.testing.assert_allclose(obj.gradient(scores), expected, rtol=0, atol=1e-15)


def test_hessians_positive_and_balanced_scale():
    scores, labels, qid = _instances()[2]
    for options in ({"hessian": "balanced"}, {"hessian": "rank"}, {"mix": 0.5},
                    {"queries": 10}, {"hessian": "unit"}):
        h = HingeObjective(labels, qid if "queries" not in options else None,
                           **options).hessian(scores)
        assert np.all(np.isfinite(h)) and np.all(h > 0), options
    # balanced: 1/P per positive, 1/N per negative, over the used queries (a query without
    # positives, 2, is not used: 1/n_q for its samples)
    labels, qid = np.array([1, 0, 0, 1, 0, 0, 0, 0, 0]), np.array([0, 0, 0, 1, 1, 1, 1, 2, 2])
    h = HingeObjective(labels, qid).hessian(np.zeros(9))
    np.testing.assert_allclose(h, np.array([1, 1 / 2, 1 / 2, 1, 1 / 3, 1 / 3, 1 / 3, 1 / 2, 1 / 2])
                               / 2)


def test_mix_adds_the_balanced_logistic_gradient():
    scores, labels, qid = _instances()[1]
    hinge = HingeObjective(labels, qid)
    mixed = HingeObjective(labels, qid, mix=0.25)
    p = 1 / (1 + np.exp(-scores))  # the scores are small: no overflow
    expected = 0.75 * hinge.gradient(scores) + 0.25 * hinge.hessian(scores) * (p - (labels >= 1))
    np.testing.assert_allclose(mixed.gradient(scores), expected, rtol=0, atol=1e-15)
    # plain: every sample alike, LightGBM's binary gradient once the common factor is applied
    plain = HingeObjective(labels, qid, mix=0.25, logistic="plain")
    g, _ = plain(scores)
    expected = 0.75 * hinge(scores)[0] + 0.25 * (p - (labels >= 1))
    np.testing.assert_allclose(g, expected, rtol=0, atol=1e-12)


def _tiny(ranking):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 4))
    if ranking:
        qid = np.repeat(np.arange(15), 10)
        Y = np.clip(np.round(X[:, :1] + rng.normal(size=(150, 1)) + 1.5), 0, 4).astype(int)
    else:
        qid = None
        Y = (X[:, :2] + 0.5 * rng.normal(size=(150, 2)) > 0.8).astype(int)
    return X, Y, qid, [X[:30], rng.normal(size=(7, 4))]


@pytest.mark.parametrize("ranking", [False, True])
@pytest.mark.parametrize("kind", ["binary", "lambdarank", "hinge", "hinge-queries"])
def test_lightgbm_fit_predict_protocol(kind, ranking):
    pytest.importorskip("lightgbm", reason="needs lightgbm")
    budgets = (2, 5)
    hinge = {"queries": 40} if kind == "hinge-queries" else {}
    fit_predict = lightgbm_fit_predict(kind.split("-")[0], budgets, hinge=hinge)
    X, Y, qid, X_evals = _tiny(ranking)
    level = 2 if ranking else 1
    params = {"num_leaves": 4, "min_child_samples": 5}
    out = fit_predict(params, X, Y, qid, X_evals, 0, level)
    assert sorted(out) == list(budgets)
    for b in budgets:
        assert [s.shape for s in out[b]] == [(Xe.shape[0], Y.shape[1]) for Xe in X_evals]
        assert all(np.all(np.isfinite(s)) for s in out[b])
    assert not np.array_equal(out[2][0], out[5][0])  # each budget its own rounds
    again = fit_predict(params, X, Y, qid, X_evals, 0, level)
    for b in budgets:
        for s, t in zip(out[b], again[b]):
            np.testing.assert_array_equal(s, t)


@pytest.mark.parametrize("ranking", [False, True])
def test_xgboost_fit_predict_protocol(ranking):
    pytest.importorskip("xgboost", reason="needs xgboost")
    budgets = (2, 5)
    X, Y, qid, X_evals = _tiny(ranking)
    out = xgboost_fit_predict(budgets)({"max_leaves": 4}, X, Y, qid, X_evals, 0,
                                       2 if ranking else 1)
    assert sorted(out) == list(budgets)
    for b in budgets:
        assert [s.shape for s in out[b]] == [(Xe.shape[0], Y.shape[1]) for Xe in X_evals]
    assert not np.array_equal(out[2][0], out[5][0])


def test_lightgbm_trains_on_the_hinge():
    lgb = pytest.importorskip("lightgbm", reason="needs lightgbm")
    X, Y, _, _ = _tiny(False)
    y = Y[:, 0]
    obj = HingeObjective(y)
    booster = lgb.train({"objective": obj, "num_leaves": 4, "min_child_samples": 5,
                         "num_threads": 1, "verbose": -1}, lgb.Dataset(X, y.astype(float)), 20)
    before = aprank.infer_batch(np.zeros(150), y, np.zeros(150, int)).mean_objective
    after = aprank.infer_batch(booster.predict(X), y, np.zeros(150, int)).mean_objective
    assert after < before


def test_tree_candidates_fit_in_the_protocol():
    pytest.importorskip("lightgbm", reason="needs lightgbm")
    pytest.importorskip("xgboost", reason="needs xgboost")
    from experiments.nonlinear_trees import HINGE_SETTINGS, tree_candidates

    candidates = tree_candidates(quick=True)
    assert [c.name for c in candidates] == ["LightGBM binary", "LightGBM lambdarank",
                                            "XGBoost rank:map", "LightGBM AP hinge"]
    X, Y, _, X_evals = _tiny(False)
    for c in candidates:
        assert c.family == "trees" and list(c.budgets) == sorted(c.budgets)
        out = c.fit_predict(c.grid[0], X, Y, None, X_evals, 0, 1)
        assert sorted(out) == list(c.budgets)
        assert [s.shape for s in out[c.budgets[-1]]] == [(len(Xe), 2) for Xe in X_evals]
    assert all(f"{k}={v}" in candidates[-1].settings for k, v in HINGE_SETTINGS.items())


def test_xgboost_trains_on_the_hinge():
    xgb = pytest.importorskip("xgboost", reason="needs xgboost")
    X, Y, _, _ = _tiny(False)
    y = Y[:, 1]
    booster = xgb.train({"max_depth": 2, "nthread": 1, "base_score": 0.0},
                        xgb.DMatrix(X, y.astype(float)), 20, obj=HingeObjective(y, hessian="rank"))
    before = aprank.infer_batch(np.zeros(150), y, np.zeros(150, int)).mean_objective
    scores = booster.predict(xgb.DMatrix(X))
    assert aprank.infer_batch(scores, y, np.zeros(150, int)).mean_objective < before
