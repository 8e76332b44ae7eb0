"""The "auto" algorithm runs qs: bit for bit what qs returns. And the compiled driver's NDCG
discount table, which it builds for calls whose queries are all small enough, changes no bit
of any result against the formula it replaces, on both sides of that size."""
import pickle
import warnings

import numpy as np
import pytest

import aprank
from aprank.inference import get_algorithm
from aprank.inference._registry import faster_alternative
from aprank.inference.ranking import _driver_cy


def mixed_batch(seed, n_queries=60, ties=True):
    """Queries of 1 to ~3000 samples (log-uniform), 1-60% positives, scores rounded to ties."""
    rng = np.random.default_rng(seed)
    sizes = np.exp(rng.uniform(0, np.log(3000), n_queries)).astype(int) + 1
    qid = rng.permutation(np.repeat(np.arange(n_queries), sizes))
    labels = rng.random(qid.size) < rng.uniform(0.01, 0.6, n_queries)[qid]
    labels[np.unique(qid, return_index=True)[1]] = True        # every query has a positive
    scores = rng.standard_normal(qid.size) + rng.choice([0.0, 1.0, 6.0]) * labels
    if ties:
        scores = np.round(scores, int(rng.integers(0, 2)))
    return scores, labels, qid


def assert_same_bits(a, b):
    for field in ("ranks", "coef", "truth_coef", "loss", "objective", "used"):
        x, y = getattr(a, field), getattr(b, field)
        assert x.dtype == y.dtype and x.tobytes() == y.tobytes(), field


def test_auto_is_an_exact_ranking_algorithm_of_both_losses():
    for loss in ("ap", "ndcg"):
        assert "auto" in aprank.algorithms(kind="ranking", loss=loss, exact=True).names()
    auto = get_algorithm("auto", "ranking")
    assert pickle.loads(pickle.dumps(auto)) is auto


@pytest.mark.parametrize("loss", ["ap", "ndcg"])
@pytest.mark.parametrize("seed", range(4))
def test_auto_equals_qs_bit_for_bit(loss, seed):
    scores, labels, qid = mixed_batch(seed, ties=seed % 2 == 0)
    auto = aprank.infer_batch(scores, labels, qid, loss=loss, algorithm="auto")
    qs = aprank.infer_batch(scores, labels, qid, loss=loss, algorithm="qs")
    assert auto.algorithm == "auto" and qs.algorithm == "qs"
    assert_same_bits(auto, qs)
    one = aprank.infer(scores[qid == 0], labels[qid == 0], loss=loss, algorithm="auto")
    assert one.algorithm == "auto" and one.objective == qs.objective[0]


def test_auto_never_warns_slow():
    auto = get_algorithm("auto", "ranking")
    for loss in ("ap", "ndcg"):
        for P in (1, 10, 10 ** 3, 10 ** 6, 10 ** 9):
            for N in (1, 10, 10 ** 3, 10 ** 6, 10 ** 9):
                assert faster_alternative(auto, loss, P, N) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        aprank.infer(np.r_[1.0, np.zeros(5000)], np.r_[True, np.zeros(5000, bool)],
                     algorithm="auto")


def one_query(n, seed):
    """n samples, ~2% positives overlapping the negatives, scores on a grid of ties."""
    rng = np.random.default_rng([seed, n])
    labels = rng.random(n) < 0.02
    labels[0] = True
    return np.round(rng.standard_normal(n) + labels, 1), labels


def with_query(batch, n, seed):
    """The batch and one more query of n samples, whose id sorts after the batch's."""
    scores, labels, qid = batch
    s, y = one_query(n, seed)
    return np.r_[scores, s], np.r_[labels, y], np.r_[qid, np.full(n, qid.max() + 1)]


def part(result, samples, queries):
    """The batch result restricted to some samples and (per-query fields) some queries."""
    return dict(ranks=result.ranks[samples], coef=result.coef[samples],
                truth_coef=result.truth_coef[samples], loss=result.loss[queries],
                objective=result.objective[queries])


def assert_parts_same_bits(a, b):
    assert a.keys() == b.keys()
    for field in a:
        x, y = np.asarray(a[field]), np.asarray(b[field])
        assert x.dtype == y.dtype and x.tobytes() == y.tobytes(), field


@pytest.mark.parametrize("seed", range(3))
def test_the_ndcg_discount_table_changes_no_bit_on_either_side_of_its_size(seed):
    """The driver tabulates NDCG's default discount for a call whose queries have at most
    DISCOUNT_TABLE_MAX samples, and computes it by the formula otherwise: adding one query of
    DISCOUNT_TABLE_MAX samples keeps the table for the whole batch, one more sample drops it.
    The same queries must come out bit for bit alike either way, and agree with ndcg-greedy
    (an O(PN) scan with NumPy's discount table, equal up to rounding)."""
    limit = _driver_cy.DISCOUNT_TABLE_MAX
    batch = mixed_batch(20 + seed)
    n_small = batch[0].size
    small = np.arange(n_small)
    queries = np.arange(np.unique(batch[2]).size)
    tabled = aprank.infer_batch(*with_query(batch, limit, seed), loss="ndcg", algorithm="qs")
    formula = aprank.infer_batch(*with_query(batch, limit + 1, seed), loss="ndcg",
                                 algorithm="qs")
    assert_parts_same_bits(part(tabled, small, queries), part(formula, small, queries))
    alone = aprank.infer_batch(*batch, loss="ndcg", algorithm="auto")
    assert_parts_same_bits(part(alone, small, queries), part(formula, small, queries))

    # the query of DISCOUNT_TABLE_MAX samples itself, tabled and beside a larger one
    s, y = one_query(limit, seed)
    big = aprank.infer(s, y, loss="ndcg", algorithm="auto")
    s2, y2 = one_query(limit + 1, seed + 1)
    both = aprank.infer_batch(np.r_[s, s2], np.r_[y, y2], np.repeat([0, 1], [limit, limit + 1]),
                              loss="ndcg", algorithm="qs")
    in_both = part(both, np.arange(limit), 0)
    del in_both["truth_coef"]               # not in infer's result
    assert_parts_same_bits(dict(ranks=big.ranks, coef=big.coef, loss=np.float64(big.loss),
                                objective=np.float64(big.objective)), in_both)

    for result, data in ((formula, with_query(batch, limit + 1, seed)),
                         (tabled, with_query(batch, limit, seed)), (both, None)):
        if data is None:
            data = (np.r_[s, s2], np.r_[y, y2], np.repeat([0, 1], [limit, limit + 1]))
        greedy = aprank.infer_batch(*data, loss="ndcg", algorithm="ndcg-greedy")
        assert np.array_equal(result.ranks, greedy.ranks)
        np.testing.assert_allclose(result.loss, greedy.loss, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(result.objective, greedy.objective, rtol=1e-12, atol=1e-15)
