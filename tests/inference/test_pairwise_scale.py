"""The pairwise kind's enumeration path is exact at any scale of the pair
scores (up to 1e300), as brute and the cut path are."""
import numpy as np
import pytest

from aprank.inference import PairwiseProblem, max_marginals


def test_a_huge_pair_score_next_to_unit_unary_scores_is_cut_exactly():
    scores = [1.2, .4, .9, -.3, .1, .8]
    edges = [[0, 1], [2, 3], [1, 4], [4, 5]]
    pair = [-1, -1e16, -.5, -.3]
    ref = max_marginals(scores, edges, pair, algorithm="brute")
    assert ref.labelling.tolist() == [1] * 6 and ref.value == pytest.approx(3.1)
    for algorithm in ("graphcut", "graphcut-dynamic"):
        got = max_marginals(scores, edges, pair, algorithm=algorithm)
        assert got.labelling.tolist() == [1] * 6, algorithm
        assert got.value == pytest.approx(3.1, abs=1e-12), algorithm
        np.testing.assert_allclose(got.m_plus, ref.m_plus, rtol=0, atol=1e-12, err_msg=algorithm)
        np.testing.assert_allclose(got.m_minus, ref.m_minus, rtol=0, atol=1e-12, err_msg=algorithm)


def _graph(rng, n):
    """Components of at most 10 samples (what "graphcut" enumerates): cliques, chains or random
    pairs (repeats included) within groups of random sizes."""
    sizes = []
    while sum(sizes) < n:
        sizes.append(int(rng.integers(1, min(10, n - sum(sizes)) + 1)))
    group = np.repeat(np.arange(len(sizes)), sizes)
    a, b = np.triu_indices(n, 1)
    same = group[a] == group[b]
    shape = int(rng.integers(3))
    if shape == 0:
        pairs = np.column_stack([a[same], b[same]])
    elif shape == 1:
        i = np.flatnonzero(group[:-1] == group[1:])
        pairs = np.column_stack([i, i + 1])
    else:
        pick = rng.integers(0, same.sum(), int(rng.integers(0, 3 * n))) if same.any() else []
        pairs = np.column_stack([a[same][pick], b[same][pick]]) if len(pick) else np.zeros((0, 2))
    return pairs.astype(np.int64)


def _pair_scores(rng, m, top):
    """-|N(0, 1)| times 10^e: one exponent in [0, top] for the graph, or one per pair (mixed
    scales within a graph), some pairs at unit scale and some zero."""
    c = -np.abs(rng.standard_normal(m))
    if rng.random() < 0.5:
        c *= 10.0 ** int(rng.integers(0, top + 1))
    else:
        c *= 10.0 ** rng.integers(0, top + 1, m).astype(float)
    c[rng.random(m) < 0.1] = 0.0
    return c


@pytest.mark.parametrize("augmented", [False, True])
@pytest.mark.parametrize("top", [20, 300])
def test_enumeration_is_exact_at_any_pair_scale(top, augmented):
    """Random graphs of at most 16 samples in components of at most 10, pair scores up to
    10^top times the unary scale: "graphcut" against "brute" on the maximum, every
    max-marginal and the labellings behind them (their scores, evaluated directly)."""
    rng = np.random.default_rng([24, 3, top, augmented])
    for trial in range(150):
        n = int(rng.integers(2, 17))
        edges = _graph(rng, n)
        c = _pair_scores(rng, edges.shape[0], top)
        s = rng.standard_normal(n)
        if rng.random() < 0.3:
            s = np.round(s, 1)              # ties among the unary scores
        labels = rng.random(n) < 0.5
        labels[0], labels[-1] = True, False
        problem = PairwiseProblem(labels, edges=edges, edge_scores=c)
        ref = problem.solve(s, algorithm="brute", augmented=augmented)
        got = problem.solve(s, algorithm="graphcut", augmented=augmented, flips=True)
        # every max-marginal labelling cuts pairs worth less than the unary scores in all
        # (all samples taking the clamped label cuts none): the values are sums of terms of
        # the unary scale, whatever the pair scale, so this is the rounding of such sums
        tol = 1e-9 * (1.0 + np.abs(s).sum())
        where = f"trial {trial}: n={n} m={edges.shape[0]} max |c|={np.abs(c).max(initial=0):.3g}"
        assert abs(got.value - ref.value) <= tol, where
        np.testing.assert_allclose(got.m_plus, ref.m_plus, rtol=0, atol=tol, err_msg=where)
        np.testing.assert_allclose(got.m_minus, ref.m_minus, rtol=0, atol=tol, err_msg=where)
        unary = s + (problem.loss_unary if augmented else 0.0)
        const = problem.loss_constant if augmented else 0.0
        y = got.labelling.astype(bool)
        assert abs(problem.score(y, unary) + const - got.value) <= tol, where
        flips = got.flips.toarray().astype(bool)
        for i in range(n):
            expected = got.m_minus[i] if y[i] else got.m_plus[i]
            assert abs(problem.score(y ^ flips[i], unary) + const - expected) <= tol, (where, i)


def test_larger_enumerated_components_at_huge_scales():
    """Components of up to 16 samples enumerated (enumerate_up_to=16: longer walks, more
    rounding along them), pair scores from 1 to 1e300 mixed in one graph."""
    rng = np.random.default_rng([24, 3, 16])
    for trial in range(20):
        n = int(rng.integers(11, 17))
        a, b = np.triu_indices(n, 1)
        keep = rng.random(a.size) < 0.4
        chain = np.column_stack([np.arange(n - 1), np.arange(1, n)])
        edges = np.r_[chain, np.column_stack([a[keep], b[keep]])].astype(np.int64)
        c = -np.abs(rng.standard_normal(edges.shape[0])) \
            * 10.0 ** rng.integers(0, 301, edges.shape[0]).astype(float)
        s = rng.standard_normal(n)
        ref = max_marginals(s, edges, c, algorithm="brute")
        got = max_marginals(s, edges, c, enumerate_up_to=16)
        tol = 1e-9 * (1.0 + np.abs(s).sum())
        assert abs(got.value - ref.value) <= tol, trial
        np.testing.assert_allclose(got.m_plus, ref.m_plus, rtol=0, atol=tol, err_msg=str(trial))
        np.testing.assert_allclose(got.m_minus, ref.m_minus, rtol=0, atol=tol, err_msg=str(trial))


@pytest.mark.parametrize("scale", [1.0, 1e16, 1e300])
def test_ties_go_to_the_first_labelling_at_any_scale(scale):
    """Tied labellings (every unary score 0: all 0 and all 1 both score 0) are decided by exact
    values, the first of the walk winning as before: all 0, as brute's first maximum; the
    other max-marginal labelling of every sample is all 1."""
    r = max_marginals(np.zeros(4), [[0, 1], [1, 2], [2, 3], [3, 0]], -scale, flips=True)
    ref = max_marginals(np.zeros(4), [[0, 1], [1, 2], [2, 3], [3, 0]], -scale, algorithm="brute")
    assert r.labelling.tolist() == ref.labelling.tolist() == [0, 0, 0, 0]
    assert r.value == 0.0 and r.m_plus.tolist() == r.m_minus.tolist() == [0.0] * 4
    assert r.flips.toarray().all()
