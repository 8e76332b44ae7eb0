"""The steps of a split solve (aprank.dask._steps: optimal_ranks, split_buckets, split_outcome),
checked on one machine against the single-machine kernels and brute force."""
import numpy as np
import pytest

import aprank

pytest.importorskip("dask", reason="the split steps belong to aprank.dask (the dask extra)")
from aprank.dask._steps import optimal_ranks, rank_order, split_buckets, split_outcome  # noqa: E402


def _query(seed, n=300, decimals=1):
    rng = np.random.default_rng(seed)
    labels = rng.random(n) < rng.uniform(0.05, 0.5)
    labels[0] = True
    scores = rng.standard_normal(n) + labels
    return (scores if decimals is None else np.round(scores, decimals)), labels


@pytest.mark.parametrize("loss", ["ap", "ndcg"])
@pytest.mark.parametrize("seed", range(10))
def test_optimal_ranks_and_outcome_are_those_of_qs(seed, loss):
    scores, labels = _query(seed, decimals=[None, 1, 0][seed % 3])
    ref = aprank.infer(scores, labels, loss=loss, algorithm="qs")
    neg = np.flatnonzero(~labels)
    order = neg[rank_order(scores[neg], neg)]
    ranks = optimal_ranks(scores[labels], scores[order], np.arange(1, neg.size + 1), neg.size,
                          loss=loss)
    assert np.array_equal(ranks, ref.ranks[order])
    pos = np.flatnonzero(labels)
    pos = pos[rank_order(scores[pos], pos)]
    P, N = pos.size, neg.size
    centre = scores[pos][P // 2]
    pos_ranks, pos_coef, value, objective = split_outcome(
        loss, scores[pos], np.bincount(ranks, minlength=P + 2),
        float(((P - ranks + 1) * (scores[order] - centre)).sum()), N)
    assert np.array_equal(pos_ranks, ref.ranks[pos])
    assert np.array_equal(pos_coef, ref.coef[pos])
    assert value == pytest.approx(ref.loss, abs=1e-14)
    assert objective == pytest.approx(ref.objective, abs=1e-12)


def test_optimal_ranks_refuses_bad_positions():
    with pytest.raises(ValueError, match="positions"):
        optimal_ranks([1.0, 2.0], [0.5], [3], 2)
    with pytest.raises(ValueError, match="lo and hi"):
        optimal_ranks([1.0, 2.0], [0.5], [1], 2, lo=[2], hi=[1])


@pytest.mark.parametrize("seed", range(20))
def test_split_buckets_against_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(10, 200))     # at most 5 anchors: some bucket has an interior
    s = np.round(rng.standard_normal(n), 1)
    x = rng.permutation(5 * n)[:n]                   # distinct global indices
    local = np.arange(n)
    key = rank_order(s, x)
    pos = np.empty(n, dtype=np.int64)
    pos[key] = np.arange(n)                          # each negative's place in rank order
    # anchors at a few places of the order; buckets hold (anchor k, anchor k+1], anchor last
    cut = np.unique(rng.integers(0, n, int(rng.integers(0, 5))))
    edges = np.r_[-1, cut, n - 1] if (cut.size == 0 or cut[-1] != n - 1) else np.r_[-1, cut]
    bucket = np.searchsorted(edges[1:], pos, side="left")
    perm = np.lexsort((rng.random(n), pos == edges[1:][bucket], bucket))
    s0, x0, l0 = s[perm], x[perm], local[perm]
    bounds = np.r_[0, np.cumsum(np.bincount(bucket, minlength=edges.size - 1))]
    # split every bucket with an interior at one to three of its interior negatives
    buckets, cands = [], []
    for k in range(edges.size - 1):
        inside = np.arange(edges[k] + 1, edges[k + 1])
        if inside.size:
            buckets.append(k)
            cands.append(np.sort(rng.choice(inside, min(inside.size, int(rng.integers(1, 4))),
                                            replace=False)))
    right = key[edges[1:][buckets]]
    cand = key[np.concatenate(cands)]
    cand_ptr = np.r_[0, np.cumsum([c.size for c in cands])]
    before = [a.copy() for a in (s0, x0, l0, bounds)]
    ns, nx, nl, nb, at = split_buckets(s0, x0, l0, bounds, buckets, s[right], x[right], cand_ptr,
                                       s[cand], x[cand])
    for a, b in zip(before, (s0, x0, l0, bounds)):
        assert np.array_equal(a, b)                 # inputs untouched
    assert np.array_equal(at, pos[cand] + 1)       # negatives at or before each candidate
    anchors = np.sort(np.r_[edges[1:], pos[cand]])
    assert np.array_equal(nb, np.r_[0, anchors + 1])
    for k in range(anchors.size):                   # each bucket: its range, its anchor last
        got = pos[nl[nb[k]:nb[k + 1]]]
        lo = -1 if k == 0 else anchors[k - 1]
        assert np.all((got > lo) & (got <= anchors[k])) and got[-1] == anchors[k]
    assert np.array_equal(s[nl], ns) and np.array_equal(x[nl], nx)


def test_split_buckets_refuses_inconsistent_input():
    s, x, local = np.zeros(3), np.arange(3), np.arange(3)
    with pytest.raises(ValueError, match="bounds"):
        split_buckets(s, x, local, [0, 2], [0], [0.0], [2], [0, 0], [], [])
    with pytest.raises(ValueError, match="buckets"):
        split_buckets(s, x, local, [0, 3], [1], [0.0], [2], [0, 0], [], [])
    with pytest.raises(ValueError, match="cand_ptr"):
        split_buckets(s, x, local, [0, 3], [0], [0.0], [2], [0, 2], [0.0], [1])
