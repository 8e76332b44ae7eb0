"""Tests for aprank.metrics: agreement with scikit-learn, brute-force expectations over tie
orders, tie-policy ordering, query handling and input validation."""
import itertools
import math

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, ndcg_score

from aprank.metrics import TIE_POLICIES, average_precision, ndcg, precision_at_k

pytestmark = pytest.mark.min_versions   # also run against the declared minimum versions (.ci/run)

TOL = 1e-12


# ---- from-the-definition metrics of one fully ordered ranking (gains listed best rank first) --

def ap_of_order(rel):
    hits, total = 0, 0.0
    for i, r in enumerate(rel, start=1):
        if r:
            hits += 1
            total += hits / i
    return total / hits


def dcg_of_order(gains, k=None):
    k = len(gains) if k is None else k
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains[:k]))


def ndcg_of_order(gains, k=None):
    return dcg_of_order(gains, k) / dcg_of_order(sorted(gains, reverse=True), k)


def precision_of_order(rel, k):
    return sum(rel[:k]) / k


def all_tie_orders(score, gain):
    """Yield the gains in rank order for every order of the tied samples."""
    groups = [list(gain[score == s]) for s in sorted(set(score.tolist()), reverse=True)]
    for choice in itertools.product(*(itertools.permutations(g) for g in groups)):
        yield [x for part in choice for x in part]


def small_tied_input(rng, graded=False):
    """n <= 8 samples on few score levels, at least one relevant, tie orders kept enumerable."""
    while True:
        n = int(rng.integers(1, 9))
        score = rng.integers(0, int(rng.integers(1, 5)), size=n).astype(float)
        gain = rng.integers(0, 5 if graded else 2, size=n).astype(float)
        _, counts = np.unique(score, return_counts=True)
        if gain.any() and math.prod(math.factorial(c) for c in counts) <= 720:
            return score, gain


def ap_sklearn_input(rng):
    n = int(rng.integers(2, 41))
    y = rng.integers(0, 2, size=n)
    y[rng.choice(n, 2, replace=False)] = [0, 1]
    if rng.random() < 0.5:
        s = rng.integers(0, int(rng.integers(1, 6)), size=n).astype(float)
    else:
        s = np.round(rng.normal(size=n), 1)
    return y, s


# ---- agreement with scikit-learn ---------------------------------------------------------------

def test_ap_matches_sklearn_with_ties():
    rng = np.random.default_rng(0)
    tied = 0
    for _ in range(1000):
        y, s = ap_sklearn_input(rng)
        tied += np.unique(s).size < s.size
        assert abs(average_precision(y, s) - average_precision_score(y, s)) <= TOL
        assert abs(average_precision(y, s, ties="sklearn") - average_precision_score(y, s)) <= TOL
    assert tied > 900


def test_ndcg_matches_sklearn_with_ties():
    rng = np.random.default_rng(1)
    for i in range(1000):
        n = int(rng.integers(2, 41))
        y = rng.integers(0, 5, size=n)
        y[rng.integers(n)] = int(rng.integers(1, 5))
        s = rng.integers(0, int(rng.integers(1, 6)), size=n).astype(float)
        k = None if i % 2 else int(rng.integers(1, n + 3))
        ref = ndcg_score(y[None, :], s[None, :], k=k, ignore_ties=False)
        for ties in ("sklearn", "expected"):
            assert abs(ndcg(y, s, k=k, ties=ties) - ref) <= TOL


def test_known_small_values():
    # Two tied samples, one relevant: sklearn puts both at one threshold (precision 1/2); a random
    # order gives precision 1 or 1/2 with equal chance.
    assert average_precision([1, 0], [0.0, 0.0], ties="sklearn") == pytest.approx(0.5, abs=TOL)
    assert average_precision([1, 0], [0.0, 0.0], ties="expected") == pytest.approx(0.75, abs=TOL)
    assert average_precision([1, 0], [0.0, 0.0], ties="pessimistic") == pytest.approx(0.5, abs=TOL)
    assert average_precision([1, 0], [0.0, 0.0], ties="optimistic") == pytest.approx(1.0, abs=TOL)
    # Fewer samples than k: still divided by k.
    assert precision_at_k([1, 1], [0.3, 0.1], 5) == pytest.approx(0.4, abs=TOL)
    assert precision_at_k([1, 0, 0, 1], [2, 1, 1, 0], 2) == pytest.approx(0.5, abs=TOL)
    assert precision_at_k([0, 1, 0, 1], [2, 1, 1, 0], 2) == pytest.approx(0.25, abs=TOL)
    assert precision_at_k([1, 0, 1, 0], [2, 1, 1, 0], 2) == pytest.approx(0.75, abs=TOL)


# ---- "expected" against brute force; pessimistic/optimistic are the extremes -------------------

def check_against_orders(metric_lib, metric_def, score, gain):
    values = [metric_def(order) for order in all_tie_orders(score, gain)]
    assert abs(metric_lib("expected") - float(np.mean(values))) <= TOL
    assert abs(metric_lib("pessimistic") - min(values)) <= TOL
    assert abs(metric_lib("optimistic") - max(values)) <= TOL


def test_expected_ap_is_mean_over_tie_orders():
    rng = np.random.default_rng(2)
    for _ in range(300):
        s, y = small_tied_input(rng)
        check_against_orders(lambda t: average_precision(y, s, ties=t), ap_of_order, s, y)


def test_expected_ndcg_is_mean_over_tie_orders():
    rng = np.random.default_rng(3)
    for _ in range(300):
        s, g = small_tied_input(rng, graded=True)
        k = None if rng.random() < 0.3 else int(rng.integers(1, s.size + 2))
        check_against_orders(lambda t: ndcg(g, s, k=k, ties=t), lambda o: ndcg_of_order(o, k), s, g)
        assert ndcg(g, s, k=k, ties="sklearn") == ndcg(g, s, k=k, ties="expected")


def test_expected_precision_is_mean_over_tie_orders():
    rng = np.random.default_rng(4)
    for _ in range(300):
        s, y = small_tied_input(rng)
        k = int(rng.integers(1, s.size + 3))
        check_against_orders(lambda t: precision_at_k(y, s, k, ties=t),
                             lambda o: precision_of_order(o, k), s, y)
        assert precision_at_k(y, s, k, ties="sklearn") == precision_at_k(y, s, k, ties="expected")


def test_expected_ap_differs_from_sklearn_on_ties():
    # Guards against "expected" silently falling back to the threshold formula.
    rng = np.random.default_rng(5)
    diffs = [abs(average_precision(y, s, ties="expected") - average_precision(y, s, ties="sklearn"))
             for y, s in (ap_sklearn_input(rng) for _ in range(50))]
    assert max(diffs) > 1e-3


def test_policy_order_on_larger_inputs():
    rng = np.random.default_rng(6)
    for _ in range(200):
        y, s = ap_sklearn_input(rng)
        g = y * rng.integers(1, 5, size=y.size)
        k = int(rng.integers(1, y.size + 2))
        for metric in (lambda t: average_precision(y, s, ties=t), lambda t: ndcg(g, s, k=k, ties=t),
                       lambda t: precision_at_k(y, s, k, ties=t)):
            lo, mid, hi = metric("pessimistic"), metric("expected"), metric("optimistic")
            assert lo <= mid + TOL and mid <= hi + TOL


def test_no_ties_all_policies_agree_with_definition():
    rng = np.random.default_rng(7)
    for _ in range(200):
        n = int(rng.integers(1, 30))
        s = rng.permutation(n).astype(float) + rng.random()
        y = rng.integers(0, 2, size=n)
        y[rng.integers(n)] = 1
        g = y * rng.integers(1, 5, size=n)
        ranked = np.argsort(-s)
        k = int(rng.integers(1, n + 2))
        for t in TIE_POLICIES:
            assert abs(average_precision(y, s, ties=t) - ap_of_order(list(y[ranked]))) <= TOL
            assert abs(ndcg(g, s, k=k, ties=t) - ndcg_of_order(list(g[ranked]), k)) <= TOL
            assert abs(precision_at_k(y, s, k, ties=t)
                       - precision_of_order(list(y[ranked]), k)) <= TOL


# ---- queries -------------------------------------------------------------------------------------

METRICS = {
    "ap": lambda y, s, **kw: average_precision(y, s, **kw),
    "ndcg": lambda y, s, **kw: ndcg(y, s, k=3, **kw),
    "p@k": lambda y, s, **kw: precision_at_k(y, s, 2, **kw),
}


@pytest.mark.parametrize("name", sorted(METRICS))
@pytest.mark.parametrize("ties", TIE_POLICIES)
def test_qid_mean_of_separate_calls(name, ties):
    metric = METRICS[name]
    rng = np.random.default_rng(8)
    for _ in range(20):
        nq = int(rng.integers(1, 6))
        qid = np.repeat(rng.choice(100, nq, replace=False), rng.integers(2, 10, size=nq))
        s = rng.integers(0, 3, size=qid.size).astype(float)
        y = rng.integers(0, 2, size=qid.size)
        for q in np.unique(qid):
            y[np.flatnonzero(qid == q)[0]] = 1
        separate = {q: metric(y[qid == q], s[qid == q], ties=ties) for q in np.unique(qid)}
        expect = np.mean(list(separate.values()))
        assert abs(metric(y, s, ties=ties, qid=qid) - expect) <= TOL
        perm = rng.permutation(qid.size)  # interleaves the queries
        assert abs(metric(y[perm], s[perm], ties=ties, qid=qid[perm]) - expect) <= TOL
        ids, values = metric(y[perm], s[perm], ties=ties, qid=qid[perm], per_query=True)
        assert isinstance(ids, np.ndarray) and isinstance(values, np.ndarray)
        assert sorted(ids.tolist()) == sorted(separate)
        for q, v in zip(ids, values):
            assert abs(v - separate[q]) <= TOL


def test_per_query_without_qid():
    ids, values = average_precision([1, 0, 1], [3, 2, 1], per_query=True)
    assert ids.tolist() == [0]
    assert values == pytest.approx([(1 + 2 / 3) / 2], abs=TOL)


@pytest.mark.parametrize("name", sorted(METRICS))
def test_empty_rules(name):
    metric = METRICS[name]
    y = np.array([1, 0, 0, 0, 1, 0])
    s = np.array([0.9, 0.1, 0.5, 0.4, 0.2, 0.8])
    qid = np.array([7, 7, 3, 3, 7, 5])  # queries 3 and 5 have no relevant sample
    only7 = metric(y[qid == 7], s[qid == 7])
    with pytest.raises(ValueError, match="query 3"):
        metric(y, s, qid=qid)
    assert metric(y, s, qid=qid, empty="skip") == pytest.approx(only7, abs=TOL)
    assert metric(y, s, qid=qid, empty=0) == pytest.approx(only7 / 3, abs=TOL)
    assert metric(y, s, qid=qid, empty=1) == pytest.approx((only7 + 2) / 3, abs=TOL)
    ids, values = metric(y, s, qid=qid, empty="skip", per_query=True)
    assert ids.tolist() == [7] and values == pytest.approx([only7], abs=TOL)
    ids, values = metric(y, s, qid=qid, empty=1, per_query=True)
    assert sorted(zip(ids.tolist(), values.tolist())) == [(3, 1.0), (5, 1.0),
                                                          (7, pytest.approx(only7))]
    # Without qid the whole input is one query under the same rule.
    zeros = np.zeros(4, dtype=int)
    with pytest.raises(ValueError, match="no relevant"):
        metric(zeros, s[:4])
    assert metric(zeros, s[:4], empty=0) == 0.0
    assert metric(zeros, s[:4], empty=1) == 1.0
    with pytest.raises(ValueError, match="skipped"):
        metric(zeros, s[:4], empty="skip")
    with pytest.raises(ValueError, match="skipped"):
        metric(y * 0, s, qid=qid, empty="skip")


@pytest.mark.parametrize("empty", ["ignore", 0.5, 2, None, True])
def test_bad_empty_rule(empty):
    with pytest.raises(ValueError, match="empty"):
        average_precision([1, 0], [1, 0], empty=empty)


# ---- bad input -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(METRICS))
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_scores(name, bad):
    with pytest.raises(ValueError, match="y_score"):
        METRICS[name]([1, 0, 1], [0.5, bad, 0.1])


@pytest.mark.parametrize("name", sorted(METRICS))
def test_mismatched_lengths(name):
    with pytest.raises(ValueError):
        METRICS[name]([1, 0, 1], [0.5, 0.1])
    with pytest.raises(ValueError, match="qid"):
        METRICS[name]([1, 0], [0.5, 0.1], qid=[1, 2, 3])


@pytest.mark.parametrize("labels", [[1, 2, 0], [0.5, 1, 0], [1, 0, -1]])
def test_non_binary_labels(labels):
    for metric in (average_precision, lambda y, s: precision_at_k(y, s, 1)):
        with pytest.raises(ValueError, match="y_true"):
            metric(labels, [0.3, 0.2, 0.1])


@pytest.mark.parametrize("y", [[1, -1, 0], [1, np.nan, 0], [1, np.inf, 0], [[1, 0, 1]]])
def test_bad_relevance_for_ndcg(y):
    with pytest.raises(ValueError, match="y_true"):
        ndcg(y, [0.3, 0.2, 0.1])


def test_ndcg_reads_plus_minus_one_as_binary_labels():
    # the label rule shared with average_precision: {-1, +1} are gains 0 and 1
    s = [0.3, 0.2, 0.1]
    assert ndcg([-1, 1, 1], s) == ndcg([0, 1, 1], s) == ndcg(np.array([False, True, True]), s)
    assert ndcg([-1, 1, 1], s) == pytest.approx(
        ndcg_score([[0, 1, 1]], [s]), abs=TOL)


@pytest.mark.parametrize("k", [0, -1, 1.5, "2", True])
def test_bad_k(k):
    with pytest.raises(ValueError, match="k="):
        precision_at_k([1, 0], [1, 0], k)
    with pytest.raises(ValueError, match="k="):
        ndcg([1, 0], [1, 0], k=k)


@pytest.mark.parametrize("name", sorted(METRICS))
@pytest.mark.parametrize("ties", ["random", "Expected", None])
def test_unknown_tie_policy(name, ties):
    with pytest.raises(ValueError, match="pessimistic"):
        METRICS[name]([1, 0], [1, 0], ties=ties)


def test_inputs_not_modified():
    rng = np.random.default_rng(9)
    y = rng.integers(0, 2, size=30)
    y[[0, 10, 20]] = 1
    g = y * 3.0
    s = rng.integers(0, 4, size=30).astype(float)
    qid = np.tile([5, 1, 9], 10)  # non-contiguous, so the samples get reordered internally
    arrays = [y, g, s, qid]
    copies = [a.copy() for a in arrays]
    for a in arrays:
        a.flags.writeable = False
    for ties in TIE_POLICIES:
        for q in (None, qid):
            average_precision(y, s, ties=ties, qid=q)
            ndcg(g, s, k=4, ties=ties, qid=q)
            precision_at_k(y, s, 4, ties=ties, qid=q)
    for a, c in zip(arrays, copies):
        assert np.array_equal(a, c)
