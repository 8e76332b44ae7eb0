"""aprank.metrics over many queries gives what each query evaluated on its own gives.

A per-query loop written below is the reference: aprank.metrics must give the same values (to
1e-12), the same query ids in the same order and the same errors, for every tie policy, empty
rule, cutoff, discount, contiguous or interleaved qid and a single query. Also the one label
rule: {-1, +1} labels are binary relevance for every metric, ndcg included.
"""
import numpy as np
import pytest

from aprank.metrics import TIE_POLICIES, average_precision, ndcg, precision_at_k
from aprank.validation import as_query_groups
from aprank_support.metric_outcomes import TOL, Raised, assert_same, outcome

EMPTY_RULES = ("error", "skip", 0, 1)


# ---- the reference: each query sorted and summed on its own, in a loop over the queries -------

def ref_ranked(score, gain, ties):
    n = score.shape[0]
    if ties == "optimistic":
        order = np.lexsort((-gain, -score))
    elif ties == "pessimistic":
        order = np.lexsort((gain, -score))
    else:
        order = np.argsort(-score, kind="stable")
    ranked = gain[order]
    if ties in ("optimistic", "pessimistic"):
        starts = np.arange(n)
    else:
        s = score[order]
        starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
    sizes = np.diff(np.r_[starts, n])
    return ranked, starts, sizes, np.repeat(np.arange(starts.size), sizes)


def ref_expected_at_position(ranked, starts, sizes, block):
    return (np.add.reduceat(ranked, starts) / sizes)[block]


def ref_ap_query(score, rel, ties):
    ranked, starts, sizes, block = ref_ranked(score, rel, ties)
    r = np.add.reduceat(ranked, starts)
    cum_r = np.cumsum(r)
    if ties != "expected":
        return float(np.sum(r * cum_r / (starts + sizes)) / cum_r[-1])
    rb, mb = r[block], sizes[block]
    pos = np.arange(ranked.shape[0])
    j = pos - starts[block]
    before = (cum_r - r)[block]
    others = j * (rb - 1) / np.maximum(mb - 1, 1)
    return float(np.sum(rb / mb * (before + 1 + others) / (pos + 1)) / cum_r[-1])


def ref_ndcg_query(score, gain, ties, k, discount=None):
    n = score.shape[0]
    if discount is None:
        discount = 1.0 / np.log2(np.arange(n) + 2.0)
    else:
        if discount.size < n:
            raise ValueError(f"discount has {discount.size} values but a query has {n} samples")
        discount = discount[:n].copy()
    if k is not None:
        discount[k:] = 0.0
    ideal = np.sum(np.sort(gain)[::-1] * discount)
    dcg = np.sum(ref_expected_at_position(*ref_ranked(score, gain, ties)) * discount)
    return float(dcg / ideal)


def ref_precision_query(score, rel, ties, k):
    return float(np.sum(ref_expected_at_position(*ref_ranked(score, rel, ties))[:k]) / k)


def ref_evaluate(score, gain, qid, empty, per_query, metric):
    order, offsets, ids = as_query_groups(qid, score.shape[0])
    if order is not None:
        score, gain = score[order], gain[order]
    if ids is None:
        ids = np.zeros(1, dtype=np.int64)
    values = np.empty(ids.shape[0])
    keep = np.ones(ids.shape[0], dtype=bool)
    for q in range(ids.shape[0]):
        s, g = score[offsets[q]:offsets[q + 1]], gain[offsets[q]:offsets[q + 1]]
        if g.any():
            values[q] = metric(s, g)
        elif empty == "error":
            where = "the input" if qid is None else f"query {ids[q:q + 1].tolist()[0]!r}"
            raise ValueError(f"{where} has no relevant sample, so the metric is undefined; "
                             "pass empty='skip', 0 or 1 to decide (the estimators' score leaves "
                             "such queries out: empty='skip' gives its number)")
        elif empty == "skip":
            keep[q] = False
        else:
            values[q] = float(empty)
    if not keep.any():
        raise ValueError("every query has no relevant sample and was skipped; nothing to average")
    if per_query:
        return ids[keep], values[keep]
    return float(np.mean(values[keep]))


def reference(name, y, s, *, ties, qid, empty, per_query, k=None, discount=None):
    """The reference value of metric ``name`` (relevance ``y`` given as gains 0/1 or graded)."""
    y, s = np.asarray(y, dtype=np.float64), np.asarray(s, dtype=np.float64)
    per = {"ap": lambda sc, g: ref_ap_query(sc, g, ties),
           "ndcg": lambda sc, g: ref_ndcg_query(sc, g, ties, k, discount),
           "p@k": lambda sc, g: ref_precision_query(sc, g, ties, k)}[name]
    return ref_evaluate(s, y, qid, empty, per_query, per)


def new(name, y, s, *, k=None, discount=None, **kw):
    if name == "ap":
        return average_precision(y, s, **kw)
    if name == "ndcg":
        return ndcg(y, s, k=k, discount=discount, **kw)
    return precision_at_k(y, s, k, **kw)


# ---- random inputs with ties, empty queries and every kind of qid ------------------------------

def random_case(rng, graded=False):
    """(y, s, qid): up to 80 samples in up to 10 queries, scores on few levels (ties) or
    continuous, some queries without a relevant sample; qid contiguous, interleaved, absent, or
    strings."""
    n = int(rng.integers(1, 81))
    nq = int(rng.integers(1, min(n, 10) + 1))
    qid = rng.choice(1000, nq, replace=False)[rng.integers(0, nq, n)]
    layout = rng.integers(4)
    if layout == 0:
        qid = np.sort(qid)                               # contiguous blocks
    elif layout == 1:
        qid = None
    elif layout == 2:
        qid = np.array([f"q{q}" for q in qid])           # interleaved string ids
    if rng.random() < 0.6:
        s = rng.integers(0, int(rng.integers(1, 6)), size=n).astype(float)
    else:
        s = np.round(rng.normal(size=n), 2)
    p = rng.choice([0.05, 0.3, 0.7])
    y = (rng.random(n) < p).astype(np.int64)
    if graded:
        y = y * rng.integers(1, 5, size=n)
    return y, s, qid


@pytest.mark.parametrize("name", ["ap", "ndcg", "p@k"])
@pytest.mark.parametrize("ties", TIE_POLICIES)
def test_same_values_as_the_per_query_loop(name, ties):
    rng = np.random.default_rng([["ap", "ndcg", "p@k"].index(name), TIE_POLICIES.index(ties)])
    compared = errors = 0
    for _ in range(150):
        y, s, qid = random_case(rng, graded=name == "ndcg" and rng.random() < 0.5)
        k = int(rng.integers(1, y.size + 3)) if name == "p@k" or rng.random() < 0.6 else None
        discount = None
        if name == "ndcg" and rng.random() < 0.3:
            discount = rng.random(int(rng.integers(0, y.size + 3)))
        for empty in EMPTY_RULES:
            for per_query in (False, True):
                kw = dict(ties=ties, qid=qid, empty=empty, per_query=per_query)
                want = outcome(lambda: reference(name, y, s, k=k, discount=discount, **kw))
                got = outcome(lambda: new(name, y, s, k=k, discount=discount, **kw))
                assert_same(got, want)
                compared += 1
                errors += isinstance(want, Raised)
    assert errors > 100 and compared - errors > 400     # both paths well exercised


@pytest.mark.slow       # a few seconds: the quick lane stays under two minutes
def test_many_queries_against_the_loop():
    """A few thousand queries of random sizes, interleaved, ties everywhere."""
    rng = np.random.default_rng(11)
    n, nq = 20_000, 6_000
    qid = rng.integers(0, nq, n)
    s = rng.integers(0, 4, n).astype(float)
    y = (rng.random(n) < 0.3).astype(np.int64)
    g = y * rng.integers(1, 4, n)
    for ties in TIE_POLICIES:
        for name, rel, k in (("ap", y, None), ("ndcg", g, 3), ("ndcg", g, None), ("ndcg", y, 3),
                             ("ndcg", y, None), ("p@k", y, 2)):
            kw = dict(ties=ties, qid=qid, empty="skip", per_query=True)
            assert_same(new(name, rel, s, k=k, **kw), reference(name, rel, s, k=k, **kw))


def test_single_query_and_single_sample():
    for ties in TIE_POLICIES:
        for name in ("ap", "ndcg", "p@k"):
            for y, s in (([1], [0.5]), ([0, 1, 1, 0], [0.1, 0.1, 0.3, 0.3])):
                kw = dict(ties=ties, qid=None, empty="error", per_query=False)
                assert_same(new(name, y, s, k=2, **kw), reference(name, y, s, k=2, **kw))
                kw["qid"] = [4] * len(y)
                assert_same(new(name, y, s, k=2, **kw), reference(name, y, s, k=2, **kw))


def test_error_names_the_first_empty_query():
    s = np.arange(8.0)
    y = np.array([1, 0, 0, 0, 1, 0, 0, 1])
    # queries in ascending id order whatever the layout (9 and 3 are empty): 3 comes first
    qid = np.array([5, 5, 9, 9, 2, 3, 3, 2])
    for metric in (average_precision, ndcg, lambda y, s, **kw: precision_at_k(y, s, 2, **kw)):
        with pytest.raises(ValueError, match=r"^query 3 has no relevant sample"):
            metric(np.array([1, 0, 0, 0, 1, 0, 0, 0]), s, qid=np.array([5, 5, 9, 9, 2, 2, 3, 3]))
        with pytest.raises(ValueError, match=r"^query 3 has no relevant sample"):
            metric(y, s, qid=qid)


def test_discount_error_and_empty_error_keep_their_order():
    s = np.arange(6.0)
    # query 1 (3 samples, relevant) is too long for the discount; query 0 before it is empty
    y, qid = np.array([0, 0, 1, 0, 1, 0]), np.array([0, 0, 1, 1, 1, 2])
    with pytest.raises(ValueError, match="query 0 has no relevant"):
        ndcg(y, s, qid=qid, discount=[1.0, 0.5])
    with pytest.raises(ValueError, match="discount has 2 values but a query has 3 samples"):
        ndcg(y, s, qid=qid, discount=[1.0, 0.5], empty=0)
    # an empty query longer than the discount is never evaluated, so it is no error
    y2 = np.array([1, 1, 0, 0, 0, 0])
    assert ndcg(y2, s, qid=qid, discount=[1.0, 0.5], empty="skip") == pytest.approx(
        reference("ndcg", y2, s, ties="sklearn", qid=qid, empty="skip", per_query=False,
                  discount=np.array([1.0, 0.5])), abs=TOL)


def test_inputs_not_modified_with_many_queries():
    rng = np.random.default_rng(12)
    y, qid = rng.integers(0, 2, 500), rng.integers(0, 90, 500)
    s = rng.integers(0, 3, 500).astype(float)
    arrays = [y, s, qid]
    copies = [a.copy() for a in arrays]
    for a in arrays:
        a.flags.writeable = False
    for ties in TIE_POLICIES:
        average_precision(y, s, ties=ties, qid=qid, empty=0)
        ndcg(y, s, ties=ties, qid=qid, empty=0, k=3)
        precision_at_k(y, s, 3, ties=ties, qid=qid, empty=0)
    for a, c in zip(arrays, copies):
        assert np.array_equal(a, c)


# ---- one label rule ------------------------------------------------------------------------------

METRICS = {
    "ap": average_precision,
    "ndcg": ndcg,
    "ndcg@3": lambda y, s, **kw: ndcg(y, s, k=3, **kw),
    "p@k": lambda y, s, **kw: precision_at_k(y, s, 3, **kw),
}


@pytest.mark.parametrize("name", sorted(METRICS))
@pytest.mark.parametrize("ties", TIE_POLICIES)
def test_every_metric_reads_binary_labels_the_same(name, ties):
    """bool, {0, 1}, {-1, +1} (int or float) are the same binary relevance for every metric."""
    metric = METRICS[name]
    rng = np.random.default_rng(13)
    for _ in range(20):
        n = int(rng.integers(2, 30))
        rel = rng.random(n) < 0.4
        rel[0], rel[1] = True, False
        s = rng.integers(0, 4, n).astype(float)
        qid = rng.integers(0, 3, n)
        for q in (None, qid):
            want = metric(rel.astype(int), s, ties=ties, qid=q, empty=0)
            for labels in (rel, np.where(rel, 1, -1), np.where(rel, 1.0, -1.0), rel.astype(float)):
                assert metric(labels, s, ties=ties, qid=q, empty=0) == pytest.approx(want, abs=TOL)


@pytest.mark.parametrize("name", sorted(METRICS))
def test_all_negative_labels_are_an_empty_query(name):
    metric = METRICS[name]
    with pytest.raises(ValueError, match="no relevant sample"):
        metric([-1, -1, -1], [0.3, 0.2, 0.1])
    assert metric([-1, -1, -1], [0.3, 0.2, 0.1], empty=1) == 1.0
    ids, values = metric([1, -1, -1, -1], [0.3, 0.2, 0.1, 0.0], qid=[0, 0, 1, 1], empty="skip",
                         per_query=True)
    # query 0 ranks its relevant sample first: 1 for AP and NDCG, 1/3 for precision at 3
    assert ids.tolist() == [0] and values.tolist() == [1 / 3 if name == "p@k" else 1.0]


@pytest.mark.parametrize("y", [[1, -1, 0], [2, -1, 1], [1, -2, 1], [-1, 0.5, 1], [-1, -1, 3]])
def test_minus_one_only_in_binary_labels(y):
    """-1 means 'not relevant' only among {-1, +1}; mixed with 0 or graded gains it is refused
    by every metric, naming an offending entry."""
    for metric in METRICS.values():
        with pytest.raises(ValueError, match=r"y_true(\[\d\])?"):
            metric(y, [0.3, 0.2, 0.1])


def test_graded_gains_only_for_ndcg():
    y, s = [2, 0, 1], [0.3, 0.2, 0.1]
    # linear gains, discount 1/log2(1 + rank): DCG 2 + 1/2, ideal 2 + 1/log2(3)
    assert ndcg(y, s) == pytest.approx((2 + 1 / 2) / (2 + 1 / np.log2(3)), abs=TOL)
    for metric in (average_precision, METRICS["p@k"]):
        with pytest.raises(ValueError, match="y_true"):
            metric(y, s)


# ---- the benchmark section (timed there, never asserted here) -----------------------------------

def test_many_query_bench_rows_are_measured():
    from benchmarks import query_metrics
    scores, labels, qid = query_metrics.many_queries(3_000, 1_000)
    counts = np.bincount(qid)
    assert counts.size == 1_000 and counts.min() >= 1 and counts.max() > 2 * counts.min()
    assert np.bincount(qid, weights=labels).min() >= 1       # no empty query
    assert np.unique(qid[:-1] == qid[1:]).size == 2            # interleaved, not contiguous
    rows = query_metrics.many_query_metrics(3_000, 1_000, repeats=1)
    assert [r[:2] for r in rows] == [(layout, name) for layout in ("interleaved", "contiguous")
                                     for name in query_metrics.METRIC_CALLS]
    for layout, name, seconds, ratio in rows:
        yardstick = next(r[2] for r in rows if r[0] == layout)
        assert seconds > 0 and ratio == pytest.approx(seconds / yardstick)
    table = query_metrics.format_many_query_metrics(rows, 3_000, 1_000)
    for layout in ("interleaved", "contiguous"):
        assert table.count(f"| {layout} |") == len(query_metrics.METRIC_CALLS)
    with pytest.raises(ValueError, match="repeats"):
        query_metrics.many_query_metrics(3_000, 1_000, repeats=0)
