"""infer_batch: one call over many queries equals one infer call per query, and its per-query
outputs come in ascending id order whatever the layout of the queries."""
import numpy as np
import pytest

import aprank
from aprank.metrics import average_precision


def queries(seed=0, n_queries=30):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 60, n_queries)
    qid = np.repeat(rng.permutation(1000)[:n_queries], sizes)
    labels = rng.random(qid.size) < 0.3
    scores = rng.normal(labels * 1.0, 1.0)
    scores[rng.random(qid.size) < 0.2] = 0.5        # some ties
    return scores, labels, qid


@pytest.mark.parametrize("name,loss", [(a.name, loss) for loss in ("ap", "ndcg", "zero-one")
                                       for a in aprank.algorithms(loss=loss) if a.name != "brute"])
@pytest.mark.parametrize("shuffle", [False, True], ids=["contiguous", "interleaved"])
def test_batch_equals_per_query_calls(name, loss, shuffle):
    scores, labels, qid = queries()
    if shuffle:
        perm = np.random.default_rng(1).permutation(qid.size)
        scores, labels, qid = scores[perm], labels[perm], qid[perm]
    res = aprank.infer_batch(scores, labels, qid, loss=loss, algorithm=name, empty="skip")
    for k, q in enumerate(res.query_ids):
        mask = qid == q
        if not labels[mask].any():       # no positives: skipped (also J = N/P is undefined)
            assert not res.used[k] and res.loss[k] == 0 and res.objective[k] == 0
            assert np.all(res.coef[mask] == 0)
            continue
        one = aprank.infer(scores[mask], labels[mask], loss=loss, algorithm=name)
        np.testing.assert_array_equal(res.ranks[mask], one.ranks)
        np.testing.assert_allclose(res.coef[mask], one.coef, rtol=0, atol=1e-15)
        assert res.loss[k] == pytest.approx(one.loss, abs=1e-15)
        assert res.objective[k] == pytest.approx(one.objective, abs=1e-15)
        truth = aprank.losses.get_loss(loss).truth_coef(labels[mask])
        np.testing.assert_allclose(res.truth_coef[mask], truth, atol=1e-15)
    assert res.mean_loss == pytest.approx(res.loss[res.used].mean())


def test_empty_queries():
    scores, labels, qid = queries()
    labels[qid == qid[0]] = False
    # the first empty query in ascending id order (the order of every per-query output)
    first = min(q for q in np.unique(qid) if not labels[qid == q].any())
    with pytest.raises(ValueError, match=f"query {first} has none"):
        aprank.infer_batch(scores, labels, qid)
    res = aprank.infer_batch(scores, labels, qid, empty="skip")
    assert not res.used[list(res.query_ids).index(qid[0])]
    with pytest.raises(ValueError, match="empty"):
        aprank.infer_batch(scores, labels, qid, empty="zero")
    with pytest.raises(ValueError, match="none"):
        aprank.infer_batch(scores, np.zeros_like(labels), qid, empty="skip")
    with pytest.raises(ValueError, match="needs qid"):
        aprank.infer_batch(scores, labels, None)
    with pytest.raises(ValueError, match="qid has"):
        aprank.infer_batch(scores, labels, qid[:-1])


@pytest.mark.parametrize("loss", ["ap", "ndcg", "zero-one", "precision@k"])
def test_per_query_results_in_ascending_id_order_for_every_layout(loss):
    rng = np.random.default_rng(7)
    # queries 3, 5, 9 of four samples each (grouped in ascending id order here)
    scores = rng.standard_normal(12)
    labels = np.array([1, 0, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0])
    ids = np.repeat([3, 5, 9], 4)
    results = []
    for qid in (np.repeat([5, 3, 9], 4), np.tile([5, 3, 9], 4)):    # unsorted blocks; interleaved
        # the same queries laid out by qid: query q's samples in their order
        at = np.argsort(qid, kind="stable")
        s, y = np.empty(12), np.empty(12, dtype=int)
        s[at], y[at] = scores, labels
        r = aprank.infer_batch(s, y, qid=qid, loss=loss)
        assert r.query_ids.tolist() == [3, 5, 9], (loss, qid)
        results.append((r.loss.tolist(), r.objective.tolist()))
        metric_ids, _ = average_precision(y, s, qid=qid, per_query=True)
        assert metric_ids.tolist() == [3, 5, 9]
    reference = aprank.infer_batch(scores, labels, qid=ids, loss=loss)
    assert results[0] == results[1] == (reference.loss.tolist(), reference.objective.tolist())
