"""The many-query section of ``python -m benchmarks``: its rows and its table (times are
reported, never asserted)."""
import numpy as np
import pytest

from benchmarks import many_queries


def test_equal_queries_layouts_hold_the_same_queries():
    a = many_queries.equal_queries(7, 30, shuffled=False, seed=4)
    b = many_queries.equal_queries(7, 30, shuffled=True, seed=4)
    for scores, labels, qid in (a, b):
        assert np.bincount(qid).tolist() == [7] * 30
        assert np.all(np.bincount(qid, weights=labels) >= 1)
    assert not np.array_equal(a[2], b[2])
    assert sorted(a[0].tolist()) == sorted(b[0].tolist())


def test_many_query_inference_rows_and_table():
    rows, single = many_queries.many_query_inference(((5, 40), (30, 10)), repeats=1)
    names = {(docs, layout): set() for docs in (5, 30) for layout in ("sorted", "shuffled")}
    for docs, n_queries, layout, name, seconds, ratio in rows:
        names[docs, layout].add(name)
        assert seconds > 0 and ratio > 0
    common = {"numpy.argsort loop", "infer_batch", "infer_batch (auto)"}
    assert all(names[d, "sorted"] == common | {"infer loop"} for d in (5, 30))
    assert all(names[d, "shuffled"] == common for d in (5, 30))
    assert len(single) == 3 and single[2] == pytest.approx(single[0] / single[1])
    table = many_queries.format_many_query_inference(rows, single)
    assert table.count("\n| 5 | 40 |") == 2 and "One infer call at n = 20" in table
    with pytest.raises(ValueError, match="repeats"):
        many_queries.many_query_inference(((5, 4),), repeats=0)
