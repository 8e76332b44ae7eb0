"""Query grouping: the counting sort of small integer ids gives exactly the groups of a stable
argsort (written out below as the reference), with the inverse of its order on request, and
the driver's ground-truth coefficients equal ``Loss.truth_coef`` bit for bit."""
import numpy as np
import pytest

import aprank
from aprank.inference import RankingProblem
from aprank.validation import as_query_groups


def reference_groups(arr, n):
    """A stable argsort's groups, ascending ids for every layout; no order
    when that is the input's own."""
    order = np.argsort(arr, kind="stable").astype(np.int64)
    sorted_ids = arr[order]
    starts = np.flatnonzero(np.r_[True, sorted_ids[1:] != sorted_ids[:-1]])
    offsets = np.r_[starts, n].astype(np.int64)
    if np.array_equal(order, np.arange(n)):
        return None, offsets, sorted_ids[starts]
    return order, offsets, sorted_ids[starts]


DTYPES = (np.int8, np.uint8, np.int16, np.int32, np.uint32, np.int64, np.uint64)


@pytest.mark.parametrize("dtype", DTYPES)
def test_counting_sort_groups_as_a_stable_argsort(dtype):
    rng = np.random.default_rng(1)
    info = np.iinfo(dtype)
    for trial in range(300):
        n = int(rng.integers(1, 80))
        base = int(rng.choice([info.min, 0, max(info.max - 100, 0)]))
        v = rng.integers(0, int(rng.integers(1, 9)), n)
        if trial % 2:
            v = np.sort(v)              # contiguous blocks in ascending order: no order
        if trial % 4 == 3:
            v = v.max() - v             # contiguous blocks in descending order
        if trial % 7 == 0:
            v = v * int(rng.integers(1, 10 ** 6))    # sparse ids: the argsort path
        arr = np.clip(base + v.astype(object), info.min, info.max).astype(dtype)
        got, want = as_query_groups(arr, n), reference_groups(arr, n)
        with_slot = as_query_groups(arr, n, return_slot=True)
        for a, b in zip(with_slot[:3], got):
            assert (a is None and b is None) or np.array_equal(a, b)
        slot = with_slot[3]
        assert (slot is None) == (got[0] is None)
        if slot is not None:
            assert slot.dtype == np.int64 and np.array_equal(got[0][slot], np.arange(n))
        assert (got[0] is None) == (want[0] is None)
        if want[0] is not None:
            assert got[0].dtype == np.int64 and np.array_equal(got[0], want[0])
        assert got[1].dtype == np.int64 and np.array_equal(got[1], want[1])
        assert got[2].dtype == want[2].dtype and np.array_equal(got[2], want[2])


def test_shuffled_ids_group_in_sorted_id_order():
    qid = np.array([5, 3, 5, 9, 3, 3])
    order, offsets, ids = as_query_groups(qid, qid.size)
    assert order.tolist() == [1, 4, 5, 0, 2, 3]
    assert offsets.tolist() == [0, 3, 5, 6] and ids.tolist() == [3, 5, 9]


@pytest.mark.parametrize("loss", ["ap", "ndcg"])
@pytest.mark.parametrize("algorithm", ["qs", "select", "brute"])
def test_driver_truth_coef_equals_the_loss(loss, algorithm):
    rng = np.random.default_rng(2)
    if loss == "ndcg" and algorithm == "select":
        algorithm = "ndcg-greedy"
    for _ in range(60):
        n = int(rng.integers(2, 10 if algorithm == "brute" else 300))
        qid = rng.integers(0, int(rng.integers(1, 6)), n)
        labels = rng.random(n) < rng.random()
        scores = np.round(rng.standard_normal(n), 1)
        if not labels.any():
            labels[0] = True
        r = aprank.infer_batch(scores, labels, qid, loss=loss, algorithm=algorithm, empty="skip")
        want = RankingProblem(labels, loss, qid=qid, empty="skip").truth_coef
        assert r.truth_coef.tobytes() == want.tobytes()
        assert not r.truth_coef.flags.writeable
        problem = RankingProblem(labels, loss, qid=qid, empty="skip")
        first = problem.solve(scores, algorithm)
        assert problem.solve(scores, algorithm).truth_coef is first.truth_coef is problem.truth_coef
