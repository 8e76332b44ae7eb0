"""Inference: input checks, the registry, cross-checks, and warnings before long calls.

Each test names what it pins; every one of them failed (or raised) on the code before the fix.
"""
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest

import aprank
from aprank import validation
from aprank.inference import _registry
from aprank.losses import PrecisionAtK

RANKING = ("qs", "search", "select", "yue", "brute")
BIG = np.finfo(np.float64).max


def exact_algorithms(loss):
    return [a.name for a in aprank.algorithms(loss=loss, exact=True)]


# ---------------------------------------------------------------- extreme scores
@pytest.mark.parametrize("loss", ["ap", "ndcg", "zero-one"])
def test_opposite_extremes_give_the_exact_zero_objective(loss):
    for algorithm in exact_algorithms(loss):
        r = aprank.infer([1e308, -1e308], [1, 0], loss=loss, algorithm=algorithm)
        assert r.objective == 0.0 and r.loss == 0.0, (loss, algorithm, r)


@pytest.mark.parametrize("loss", ["ap", "ndcg"])
def test_every_exact_algorithm_agrees_with_the_oracle_across_the_float_range(loss):
    rng = np.random.default_rng(13)
    for exponent in (-1074, -1022, -300, 0, 300, 1000, 1020, 1022, 1023):
        for trial in range(15):
            n = int(rng.integers(2, 10))
            labels = rng.random(n) < 0.5
            labels[0], labels[-1] = True, False
            base = np.round(rng.standard_normal(n), int(rng.integers(0, 3)))
            with np.errstate(over="ignore"):
                scores = np.clip(np.ldexp(base, exponent), -BIG, BIG)
            results = {}
            for algorithm in exact_algorithms(loss):
                try:
                    results[algorithm] = aprank.infer(scores, labels, loss=loss,
                                                      algorithm=algorithm)
                except ValueError as err:
                    results[algorithm] = str(err)
            ref = results["brute"]
            for algorithm, r in results.items():
                if isinstance(ref, str):      # refused: every algorithm refuses, for overflow
                    assert isinstance(r, str) and "overflow" in r, (algorithm, scores, r)
                    continue
                assert not isinstance(r, str), (algorithm, scores, labels, r)
                assert np.isfinite(r.objective) and r.objective >= 0
                assert abs(r.objective - ref.objective) <= 1e-12 * max(1.0, abs(ref.objective))
                if np.unique(scores).size == n:
                    np.testing.assert_array_equal(r.ranks, ref.ranks)


def test_an_objective_beyond_the_float_range_is_refused_not_inf():
    # the positive at -1e308 below the negative at 1e308: the violation is 1 + 4e308
    for loss in ("ap", "ndcg"):
        for algorithm in exact_algorithms(loss):
            with pytest.raises(ValueError, match="overflow"):
                aprank.infer([-1e308, 1e308], [1, 0], loss=loss, algorithm=algorithm)
    # the 0-1 objective is a weighted mean of hinge terms 1 + |s|: always representable
    for algorithm in exact_algorithms("zero-one"):
        r = aprank.infer([-1e308, 1e308], [1, 0], loss="zero-one", algorithm=algorithm)
        assert r.objective == pytest.approx(1e308, rel=1e-15)
        r = aprank.infer([-BIG, BIG, BIG, -1.0], [1, 0, 0, 1], loss="zero-one",
                         algorithm=algorithm)
        assert r.objective == pytest.approx(0.75 * BIG, rel=1e-15)    # (3 (1 + BIG) + 2) / 4


def test_large_queries_near_the_float_limit_agree_between_exact_algorithms():
    # too large for the oracle: the compiled algorithms must agree with each other, ranks too
    rng = np.random.default_rng(1)
    s = np.ldexp(rng.standard_normal(3000), 1022)
    y = rng.random(3000) < 0.3
    for loss in ("ap", "ndcg"):
        results = [aprank.infer(s, y, loss=loss, algorithm=a)
                   for a in exact_algorithms(loss) if a != "brute"]
        for r in results:
            assert np.isfinite(r.objective) and r.objective > 0
            assert r.objective == pytest.approx(results[0].objective, rel=1e-12)
            np.testing.assert_array_equal(r.ranks, results[0].ranks)


def test_batches_scale_each_query_by_itself():
    s = np.array([1e308, -1e308, 0.3, 0.1, 2e-310, 1e-310])
    y = np.array([1, 0, 0, 1, 1, 0])
    qid = np.array([0, 0, 1, 1, 2, 2])
    for algorithm in ("qs", "search", "select", "yue", "brute"):
        r = aprank.infer_batch(s, y, qid, algorithm=algorithm)
        for q, idx in enumerate((slice(0, 2), slice(2, 4), slice(4, 6))):
            one = aprank.infer(s[idx], y[idx], algorithm=algorithm)
            assert r.objective[q] == one.objective
            np.testing.assert_array_equal(r.ranks[idx], one.ranks)


def test_a_tiny_score_that_scaling_would_round_is_refused_with_a_reason():
    with pytest.raises(ValueError, match="power-of-two scaling"):
        aprank.infer([1.5e308, 3e-310, 5e-324, -1.0], [1, 0, 1, 0], algorithm="qs")


def test_other_kinds_refuse_overflowing_scores_instead_of_returning_inf():
    big = [1e308, -1e308, 1e308]
    with pytest.raises(ValueError, match="too large for float64"):
        aprank.infer(big, [1, 0, 0], loss=PrecisionAtK(1))
    with pytest.raises(ValueError, match="too large for float64"):
        aprank.infer([-1e308, 1e308, 1e308], [1, 0, 0], loss="pairwise-zero-one",
                     edges=np.array([[0, 1]]), edge_scores=[-1.0])
    with pytest.raises(ValueError, match="too large for float64"):
        aprank.inference.max_marginals(big, np.array([[0, 1]]), edge_scores=-1e308)
    for loss in ("latent-ap", "latent-ssvm"):
        with pytest.raises(ValueError, match="too large for float64"):
            aprank.infer([-1e308, 1e308, 1e308, 0.0], [1, 0, 0, 1], loss=loss, bags=[0, 1, 2, 0])
    # large but safe scores still work and give finite objectives
    r = aprank.infer([1e300, -1e300, 1e300], [1, 0, 0], loss=PrecisionAtK(1))
    assert np.isfinite(r.objective) and r.objective >= 0


# ---------------------------------------------------------------- the registry
def _one_rank(pos, neg, loss):
    return np.full(neg.size, pos.size + 1)


@pytest.mark.parametrize("name", [None, "", 3, "two words", "a|b", "x\n", " qs", ("q",)])
def test_bad_names_are_refused_and_leave_the_table_usable(name):
    before = aprank.algorithms().names()
    with pytest.raises((ValueError, TypeError)):
        aprank.register(name, _one_rank, losses="ap", exact=True)
    assert aprank.algorithms().names() == before
    str(aprank.algorithms())
    aprank.algorithms().to_markdown()


@pytest.mark.parametrize("field, value", [("complexity", None), ("reference", 3),
                                          ("exact", "no")])
def test_entries_that_would_break_the_table_are_refused(field, value):
    before = aprank.algorithms().names()
    kwargs = {"exact": True, field: value}
    with pytest.raises(TypeError, match=field):
        aprank.register("user-bad-field", _one_rank, losses="ap", **kwargs)
    assert aprank.algorithms().names() == before
    assert "qs" in str(aprank.algorithms())


def test_the_cli_lists_algorithms_after_a_refused_registration():
    code = ("import aprank, numpy as np\n"
            "try:\n    aprank.register(None, lambda p, n, l: n, losses='ap', exact=True)\n"
            "except ValueError:\n    pass\n"
            "import aprank.__main__ as m\nm.main(['algorithms'])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "qs" in out.stdout


@pytest.mark.parametrize("name", ["qs", "brute", "zero-one", "cstar", "graphcut", "latent-ap"])
def test_user_algorithms_take_no_built_in_name_of_any_kind(name):
    with pytest.raises(ValueError, match="built-in"):
        aprank.register(name, _one_rank, losses="ap", exact=True, replace=True)
    assert all(a.builtin for a in aprank.algorithms() if a.name == name)


def test_built_ins_are_never_replaced_or_removed():
    with pytest.raises(ValueError):
        aprank.register("qs", _one_rank, losses="ap", exact=True, replace=True)
    with pytest.raises(ValueError, match="built in"):
        aprank.unregister("qs")
    assert aprank.infer([1.0, 0.0], [1, 0]).algorithm == "qs"


def test_a_user_algorithm_can_be_replaced_and_removed_by_its_own_name():
    aprank.register("user-last", _one_rank, losses=["ap", "ap"], exact=False)
    try:
        assert aprank.inference.get_algorithm("user-last").losses == ("ap",)
        aprank.register("user-last", _one_rank, losses="ap", exact=False, replace=True)
        assert pickle.loads(pickle.dumps(aprank.inference.get_algorithm("user-last"))).name == "user-last"
    finally:
        aprank.unregister("user-last")
    assert "user-last" not in aprank.algorithms().names()


# ---------------------------------------------------------------- masks and qid
@pytest.mark.parametrize("which", ["scores", "labels", "qid"])
def test_masked_entries_are_refused(which):
    args = {"scores": np.array([0.5, 0.2, 0.9, 0.1]), "labels": np.array([1, 0, 1, 0]),
            "qid": np.array([0, 0, 1, 1])}
    args[which] = np.ma.array(args[which], mask=[0, 1, 0, 0])
    with pytest.raises(ValueError, match="masked"):
        aprank.infer_batch(args["scores"], args["labels"], args["qid"])
    if which != "qid":
        with pytest.raises(ValueError, match="masked"):
            aprank.infer(args["scores"][:2], args["labels"][:2])


def test_a_masked_array_with_nothing_masked_is_its_data():
    s = np.ma.array([0.5, 0.2, 0.9], mask=False)
    assert aprank.infer(s, [1, 0, 0]).objective == aprank.infer(s.data, [1, 0, 0]).objective


@pytest.mark.parametrize("qid", [[0.0, np.nan, np.nan, 1.0],
                                 np.array([0, float("nan"), float("nan"), 1], dtype=object)])
def test_nan_query_ids_are_refused(qid):
    with pytest.raises(ValueError, match="NaN"):
        aprank.infer_batch([0.3, 0.2, 0.1, 0.4], [1, 0, 1, 1], qid)


def test_mixed_type_query_ids_are_a_value_error_that_says_so():
    qid = np.array([1, "a", 1, "a"], dtype=object)
    with pytest.raises(ValueError, match="mixes ids of types"):
        aprank.infer_batch([0.3, 0.2, 0.1, 0.4], [1, 0, 1, 0], qid)


# ---------------------------------------------------------------- int64 > 2^53
def test_int64_scores_that_float64_rounds_warn():
    s = np.array([2 ** 60 + 1, 2 ** 60, 0], dtype=np.int64)
    with pytest.warns(validation.PrecisionWarning, match="beyond 2\\^53"):
        aprank.infer(s, [0, 1, 0])
    for exact in (np.array([2 ** 60, -2 ** 63, 3], np.int64), np.array([2 ** 53, 1], np.int64),
                  np.array([2 ** 63], np.uint64)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            validation.as_scores(exact)
    with pytest.warns(validation.PrecisionWarning):
        validation.as_scores(np.array([2 ** 64 - 1], np.uint64))
    with pytest.warns(validation.PrecisionWarning):
        validation.as_scores(np.array([2 ** 63 - 1], np.int64))


# ---------------------------------------------------------------- bool bytes
@pytest.mark.parametrize("loss", ["ap", "ndcg", "zero-one"])
def test_bool_labels_with_other_bytes_are_read_by_truth_value(loss):
    raw = np.array([1, 0, 2, 0, 0, 255, 0, 1], np.uint8)
    odd = raw.view(bool)
    clean = raw != 0
    s = np.array([0.3, 0.9, -0.2, 0.5, 0.1, -0.7, 0.4, -0.1])
    for algorithm in exact_algorithms(loss):
        r = aprank.infer(s, odd, loss=loss, algorithm=algorithm)
        want = aprank.infer(s, clean, loss=loss, algorithm=algorithm)
        assert r.objective == want.objective and r.loss == want.loss
        np.testing.assert_array_equal(r.ranks, want.ranks)
        assert r.ranks.min() >= 1
    np.testing.assert_array_equal(raw, [1, 0, 2, 0, 0, 255, 0, 1])     # untouched
    assert validation.as_labels(odd, 8).view(np.uint8).max() == 1


# ---------------------------------------------------------------- cross-checks
def test_a_loss_only_the_oracle_serves_is_skipped_beyond_its_size_not_an_index_error():
    from aprank.losses import RankingLoss, register_loss, unregister_loss

    class Bogus(RankingLoss):
        name = "bogus"

        def from_pattern(self, neg_above, P, N):
            return np.asarray(neg_above).sum(axis=-1) / (P * N)

    register_loss(Bogus())
    try:
        report = aprank.crosscheck(("bogus",), n_trials=8, max_n=60)
        assert report.ok and report.skipped > 0
        assert "skipped" in str(report)
    finally:
        unregister_loss("bogus")
    with pytest.raises(ValueError, match="unknown loss"):
        aprank.crosscheck(("no-such-loss",), n_trials=1)


def test_a_failing_user_algorithm_is_a_disagreement_not_an_abort():
    aprank.register("user-wrong-shape", lambda p, n, l: np.ones(n.size + 1, int), losses="ap",
                    exact=True)
    try:
        report = aprank.crosscheck("ap", n_trials=4, max_n=50)
    finally:
        aprank.unregister("user-wrong-shape")
    bad = [d for d in report.disagreements if d.algorithm == "user-wrong-shape"]
    assert len(bad) == 4 and all("raised ValueError" in d.what for d in bad)
    assert all(d.algorithm == "user-wrong-shape" for d in report.disagreements)


# ---------------------------------------------------------------- long calls
def test_the_cost_model_flags_search_at_half_a_million_and_names_qs():
    for name in ("search", "select", "yue"):
        found = _registry.faster_alternative(_registry.get(name, "ranking"), "ap", 500_000,
                                             500_000)
        assert found is not None and found[0].name == "qs" and found[2] > 100 * found[1]
    found = _registry.faster_alternative(_registry.get("ndcg-greedy", "ranking"), "ndcg",
                                         500_000, 500_000)
    assert found[0].name == "qs"


@pytest.mark.parametrize("P, N", [(10, 10), (1000, 100_000), (100, 10_000_000),
                                  (500_000, 500_000)])
def test_the_default_and_normal_calls_are_not_flagged(P, N):
    assert _registry.faster_alternative(_registry.get("qs", "ranking"), "ap", P, N) is None
    if P * P < 1e8:
        assert _registry.faster_alternative(_registry.get("search", "ranking"), "ap", P, N) is None


def test_a_long_call_warns_once_per_problem(monkeypatch):
    monkeypatch.setattr(_registry, "SLOW_CALL_UNITS", 1e5)
    rng = np.random.default_rng(0)
    s, y = rng.standard_normal(10_000), rng.random(10_000) < 0.5     # search: ~200 x qs
    with pytest.warns(_registry.SlowAlgorithmWarning, match="'qs'"):
        aprank.infer(s, y, algorithm="search")
    problem = aprank.inference.RankingProblem(y)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            problem.solve(s, "yue")
        problem.solve(s, "qs")
    assert [type(w.message) for w in caught] == [_registry.SlowAlgorithmWarning]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        aprank.infer(s, y)                  # qs, the default: never flagged
