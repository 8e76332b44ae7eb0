"""Scores at the ends of the float64 range: every exact algorithm agrees with the oracle from
subnormal scores to 1e308, each query of a batch is scaled by itself, and an objective beyond
the float64 range (or a score that scaling would round) is refused with a reason instead of
returned as inf."""
import warnings

import numpy as np
import pytest

import aprank
from aprank.losses import PrecisionAtK

BIG = np.finfo(np.float64).max


def exact_algorithms(loss):
    return [a.name for a in aprank.algorithms(loss=loss, exact=True)]


@pytest.mark.parametrize("loss", ["ap", "ndcg", "zero-one"])
def test_opposite_extremes_give_the_exact_zero_objective_without_a_warning(loss):
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # extreme but finite scores: no overflow on the way
        for algorithm in exact_algorithms(loss):
            r = aprank.infer([1e308, -1e308], [1, 0], loss=loss, algorithm=algorithm)
            assert r.objective == 0.0 and r.loss == 0.0, (loss, algorithm, r)
            r = aprank.infer([1e308, -1e308, 1e308], [1, 0, 0], loss=loss, algorithm=algorithm)
            assert np.isfinite(r.objective), (loss, algorithm, r)


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
