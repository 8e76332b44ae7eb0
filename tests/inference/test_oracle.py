"""Every exact algorithm in the registry against oracles written from the definitions.

2000 seeded cases with 1-4 samples per class (most with tied scores) are solved by every
registered exact algorithm of each loss, on the fastest partition path and the portable one; the
objective must equal the maximum over all n! rankings (all 2^n labellings for the 0-1 loss), and the
returned loss, coefficients and objective must match a slow recomputation from the ranks.
"""
import numpy as np
import pytest

import aprank
from aprank_support.oracle import (
    best_over_labellings,
    best_over_permutations,
    recompute,
    zero_one_weights,
)

N_CASES = 2000
TOL = 1e-12


def make_case(seed):
    """1-4 positives and 1-4 negatives; scores with heavy ties, all tied, or continuous."""
    rng = np.random.default_rng(seed)
    P, N = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    labels = rng.permutation(np.r_[np.ones(P, bool), np.zeros(N, bool)])
    kind = seed % 5
    if kind in (0, 1):                       # heavy ties: a few integer levels
        scores = rng.integers(0, 3, P + N).astype(float) + labels * rng.integers(0, 2)
    elif kind == 2:                          # everything tied
        scores = np.full(P + N, float(rng.integers(-2, 3)))
    elif kind == 3:                          # ties at a finer grid, varied scale
        scores = np.round(rng.normal(labels * 0.5, 1.0), 1) * rng.choice([0.01, 1.0, 100.0])
    else:                                    # continuous, no ties
        scores = rng.normal(labels * rng.choice([0.0, 1.0, 6.0]), 1.0)
    return scores, labels


CASES = [make_case(seed) for seed in range(N_CASES)]


def close(a, b):
    return abs(a - b) <= TOL * max(1.0, abs(a), abs(b))


# the portable path in the full suite only (-m "not slow" leaves it out): test_simd checks it
# gives the vector paths' results bit for bit
@pytest.fixture(params=[True, pytest.param(False, marks=pytest.mark.slow)],
                ids=["simd", "portable"])
def simd(request):
    previous = aprank.set_simd(request.param)
    yield request.param
    aprank.set_simd(previous)


def exact_algorithms(loss):
    algos = aprank.algorithms(loss=loss, exact=True)
    assert algos, f"no exact algorithm registered for {loss}"
    return [a.name for a in algos]


def test_cases_have_ties():
    tied = sum(np.unique(s).size < s.size for s, _ in CASES)
    assert tied > N_CASES // 2


@pytest.mark.parametrize("loss", ["ap", "ndcg"])
def test_ranking_losses_against_all_permutations(loss, simd):
    names = exact_algorithms(loss)
    for seed, (scores, labels) in enumerate(CASES):
        best = best_over_permutations(scores, labels, loss)
        for name in names:
            res = aprank.infer(scores, labels, loss=loss, algorithm=name)
            where = f"seed {seed}, {name}: scores={scores.tolist()} labels={labels.tolist()}"
            assert close(res.objective, best), f"objective {res.objective} != {best} ({where})"
            loss_value, coef, objective = recompute(scores, labels, res.ranks, loss)
            assert close(res.loss, loss_value), where
            np.testing.assert_allclose(res.coef, coef, rtol=0, atol=TOL, err_msg=where)
            assert close(res.objective, objective), where


def test_zero_one_against_all_labellings():
    names = exact_algorithms("zero-one")
    for seed, (scores, labels) in enumerate(CASES):
        best = best_over_labellings(scores, labels)
        v, z = zero_one_weights(labels)
        truth = np.where(labels, 1.0, -1.0)
        for name in names:
            res = aprank.infer(scores, labels, loss="zero-one", algorithm=name)
            where = f"seed {seed}, {name}"
            assert close(res.objective, best), where
            y = np.where(res.labelling == 1, 1.0, -1.0)
            assert close(res.loss, float(((y != truth) * v).sum() / z)), where
            np.testing.assert_allclose(res.coef, v * y / (2 * z), atol=TOL, err_msg=where)
            assert close(res.objective,
                         res.loss + float(((y - truth) * v * scores).sum() / (2 * z)))
            # the two-block ranking documented in InferenceResult
            tp, fp = int(np.sum(labels & (y > 0))), int(np.sum(~labels & (y > 0)))
            expected = np.where(labels, np.where(y > 0, 1, 1 + fp),
                                np.where(y > 0, 1 + tp, labels.sum() + 1))
            np.testing.assert_array_equal(res.ranks, expected, err_msg=where)


@pytest.mark.parametrize("loss", ["ap", "ndcg"])
def test_package_brute_matches_test_oracle(loss):
    # aprank's own brute enumerates interleavings only (Mohapatra et al. 2018, Observation 1); the
    # test oracle enumerates every permutation, so this also checks that observation.
    for scores, labels in CASES[:500]:
        res = aprank.infer(scores, labels, loss=loss, algorithm="brute")
        assert close(res.objective, best_over_permutations(scores, labels, loss))


@pytest.mark.parametrize("loss", ["ap", "ndcg"])
def test_exact_algorithms_obey_the_tie_rule(loss):
    """Within each class, ranks never improve going down the order (score desc, index asc),
    and without ties all exact algorithms return identical ranks."""
    rng = np.random.default_rng(7)
    names = exact_algorithms(loss)
    for trial in range(300):
        n = int(rng.integers(2, 15))
        labels = rng.random(n) < rng.uniform(0.1, 0.9)
        labels[rng.integers(n)] = True
        scores = rng.integers(0, 4, n).astype(float) if trial % 2 else rng.normal(labels, 1.0)
        order = np.lexsort((np.arange(n), -scores))
        results = [aprank.infer(scores, labels, loss=loss, algorithm=a).ranks for a in names]
        for ranks in results:
            for cls in (labels, ~labels):
                r = ranks[order[cls[order]]]
                assert np.all(np.diff(r) >= 0)
        if np.unique(scores).size == n:
            for ranks in results[1:]:
                np.testing.assert_array_equal(ranks, results[0])
