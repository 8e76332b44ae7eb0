"""aprank.metrics computes every query in one compiled pass.

A vectorised NumPy implementation of the same metrics is the reference
(tests/aprank_support/metrics_numpy.py): the compiled pass must give the same values (to 1e-12),
the same query ids in the same order and the same errors, for every metric, tie policy, empty
rule, cutoff, discount and qid layout, on random data with many ties; the kernel's own contract is
pinned by the test_kernel_* tests.
"""
import numpy as np
import pytest

from aprank import metrics
from aprank._metrics_cy import (
    METRIC_AP,
    METRIC_NDCG,
    METRIC_PRECISION,
    SIMD,
    TIES_EXPECTED,
    TIES_OPTIMISTIC,
    TIES_PESSIMISTIC,
    TIES_SKLEARN,
    query_values,
)
from aprank.inference import SIMD_LEVELS, set_simd, simd_level
from aprank.validation import as_query_groups
from aprank_support import metrics_numpy as reference
from aprank_support.metric_outcomes import TOL, Raised, assert_same, outcome

EMPTY_RULES = ("error", "skip", 0, 1)
NAMES = ("ap", "ndcg", "p@k")


def call(module, name, y, s, *, k=None, discount=None, **kw):
    if name == "ap":
        return module.average_precision(y, s, **kw)
    if name == "ndcg":
        return module.ndcg(y, s, k=k, discount=discount, **kw)
    return module.precision_at_k(y, s, k, **kw)


def random_case(rng, graded):
    """(y, s, qid): up to 400 samples in up to 12 queries (some longer than the sort's
    insertion and vector partition thresholds), scores on few levels (many ties, -0.0 among
    0.0) or continuous, some queries with no relevant sample; qid contiguous, interleaved,
    absent, or strings."""
    n = int(rng.integers(1, 401))
    nq = int(rng.integers(1, min(n, 12) + 1))
    qid = rng.choice(1000, nq, replace=False)[rng.integers(0, nq, n)]
    layout = rng.integers(4)
    if layout == 0:
        qid = np.sort(qid)
    elif layout == 1:
        qid = None
    elif layout == 2:
        qid = np.array([f"q{q}" for q in qid])
    if rng.random() < 0.6:
        s = rng.integers(-2, int(rng.integers(-1, 4)), size=n).astype(float)
        s[s == 0] *= np.where(rng.random(int((s == 0).sum())) < 0.5, -1.0, 1.0)   # +-0.0 tie
    else:
        s = np.round(rng.normal(size=n), 2)
    y = (rng.random(n) < rng.choice([0.02, 0.3, 0.8])).astype(np.int64)
    if graded:
        y = y * rng.integers(1, 5, size=n) * rng.choice([1.0, 0.25])
    return y, s, qid


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("ties", metrics.TIE_POLICIES)
def test_same_as_the_numpy_pass(name, ties):
    rng = np.random.default_rng([NAMES.index(name), metrics.TIE_POLICIES.index(ties), 27])
    compared = errors = 0
    for _ in range(60):
        y, s, qid = random_case(rng, graded=name == "ndcg" and rng.random() < 0.5)
        k = int(rng.integers(1, 30)) if name == "p@k" or rng.random() < 0.5 else None
        discount = None
        if name == "ndcg" and rng.random() < 0.3:
            discount = rng.random(int(rng.integers(0, y.size + 3)))
        for empty in EMPTY_RULES:
            for per_query in (False, True):
                kw = dict(ties=ties, qid=qid, empty=empty, per_query=per_query, k=k,
                          discount=discount)
                want = outcome(lambda: call(reference, name, y, s, **kw))
                assert_same(outcome(lambda: call(metrics, name, y, s, **kw)), want)
                compared += 1
                errors += isinstance(want, Raised)
    assert errors >= 15 and compared - errors >= 300     # both outcomes well exercised


@pytest.mark.parametrize("layout", ["interleaved", "contiguous"])
def test_many_queries_same_as_the_numpy_pass(layout):
    """The benchmark's shape (thousands of small queries, ties), both qid layouts."""
    rng = np.random.default_rng(2704)
    n, nq = 30_000, 9_000
    qid = rng.integers(0, nq, n)
    s = np.round(rng.normal(size=n), 1)
    y = (rng.random(n) < 0.2).astype(np.int64)
    g = y * rng.integers(1, 4, n)
    if layout == "contiguous":
        by = np.argsort(qid, kind="stable")
        qid, s, y, g = qid[by], s[by], y[by], g[by]
    for ties in metrics.TIE_POLICIES:
        for name, rel, k in (("ap", y, None), ("ndcg", g, 3), ("ndcg", g, None),
                             ("ndcg", y, None), ("p@k", y, 2)):
            for empty in ("skip", 0):
                kw = dict(ties=ties, qid=qid, empty=empty, k=k)
                assert_same(call(metrics, name, rel, s, per_query=True, **kw),
                            call(reference, name, rel, s, per_query=True, **kw))
                assert_same(call(metrics, name, rel, s, **kw), call(reference, name, rel, s, **kw))


def test_long_queries_on_every_partition_path():
    """Queries long enough for the sort's vector partitions: identical values on every path
    this CPU runs (the metrics use the fastest), equal to the NumPy pass's."""
    rng = np.random.default_rng(5)
    n = 20_000
    s = np.round(rng.normal(size=n), 2)
    y = rng.random(n) < 0.1
    g = y * rng.integers(1, 5, n)
    qid = rng.integers(0, 3, n)
    order, offsets, _ = as_query_groups(qid, n)
    table = 1.0 / np.log2(np.arange(n) + 2.0)
    table[50:] = 0.0
    prefix = np.r_[0.0, np.cumsum(table)]
    for ties in metrics.TIE_POLICIES:
        code = metrics.TIE_POLICIES.index(ties)
        for metric, gain, k, want in (
                (METRIC_AP, y, 0, reference.average_precision(y, s, ties=ties, qid=qid,
                                                               per_query=True)),
                (METRIC_NDCG, g, 0, reference.ndcg(g, s, ties=ties, qid=qid, k=50,
                                                  per_query=True)),
                (METRIC_PRECISION, y, 100, reference.precision_at_k(y, s, 100, ties=ties,
                                                                    qid=qid, per_query=True))):
            got = [query_values(s, gain.astype(float), order, offsets, metric, code, table,
                                prefix, k, float(k), simd)[0] for simd in range(SIMD + 1)]
            for other in got[1:]:
                assert np.array_equal(other, got[0])
            np.testing.assert_allclose(got[0], want[1], rtol=0, atol=TOL)


def test_odd_inputs_same_as_the_numpy_pass():
    """Strided and read-only arrays, float32 and integer scores, bool labels, float ids, one
    sample: the same values, and the caller's arrays untouched."""
    rng = np.random.default_rng(8)
    base_s = rng.integers(0, 5, 400).astype(np.float32)
    base_y = rng.random(400) < 0.4
    s, y = base_s[::2], base_y[::2]                      # strided views
    qid = rng.integers(0, 20, 200).astype(float)
    for a in (base_s, base_y, qid):
        a.flags.writeable = False
    copies = [a.copy() for a in (base_s, base_y, qid)]
    for ties in metrics.TIE_POLICIES:
        for name, scores in (("ap", s), ("ndcg", s), ("p@k", s), ("ap", s.astype(np.int16))):
            kw = dict(ties=ties, qid=qid, empty=0, per_query=True, k=3)
            assert_same(call(metrics, name, y, scores, **kw),
                        call(reference, name, y, scores, **kw))
        for name in NAMES:
            kw = dict(ties=ties, k=1)
            assert_same(call(metrics, name, [True], [2.0], **kw),
                        call(reference, name, [True], [2.0], **kw))
    for a, c in zip((base_s, base_y, qid), copies):
        assert np.array_equal(a, c)


def test_cutoffs_beyond_64_bits_same_as_the_numpy_pass():
    """k is any int >= 1: past every query (and past 2^63) it counts every rank, and precision
    still divides by k itself."""
    y, s, qid = [1, 0, 1, 1], [0.3, 0.2, 0.1, 0.1], [0, 0, 1, 1]
    for k in (5, 10**20, np.uint64(2**63 + 5)):
        for ties in metrics.TIE_POLICIES:
            for name in ("ndcg", "p@k"):
                kw = dict(ties=ties, qid=qid, k=k, per_query=True)
                assert_same(call(metrics, name, y, s, **kw), call(reference, name, y, s, **kw))


# ---- the kernel's own contract ---------------------------------------------------------------

def test_kernel_sorts_on_the_fastest_path():
    previous = set_simd(True)       # inference's default: the fastest path this CPU runs
    try:
        assert SIMD_LEVELS[SIMD] == simd_level()
    finally:
        set_simd(previous)


def test_kernel_codes_match_the_tie_policies():
    assert (TIES_SKLEARN, TIES_EXPECTED, TIES_PESSIMISTIC, TIES_OPTIMISTIC) == tuple(
        metrics.TIE_POLICIES.index(t) for t in ("sklearn", "expected", "pessimistic",
                                                "optimistic"))
    assert len({METRIC_AP, METRIC_NDCG, METRIC_PRECISION}) == 3


def test_kernel_values_and_empty_queries():
    """Queries as as_query_groups gives them, in ascending id order: NaN and False for a query
    with no non-zero gain, the metric's value for the others."""
    s = np.array([0.9, 0.1, 0.5, 0.5, 0.3, 0.2])
    y = np.array([1.0, 0.0, 0.0, 1.0, 0.0, 0.0])
    qid = np.array([7, 3, 3, 7, 5, 3])
    order, offsets, ids = as_query_groups(qid, s.size)
    assert ids.tolist() == [3, 5, 7]
    none = np.zeros(1)
    values, nonempty = query_values(s, y, order, offsets, METRIC_AP, TIES_SKLEARN, none, none,
                                    0, 1.0, 0)
    assert nonempty.dtype == np.bool_ and nonempty.tolist() == [False, False, True]
    assert np.isnan(values[:2]).all() and values[2] == 1.0
    # query 3 holds scores (0.1, 0.5, 0.2): with relevance on the 0.1, AP = 1/3
    y2 = np.array([1.0, 1.0, 0.0, 1.0, 0.0, 0.0])
    values, nonempty = query_values(s, y2, order, offsets, METRIC_AP, TIES_SKLEARN, none, none,
                                    0, 1.0, 0)
    assert nonempty.tolist() == [True, False, True] and values[0] == pytest.approx(1 / 3)
